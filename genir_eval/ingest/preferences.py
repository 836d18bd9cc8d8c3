"""People's preferences between two answers: the canonical preferences file (JSONL).

One line is one judgment "of these two answers, people prefer this one (or neither)":

* ``winner``: ``"a"``, ``"b"`` or ``"tie"`` (required);
* the two answers, named in either or both of two ways:

  - ``session_a`` and ``session_b``: two sessions of one run (``run`` and ``meta`` compare the
    scores those sessions, or their turns, received), and optionally ``turn`` (1-based, the
    same turn index in both; left out, the sessions as a whole are compared);
  - ``session``, ``turn`` and ``system_a``, ``system_b``: two systems' answers to one
    session's turn (an arena over several runs of the same sessions);

* ``criterion`` (optional): what people compared, e.g. CrowdRAG's ``quality_overall``; left
  out, the overall preference. A file names at most :data:`MAX_CRITERIA` (100) criteria:
  each is compared with every score apart, into its own table (CrowdRAG has seven);
* ``query`` (optional): the group a bootstrap resamples, so that pairs on one query move
  together; left out, ``session`` for an arena row and the pair itself otherwise;
* ``version`` (optional, 1).

Other keys are accepted and ignored (``meta``, say). Errors name file, line and field, as every
reader's do (:class:`~genir_eval.errors.InputError`); nothing is dropped silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Literal

import orjson

from genir_eval.errors import InputError
from genir_eval.ingest.validate import has_surrogate
from genir_eval.unique_keys import RepeatedKey, unique_keys

__all__ = [
    "PREFERENCES_VERSION",
    "MAX_CRITERIA",
    "WINNERS",
    "Preference",
    "read_preferences",
    "check_named",
    "write_preferences",
    "preference_to_dict",
]

PREFERENCES_VERSION = 1
#: How many distinct criteria one file may name (see the module docstring).
MAX_CRITERIA = 100
#: What a preference row's ``winner`` may say.
WINNERS = ("a", "b", "tie")


@dataclass(frozen=True)
class Preference:
    """People's choice between two answers (``winner`` ``"a"``, ``"b"`` or ``"tie"``).

    ``session_a``/``session_b`` name two sessions of one run; ``session`` with
    ``system_a``/``system_b`` names two systems' answers to one session. A row has at least
    one of the two forms. ``turn`` is ``None`` for a comparison of whole sessions.
    ``query`` is the bootstrap group (see the module docstring for its default).
    """

    winner: str
    query: str
    session_a: str | None = None
    session_b: str | None = None
    session: str | None = None
    system_a: str | None = None
    system_b: str | None = None
    turn: int | None = None
    criterion: str | None = None
    #: the line of the file the row was read from (for the errors that refuse it later)
    line: int | None = field(default=None, compare=False)

    @property
    def in_run(self) -> bool:
        """Whether the row names two sessions of one run."""
        return self.session_a is not None

    @property
    def in_arena(self) -> bool:
        """Whether the row names two systems' answers to one session."""
        return self.system_a is not None


_KNOWN = (
    "version",
    "winner",
    "query",
    "session_a",
    "session_b",
    "session",
    "system_a",
    "system_b",
    "turn",
    "criterion",
)


def preference_to_dict(preference: Preference) -> dict[str, Any]:
    """The canonical JSON object of ``preference`` (keys left out where ``None``)."""
    out: dict[str, Any] = {"version": PREFERENCES_VERSION}
    for key in _KNOWN[1:]:
        value = getattr(preference, key)
        if value is not None:
            out[key] = value
    return out


def write_preferences(preferences: Iterable[Preference], stream: IO[bytes]) -> int:
    """Write one canonical JSON object a line; returns how many."""
    count = 0
    for preference in preferences:
        stream.write(orjson.dumps(preference_to_dict(preference), option=orjson.OPT_APPEND_NEWLINE))
        count += 1
    return count


# a turn index a 64-bit integer holds (the files written and SQLite take no more)
_MAX_TURN = 2**63 - 1


class _FieldError(Exception):
    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


#: What each use of a preferences file compares, and the fields that say so.
_FORMS = {
    "run": (
        "in_run",
        "session_a",
        "a row naming two systems' answers (system_a, system_b) where two sessions of one "
        "run are compared (session_a, session_b): an arena's rows go to `genir-eval arena "
        "--gold`",
    ),
    "arena": (
        "in_arena",
        "system_a",
        "a row naming two sessions of one run (session_a, session_b) where two systems' "
        "answers are compared (session, turn, system_a, system_b): a run's rows go to "
        "[input] preferences or `genir-eval meta --preferences`",
    ),
}


