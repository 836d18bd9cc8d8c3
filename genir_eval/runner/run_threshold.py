"""What a run must meet to be compared at all: not a failed run, by a threshold whose source
the refusal names (the command line's, the scenario's that made the run, or the default),
never what the run folder says of itself."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genir_eval.errors import InputError
from genir_eval.rundir.folder import Run

__all__ = ["GateThreshold", "gate_threshold", "refuse_failed"]


@dataclass(frozen=True)
class GateThreshold:
    """What a run must meet to be compared at all (not a failed run), and where it came
    from, for the refusal's words."""

    max_missing: float
    allow_permanent: bool
    source: str


def gate_threshold(
    run: Run, *, max_missing: float | None = None, allow_permanent: bool | None = None
) -> GateThreshold:
    """The threshold ``run`` is held to: each value given (the command line's
    ``--max-missing`` / ``--allow-permanent``), else the scenario that made the run (its
    file read again, and only when its SHA-256 is the one ``run.json`` recorded), else the
    engine's default. Never ``run.json``'s own ``status`` (an edited ``max_missing = 1.0``
    would pass any run)."""
    from genir_eval.llm.config import DEFAULT_MAX_MISSING

    engine = _scenario_engine(run) if max_missing is None or allow_permanent is None else None
    sources = []
    if max_missing is None:
        value = (engine or {}).get("max_missing")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1:
            max_missing, sources = float(value), [f"the scenario {run.info['scenario']['path']}"]
        else:
            max_missing = DEFAULT_MAX_MISSING
    else:
        sources.append("--max-missing")
    if allow_permanent is None:
        allow_permanent = (engine or {}).get("allow_permanent") is True
    return GateThreshold(
        max_missing,
        allow_permanent,
        " and ".join(sources) or f"the default --max-missing {DEFAULT_MAX_MISSING:g}",
    )


def _scenario_engine(run: Run) -> dict[str, Any] | None:
    """The ``[engine]`` table of the scenario file that made ``run``, when the file is there
    and unchanged since (its SHA-256 the one ``run.json`` recorded); else ``None``."""
    import tomllib

    from genir_eval.rundir.folder import file_digest

    scenario = run.info.get("scenario")
    if not isinstance(scenario, Mapping):
        return None
    path, digest = scenario.get("path"), scenario.get("sha256")
    if not isinstance(path, str) or not isinstance(digest, str):
        return None
    try:
        if file_digest(Path(path)) != digest:
            return None
        document = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    engine = document.get("engine")
    return engine if isinstance(engine, dict) else None


def refuse_failed(run: Run, threshold: GateThreshold) -> None:
    """:class:`InputError` (exit 2) when ``run`` failed by ``threshold``
    (:meth:`Run.gate_status`): its scores are no result to compare."""
    status = run.gate_status(
        max_missing=threshold.max_missing, allow_permanent=threshold.allow_permanent
    )
    if not status["ok"]:
        raise InputError(
            f"a failed run (exit code 3 when it ran): {'; '.join(status['reasons'])} (threshold from "
            f"{threshold.source}); its scores are not a result to compare",
            path=str(run.directory),
        )
