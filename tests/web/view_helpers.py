"""A four-session run folder whose every figure the tests work out by hand."""

from __future__ import annotations

from pathlib import Path

from genir_eval.rundir.folder import LinkRow, SessionRow, TurnRow
from genir_eval.rundir.status import run_status
from genir_eval.rundir.writer import RunWriter

#: session -> (task, sdcg_urge, satisfaction.urs, users' satisfaction, [(dna label, gold)])
SESSIONS = {
    "s0": ("A", 1.0, 8.0, 2.0, [(3.0, 1.0), (2.0, 2.0)]),
    "s1": ("B", 2.0, 6.0, 4.0, [(1.0, 1.0)]),
    "s2": ("A", None, 4.0, 3.0, [(0.0, 3.0)]),
    "s3": ("B", 0.5, 2.0, 5.0, [(2.0, None)]),
}
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"
QUERIES = {
    "s0": "garden tools",
    "s1": "visa rules",
    "s2": "garden " + HOSTILE,
    "s3": "tax forms",
}


def tiny_run(
    directory: Path,
    *,
    name: str = "tiny",
    shift: dict[str, float] | None = None,
    without: frozenset[str] = frozenset(),
    prefix: str = "",
) -> Path:
    """Four sessions of one turn; s2's dna label of its one link failed (so s2's sdcg_urge is
    missing), with the reason in failures.jsonl. ``shift`` adds to a session's sdcg_urge,
    ``without`` leaves sessions out, ``prefix`` renames them (a second run to compare)."""
    writer = RunWriter(directory, csv=False, evidence=True, failures=True)
    sessions, turns, links, evidence = [], [], [], []
    for sid, (task, sdcg, urs, users, labels) in SESSIONS.items():
        if sid in without:
            continue
        if sdcg is not None:
            sdcg += (shift or {}).get(sid, 0.0)
        query = QUERIES[sid]
        sid = prefix + sid
        scores = {"sdcg_urge": sdcg, "satisfaction.urs": urs}
        sessions.append(SessionRow(sid, task, 1, scores, users))
        turns.append(TurnRow(sid, 1, query, f"answer of {sid} [1]", task, scores, users))
        judgments = []
        for link_id, (label, gold) in enumerate(labels, start=1):
            links.append(
                LinkRow(
                    sid,
                    1,
                    link_id,
                    f"https://x.example/{sid}/{link_id}",
                    "a title",
                    labels={"dna": label},
                    gold=gold,
                )
            )
            judgments.append(
                {
                    "judge": "dna",
                    "item": f"link:{link_id}",
                    "repeat": 0,
                    "value": label,
                    "missing_reason": None,
                    "reason": f"reason {sid} {link_id} {HOSTILE}",
                    "raw": HOSTILE,
                }
            )
        evidence.append(
            {
                "version": 1,
                "session_id": sid,
                "turn": 1,
                "statements": [[f"answer of {sid}", [1]]],
                "judgments": judgments,
            }
        )
    failures = [
        {
            "judge": "dna",
            "session_id": prefix + "s2",
            "turn": 1,
            "item": "link:2",
            "repeat": 0,
            "reason": "timeout: the model did not answer",
        }
    ]
    writer.add(links=links, turns=turns, sessions=sessions, evidence=evidence, failures=failures)
    labelled = sum(len(v[4]) for k, v in SESSIONS.items() if k not in without)
    counts = {"dna": {"labels": labelled, "missing": 1}}
    info = {
        "version": 1,
        "scenario": {"name": name, "meta": {"headline": "sdcg_urge"}},
        "headline": {"score": "sdcg_urge"},
        "judges": [
            {
                "id": "dna",
                "kind": "link_usefulness",
                "provider": "offline",
                "prompt_version": "abc123",
                "labels": labelled,
                "missing": 1,
            }
        ],
        "engines": [],
        "failures_total": 1,
        "status": run_status(counts, failures, [], max_missing=1.0, allow_permanent=True),
    }
    writer.finish(meta=None, info=info)
    return directory
