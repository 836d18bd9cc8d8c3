"""genir-eval's generic statistics: agreement between two sets of values (correlations with
bootstrap intervals, kappa, AUC, precision/recall, rank overlap; :mod:`.agreement`),
calibration (:mod:`.calibration`), degenerate labellings (:mod:`.degenerate`) and
prediction-powered means (:mod:`.ppi`) and
the bootstrap over sessions (:mod:`.resample`). They know no judge, label or session: the judge
kinds' comparisons with gold (in their folders) and :mod:`genir_eval.meta` read them.
"""
