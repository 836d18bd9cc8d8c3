"""One session of an indexed run, gathered for its page and the API: each turn with its
answer, the links it cites and the statements they support, every judgment with its label,
reason, evidence and the request's digest, the judges' tokens and cost, and people's labels
(the annotators' link labels, the users' ratings, the labelling page's labels) beside the
judges'."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from genir_eval.kind_names import CITATION_SUPPORT, LINK_USEFULNESS
from genir_eval.rundir.rows import (
    CITATIONS_FILE,
    EVIDENCE_FILE,
    FAILURES_FILE,
    LINKS_FILE,
    TURNS_FILE,
)
from genir_eval.runner.label.items import NUGGET_QUEUE, SESSION_SATISFACTION, TURN_SATISFACTION
from genir_eval.runner.label.keys import item_key, parse_item_key
from genir_eval.runner.label.queue import StoreOwner, store_owner
from genir_eval.runner.label.rows import QUEUE_KEY_KIND
from genir_eval.runner.label.store import STORE_FILE, LabelStore
from genir_eval.runner.web.index import RunIndex

__all__ = ["session_detail", "judge_costs", "label_key", "anchor"]

JOURNAL_FILE = "journal.sqlite"


def anchor(*parts: Any) -> str:
    """An element id from ``parts`` that is safe in HTML and a URL fragment."""
    text = "-".join(str(p) for p in parts)
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)


def label_key(queue: str, session_id: str, *where: Any) -> str:
    """The labelling page's key of an item (runner/label/items.py's ``Item.key``, written
    by runner/label/keys.py: the queue's kind of key and its parts)."""
    return item_key(QUEUE_KEY_KIND[queue], session_id, *(int(w) for w in where))


def judge_costs(info: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each judge's calls, tokens and cost over the run (run.json's engines, by task: a
    judge's own name, or its kind's steps for a judge of several, ``item.answer``)."""
    out: dict[str, dict[str, Any]] = {}
    usage = [u for e in info.get("engines") or [] for u in e.get("usage") or []]
    for judge in info.get("judges") or []:
        name = str(judge.get("id") or judge.get("name"))
        stem = name.split("-")[0]
        rows = [
            u
            for u in usage
            if u.get("task") == name
            or ("." not in name and str(u.get("task")).split(".")[0] == stem)
        ]
        calls = sum(int(u.get("calls") or 0) for u in rows)
        out[name] = {
            "model": judge.get("model"),
            "provider": judge.get("provider"),
            "prompt_version": judge.get("prompt_version"),
            "calls": calls,
            "input_tokens": sum(int(u.get("input_tokens") or 0) for u in rows),
            "output_tokens": sum(int(u.get("output_tokens") or 0) for u in rows),
            "cost_usd": sum(float(u.get("cost_usd") or 0.0) for u in rows),
        }
    return out


def _journal(directory: Path, session_id: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    """The session's requests in the run's journal, by (judge, turn, item, repeat)."""
    path = directory / JOURNAL_FILE
    if not path.is_file():
        return {}
    prefix = json.dumps([session_id], ensure_ascii=False)[:-1] + ","
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            rows = db.execute(
                "SELECT turn, item, judge, repeat, status, fingerprint, attempts, error_message "
                "FROM journal WHERE key >= ? AND key < ?",
                (prefix, prefix + "\U0010ffff"),
            ).fetchall()
    except sqlite3.Error:
        return {}
    return {
        (r[2], r[0], r[1], r[3]): {
            "status": r[4],
            "fingerprint": r[5],
            "attempts": r[6],
            "error": r[7],
        }
        for r in rows
    }


def _spans(evidence: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each marker of the answer's segments (a span judge, the annotators, the user): how
    many it marked, and how far its marks overlap the annotators' (Jaccard)."""
    total = len(evidence.get("segments") or [])
    marks = {str(k): set(v or []) for k, v in (evidence.get("spans") or {}).items()}
    people = marks.get("gold:annotators")
    out = []
    for who, marked in marks.items():
        both = people | marked if people is not None else set()
        out.append(
            {
                "by": who,
                "marked": len(marked),
                "segments": total,
                "jaccard_annotators": len(people & marked) / len(both)
                if people is not None and both
                else None,
            }
        )
    return out


def _request_of(
    journal: Mapping[tuple[Any, ...], dict[str, Any]], judge: Any, turn: int
) -> dict[str, Any] | None:
    """The request a judgment came from when it shares one with others (a listwise call
    labels every link of a turn, a satisfaction call every turn of a session)."""
    for where in ((judge, turn), (judge, None)):
        for key, request in journal.items():
            if key[:2] == where:
                return request
    return None


@functools.lru_cache(maxsize=64)
def _owner(directory: Path) -> StoreOwner:
    """The run a store over ``directory`` must belong to (read once per folder)."""
    return store_owner(directory)


def _people(directory: Path, session_id: str) -> dict[str, dict[str, float | None]]:
    """The labelling page's labels of the session's items: key -> labeller -> value, from
    the run folder's store opened read only, its owner checked (a store of another run, or a
    hand-edited one, is a located :class:`InputError`, never read as this run's)."""
    path = directory / STORE_FILE
    if not path.is_file():
        return {}
    store = LabelStore(path, readonly=True, owner=_owner(directory))
    out: dict[str, dict[str, float | None]] = {}
    for queue in (
        LINK_USEFULNESS,
        CITATION_SUPPORT,
        NUGGET_QUEUE,
        TURN_SATISFACTION,
        SESSION_SATISFACTION,
    ):
        for key, by in store.labels(queue).items():
            if parse_item_key(key)[1][0] == session_id:
                out[key] = {who: event.value for who, event in by.items()}
    return out


