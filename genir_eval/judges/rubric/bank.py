"""RUBRIC's question banks and their editable JSON files (one per session, versioned)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genir_eval.errors import InputError
from genir_eval.paths import write_output

__all__ = [
    "RUBRIC_FILE_VERSION",
    "Question",
    "Rubric",
    "RubricFile",
    "rubric_path",
    "read_rubric_file",
    "write_rubric_file",
]

RUBRIC_FILE_VERSION = 1
RUBRIC_KINDS = ("questions", "nuggets")


@dataclass(frozen=True)
class Question:
    id: str
    text: str


@dataclass(frozen=True)
class Rubric:
    """The questions of one turn (``turn=None``: one bank for the whole session)."""

    turn: int | None
    query: str
    questions: tuple[Question, ...]

    def digest(self) -> str:
        payload = json.dumps([[q.id, q.text] for q in self.questions], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class RubricFile:
    """A session's question banks as saved: ``kind`` is ``"questions"`` or ``"nuggets"``."""

    session_id: str
    kind: str
    rubrics: tuple[Rubric, ...]
    generator: Mapping[str, Any]
    version: int = RUBRIC_FILE_VERSION

    def for_turn(self, turn: int) -> Rubric | None:
        for rubric in self.rubrics:
            if rubric.turn == turn:
                return rubric
        for rubric in self.rubrics:
            if rubric.turn is None:
                return rubric
        return None


def rubric_path(directory: str | Path, session_id: str) -> Path:
    """``<directory>/<session id>.json``; a session id unsafe as a file name is replaced by
    a readable stem plus its hash."""
    safe = re.sub(r"[^\w.-]", "_", session_id)
    if safe != session_id or safe.startswith("."):
        digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:10]
        safe = f"{safe.strip('.')[:60]}-{digest}"
    return Path(directory) / f"{safe}.json"


def _rubric_to_dict(rubric_file: RubricFile) -> dict[str, Any]:
    return {
        "version": rubric_file.version,
        "session_id": rubric_file.session_id,
        "kind": rubric_file.kind,
        "generator": dict(rubric_file.generator),
        "rubrics": [
            {
                "turn": r.turn,
                "query": r.query,
                "questions": [{"id": q.id, "text": q.text} for q in r.questions],
            }
            for r in rubric_file.rubrics
        ],
    }


def write_rubric_file(rubric_file: RubricFile, directory: str | Path) -> Path:
    """Write the bank as indented UTF-8 JSON (for people to edit); returns the path."""
    path = rubric_path(directory, rubric_file.session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_rubric_to_dict(rubric_file), ensure_ascii=False, indent=2)
    write_output(path, text + "\n", "the rubric bank")
    return path


def read_rubric_file(path: str | Path) -> RubricFile:
    """Read and validate a bank (possibly edited by hand). Question ids may be changed or
    left out: a missing id becomes ``q<position>``; duplicate ids are an error."""
    where = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON: {error}", path=where, line=error.lineno) from None
    except UnicodeDecodeError as error:
        raise InputError(
            f"not UTF-8 text (byte 0x{error.object[error.start]:02x} at byte {error.start + 1})",
            path=where,
        ) from None
    except RecursionError:
        raise InputError("the JSON is nested too deeply to read", path=where) from None
    except OSError as error:
        raise InputError(
            f"cannot read the rubric file: {error.strerror or error}; move it aside to "
            "generate the bank again",
            path=where,
        ) from None
    if not isinstance(data, dict):
        raise InputError("a rubric file must hold a JSON object", path=where)
    if data.get("version") != RUBRIC_FILE_VERSION:
        raise InputError(
            f"unsupported version {data.get('version')!r} (expected {RUBRIC_FILE_VERSION})",
            path=where,
            column="version",
        )
    kind = data.get("kind") or "questions"
    if kind not in RUBRIC_KINDS:
        raise InputError(
            f"kind {kind!r} is not one of {', '.join(RUBRIC_KINDS)}", path=where, column="kind"
        )
    session_id = data.get("session_id")
    if session_id is not None and not isinstance(session_id, str):
        raise InputError("'session_id' must be a string", path=where, column="session_id")
    listed = data.get("rubrics") or []
    if not isinstance(listed, list):
        raise InputError("'rubrics' must be a list", path=where, column="rubrics")
    rubrics = []
    turns_seen: set[int | None] = set()
    for n, entry in enumerate(listed, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("questions"), list):
            raise InputError(f"rubric {n} needs a 'questions' list", path=where)
        turn = entry.get("turn")
        if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int) or turn < 1):
            raise InputError(
                f"rubric {n}: 'turn' must be a turn number (1, 2, ...) or null", path=where
            )
        if turn in turns_seen:
            which = "the whole session" if turn is None else f"turn {turn}"
            raise InputError(
                f"rubric {n}: a second bank for {which} (one would be ignored)", path=where
            )
        turns_seen.add(turn)
        questions: list[Question] = []
        for i, q in enumerate(entry["questions"], start=1):
            text = q.get("text") if isinstance(q, dict) else q
            if not isinstance(text, str) or not text.strip():
                raise InputError(f"rubric {n}, question {i}: empty text", path=where)
            given = q.get("id") if isinstance(q, dict) else None
            if given is not None and (not isinstance(given, str) or not given.strip()):
                raise InputError(
                    f"rubric {n}, question {i}: 'id' must be a non-empty string", path=where
                )
            qid = given.strip() if given else f"q{i}"
            if any(qid == other.id for other in questions):
                raise InputError(f"rubric {n}: question id {qid!r} appears twice", path=where)
            questions.append(Question(qid, text.strip()))
        rubrics.append(Rubric(turn, str(entry.get("query") or ""), tuple(questions)))
    return RubricFile(
        session_id=session_id or "",
        kind=kind,
        rubrics=tuple(rubrics),
        generator=dict(data.get("generator") or {}),
    )
