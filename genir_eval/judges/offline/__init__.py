"""The offline twins: the offline provider's answers to every built-in judge's requests,
computed from the session itself (``twins`` for links, spans and satisfaction; ``item`` and
``rubric`` for those families), and the features they read (lexical matching is
:mod:`genir_eval.judges.lexical`)."""
