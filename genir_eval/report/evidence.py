"""``evidence.jsonl``: what the report shows of each turn, beyond its scores.

One row per turn (and one per session, ``turn: null``, for judgments of a whole session):
the response's statements with their citation numbers, the offsets of its text units
(segments), which units the gold marks and each spans judge call useful, and every judgment
with its evidence (value, why it is missing, the judge's stated reason, the raw reply).

Rows are built one session at a time (:func:`evidence_rows`), so a runner that streams
sessions can write them window by window; the report reads back only the sessions it shows
(:func:`read_evidence`), in one pass over the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genir_eval.errors import InputError
from genir_eval.judges.base import Label
from genir_eval.records import Session, Turn
from genir_eval.rundir.folder import EVIDENCE_FILE

__all__ = [
    "EVIDENCE_FILE",
    "MAX_RAW_CHARS",
    "Judgment",
    "TurnEvidence",
    "evidence_rows",
    "judgment_reason",
    "read_evidence",
]

EVIDENCE_VERSION = 1
# A raw reply longer than this is cut (the journal keeps it whole): one runaway reply must
# not make the file, or the report, unreadable.
MAX_RAW_CHARS = 8_000
# Keys under which judges state why they gave a label, in the order they are looked for.
REASON_KEYS = ("reasoning", "reason", "rationale", "explanation", "critique", "justification")
GOLD_USER = "gold:user"
_ID_KEY = '"session_id": '
GOLD_ANNOTATORS = "gold:annotators"


@dataclass(frozen=True)
class Judgment:
    """One label as the report shows it: ``value`` is ``None`` when missing (with why)."""

    judge: str
    item: str
    repeat: int = 0
    value: Any = None
    missing_reason: str | None = None
    reason: str | None = None
    raw: str | None = None
    raw_with_session: bool = False


@dataclass(frozen=True)
class TurnEvidence:
    """What ``evidence.jsonl`` holds for one turn (``turn`` is ``None`` for the session)."""

    session_id: str
    turn: int | None
    statements: tuple[tuple[str, tuple[int, ...]], ...] = ()
    segments: tuple[tuple[int, int], ...] = ()
    spans: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    judgments: tuple[Judgment, ...] = ()


def _reason_in(obj: Any) -> str | None:
    if isinstance(obj, Mapping):
        for key in REASON_KEYS:
            value = obj.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


def judgment_reason(label: Label) -> str | None:
    """The reason the judge gave for ``label``: a ``reasoning``/``reason``/``critique``...
    field of its parsed reply (or of the raw reply read as JSON), else ``None``."""
    found = _reason_in(label.extra) or _reason_in(label.value)
    if found or not label.raw:
        return found
    text = label.raw.strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        parsed = json.loads(text[start : end + 1])
    except ValueError:
        return None
    if not isinstance(parsed, Mapping):
        return None
    # a reply labelling several items: the item's own reason before the reply's
    return _item_reason(parsed, label) or _reason_in(parsed) or _reason_in(parsed.get("session"))


def _item_reason(reply: Mapping[str, Any], label: Label) -> str | None:
    """The reason of one item of a reply that labels several: ``reasons[<id>]`` (a listwise
    reply's, keyed as its labels) or the block of its turn in ``turns`` (a session reply)."""
    reasons = reply.get("reasons")
    item = label.key.item.rpartition(":")[2]
    if isinstance(reasons, Mapping) and isinstance(reasons.get(item), str):
        return str(reasons[item]).strip() or None
    turns = reply.get("turns")
    if isinstance(turns, list) and label.key.turn is not None:
        for block in turns:
            if isinstance(block, Mapping) and block.get("turn") == label.key.turn:
                return _reason_in(block)
    return None


def _plain(value: Any) -> Any:
    """A JSON-ready copy of a label value (tuples as lists, other objects as text)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


def _judgment_dict(judge: str, label: Label) -> dict[str, Any]:
    raw = label.raw
    if raw is not None and len(raw) > MAX_RAW_CHARS:
        raw = raw[:MAX_RAW_CHARS] + f"… [{len(label.raw or '') - MAX_RAW_CHARS} more characters]"
    return {
        "judge": judge,
        "item": label.key.item,
        "repeat": label.key.repeat,
        "value": _plain(label.value),
        "missing_reason": label.missing_reason,
        "reason": judgment_reason(label),
        "raw": raw,
    }


def _unit_indices(turn: Turn, texts: Iterable[str] | None) -> list[int]:
    if not texts:
        return []
    wanted = {t.strip() for t in texts}
    return [i for i, segment in enumerate(turn.segments) if segment.text.strip() in wanted]


def _at(values: Sequence[Any] | None, position: int) -> Any:
    return values[position] if values is not None and position < len(values) else None


def evidence_rows(
    session: Session, labels: Mapping[str, Sequence[Label]], *, spans_judges: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """The ``evidence.jsonl`` rows of ``session``: one per turn, then one for the session
    when a judge labelled it as a whole. ``labels`` maps judge id to that judge's labels
    of this session (labels of other sessions are ignored); the useful units of the judges
    in ``spans_judges`` are listed under their ids, the gold marks under ``gold:user`` and
    ``gold:annotators``."""
    per_turn: dict[int | None, list[dict[str, Any]]] = {}
    spans_of: dict[tuple[str, int], list[int]] = {}
    # a reply that labels the whole session and each turn is kept once, with the session
    whole = {
        (judge, label.raw)
        for judge, judged in labels.items()
        for label in judged
        if label.key.session_id == session.session_id and label.key.turn is None and label.raw
    }
    for judge, judged in labels.items():
        for label in judged:
            if label.key.session_id != session.session_id:
                continue
            row = _judgment_dict(judge, label)
            if label.key.turn is not None and (judge, label.raw) in whole:
                row["raw"] = None
                row["raw_with_session"] = True
            per_turn.setdefault(label.key.turn, []).append(row)
            if (
                judge in spans_judges
                and label.key.turn is not None
                and isinstance(label.value, (list, tuple))
            ):
                spans_of[(judge, label.key.turn)] = sorted({int(i) for i in label.value})
    gold = session.gold
    rows: list[dict[str, Any]] = []
    for position, turn in enumerate(session.turns):
        spans: dict[str, list[int]] = {}
        user = _at(gold.useful_spans_user if gold else None, position)
        annotators = _at(gold.useful_spans_external if gold else None, position)
        if user:
            spans[GOLD_USER] = _unit_indices(turn, user)
        if annotators:
            spans[GOLD_ANNOTATORS] = _unit_indices(turn, annotators)
        for judge in spans_judges:
            if (judge, turn.index) in spans_of:
                spans[judge] = spans_of[(judge, turn.index)]
        rows.append(
            {
                "version": EVIDENCE_VERSION,
                "session_id": session.session_id,
                "turn": turn.index,
                "statements": [[s.text, list(s.citations)] for s in turn.statements],
                "segments": [[g.start, g.end] for g in turn.segments],
                "spans": spans,
                "judgments": per_turn.get(turn.index, []),
            }
        )
    if per_turn.get(None):
        rows.append(
            {
                "version": EVIDENCE_VERSION,
                "session_id": session.session_id,
                "turn": None,
                "statements": [],
                "segments": [],
                "spans": {},
                "judgments": per_turn[None],
            }
        )
    return rows


def _from_dict(d: Mapping[str, Any]) -> TurnEvidence:
    return TurnEvidence(
        session_id=str(d["session_id"]),
        turn=None if d.get("turn") is None else int(d["turn"]),
        statements=tuple(
            (str(text), tuple(int(c) for c in cites)) for text, cites in d.get("statements") or ()
        ),
        segments=tuple((int(a), int(b)) for a, b in d.get("segments") or ()),
        spans={str(k): tuple(int(i) for i in v) for k, v in (d.get("spans") or {}).items()},
        judgments=tuple(
            Judgment(
                judge=str(j["judge"]),
                item=str(j.get("item") or ""),
                repeat=int(j.get("repeat") or 0),
                value=j.get("value"),
                missing_reason=j.get("missing_reason"),
                reason=j.get("reason"),
                raw=j.get("raw"),
                raw_with_session=bool(j.get("raw_with_session")),
            )
            for j in d.get("judgments") or ()
        ),
    )


def read_evidence(
    path: str | Path, session_ids: Iterable[str]
) -> dict[tuple[str, int | None], TurnEvidence]:
    """The evidence of the sessions ``session_ids`` by ``(session id, turn)``, read in one
    pass over ``path`` (other sessions' rows are skipped unparsed); empty when the file is
    absent (a run written before this file existed)."""
    wanted = set(session_ids)
    out: dict[tuple[str, int | None], TurnEvidence] = {}
    file = Path(path)
    if not wanted or not file.is_file():
        return out
    decoder = json.JSONDecoder()
    with file.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            # cheap pre-filter: decode only the session id of a row of another session
            at = line.find(_ID_KEY)
            if at < 0:
                continue
            try:
                session_id, _ = decoder.raw_decode(line, at + len(_ID_KEY))
            except ValueError:
                session_id = None
            if session_id is not None and session_id not in wanted:
                continue
            try:
                row = json.loads(line)
                if row.get("session_id") not in wanted:
                    continue
                evidence = _from_dict(row)
            except (ValueError, KeyError, TypeError, AttributeError) as error:
                raise InputError(
                    f"malformed evidence row: {error}", path=str(file), line=number
                ) from None
            out[(evidence.session_id, evidence.turn)] = evidence
    return out
