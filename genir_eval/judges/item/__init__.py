"""ITEM: iterative utility judgments of a turn's cited links (answer -> judge -> rank, iterated).

Zhang et al. (2024), "Iterative Utility Judgments Framework via LLMs Inspired by Relevance
in Philosophy" (ITEM), judge the *utility* of passages for answering a query by iterating
three components: a pseudo-answer, a utility judgment, and a ranking. Here the passages are
a turn's cited links, each shown as title + url + the response statements citing it.

Variants (registered judges, kind ``"item"``):

- ``item-as``: answer from the selected links, then judge utility; repeat.
- ``item-ars``: answer, rank all links by relevance, judge utility over that order; repeat.
- ``item-ar``: answer, rank all links by utility; the top ``k`` (default 5) are the set.

Iteration 1 answers from every candidate in the log's own citation order; iteration ``i``
answers from the set of iteration ``i - 1``. The loop stops after ``max_iterations``
(default 3), as soon as the selected set equals the previous one (the set the iteration
started from, so iteration 1 selecting everything stops at once: the next answer would be
the same), or, when ``rouge_threshold`` is set, when ROUGE-L F of two successive
pseudo-answers exceeds it.

Baselines: ``item-vanilla`` (one listwise judgment, no answer), ``item-joint`` (answer and
judgment in one call) and ``item-ksample`` (``k`` vanilla judgments over seeded shuffles of
the candidates, majority vote).

Each judge returns a label per link (item ``link:<id>``, value 1 if in the utility set else
0, ``extra["rank"]`` and ``extra["graded"]`` from the final ranking when there is one) and a
turn label (item ``item``, value = the selected ids) whose ``extra["iterations"]`` keeps
every iteration's answer, ranking and set.

Every call goes through :func:`genir_eval.judges.base.ask` (journal, parse, one repair). The
offline twin is the same loop answered by the offline provider's handlers registered in
:mod:`genir_eval.judges.offline.item`:
an extractive pseudo-answer (the text of the selected links), lexical utility against query +
pseudo-answer, and BM25 ranking, i.e. pseudo-relevance feedback iterated under the same
stop rules.
"""