def read_preferences(
    path: str | Path, form: Literal["run", "arena"] | None = None
) -> list[Preference]:
    """Every row of the preferences file ``path``; the first bad row raises a located
    :class:`InputError` (file, line, field). An empty file is an error too: a gold standard
    with no judgment in it is a mistake, not an empty result. With ``form``, every row must
    have that form (``"run"``: two sessions of one run; ``"arena"``: two systems' answers):
    a row of the other is refused where it stands, never left out unsaid."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no such file" if not path.exists() else "not a file", path=str(path))
    preferences: list[Preference] = []
    seen: dict[tuple[Any, ...], int] = {}
    criteria: set[str | None] = set()
    try:
        with path.open("rb") as stream:
            for number, raw in enumerate(stream, start=1):
                if not raw.strip():
                    continue
                try:
                    preference = _row(raw, number)
                except _FieldError as error:
                    raise InputError(
                        error.message, path=str(path), line=number, column=error.field
                    ) from None
                preference = replace(preference, line=number)
                if form is not None:
                    attribute, column, why = _FORMS[form]
                    if not getattr(preference, attribute):
                        raise InputError(why, path=str(path), line=number, column=column)
                key = _identity(preference)
                if key in seen:
                    raise InputError(
                        f"the same two answers and criterion were already judged on line "
                        f"{seen[key]}; merge repeated judgments into one row",
                        path=str(path),
                        line=number,
                    )
                seen[key] = number
                if preference.criterion not in criteria:
                    if len(criteria) >= MAX_CRITERIA:
                        raise InputError(
                            f"criterion {preference.criterion!r} would be criterion "
                            f"{len(criteria) + 1}; a preferences file names at most "
                            f"{MAX_CRITERIA} criteria",
                            path=str(path),
                            line=number,
                            column="criterion",
                        )
                    criteria.add(preference.criterion)
                preferences.append(preference)
    except OSError as error:
        raise InputError(
            f"cannot read the file: {error.strerror or error}", path=str(path)
        ) from None
    if not preferences:
        raise InputError("the file holds no preference", path=str(path))
    return preferences


def check_named(
    preferences: Iterable[Preference],
    path: str | Path,
    turns: Callable[[str], int | None],
    what: str = "the run",
) -> None:
    """Refuse, at its line, the first run-form row naming a session ``what`` does not have
    (``turns(session)`` is ``None``) or a turn past the session's last: such a row would
    count as neither agreeing nor disagreeing, in silence."""
    for row in preferences:
        if not row.in_run:
            continue
        for column in ("session_a", "session_b"):
            session = str(getattr(row, column))
            count = turns(session)
            if count is None:
                raise InputError(
                    f"names session {session!r}, which {what} does not have",
                    path=str(path),
                    line=row.line,
                    column=column,
                )
            if row.turn is not None and row.turn > count:
                raise InputError(
                    f"turn {row.turn}: session {session!r} has {count} turns in {what}",
                    path=str(path),
                    line=row.line,
                    column="turn",
                )


def _identity(p: Preference) -> tuple[Any, ...]:
    if p.in_run:
        pair: tuple[Any, ...] = ("run", *sorted((p.session_a or "", p.session_b or "")))
    else:
        pair = ("arena", p.session, *sorted((p.system_a or "", p.system_b or "")))
    return (*pair, p.turn, p.criterion)


def _row(raw: bytes, number: int) -> Preference:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _FieldError(None, f"not UTF-8 text: byte 0x{raw[error.start]:02x}") from None
    try:
        data = json.loads(text, object_pairs_hook=unique_keys)
    except RepeatedKey as error:
        raise _FieldError(str(error.key), "the key appears twice in one object") from None
    except ValueError as error:
        raise _FieldError(None, f"not a JSON object: {error}") from None
    except RecursionError:
        raise _FieldError(None, "the JSON is nested too deeply to read") from None
    if not isinstance(data, dict):
        raise _FieldError(None, f"a line must be a JSON object, not {type(data).__name__}")
    version = data.get("version", PREFERENCES_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _FieldError("version", f"must be a positive integer, not {version!r}")
    if version > PREFERENCES_VERSION:
        raise _FieldError(
            "version",
            f"version {version} is newer than this genir-eval reads ({PREFERENCES_VERSION})",
        )
    winner = data.get("winner")
    if winner not in WINNERS:
        raise _FieldError("winner", f"must be one of {', '.join(WINNERS)}, not {winner!r}")
    names = {key: _name(data, key) for key in _KNOWN[2:8]}
    criterion = _name(data, "criterion")
    turn = data.get("turn")
    if turn is not None and (type(turn) is not int or not 1 <= turn <= _MAX_TURN):
        raise _FieldError("turn", f"must be a 1-based turn index, not {turn!r}")
    run_form = names["session_a"] is not None or names["session_b"] is not None
    arena_form = names["system_a"] is not None or names["system_b"] is not None
    if not run_form and not arena_form:
        raise _FieldError(
            None,
            "names no answers: give session_a and session_b, or session, turn, system_a "
            "and system_b",
        )
    if run_form:
        for key in ("session_a", "session_b"):
            if names[key] is None:
                raise _FieldError(key, "missing (the other session of the pair is given)")
        if names["session_a"] == names["session_b"]:
            raise _FieldError("session_b", "is session_a: a session is not compared with itself")
    if arena_form:
        for key in ("session", "system_a", "system_b"):
            if names[key] is None:
                raise _FieldError(key, "missing (an arena row names the session and two systems)")
        if turn is None:
            raise _FieldError("turn", "missing (an arena row names the turn both systems answered)")
        if names["system_a"] == names["system_b"]:
            raise _FieldError("system_b", "is system_a: a system is not compared with itself")
    query = names["query"]
    if query is None:
        query = f"{names['session_a']}|{names['session_b']}"
        if arena_form:
            query = str(names["session"])
    return Preference(
        winner=winner,
        query=query,
        session_a=names["session_a"],
        session_b=names["session_b"],
        session=names["session"],
        system_a=names["system_a"],
        system_b=names["system_b"],
        turn=turn,
        criterion=criterion,
    )


def _name(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _FieldError(key, f"must be a non-empty string, not {value!r}")
    if has_surrogate(value):
        raise _FieldError(
            key, f"{value!r} holds an unpaired surrogate; it is not valid Unicode text"
        )
    return value