def session_detail(index: RunIndex, session_id: str) -> dict[str, Any]:
    """Everything the run folder keeps about ``session_id`` (a :class:`LookupError` when the
    run has no such session)."""
    row = index.row_of(session_id)
    journal = _journal(index.directory, session_id)
    people = _people(index.directory, session_id)
    turns: dict[int, dict[str, Any]] = {}
    for t in index.lines(TURNS_FILE, row):
        turns[int(t["turn"])] = {
            "turn": int(t["turn"]),
            "query": t.get("query") or "",
            "answer": t.get("response_text") or "",
            "task_type": t.get("task_type"),
            "scores": t.get("scores") or {},
            "users": {
                "satisfaction": t.get("gold_satisfaction"),
                "thumbs": t.get("thumbs"),
                "feedback": t.get("feedback"),
            },
            "people": people.get(label_key(TURN_SATISFACTION, session_id, t["turn"]), {}),
            "links": [],
            "statements": [],
            "judgments": [],
            "citations": [],
            "spans": [],
            "failures": [],
        }
    _add_links(index, row, turns, people, session_id)
    _add_evidence(index, row, turns, journal)
    _add_citations(index, row, turns, people, session_id)
    session_failures: list[dict[str, Any]] = []
    for f in index.lines(FAILURES_FILE, row):
        failure = {k: f.get(k) for k in ("judge", "turn", "item", "repeat", "reason")}
        turn = turns.get(int(f["turn"])) if f.get("turn") is not None else None
        (turn["failures"] if turn is not None else session_failures).append(failure)
    scores = {name: _value(index.columns[name][row]) for name in index.scores}
    return {
        "run": index.title,
        "session_id": session_id,
        "task_type": index.tasks[row] or None,
        "n_turns": int(index.columns["n_turns"][row]),
        "headline": index.headline,
        "scores": scores,
        "users": {"satisfaction": _value(index.columns["gold_satisfaction"][row])},
        "people": people.get(label_key(SESSION_SATISFACTION, session_id), {}),
        "label_key": label_key(SESSION_SATISFACTION, session_id),
        "disagreements": {name: _value(index.columns[name][row]) for name in index.disagreements},
        "failures": session_failures,
        "judges": judge_costs(index.info),
        "turns": [turns[k] for k in sorted(turns)],
    }


def _add_links(
    index: RunIndex,
    row: int,
    turns: dict[int, dict[str, Any]],
    people: Mapping[str, Any],
    session_id: str,
) -> None:
    """Each turn's links, with the judges', the annotators' and people's labels."""
    for link in index.lines(LINKS_FILE, row):
        turn = turns.get(int(link["turn"]))
        if turn is not None:
            key = label_key(LINK_USEFULNESS, session_id, link["turn"], link["link_id"])
            turn["links"].append(
                {
                    **{
                        k: link.get(k)
                        for k in ("link_id", "url", "title", "cited", "labels", "missing")
                    },
                    "annotators": link.get("gold"),
                    "people": people.get(key, {}),
                    "label_key": key,
                }
            )


def _add_evidence(
    index: RunIndex, row: int, turns: dict[int, dict[str, Any]], journal: Mapping[Any, Any]
) -> None:
    """Each turn's statements, marked spans and judgments, with each judgment's request."""
    for evidence in index.lines(EVIDENCE_FILE, row):
        turn = turns.get(int(evidence.get("turn") or 0))
        if turn is None:
            continue
        turn["statements"] = [
            {"text": s[0], "links": list(s[1])} for s in evidence.get("statements") or []
        ]
        turn["spans"] = _spans(evidence)
        for j in evidence.get("judgments") or []:
            where = (j.get("judge"), turn["turn"], j.get("item"), j.get("repeat"))
            request = journal.get(where) or _request_of(journal, j.get("judge"), turn["turn"])
            turn["judgments"].append(
                {
                    **{
                        k: j.get(k)
                        for k in (
                            "judge",
                            "item",
                            "repeat",
                            "value",
                            "missing_reason",
                            "reason",
                            "raw",
                        )
                    },
                    "anchor": anchor(
                        "j", turn["turn"], j.get("judge"), j.get("item"), j.get("repeat")
                    ),
                    "request": request,
                }
            )


def _add_citations(
    index: RunIndex,
    row: int,
    turns: dict[int, dict[str, Any]],
    people: Mapping[str, Any],
    session_id: str,
) -> None:
    """Each turn's citations with their support, the judge's and people's."""
    for c in index.lines(CITATIONS_FILE, row):
        turn = turns.get(int(c["turn"]))
        if turn is not None:
            key = label_key(CITATION_SUPPORT, session_id, c["turn"], c["statement"], c["link_id"])
            turn["citations"].append(
                {
                    **{
                        k: c.get(k)
                        for k in (
                            "statement",
                            "link_id",
                            "judge",
                            "support",
                            "value",
                            "evidence",
                            "missing_reason",
                        )
                    },
                    "people": people.get(key, {}),
                    "label_key": key,
                }
            )


def _value(number: float) -> float | None:
    return None if number != number else float(number)
