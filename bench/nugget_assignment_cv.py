"""The nugget twin's assignment design, chosen by cross-validation over topics on labelled
(nugget, answer) pairs.

Reads a canonical JSONL file of answers carrying people's nugget labels
(``gold.nugget_assignments``) and the nugget file they label (default: the development set in
``fixtures/nuggets/``: answers.jsonl and graded.jsonl, passage-length nuggets graded 1-4, 52
pairs of six topics). Every design of :mod:`genir_eval.judges.nuggets.coverage` scores every
pair once; a design's marks (partial, full) are part of it, chosen with it. Then, ``--repeats``
times ``--folds``-fold over the topics (:func:`genir_eval.meta.crossval.topic_folds`, seeded):
on the other folds' topics, each design's partial mark is the one with the highest Cohen's
kappa on "gives the nugget" (support or partial support) and its full mark the one with the
highest three-level kappa given it; the design with the highest training kappa (ties to
``overlap``, the simplest) labels the fold's topics it never saw. The same folds do the same
for ``overlap`` alone. Printed: each design's in-sample kappa at its best marks (optimistic),
the pooled out-of-sample kappa of choosing among all and of ``overlap`` alone (mean over
repeats, with a 95% interval from a bootstrap over topics of the first repeat's pooled
labels), how often each design was chosen, the twin's former reading (``passage``, fixed
marks) on the same pairs, and the design to adopt (the one chosen on all topics when
choosing beats ``overlap`` out of sample, else ``overlap``) with its marks.

    python bench/nugget_assignment_cv.py
    python bench/nugget_assignment_cv.py --answers A.jsonl --nuggets N.jsonl --folds 3 --repeats 20
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from genir_eval.ingest import iter_sessions
from genir_eval.judges.nuggets import read_nugget_file
from genir_eval.judges.nuggets.coverage import DESIGNS, design_score
from genir_eval.judges.nuggets.judge import query_id
from genir_eval.judges.nuggets.twin import passage_assignment
from genir_eval.judges.offline.semantic import evidence_name
from genir_eval.meta.crossval import topic_folds
from genir_eval.meta.stats import cohen_kappa

ROOT = Path(__file__).resolve().parents[1]
LEVELS = ("support", "partial_support", "not_support")
GRID = [round(0.1 + 0.05 * i, 2) for i in range(17)]  # 0.10 ... 0.90

Pair = tuple[str, str, str, str]  # topic, nugget text, answer, people's label


def read_pairs(answers: Path, nuggets: Path) -> list[Pair]:
    """Every labelled (nugget, answer) pair: its topic, the texts and people's label."""
    sets = read_nugget_file(nuggets)
    out: list[Pair] = []
    for session in iter_sessions(answers):
        labels = session.gold.nugget_assignments if session.gold else None
        for turn in session.turns:
            given = labels[turn.index - 1] if labels else None
            qid = query_id(session, turn)
            if not given or qid not in sets:
                continue
            for nugget in sets[qid].nuggets:
                if nugget.id in given:
                    out.append((qid, nugget.text, turn.response_text, given[nugget.id]))
    return out


def _gives(label: str) -> int:
    return int(label != "not_support")


def kappa2(pred: Sequence[str], gold: Sequence[str]) -> float:
    value = cohen_kappa([_gives(p) for p in pred], [_gives(g) for g in gold], labels=[0, 1])
    return -1.0 if value is None else value


def kappa3(pred: Sequence[str], gold: Sequence[str]) -> float:
    value = cohen_kappa(list(pred), list(gold), labels=list(LEVELS))
    return -1.0 if value is None else value


def label(score: float, partial: float, full: float) -> str:
    return "support" if score >= full else "partial_support" if score >= partial else "not_support"


def fit(scores: Sequence[float], gold: Sequence[str]) -> tuple[float, float, float]:
    """The marks (partial, full) with the best kappas on these pairs, and the binary kappa."""
    partial = max(GRID, key=lambda m: (kappa2([label(s, m, 2.0) for s in scores], gold), -m))
    fulls = [m for m in GRID if m > partial] or [1.0]
    full = max(fulls, key=lambda m: (kappa3([label(s, partial, m) for s in scores], gold), m))
    return partial, full, kappa2([label(s, partial, full) for s in scores], gold)


