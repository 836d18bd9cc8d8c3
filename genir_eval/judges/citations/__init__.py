"""Citation judges: does each cited source back the statement that cites it?

``support`` holds the ``citation_support`` judge (TREC 2024 RAG's support scale, per
statement and cited link, with the evidence quoted from the source); its offline twin, a
lexical baseline, is in :mod:`genir_eval.judges.offline.citations`. The measures built on its
labels (citation precision and recall, the unsupported-claim rate) are in
:mod:`genir_eval.metrics.citations`.
"""
