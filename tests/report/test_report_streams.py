"""The report reads a run folder's tables one row at a time: built from a run whose
whole-table attributes (``Run.links``, ``turns``, ``sessions``, ``citations``) raise, it is
the page built from the ordinary run, byte for byte (the timestamp aside)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from genir_eval.report.html import ReportLimits, render_report
from genir_eval.report.summary import format_summary
from genir_eval.rundir.folder import Run, load_run
from genir_eval.runner import run_scenario

ROOT = Path(__file__).resolve().parents[2]


class WholeTableRead(AssertionError):
    pass


@dataclass(frozen=True)
class StreamingOnly(Run):
    """A run whose tables can only be streamed (``iter_rows``), never loaded whole."""

    @property
    def links(self) -> Any:  # type: ignore[override]
        raise WholeTableRead("links")

    @property
    def turns(self) -> Any:  # type: ignore[override]
        raise WholeTableRead("turns")

    @property
    def sessions(self) -> Any:  # type: ignore[override]
        raise WholeTableRead("sessions")

    @property
    def citations(self) -> Any:  # type: ignore[override]
        raise WholeTableRead("citations")


def _page(run: Run, limits: ReportLimits | None = None) -> str:
    html = render_report(run, limits=limits)
    return re.sub(r"generated \d{4}-\d\d-\d\d \d\d:\d\d UTC", "generated -", html)


def _streaming(run: Run) -> StreamingOnly:
    return StreamingOnly(run.directory, run.meta, run.info)


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Run]:
    """Offline runs of the demo scenarios: two link judges, spans, satisfaction judges,
    gold labels, a citation judge, the users' thumbs."""
    out = tmp_path_factory.mktemp("runs")
    return [
        run_scenario(ROOT / "scenarios" / f"{name}.toml", out_dir=out / name)
        for name in ("demo-offline", "demo-citations", "product-feedback")
    ]


def test_whole_table_attributes_really_raise(run_dir: Path) -> None:
    run = _streaming(load_run(run_dir))
    with pytest.raises(WholeTableRead):
        run.links  # noqa: B018
    assert sum(1 for _ in run.iter_rows("links")) == 24


@pytest.mark.slow
@pytest.mark.parametrize(
    "limits",
    [None, ReportLimits(detail_sessions=3, index_rows=4, index_page=2)],
    ids=["every-session", "capped"],
)
def test_report_of_a_streaming_only_run_is_the_same_page(
    run_dir: Path, demo_runs: list[Run], limits: ReportLimits | None
) -> None:
    for run in [load_run(run_dir), *demo_runs]:
        expected = _page(load_run(run.directory), limits)
        assert _page(_streaming(run), limits) == expected, run.directory.name


def test_capped_report_still_shows_the_chosen_sessions(demo_runs: list[Run]) -> None:
    page = _page(_streaming(demo_runs[0]), ReportLimits(detail_sessions=3, index_rows=4))
    assert page.count("<section class='session' id='session-") == 3
    assert "judges disagree" in page or "lowest" in page


def test_run_summary_streams(demo_runs: list[Run]) -> None:
    run = demo_runs[0]
    assert format_summary(_streaming(run)) == format_summary(load_run(run.directory))
