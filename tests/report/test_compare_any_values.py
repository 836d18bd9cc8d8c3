"""``compare`` exits the same with and without ``--html`` / ``--markdown``, whatever the runs'
columns hold, and no crash ever exits with a decision code (0, 1 or 4).

Run pairs are generated (hypothesis) and written with the run folder's own writer: the
compared score is a number, missing, or absent from some sessions (a column one run has and
the other lacks); the judges' evidence (what the page quotes beside each session that got
worse) holds list-valued labels (a spans judge's useful units), words, objects and missing
values (the table columns themselves are numbers or nothing: the writer refuses others). The command must exit with the same code each way, never 5 (an
internal error), and the page must be written whenever the verdict is one of the three
decisions. Runs are derandomized and bounded by ``max_examples``.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from genir_eval.cli import main
from genir_eval.errors import EXIT_CODES
from genir_eval.rundir.folder import SessionRow, TurnRow, write_run
from genir_eval.rundir.status import run_status

pytestmark = pytest.mark.fuzz

JUDGE = "satisfaction.urs"
SPANS = "spans"

#: Values a table's column or a judge's label may hold that are not numbers.
ODD = st.one_of(
    st.lists(st.integers(0, 30), max_size=6),
    st.text(max_size=12),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.booleans(),
)
SCORE = st.one_of(st.none(), st.floats(-5, 15, allow_nan=False), st.integers(0, 10))
LABEL = st.one_of(st.none(), st.floats(0, 10, allow_nan=False), ODD)


@st.composite
def runs(draw: st.DrawFn) -> dict[str, Any]:
    """One side of a pair: per session, the compared score (or none, or no column), a second
    score column and the judgments the page may quote."""
    n = draw(st.integers(1, 12))
    return {
        "scores": [draw(SCORE) for _ in range(n)],
        "absent": draw(st.sets(st.integers(0, n - 1), max_size=n // 2)),
        "other": [draw(SCORE) for _ in range(n)],
        "labels": [draw(LABEL) for _ in range(n)],
        "spans": [draw(st.lists(st.integers(0, 9), max_size=5)) for _ in range(n)],
        "reasons": [draw(st.one_of(st.none(), st.text(max_size=30))) for _ in range(n)],
    }


def _write(directory: Path, side: dict[str, Any]) -> Path:
    sessions, turns, evidence = [], [], []
    for i, score in enumerate(side["scores"]):
        sid = f"s{i}"
        scores: dict[str, Any] = {"other": side["other"][i]}
        if i not in side["absent"]:
            scores[JUDGE] = score
        turns.append(
            TurnRow(
                session_id=sid,
                turn=1,
                query=f"query {i}",
                response_text=f"answer {i}",
                scores=dict(scores),
            )
        )
        sessions.append(SessionRow(session_id=sid, n_turns=1, scores=dict(scores)))
        evidence.append(
            {
                "version": 1,
                "session_id": sid,
                "turn": 1,
                "statements": [],
                "segments": [],
                "spans": {},
                "judgments": [
                    {
                        "judge": JUDGE,
                        "item": "turn",
                        "value": side["labels"][i],
                        "missing_reason": None if side["labels"][i] is not None else "timeout",
                        "reason": side["reasons"][i] or "a stated reason",
                    },
                    {
                        "judge": SPANS,
                        "item": "spans",
                        "value": side["spans"][i],
                        "reason": "the units that answer the query",
                    },
                ],
            }
        )
    judges = [{"id": JUDGE, "name": JUDGE, "labels": len(sessions), "missing": 0}]
    info: dict[str, Any] = {"version": 1, "scenario": {"name": directory.name}, "judges": judges}
    info["status"] = run_status(
        {j["id"]: j for j in judges}, (), [], max_missing=0.05, allow_permanent=False
    )
    return write_run(
        directory,
        links=[],
        turns=turns,
        sessions=sessions,
        meta=None,
        info=info,
        evidence=evidence,
    )


def _exit(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(a=runs(), b=runs(), level=st.sampled_from(["session", "turn"]))
def test_compare_exits_the_same_with_and_without_a_page(
    a: dict[str, Any], b: dict[str, Any], level: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        run_a, run_b = _write(folder / "a", a), _write(folder / "b", b)
        base = ["compare", str(run_a), str(run_b), "--metric", JUDGE, "--level", level]
        base += ["--min-sessions", "3", "--common"]
        plain, plain_err = _exit(base)
        page = folder / "page.html"
        with_page, page_err = _exit([*base, "--html", str(page)])
        markdown, _ = _exit([*base, "--format", "markdown"])
        assert plain != EXIT_CODES["internal"], plain_err
        assert (with_page, markdown) == (plain, plain), (plain_err, page_err)
        if plain in (0, 1, 4):
            assert page.is_file()
            text = page.read_text(encoding="utf-8")
            assert "<h2 id='scores'>" in text
        else:
            assert plain == EXIT_CODES["input"]
            assert plain_err.count("\n") == 1, plain_err


def test_an_unexpected_error_exits_with_its_own_code(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A bug inside a command (here the comparison page's writer raising a TypeError, as a
    list given to the number formatter once did) exits 5 with one line, never 1 (what CI
    reads as a regression)."""
    side = {
        "scores": [1.0] * 4,
        "absent": set(),
        "other": [1.0] * 4,
        "labels": [1.0] * 4,
        "spans": [[1]] * 4,
        "reasons": [None] * 4,
    }
    run_a, run_b = _write(tmp_path / "a", side), _write(tmp_path / "b", side)

    def broken(*args: object, **kwargs: object) -> str:
        raise TypeError("unsupported format string passed to list.__format__")

    monkeypatch.setattr("genir_eval.report.comparison.render_comparison", broken)
    code, err = _exit(
        ["compare", str(run_a), str(run_b), "--metric", JUDGE, "--html", str(tmp_path / "p.html")]
    )
    assert code == EXIT_CODES["internal"] == 5
    assert err.count("\n") == 1
    assert err.startswith("genir-eval: internal error in compare: TypeError: unsupported format")
