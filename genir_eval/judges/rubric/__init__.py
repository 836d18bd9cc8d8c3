"""RUBRIC: question banks per turn and graded answerability of passages.

After Farzi & Dietz (2024), "Pencils Down! Automatic Rubric-based Evaluation of
Retrieve/Generate Systems" (RUBRIC / EXAM++): a model writes, per query, ``N`` concise
questions (default 10) a good response must answer, or key facts (the nugget variant);
every passage is graded 0-5 on each question, with the answer it gives. Passages here are a
turn's response statements (items ``stmt:<i>``, 1-based) and its cited links (items
``link:<id>``: title + the statements citing the link).

The question banks are editable JSON files (one per session, with a ``version``), written
once and never overwritten: a person can fix, add or delete questions and rerun grading
only (``mode="grade"`` reads the files and generates nothing). The grading requests carry
the bank's hash in their prompt version, so edited questions are graded afresh while the
journal still serves everything unchanged.

A passage's label is its best grade over the questions (``label="max"``) or the highest
grade reached by at least ``min_questions`` questions (``label="count"``); ``threshold``
(default 4) makes it binary (``extra["relevant"]``). The turn label ``coverage`` is the
share of questions some response statement answers at grade >= ``threshold``.
:func:`genir_eval.report.trec.write_qrels` and :func:`~genir_eval.report.trec.write_run` export
the labels for trec_eval / ir_measures.

Baselines with the same engine: ``rubric-thomas`` (Thomas et al., 2024, "Large language
models can accurately predict searcher preferences": 0-2 with the M/T/O aspects) and
``rubric-yesno``, each grading every passage directly.

Offline twin (the offline provider's handlers in :mod:`genir_eval.judges.offline.rubric`):
questions templated over the key phrases of the query and intent; a grade is the lexical
coverage of a question's terms in the passage, ``round(5 * coverage)``.
"""
