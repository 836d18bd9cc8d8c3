"""End to end: scenario -> judges (through the engine) -> tables, meta, report; resuming."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from genir_eval.cli import main
from genir_eval.ingest import load_sessions
from genir_eval.runner import Overrides, load_run, parse_scenario, run_scenario
from genir_eval.runner.testing import assert_run
from genir_eval.testing.fake_llm_server import FakeLLMServer, FakeRequest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "scenarios" / "demo-offline.toml"


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "run"
    cache = tmp_path_factory.mktemp("cache") / "cache.sqlite"
    assert main(["run", str(DEMO), "--out", str(out), "--cache", str(cache), "--quiet"]) == 0
    return out


def test_demo_run_writes_every_file_with_a_version(demo_run: Path) -> None:
    for name in ("links", "turns", "sessions"):
        rows = [json.loads(line) for line in (demo_run / f"{name}.jsonl").read_text().splitlines()]
        assert rows and all(row["version"] == 1 for row in rows)
        assert (demo_run / f"{name}.csv").is_file()
    for name in ("meta.json", "run.json"):
        assert json.loads((demo_run / name).read_text())["version"] == 1
    assert (demo_run / "report.html").is_file()


def test_demo_run_tables_match_the_input(demo_run: Path, fixtures_dir: Path) -> None:
    sessions = load_sessions(fixtures_dir / "demo_sessions.csv").sessions
    run = load_run(demo_run)
    assert [s.session_id for s in run.sessions] == [s.session_id for s in sessions]
    assert len(run.turns) == sum(len(s.turns) for s in sessions)
    assert len(run.links) == sum(len(t.links) for s in sessions for t in s.turns)
    # every link row carries each link judge's label and the expert label where known
    assert all(
        set(link.labels) == {"link_usefulness.dna", "link_usefulness.true"} for link in run.links
    )
    assert any(link.gold is not None for link in run.links)
    # gold satisfaction from the logs, judge and metric scores per turn and session
    assert sessions[0].gold is not None
    assert run.sessions[0].gold_satisfaction == sessions[0].gold.session_satisfaction
    for name in (
        "sdcg_urge",
        "satisfaction.urs",
        "spans",
        "gold:sdcg_urge",
        "z(sdcg_urge+satisfaction.urs)",
    ):
        assert name in run.score_names("session") and name in run.score_names("turn")


def test_demo_run_info(demo_run: Path) -> None:
    info = load_run(demo_run).info
    assert info["scenario"]["name"] == "demo-offline"
    assert info["versions"]["genir_eval"]
    assert {j["provider"] for j in info["judges"]} == {"offline"}
    assert all(j["missing"] == 0 and j["labels"] > 0 for j in info["judges"])
    assert info["provider_calls"] > 0 and info["usage"]["input_tokens"] > 0
    assert info["cost_usd"] == 0.0 and info["failures"] == []
    assert info["duration_s"] > 0


def test_demo_meta_evaluation(demo_run: Path) -> None:
    meta = load_run(demo_run).meta
    assert meta is not None and meta["headline"] == "sdcg_urge"
    entry = meta["correlations"]["session"]["sdcg_urge"]
    assert set(entry) >= {"pearson", "spearman", "kendall", "n", "ci95"} and entry["n"] >= 3
    # 7 rated sessions: below decide.MIN_N, so no interval is stored (the pages print none)
    assert entry["n"] == 7 and entry["ci95"]["spearman"] is None
    turn = meta["correlations"]["turn"]["sdcg_urge"]
    lo, hi = turn["ci95"]["spearman"]  # 13 rated turns: an interval
    assert turn["n"] == 13 and lo <= turn["spearman"] <= hi
    links = meta["judges"]["link_usefulness.dna"]["link_usefulness"]
    assert sum(map(sum, links["confusion_matrix"]["matrix"])) == links["n"]
    spans = meta["judges"]["spans"]["spans"]
    assert set(spans) >= {"vs_user", "vs_annotators", "human_reference_user_vs_annotators"}


@pytest.mark.parametrize("judge", ["link_usefulness.dna", "link_usefulness.true", "spans"])
def test_run_and_meta_report_the_same_figures(
    demo_run: Path, judge: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """One implementation: `genir-eval run`'s meta.json holds, for each judge, the blocks
    `genir-eval meta --json` prints for the same judge on the same sessions."""
    capsys.readouterr()
    argv = ["meta", str(ROOT / "fixtures" / "demo_sessions.csv"), "--judge", judge]
    argv += ["--provider", "offline", "--cache-mode", "off", "--journal", "none", "--json"]
    assert main(argv) == 0
    standalone = json.loads(capsys.readouterr().out)
    in_run = json.loads((demo_run / "meta.json").read_text())["judges"][judge]
    block = "spans" if judge == "spans" else "link_usefulness"
    assert in_run[block] == standalone[block]
    if block == "link_usefulness":
        # the sDCG of the judge's own labels vs session satisfaction, and the orderings
        assert in_run["satisfaction"] == standalone["satisfaction"]
        assert in_run["orderings"] == standalone["orderings"]


def test_demo_report_escapes_the_logged_script(demo_run: Path) -> None:
    html = (demo_run / "report.html").read_text(encoding="utf-8")
    soup = BeautifulSoup(html, "html.parser")
    assert soup.find("script") is None
    assert "<script>alert(1)</script>" in soup.get_text()  # the fixture's response, as text
    assert soup.select("#scatter svg") and soup.select("#task-bars svg")


def test_assert_run_on_the_demo(demo_run: Path) -> None:
    mean = assert_run(demo_run, metric="sdcg_urge", at_least=0.0)
    with pytest.raises(AssertionError, match="expected at most"):
        assert_run(demo_run, metric="sdcg_urge", at_most=mean - 0.01)


def test_rerun_resumes_without_calls(demo_run: Path) -> None:
    first = load_run(demo_run).info
    run = run_scenario(DEMO, out_dir=demo_run, overrides=Overrides(cache="none"))
    assert run.info["provider_calls"] == 0
    assert run.info["cache"]["resumed"] == first["provider_calls"] > 0


def test_compare_demo_with_itself(demo_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "compare",
                str(demo_run),
                str(demo_run),
                "--metric",
                "sdcg_urge",
                "--metric",
                "satisfaction.urs",
            ]
        )
        == 4  # the demo's 7 sessions: no regression, too few to call it a pass
    )
    assert "TOO FEW TO DECIDE (exit 4)" in capsys.readouterr().out


@pytest.mark.slow
def test_urge_offline_scenario(tmp_path: Path, urge_sample_path: Path) -> None:
    run = run_scenario(
        ROOT / "scenarios" / "urge-offline.toml",
        out_dir=tmp_path / "urge",
        overrides=Overrides(cache="none"),
    )
    assert len(run.sessions) == 12
    assert run.meta is not None and run.meta["correlations"]["session"]["gold:sdcg_urge"]["n"] == 12
    # every session of the sample carries gold, so no judge has a PPI mean: the summary and
    # the report say why once, under the judges, not once per judge
    from genir_eval.report.summary import format_summary
    from genir_eval.rundir.folder import load_run

    reasons = {b["ppi"]["reason"] for b in run.meta["judges"].values() if b.get("ppi")}
    assert len(reasons) == 1 and len(run.meta["judges"]) > 1
    reason = reasons.pop()
    summary = format_summary(load_run(tmp_path / "urge"))
    assert summary.count(reason) == 1 and f"  PPI, every judge: {reason}" in summary
    report = (tmp_path / "urge" / "report.html").read_text(encoding="utf-8")
    assert report.count("PPI needs sessions without gold") == 1


# --- an LLM scenario against the local fake server --------------------------------------

REPLY = '{"M": 2, "T": 3, "O": 2}'


def reply(request: FakeRequest) -> str:
    """Label 2 for every link, except 1 for the links of prompts mentioning 'server'."""
    return '{"M": 2, "T": 3, "O": 1}' if "server" in request.last_user_text else REPLY


def _llm_scenario(base_url: str, cache: Path | bool) -> dict[str, object]:
    return {
        "name": "fake-openai",
        "input": {"path": str(ROOT / "fixtures" / "demo_sessions.csv"), "format": "urge"},
        "llm": {"provider": "openai", "model": "gpt-4o-mini", "base_url": base_url},
        "engine": {"concurrency": 8, "cache": str(cache) if cache else False, "max_attempts": 2},
        "judges": [{"name": "link_usefulness.dna"}, {"name": "link_usefulness.true"}],
        "meta": {"n_boot": 50},
    }


def _n_judgments(fixtures_dir: Path) -> int:
    sessions = load_sessions(fixtures_dir / "demo_sessions.csv").sessions
    return 2 * sum(len(t.cited_link_ids) for s in sessions for t in s.turns)


def test_llm_scenario_through_the_fake_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures_dir: Path
) -> None:
    with FakeLLMServer(reply=reply) as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        scenario = parse_scenario(
            _llm_scenario(server.openai_base_url, tmp_path / "cache.sqlite"), base_dir=tmp_path
        )
        run = run_scenario(scenario, out_dir=tmp_path / "a")
        expected = _n_judgments(fixtures_dir)
        assert server.stats.total == expected and not server.stats.shape_errors
        assert run.info["provider_calls"] == expected
        assert {j["provider"] for j in run.info["judges"]} == {"openai"}
        assert {j["model"] for j in run.info["judges"]} == {"gpt-4o-mini"}
        assert {link.labels["link_usefulness.dna"] for link in run.links if link.cited} == {1, 2}
        # a fresh output directory over the same cache: every reply from the cache
        again = run_scenario(scenario, out_dir=tmp_path / "b")
        assert server.stats.total == expected
        assert again.info["provider_calls"] == 0 and again.info["cache"]["hits"] == expected


def _toml(document: dict[str, object]) -> str:
    lines: list[str] = []
    for key in ("name",):
        lines.append(f"{key} = {json.dumps(document[key])}")
    for section in ("input", "llm", "engine", "meta"):
        lines.append(f"[{section}]")
        for key, value in document[section].items():  # type: ignore[attr-defined]
            lines.append(f"{key} = {json.dumps(value)}")
    for judge in document["judges"]:  # type: ignore[attr-defined]
        lines.append(f"[[judges]]\nname = {json.dumps(judge['name'])}")
    return "\n".join(lines) + "\n"


@pytest.mark.slow
def test_killed_run_resumes_from_its_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures_dir: Path
) -> None:
    """kill -9 in the middle of a run; the next run asks only what was not journaled."""
    expected = _n_judgments(fixtures_dir)
    with FakeLLMServer(reply=reply, latency=0.1) as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        document = _llm_scenario(server.openai_base_url, False)
        path = tmp_path / "fake.toml"
        path.write_text(_toml(document))
        out = tmp_path / "run"
        child = subprocess.Popen(
            [sys.executable, "-m", "genir_eval", "run", str(path), "--out", str(out), "--quiet"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 60
            while server.stats.answered_ok < expected // 3:
                assert child.poll() is None, child.stderr.read() if child.stderr else ""
                assert time.monotonic() < deadline, "the run made no progress"
                time.sleep(0.01)
        finally:
            child.kill()
            child.wait()
            if child.stderr:
                child.stderr.close()
        time.sleep(0.3)  # let the server finish answering the dead client's requests
        first = server.stats.total
        assert 0 < first < expected
        assert not (out / "run.json").exists()  # a killed run leaves no finished run
        run = run_scenario(parse_scenario(document, base_dir=tmp_path), out_dir=out)
        second = server.stats.total - first
        resumed = run.info["cache"]["resumed"]
        # replies that arrived before the kill but were not yet journaled are asked again;
        # everything journaled is not
        assert 0 < resumed <= first and second == expected - resumed
        assert {link.labels["link_usefulness.dna"] for link in run.links if link.cited} == {1, 2}
        run = run_scenario(parse_scenario(document, base_dir=tmp_path), out_dir=out)
        assert server.stats.total == first + second  # the third run asks nothing
        assert run.info["provider_calls"] == 0
