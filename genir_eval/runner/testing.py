"""A pytest helper: assert a run's score is where it should be.

.. code-block:: python

    from genir_eval.runner.testing import assert_run

    def test_quality_does_not_regress(tmp_path):
        run_scenario("scenarios/demo-offline.toml", out_dir=tmp_path)
        assert_run(tmp_path, metric="sdcg_urge", at_least=0.8)
"""

from __future__ import annotations

import math
import os

from genir_eval.rundir.folder import Level, Run, load_run
from genir_eval.runner.compare import gate_threshold

__all__ = ["assert_run"]


def assert_run(
    run: Run | str | os.PathLike[str],
    *,
    metric: str,
    at_least: float | None = None,
    at_most: float | None = None,
    level: Level = "session",
    max_missing: float | None = None,
    allow_permanent: bool | None = None,
) -> float:
    """Assert that the mean of ``metric`` over the run's sessions (or turns) lies within
    ``[at_least, at_most]``; return the mean. The message names the run, metric, level, the
    mean, how many rows had a score, and the bound it broke.

    A failed run is no result: one whose judges have more than ``max_missing`` of their
    labels missing, or (unless ``allow_permanent``) a permanent provider error, worked out
    again from the run's own failures. Left out, each threshold is the scenario's that made
    the run (its file unchanged since), else the engine's default; never what its
    ``run.json`` states (an edited ``max_missing = 1.0`` changes nothing)."""
    if at_least is None and at_most is None:
        raise ValueError("assert_run needs at_least and/or at_most")
    loaded = run if isinstance(run, Run) else load_run(run)
    threshold = gate_threshold(loaded, max_missing=max_missing, allow_permanent=allow_permanent)
    status = loaded.gate_status(
        max_missing=threshold.max_missing, allow_permanent=threshold.allow_permanent
    )
    if not status["ok"]:
        reasons = "; ".join(status["reasons"])
        raise AssertionError(f"run {loaded.directory} failed ({reasons}): its scores are no result")
    try:
        scores = loaded.scores(metric, level)
    except KeyError as error:
        raise AssertionError(f"run {loaded.directory}: {error.args[0]}") from None
    present = [v for v in scores.values() if v is not None]
    where = f"run {loaded.directory}: mean {metric} ({level} level"
    not_numbers = [k for k, v in scores.items() if v is not None and not math.isfinite(v)]
    if not_numbers:
        # a NaN mean compares false with every bound: it would pass any assertion
        raise AssertionError(
            f"{where}) is undefined: {len(not_numbers)} of {len(scores)} {level}s have a score "
            f"that is not a finite number (e.g. {', '.join(not_numbers[:3])})"
        )
    if not present:
        raise AssertionError(f"{where}) is undefined: no {level} has a score ({len(scores)} rows)")
    mean = sum(present) / len(present)
    shown = f"{where}, {len(present)} of {len(scores)} {level}s scored) is {mean:.6g}"
    if at_least is not None and mean < at_least:
        raise AssertionError(f"{shown}, expected at least {at_least:g}")
    if at_most is not None and mean > at_most:
        raise AssertionError(f"{shown}, expected at most {at_most:g}")
    return mean
