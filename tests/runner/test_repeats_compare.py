"""``run --repeats`` keeps each repeat's scores (``repeats.jsonl``), and ``compare`` reads
them: a run with repeats against itself, from a seeded noisy judge on the fake OpenAI
server (offline twins are deterministic and never repeated), has a paired interval that
accounts for the judge's noise (the plain one is [0, 0]) and a verdict that says the change
is within the judge's scatter, in the same words in text, markdown, JSON and the page."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.rundir.folder import load_run
from genir_eval.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
DEMO_CSV = ROOT / "fixtures" / "demo_sessions.csv"
SAMPLE = 20  # more than the demo's sessions: every session is repeated
REPEATS = 3
NOISE = "the judge cannot tell this change from noise"


def _scenario(folder: Path, base_url: str) -> Path:
    path = folder / "s.toml"
    path.write_text(
        f"""
name = "noise"
[input]
path = {json.dumps(str(DEMO_CSV))}
format = "urge"
[llm]
provider = "openai"
base_url = "{base_url}"
[engine]
concurrency = 2
cache = false
[[judges]]
name = "link_usefulness.dna"
[meta]
n_boot = 20
""",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A run with repeats and one without, both from a judge whose usefulness grade of a
    link wobbles by one (seeded)."""
    folder = tmp_path_factory.mktemp("repeats")
    rng = random.Random(5)

    def noisy(request: object) -> str:
        return json.dumps({"M": 2, "T": 2, "O": rng.choice([1, 2, 2, 3])})

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-test-fake-key")
        with FakeLLMServer(reply=noisy) as server:
            scenario = _scenario(folder, server.openai_base_url)
            repeated, plain = folder / "repeated", folder / "plain"
            base = ["run", str(scenario), "--quiet"]
            again = ["--repeats", str(REPEATS), "--repeat-sample", str(SAMPLE)]
            assert main([*base, "--out", str(repeated), *again]) == 0
            assert main([*base, "--out", str(plain)]) == 0
    return {"repeated": repeated, "plain": plain}


def _rows(run: Path) -> list[dict[str, object]]:
    text = (run / "repeats.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_each_repeats_scores_are_kept(runs: dict[str, Path]) -> None:
    run = load_run(runs["repeated"])
    rows = _rows(runs["repeated"])
    sessions = {row.session_id: row for row in run.sessions}
    assert "repeats.jsonl" in run.info["files"]  # its digest checked like the other files
    assert sorted((r["session_id"], r["repeat"]) for r in rows) == sorted(
        (s, k) for s in sessions for k in range(REPEATS)
    )
    for row in rows:
        assert row["version"] == 1 and set(row["scores"]) == {  # type: ignore[call-overload]
            "sdcg_urge",
            "srbp_urge",
            "rsdcg_urge",
            "rsrbp_urge",
        }
        if row["repeat"] == 0:  # the run's own judgments: the sessions table's scores
            kept = sessions[str(row["session_id"])].scores
            for name, value in row["scores"].items():  # type: ignore[attr-defined]
                assert value == kept[name]
    # the judge's wobble shows: some session's score differs between its repeats
    by_session = run.repeat_scores("sdcg_urge")
    assert any(len({v for v in values if v is not None}) > 1 for values in by_session.values())
    turns = run.repeat_scores("sdcg_urge", "turn")
    assert all(len(values) == REPEATS for values in turns.values())
    assert load_run(runs["plain"]).repeat_scores("sdcg_urge") == {}


def test_an_edited_repeats_file_is_refused(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(runs["repeated"], copy)
    rows = (copy / "repeats.jsonl").read_text(encoding="utf-8")
    (copy / "repeats.jsonl").write_text(rows.replace('"repeat": 2', '"repeat": 1'), "utf-8")
    assert main(["compare", str(copy), str(copy)]) == 2
    assert "repeats.jsonl does not belong to this run.json" in capsys.readouterr().err


def _compare(run: Path, other: Path, *more: str) -> list[str]:
    return ["compare", str(run), str(other), "--min-sessions", "2", "--metric", "sdcg_urge", *more]


def test_a_run_against_itself_is_within_the_judges_scatter(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = runs["repeated"]
    page = tmp_path / "compare.html"
    assert main([*_compare(run, run), "--format", "json", "--html", str(page)]) == 0
    document = json.loads(capsys.readouterr().out)["comparisons"][0]
    assert document["mean_delta"] == 0.0
    assert document["repeats"]["carried_by"] == "both"
    assert document["repeats"]["within_sd"] > 0 and document["repeats"]["repeats"] == pytest.approx(
        REPEATS
    )
    # the plain paired interval of a run against itself is [0, 0]; resampling each session's
    # repeats, A's and B's apart, gives it the judge's width
    low, high = document["ci95"]
    assert low < 0 < high and high - low > 0.1
    said = [note for note in document["notes"] if NOISE in note]
    assert len(said) == 1 and "smaller than the judge's own scatter" in said[0]
    for output in ("text", "markdown"):
        assert main([*_compare(run, run), "--format", output]) == 0
        assert said[0] in capsys.readouterr().out
    html = page.read_text(encoding="utf-8")
    assert said[0].replace("'", "&#x27;") in html or said[0] in html


def test_only_one_run_with_repeats_gives_the_plain_interval(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    main([*_compare(runs["plain"], runs["repeated"]), "--format", "json"])
    document = json.loads(capsys.readouterr().out)["comparisons"][0]
    assert document["repeats"]["carried_by"] == "B"
    assert any("only run B carries repeated judgments" in n for n in document["notes"])
    assert not any(NOISE in n for n in document["notes"])
    main([*_compare(runs["plain"], runs["plain"]), "--format", "json"])
    document = json.loads(capsys.readouterr().out)["comparisons"][0]
    assert document["repeats"] is None and document["ci95"] == [0.0, 0.0]


def test_turns_resample_their_repeats_with_their_session(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    run = runs["repeated"]
    assert main([*_compare(run, run), "--level", "turn", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)["comparisons"][0]
    assert document["repeats"]["carried_by"] == "both"
    assert document["repeats"]["sessions"] == document["sessions"]  # sessions, not turns
    low, high = document["ci95"]
    assert low < 0 < high
    assert any(NOISE in note and "(turn level)" in note for note in document["notes"])
