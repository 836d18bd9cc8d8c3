"""What a person labels: the items of a finished run, one kind of question each.

An :class:`Item` is one question put to a person, built from a run folder's rows (what the
judges said) and the run's sessions (the text the person reads): a link's usefulness on
URGE's 0-3 scale, whether a cited passage supports its statement (TREC 2024 RAG's
full/partial/none), whether an answer gives a nugget of its query (TREC 2024 RAG's
support/partial/not, the nugget beside the answer), a turn's or a session's satisfaction on
the users' 1-5 scale. Each
item carries the judges' labels on the person's scale, so the queue can pick the ones
the judges are least sure of and the store can keep what the person was shown against.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from genir_eval.errors import InputError
from genir_eval.ingest import load_sessions
from genir_eval.ingest.loader import Format
from genir_eval.judges.kinds import judge_kind
from genir_eval.judges.nuggets.kind import label_nuggets
from genir_eval.kind_names import (
    CITATION_SUPPORT,
    LINK_USEFULNESS,
    NUGGET_GOLD,
    PAIRWISE,
    SATISFACTION,
)
from genir_eval.records import SUPPORT_VALUE, Session, Turn
from genir_eval.report.evidence import read_evidence
from genir_eval.rundir import Run
from genir_eval.rundir.files import file_digest
from genir_eval.rundir.rows import EVIDENCE_FILE
from genir_eval.runner.label.keys import item_key, parse_item_key

__all__ = [
    "Choice",
    "Pane",
    "Item",
    "QUEUE_KINDS",
    "CHOICES",
    "run_items",
    "run_sessions",
    "NUGGET_QUEUE",
    "NUGGET_WORDS",
    "nugget_key",
    "nugget_where",
]

TURN_SATISFACTION = "turn_satisfaction"
SESSION_SATISFACTION = "session_satisfaction"
#: The queue of (nugget, answer) items, named as the gold field its labels become.
NUGGET_QUEUE = NUGGET_GOLD
#: A nugget label's value -> the assignment word (the gain the nugget measures give it).
NUGGET_WORDS = {1.0: "support", 0.5: "partial_support", 0.0: "not_support"}
_NUGGET_VALUES = {word: value for value, word in NUGGET_WORDS.items()}


@dataclass(frozen=True)
class Choice:
    """One answer a person can give: the value stored, the key that gives it, its words."""

    value: float
    key: str
    words: str


@dataclass(frozen=True)
class Pane:
    """A block of text the person reads (a heading and the log's text, shown as text)."""

    heading: str
    text: str


@dataclass(frozen=True)
class Item:
    """One question of a queue.

    ``key`` names it in the store and the API (:func:`~genir_eval.runner.label.keys.item_key`:
    ``link:["<session>",<turn>,<link>]``, ``support:[...]``, ``turn:[...]``,
    ``session:[...]``); ``judged`` maps each judge of the kind to its label on the
    person's scale (``None`` where it is missing); ``panes`` are what the page shows,
    side by side when there are two.
    """

    key: str
    queue: str
    session_id: str
    turn: int | None
    panes: tuple[Pane, ...]
    judged: Mapping[str, float | None]
    #: the item's own answers where they differ from the queue's (a pair's left and right)
    choices: tuple[Choice, ...] | None = None

    @property
    def judge_values(self) -> list[float]:
        return [v for v in self.judged.values() if v is not None]

    @property
    def expected(self) -> float | None:
        """The judges' expected label: the mean of their labels (``None`` when none)."""
        values = self.judge_values
        return sum(values) / len(values) if values else None


#: Each queue's answers, in the order the keys run (the scales' words as the judges'
#: prompts give them: prompts/link_dna.en.txt, TREC 2024 RAG's support levels, the users'
#: 1-5 satisfaction of URGE).
CHOICES: dict[str, tuple[Choice, ...]] = {
    LINK_USEFULNESS: (
        Choice(0, "0", "not useful: off-topic, wrong, or does not serve the need"),
        Choice(1, "1", "somewhat useful: related but adds little"),
        Choice(2, "2", "fairly useful: serves the need, with gaps"),
        Choice(3, "3", "very useful: directly serves the need; the answer relies on it"),
    ),
    CITATION_SUPPORT: (
        Choice(SUPPORT_VALUE["none"], "n", "none: the passage does not support the statement"),
        Choice(SUPPORT_VALUE["partial"], "p", "partial: supports part of the statement"),
        Choice(SUPPORT_VALUE["full"], "f", "full: supports all of the statement"),
    ),
    TURN_SATISFACTION: tuple(
        Choice(v, str(v), w)
        for v, w in zip(
            range(1, 6),
            ("very dissatisfied", "dissatisfied", "neutral", "satisfied", "very satisfied"),
            strict=True,
        )
    ),
}
CHOICES[SESSION_SATISFACTION] = CHOICES[TURN_SATISFACTION]
CHOICES[NUGGET_QUEUE] = (
    Choice(0.0, "n", "not: the answer does not give the nugget"),
    Choice(0.5, "p", "partial: the answer gives part of the nugget"),
    Choice(1.0, "y", "support: the answer gives the nugget, in any words"),
)
#: A pair's label in its own terms (genir_eval/runner/label/pairs.py shows them as left and right).
CHOICES[PAIRWISE] = (
    Choice(1.0, "a", "answer a is better"),
    Choice(0.0, "b", "answer b is better"),
    Choice(0.5, "t", "tie"),
)
#: The queues a run can offer, in the order the pages list them.
QUEUE_KINDS = (
    LINK_USEFULNESS,
    CITATION_SUPPORT,
    NUGGET_QUEUE,
    TURN_SATISFACTION,
    SESSION_SATISFACTION,
    PAIRWISE,
)


def users_scale(value: float | None) -> float | None:
    """A satisfaction judge's 1-10 rating on the users' 1-5 scale (1 -> 1, 10 -> 5), as the
    meta-evaluation maps it."""
    return None if value is None else 1.0 + (float(value) - 1.0) * 4.0 / 9.0


def run_sessions(run: Run) -> dict[str, Session]:
    """The sessions the run judged, read again from the input ``run.json`` names."""
    given = run.info.get("input") or {}
    path = given.get("path")
    if not path:
        raise InputError(f"{run.directory / 'run.json'}: input.path: the run names no input")
    if not Path(path).is_file():
        raise InputError(
            f"{run.directory / 'run.json'}: input.path: {path} is not there any more "
            "(the labelling page shows the sessions' text from it)"
        )
    recorded = given.get("sha256")
    if recorded and file_digest(Path(path)) != recorded:
        raise InputError(
            f"{run.directory / 'run.json'}: input.sha256: {path} changed since the run "
            f"(SHA-256 {recorded[:12]} then, {file_digest(Path(path))[:12]} now): the labels "
            "would be about other text than the judges read; run the scenario again"
        )
    loaded = load_sessions(
        path, format=cast(Format | None, given.get("format")), sources=given.get("sources")
    )
    return {s.session_id: s for s in loaded.sessions}


def _kinds(run: Run) -> dict[str, str]:
    """Judge id -> its kind, as ``run.json`` lists them."""
    return {str(j["id"]): str(j["kind"]) for j in run.info.get("judges") or []}


def _turn(session: Session | None, index: int) -> Turn | None:
    if session is None:
        return None
    for turn in session.turns:
        if turn.index == index:
            return turn
    return None


def _conversation(turn: Turn) -> str:
    return f"{turn.query}\n\n{turn.response_text}"


def _link_items(
    run: Run, sessions: Mapping[str, Session], kinds: Mapping[str, str]
) -> Iterator[Item]:
    judges = [j for j, k in kinds.items() if k == LINK_USEFULNESS]
    if not judges:
        return
    for row in run.iter_rows("links"):
        sid, index, link_id = str(row["session_id"]), int(row["turn"]), int(row["link_id"])
        turn = _turn(sessions.get(sid), index)
        link = turn.link(link_id) if turn is not None else None
        labels = row.get("labels") or {}
        source = link.text if link is not None and link.text else "(no source text in the log)"
        yield Item(
            key=item_key("link", sid, index, link_id),
            queue=LINK_USEFULNESS,
            session_id=sid,
            turn=index,
            panes=(
                Pane("Query and answer", _conversation(turn) if turn else ""),
                Pane(
                    f"Link [{link_id}]",
                    f"{row.get('title') or ''}\n{row.get('url') or ''}\n\n{source}",
                ),
            ),
            judged={j: _number(labels.get(j)) for j in judges},
        )


def _support_items(run: Run, sessions: Mapping[str, Session]) -> Iterator[Item]:
    grouped: dict[tuple[str, int, int, int], dict[str, float | None]] = defaultdict(dict)
    texts: dict[tuple[str, int, int, int], tuple[str, str]] = {}
    for row in run.citations:
        where = (row.session_id, row.turn, row.statement, row.link_id)
        grouped[where][row.judge] = row.value
        texts.setdefault(where, (row.statement_text, f"{row.title}\n{row.url}"))
    for where, judged in grouped.items():
        sid, index, statement, link_id = where
        turn = _turn(sessions.get(sid), index)
        link = turn.link(link_id) if turn is not None else None
        passage = link.text if link is not None and link.text else "(no source text in the log)"
        statement_text, heading = texts[where]
        yield Item(
            key=item_key("support", sid, index, statement, link_id),
            queue=CITATION_SUPPORT,
            session_id=sid,
            turn=index,
            panes=(
                Pane(f"Statement {statement}", statement_text),
                Pane(f"Cited passage [{link_id}]", f"{heading}\n\n{passage}"),
            ),
            judged=dict(judged),
        )


def _satisfaction_items(
    run: Run, sessions: Mapping[str, Session], kinds: Mapping[str, str]
) -> Iterator[Item]:
    judges = [j for j, k in kinds.items() if k == SATISFACTION]
    if not judges:
        return
    for row in run.iter_rows("turns"):
        sid, index = str(row["session_id"]), int(row["turn"])
        scores = row.get("scores") or {}
        yield Item(
            key=item_key("turn", sid, index),
            queue=TURN_SATISFACTION,
            session_id=sid,
            turn=index,
            panes=(
                Pane(
                    f"Turn {index}", f"{row.get('query') or ''}\n\n{row.get('response_text') or ''}"
                ),
            ),
            judged={j: users_scale(_number(scores.get(j))) for j in judges},
        )
    for row in run.iter_rows("sessions"):
        sid = str(row["session_id"])
        session = sessions.get(sid)
        scores = row.get("scores") or {}
        turns = session.turns if session is not None else ()
        yield Item(
            key=item_key("session", sid),
            queue=SESSION_SATISFACTION,
            session_id=sid,
            turn=None,
            panes=tuple(Pane(f"Turn {t.index}", _conversation(t)) for t in turns),
            judged={j: users_scale(_number(scores.get(j))) for j in judges},
        )


def nugget_key(session_id: str, turn: int, nugget_id: str) -> str:
    """A (nugget, answer) item's key (:func:`nugget_where` reads it back)."""
    return item_key("nugget", session_id, turn, nugget_id)


def nugget_where(key: str) -> tuple[str, int, str]:
    """The session id, turn and nugget id of a :func:`nugget_key`."""
    _, (session_id, turn, nugget_id) = parse_item_key(key)
    return session_id, turn, nugget_id


def _nugget_items(
    run: Run, sessions: Mapping[str, Session], kinds: Mapping[str, str]
) -> Iterator[Item]:
    """Each nugget of each judged turn beside the answer, with every nugget judge's
    assignment on the queue's scale (0, 0.5, 1), read from the run's evidence (a judge whose
    kind assigns nuggets, its label items that are its own turn score)."""
    own = {
        judge: judge_kind(kind).own_items
        for judge, kind in kinds.items()
        if judge_kind(kind).judges_nuggets
    }
    judged: dict[tuple[str, int, str], dict[str, float | None]] = defaultdict(dict)
    shown: dict[tuple[str, int, str], Mapping[str, Any]] = {}
    evidence = read_evidence(run.directory / EVIDENCE_FILE, sessions)
    for (sid, index), turn_evidence in evidence.items():
        if index is None:
            continue
        for judgment in turn_evidence.judgments:
            if judgment.item not in own.get(judgment.judge, frozenset()):
                continue
            for nugget in label_nuggets(judgment.value):
                if nugget.get("id") is not None:
                    where = (sid, index, str(nugget["id"]))
                    word = nugget.get("assignment")
                    judged[where][judgment.judge] = _NUGGET_VALUES.get(str(word))
                    shown.setdefault(where, nugget)
    for where, by_judge in judged.items():
        sid, index, nugget_id = where
        nugget = shown[where]
        turn = _turn(sessions.get(sid), index)
        grade = nugget.get("grade")
        importance = str(nugget.get("importance") or "")
        if isinstance(grade, (int, float)):
            importance += f", grade {grade:g}"
        yield Item(
            key=nugget_key(sid, index, nugget_id),
            queue=NUGGET_QUEUE,
            session_id=sid,
            turn=index,
            panes=(
                Pane(f"Nugget {nugget_id} ({importance})", str(nugget.get("text") or "")),
                Pane("Query and answer", _conversation(turn) if turn else ""),
            ),
            judged=dict(by_judge),
        )


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def run_items(run: Run, sessions: Mapping[str, Session]) -> dict[str, list[Item]]:
    """Every item of ``run`` a person can label, by queue (only the queues whose kind a
    judge of the run labelled; an item no judge labelled is kept, last in its queue)."""
    kinds = _kinds(run)
    queues: dict[str, list[Item]] = {name: [] for name in QUEUE_KINDS}
    found: Iterable[Item] = [
        *_link_items(run, sessions, kinds),
        *(_support_items(run, sessions) if CITATION_SUPPORT in kinds.values() else ()),
        *_nugget_items(run, sessions, kinds),
        *_satisfaction_items(run, sessions, kinds),
    ]
    for item in found:
        queues[item.queue].append(item)
    return {name: items for name, items in queues.items() if items}
