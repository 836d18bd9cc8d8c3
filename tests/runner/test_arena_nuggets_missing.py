"""``arena --nuggets`` (genir_eval/runner/arena_nuggets.py) counts every answer, and the
answers whose label is missing apart, never dropping one silently; each system's means are
over its scored answers.

Two systems answer the same two queries, offline: q1's answers cite a source, q2's cite
none, so q2 has no nuggets (the judge needs a cited source to make them: its label is
missing, with that reason) and each system has 2 answers, 1 missing."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace

from genir_eval.llm import offline_engine
from genir_eval.records import Link, Session, Statement, Turn, session_to_dict
from genir_eval.runner.arena_nuggets import nugget_judge, nugget_scores

SOURCE = "Backups run every night at two and are kept for thirty days."


def _session(qid: str, answer: str, cites: bool) -> Session:
    links = (Link(1, "https://docs.example/backups", "Backups", SOURCE),) if cites else ()
    statements = (Statement(answer, (1,) if cites else ()),)
    return Session(qid, (Turn(1, f"how are backups kept ({qid})", answer, statements, links),))


def _system(folder: Path, name: str, answer: str) -> SimpleNamespace:
    path = folder / f"{name}.jsonl"
    rows = [
        session_to_dict(_session("q1", answer + " [1]", True)),
        session_to_dict(_session("q2", answer, False)),
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return SimpleNamespace(name=name, path=path)


async def _score(systems: list[SimpleNamespace]) -> dict:
    judge = nugget_judge(systems, {})  # the default options, bound to every system's answers
    async with offline_engine() as engine:
        return await nugget_scores(systems, judge, engine, resamples=50, seed=0)


def test_an_answer_whose_label_is_missing_is_counted_as_missing(tmp_path: Path) -> None:
    systems = [
        _system(tmp_path, "a", "Backups run every night at two and are kept for thirty days."),
        _system(tmp_path, "b", "Backups are made sometimes."),
    ]
    table = asyncio.run(_score(systems))["systems"]
    assert list(table) == ["a", "b"]
    for row in table.values():
        assert (row["answers"], row["missing"]) == (2, 1)
        # the mean is over the one scored answer (q1's); one query: no interval
        assert row["ci95"]["nugget_recall"] is None
    # a restates the source's facts, b does not: a's recall is higher
    assert table["a"]["nugget_recall"] > table["b"]["nugget_recall"]