def choose(
    scores: dict[str, list[float]], gold: Sequence[str], idx: Sequence[int], designs: Sequence[str]
) -> tuple[str, float, float]:
    """The design (and marks) with the best training kappa on pairs ``idx``."""
    best: tuple[float, int, str, float, float] | None = None
    for order, name in enumerate(designs):
        partial, full, value = fit([scores[name][i] for i in idx], [gold[i] for i in idx])
        key = (value, -order, name, partial, full)
        if best is None or key[:2] > best[:2]:
            best = key
    assert best is not None
    return best[2], best[3], best[4]


def cross_validated(
    pairs: list[Pair], scores: dict[str, list[float]], designs: Sequence[str], folds: list
) -> tuple[list[float], list[list[str]], Counter[str]]:
    """Per repeat: the pooled out-of-sample binary kappa and labels; designs chosen."""
    gold = [p[3] for p in pairs]
    figures, labelled, chosen = [], [], Counter[str]()
    for partition in folds:
        predicted = [""] * len(pairs)
        for training, test in partition:
            train = [i for i, p in enumerate(pairs) if p[0] in set(training)]
            name, partial, full = choose(scores, gold, train, designs)
            chosen[name] += 1
            for i, p in enumerate(pairs):
                if p[0] in set(test):
                    predicted[i] = label(scores[name][i], partial, full)
        figures.append(kappa2(predicted, gold))
        labelled.append(predicted)
    return figures, labelled, chosen


def topic_interval(
    pairs: list[Pair], predicted: list[str], n_boot: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """95% percentile interval of the binary kappa, resampling whole topics."""
    topics = sorted({p[0] for p in pairs})
    members = {t: [i for i, p in enumerate(pairs) if p[0] == t] for t in topics}
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_boot):
        idx = [i for k in rng.integers(0, len(topics), len(topics)) for i in members[topics[k]]]
        value = cohen_kappa(
            [_gives(predicted[i]) for i in idx], [_gives(pairs[i][3]) for i in idx], labels=[0, 1]
        )
        if value is not None:
            values.append(value)
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", default=str(ROOT / "fixtures" / "nuggets" / "answers.jsonl"))
    parser.add_argument("--nuggets", default=str(ROOT / "fixtures" / "nuggets" / "graded.jsonl"))
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    pairs = read_pairs(Path(args.answers), Path(args.nuggets))
    topics = sorted({p[0] for p in pairs})
    gold = [p[3] for p in pairs]
    print(f"{len(pairs)} labelled pairs of {len(topics)} topics; evidence: {evidence_name()}")
    print(f"people say the answer gives the nugget in {np.mean([_gives(g) for g in gold]):.3f}")
    scores = {name: [design_score(name, p[1], p[2]) for p in pairs] for name in DESIGNS}
    print("in sample, each design at its best marks (optimistic):")
    for name in DESIGNS:
        partial, full, value = fit(scores[name], gold)
        print(f"  {name:10s} kappa {value:+.3f} (partial {partial}, full {full})")
    former = [passage_assignment(p[1], p[2])[0] for p in pairs]
    print(f"  {'passage':10s} kappa {kappa2(former, gold):+.3f} (the former reading, fixed marks)")
    folds = topic_folds(topics, args.folds, args.repeats, args.seed)
    designs = list(DESIGNS)  # overlap first: ties go to it
    every, labelled, chosen = cross_validated(pairs, scores, designs, folds)
    alone, alone_labelled, _ = cross_validated(pairs, scores, ["overlap"], folds)
    lo, hi = topic_interval(pairs, labelled[0])
    alo, ahi = topic_interval(pairs, alone_labelled[0])
    print(f"out of sample, {args.repeats} x {args.folds}-fold over topics (seed {args.seed}):")
    print(
        f"  choosing among {', '.join(designs)}: kappa {np.mean(every):+.3f} [{lo:.3f}, {hi:.3f}]"
    )
    print(f"  overlap alone:  kappa {np.mean(alone):+.3f} [{alo:.3f}, {ahi:.3f}]")
    print(f"  chosen: {dict(chosen)}")
    if np.mean(every) > np.mean(alone):
        name, partial, full = choose(scores, gold, range(len(pairs)), designs)
        print(f"adopt: {name} (partial {partial}, full {full}): choosing beats overlap")
    else:
        _, partial, full = choose(scores, gold, range(len(pairs)), ["overlap"])
        print(f"adopt: overlap (partial {partial}, full {full}): choosing does not beat it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
