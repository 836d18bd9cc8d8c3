"""The arena's gold: people's preferences read for it before any pair is judged (every row
used or refused at its line) and the judged pairs' agreement with them, for ``arena.json``."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genir_eval.errors import ConfigError, InputError, did_you_mean
from genir_eval.ingest.preferences import read_preferences
from genir_eval.judges.pairwise.rows import agreement_with_gold, gold_winners
from genir_eval.runner.arena_answers import AnswerStore
from genir_eval.runner.arena_figures import agreement_intervals

__all__ = ["Gold", "read_gold", "gold_block"]


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    """``pairs.jsonl``'s rows, read back one at a time."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line)


@dataclass(frozen=True)
class Gold:
    """People's preferences read for the arena: the winner of each gold pair, and the rows
    another criterion's (counted, and said)."""

    winners: Mapping[Any, str]
    rows: int
    other_criteria: int


def read_gold(
    path: Path | None, wanted: str | None, store: AnswerStore, names: Sequence[str]
) -> Gold | None:
    """``--gold``, read before any pair is judged: every row is used or refused at its line
    (a run's row naming two sessions, a system the arena does not have, a session and turn
    no system answered); a ``--gold-criterion`` no row has is refused with the criteria the
    file has; the rows of other criteria are counted."""
    if path is None:
        return None
    rows = read_preferences(path, form="arena")
    for row in rows:
        for column in ("system_a", "system_b"):
            system = getattr(row, column)
            if system not in names:
                raise InputError(
                    f"names system {system!r}; the arena's systems are {', '.join(names)}",
                    path=str(path),
                    line=row.line,
                    column=column,
                )
        if not store.answered(str(row.session), int(row.turn or 1)):
            raise InputError(
                f"session {row.session!r} turn {row.turn}: no answer of the arena's systems "
                "is matched there",
                path=str(path),
                line=row.line,
                column="session",
            )
    kept = [p for p in rows if wanted is None or p.criterion in (wanted, None)]
    if not kept:
        criteria = sorted({str(p.criterion) for p in rows if p.criterion is not None})
        raise ConfigError(
            f"--gold-criterion: no row of {path} has the criterion {wanted!r}"
            f"{did_you_mean(str(wanted), criteria)}; its criteria: {', '.join(criteria)}"
        )
    winners = gold_winners(
        {
            "session_id": p.session,
            "turn": p.turn or 1,
            "a": p.system_a,
            "b": p.system_b,
            "winner": p.winner,
        }
        for p in kept
    )
    return Gold(winners, len(kept), len(rows) - len(kept))


def gold_block(
    path: Path | None, criterion: str | None, gold: Gold | None, pairs: Path
) -> dict[str, Any] | None:
    """``arena.json``'s ``gold`` block: the judged pairs (``pairs.jsonl``) against people's
    winners, with the agreement's intervals; ``None`` without ``--gold``."""
    if gold is None:
        return None
    agreement = agreement_with_gold(_rows(pairs), gold.winners).to_dict()
    return {
        "path": str(path),
        "criterion": criterion,
        "rows": gold.rows,
        "rows_of_other_criteria": gold.other_criteria,
        **agreement,
        **agreement_intervals(agreement),
    }
