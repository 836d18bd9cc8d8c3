"""A small run directory built in the test, with a hostile response and task type."""

from __future__ import annotations

from pathlib import Path

import pytest

from genir_eval.rundir.folder import LinkRow, SessionRow, TurnRow, write_run
from genir_eval.rundir.status import run_status

HOSTILE = (
    "<script>document.title='pwned'</script><img src=x onerror=alert(1)><b id='injected'>x</b>"
)


def _matrix(links: list[LinkRow], judge: str) -> list[list[int]]:
    matrix = [[0] * 4 for _ in range(4)]
    for link in links:
        label = link.labels.get(judge)
        if link.gold is not None and label is not None:
            matrix[int(link.gold)][int(label)] += 1
    return matrix


def build_run(directory: Path, *, with_meta: bool = True, failures: int = 1) -> Path:
    """Six sessions, two turns each, two links per turn; session s1 carries ``HOSTILE``."""
    sessions, turns, links = [], [], []
    task_types = ["Factual QA", "Leisure", f"Ask {HOSTILE}", "事实问答"]
    for s in range(6):
        sid = f"s{s}" if s != 1 else f"s1{HOSTILE}"
        task = task_types[s % len(task_types)]
        for t in (1, 2):
            turns.append(
                TurnRow(
                    session_id=sid,
                    turn=t,
                    query=f"query {s}.{t} {HOSTILE if s == 1 else ''}",
                    response_text=f"answer {s}.{t} {HOSTILE if s == 1 else '服务器可以用于多种用途'}",
                    task_type=task,
                    scores={"sdcg_urge": 0.1 * s + 0.05 * t, "satisfaction.urs": 1.0 + s % 5},
                    gold_satisfaction=float(1 + (s + t) % 5),
                )
            )
            for link_id in (1, 2):
                links.append(
                    LinkRow(
                        session_id=sid,
                        turn=t,
                        link_id=link_id,
                        url=f"https://example.org/{s}/{t}/{link_id}?q=<script>",
                        title=HOSTILE if s == 1 else f"page {link_id}",
                        labels={
                            "link_usefulness.dna": float((s + link_id) % 4),
                            "link_usefulness.true": None if link_id == 2 else 2.0,
                        },
                        missing={"link_usefulness.true": "permanent: HTTP 400"}
                        if link_id == 2
                        else {},
                        gold=float((s + t + link_id) % 4),
                    )
                )
        sessions.append(
            SessionRow(
                session_id=sid,
                task_type=task,
                n_turns=2,
                scores={"sdcg_urge": 0.1 * s, "satisfaction.urs": 1.0 + s % 5},
                gold_satisfaction=float(1 + s % 5),
            )
        )
    meta = None
    if with_meta:
        meta = {
            "version": 1,
            "headline": "sdcg_urge",
            "correlations": {
                level: {
                    "sdcg_urge": {
                        "pearson": 0.4321,
                        "spearman": 0.5678 if level == "session" else 0.2345,
                        "kendall": 0.3456,
                        "n": 6 if level == "session" else 12,
                        "ci95": {
                            "pearson": [0.1, 0.7],
                            "spearman": [0.2, 0.8],
                            "kendall": [0.05, 0.6],
                        },
                    }
                }
                for level in ("turn", "session")
            },
            # as genir-eval meta names them (made-up figures; the matrix counts the links)
            "judges": {
                "link_usefulness.dna": {
                    "kind": "link_usefulness",
                    "link_usefulness": {
                        "spearman": 0.6104,
                        "kendall": 0.5,
                        "ci95": {"spearman": [0.31, 0.82], "kendall": [0.2, 0.7]},
                        "cohen_kappa_binary": 0.25,
                        "cohen_kappa_weighted": 0.4,
                        "mae": 0.75,
                        "pairwise_auc": 0.7,
                        "n": 24,
                        "missing": 0,
                        "confusion_matrix": {
                            "labels": [0, 1, 2, 3],
                            "matrix": _matrix(links, "link_usefulness.dna"),
                        },
                    },
                },
                "item-as": {
                    "kind": "item",
                    "item": {
                        "k": 5,
                        "turns": 12,
                        "turns_missing": 0,
                        "final": {"precision": 0.5, "recall": 0.8, "f1": 0.6154},
                        "first_iteration": {"f1": 0.55},
                        "ndcg@5": 0.9,
                        "ndcg@5_log_order": 0.85,
                        "mean_iterations": 1.5,
                    },
                },
            },
        }
    info = {
        "version": 1,
        "scenario": {"name": "test-run", "path": "scenarios/test.toml"},
        "started_at": "2025-01-01T00:00:00+00:00",
        "duration_s": 1.5,
        "usage": {"input_tokens": 10, "output_tokens": 5},
        "cost_usd": 0.0,
        "cache": {"hits": 3, "lookups": 10},
        "judges": [
            {
                "id": "link_usefulness.dna",
                "name": "link_usefulness.dna",
                "provider": "offline",
                "model": "offline",
                "labels": 4,
                "missing": 0,
            },
            # the judge whose one label (at most) is missing, as a run records it
            {"id": "link_usefulness.true", "labels": 40, "missing": min(failures, 1)},
        ],
        "failures": [
            {
                "judge": "link_usefulness.true",
                "session_id": f"s1{HOSTILE}",
                "turn": 1,
                "item": "link:2",
                "reason": f"permanent: {HOSTILE}",
            }
        ][:failures],
    }
    # the status a run works out from those counts (load_run works it out again)
    info["status"] = run_status(
        {j["id"]: j for j in info["judges"]}, (), [], max_missing=0.05, allow_permanent=False
    )
    return write_run(directory, links=links, turns=turns, sessions=sessions, meta=meta, info=info)


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return build_run(tmp_path / "run")


@pytest.fixture
def hostile_text() -> str:
    return HOSTILE


@pytest.fixture
def make_run_dir(tmp_path: Path):  # type: ignore[no-untyped-def]
    def make(name: str = "run", **options: object) -> Path:
        return build_run(tmp_path / name, **options)  # type: ignore[arg-type]

    return make
