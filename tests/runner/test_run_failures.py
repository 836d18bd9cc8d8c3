"""A failed run fails: exit code 3 with the outputs written, early stop, dead endpoints."""

from __future__ import annotations

import io
import json
import re
import socket
import time
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.ingest import load_sessions
from genir_eval.rundir.status import failure_lines, run_status
from genir_eval.runner import parse_scenario, run_scenario
from genir_eval.testing.fake_llm_server import FakeLLMServer, Fault

ROOT = Path(__file__).resolve().parents[2]
DEMO_CSV = ROOT / "fixtures" / "demo_sessions.csv"
REPLY = '{"M": 2, "T": 3, "O": 2}'


def _judgments() -> int:
    sessions = load_sessions(DEMO_CSV).sessions
    return sum(len(t.cited_link_ids) for s in sessions for t in s.turns)


def _write(path: Path, base_url: str, engine: str = "") -> Path:
    path.write_text(
        f"""
name = "fails"
[input]
path = {json.dumps(str(DEMO_CSV))}
format = "urge"
[llm]
provider = "openai"
model = "gpt-4o-mini"
base_url = {json.dumps(base_url)}
[engine]
concurrency = 2
cache = false
max_attempts = 3
{engine}
[[judges]]
name = "link_usefulness.dna"
[meta]
n_boot = 20
""",
        encoding="utf-8",
    )
    return path


def test_a_wrong_key_stops_early_and_the_run_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeLLMServer(reply=lambda request: REPLY) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-0123456789abcdef")
        scenario = _write(tmp_path / "s.toml", server.openai_base_url)
        out = tmp_path / "run"
        code = main(["run", str(scenario), "--out", str(out), "--stop-after", "3"])
        requests = server.stats.total
    captured = capsys.readouterr()
    assert code == 3
    # at most stop_after rejected requests, plus those already in flight (concurrency 2)
    assert requests <= 3 + 2 < _judgments()
    # the outputs are written: every label missing with its reason, the run marked failed
    run = json.loads((out / "run.json").read_text())
    assert run["status"]["ok"] is False
    assert any("consecutive permanent errors" in r for r in run["status"]["reasons"])
    links = [json.loads(line) for line in (out / "links.jsonl").read_text().splitlines()]
    reasons = [row["missing"].get("link_usefulness.dna") for row in links if row["cited"]]
    assert reasons and all(reasons)
    assert any(r.startswith("permanent:") for r in reasons)
    assert any(r.startswith("stopped:") for r in reasons)
    # stderr names the top reasons with counts and the endpoint; no traceback
    assert "RUN FAILED" in captured.err and server.openai_base_url in captured.err
    assert "Traceback" not in captured.err
    assert "sk-wrong-key-0123456789abcdef" not in captured.err + (out / "run.json").read_text()


def test_a_dead_endpoint_is_given_up(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    scenario = parse_scenario(
        {
            "input": {"path": str(DEMO_CSV)},
            "llm": {"provider": "openai", "base_url": f"http://127.0.0.1:{port}/v1"},
            "engine": {"cache": False, "give_up_after": 1.0, "max_attempts": 100},
            "judges": [{"name": "link_usefulness.dna"}],
            "meta": {"n_boot": 20},
        },
        base_dir=tmp_path,
    )
    started = time.monotonic()
    run = run_scenario(scenario, out_dir=tmp_path / "run")
    elapsed = time.monotonic() - started
    status = run.info["status"]
    assert status["ok"] is False
    assert any("unreachable" in reason for reason in status["reasons"])
    # 100 attempts per judgment with backoff would take minutes; giving up takes about
    # give_up_after plus one backoff (generous bound for a loaded machine)
    assert elapsed < 45
    assert all(link.missing for link in run.links if link.cited)


@pytest.mark.slow
def test_permanent_errors_alone_fail_the_run_unless_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One 400 among the judgments: 1 missing label is under 5%, but a permanent error."""
    n = _judgments()
    assert n > 20
    with FakeLLMServer(reply=lambda request: REPLY, script=[Fault("bad_request")]) as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        scenario = _write(tmp_path / "s.toml", server.openai_base_url, "concurrency = 1")
        scenario.write_text(scenario.read_text().replace("concurrency = 2\n", ""))
        assert main(["run", str(scenario), "--out", str(tmp_path / "a"), "--quiet"]) == 3
        server.push_script([Fault("bad_request")])
        code = main(
            ["run", str(scenario), "--out", str(tmp_path / "b"), "--quiet", "--allow-permanent"]
        )
        assert code == 0
        status = json.loads((tmp_path / "b" / "run.json").read_text())["status"]
        assert status["ok"] and status["top_failures"][0]["count"] == 1
        # a scenario allowing them passes; --no-allow-permanent overrides it and fails the run
        allowing = _write(tmp_path / "allow.toml", server.openai_base_url, "allow_permanent = true")
        server.push_script([Fault("bad_request")])
        assert main(["run", str(allowing), "--out", str(tmp_path / "c"), "--quiet"]) == 0
        server.push_script([Fault("bad_request")])
        code = main(
            ["run", str(allowing), "--out", str(tmp_path / "d"), "--quiet", "--no-allow-permanent"]
        )
        assert code == 3
        status = json.loads((tmp_path / "d" / "run.json").read_text())["status"]
        assert status["ok"] is False and status["allow_permanent"] is False


@pytest.mark.slow
def test_max_missing_is_the_threshold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Transient failures (500, not retried with max_attempts 1) missing 2 labels."""
    n = _judgments()
    with FakeLLMServer(reply=lambda request: REPLY) as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        scenario = _write(
            tmp_path / "s.toml", server.openai_base_url, "max_attempts = 1\nconcurrency = 1"
        )
        scenario.write_text(
            scenario.read_text().replace("concurrency = 2\n", "").replace("max_attempts = 3\n", "")
        )
        server.push_script([Fault("server_error"), Fault("server_error")])
        strict = ["--max-missing", str(1 / n)]  # 2 of n missing > 1/n
        assert main(["run", str(scenario), "--out", str(tmp_path / "a"), "--quiet", *strict]) == 3
        server.push_script([Fault("server_error"), Fault("server_error")])
        lenient = ["--max-missing", str(2 / n)]
        assert main(["run", str(scenario), "--out", str(tmp_path / "b"), "--quiet", *lenient]) == 0


def test_run_status_counts_and_orders_reasons() -> None:
    """Computed by hand: judge a misses 2 of 10 (20% > 5%), judge b 0 of 10."""
    status = run_status(
        {"a": {"labels": 10, "missing": 2}, "b": {"labels": 10, "missing": 0}},
        [
            {"judge": "a", "reason": "transient: boom"},
            {"judge": "a", "reason": "transient: boom"},
        ],
        [{"provider": "openai", "model": "m", "failures": {"transient": 2}, "stopped": None}],
        endpoints={"a": "openai/m at http://h/v1"},
        max_missing=0.05,
        allow_permanent=False,
    )
    assert status["ok"] is False
    assert status["reasons"] == ["judge a: 2 of 10 labels missing (20.0% > 5.0% allowed)"]
    assert status["top_failures"] == [
        {
            "count": 2,
            "cause": "other",
            "reason": "transient: boom",
            "judges": ["a"],
            "endpoint": "openai/m at http://h/v1",
            "hint": "see the reason and failures.jsonl",
        }
    ]


def test_one_cause_is_one_row_with_the_judges_it_hit() -> None:
    """Two judges over the limit on one refused endpoint: one line of judges, one cause."""
    refused = "stopped: not sent: gave up; last: connection refused: Cannot connect (x, y)"
    status = run_status(
        {"a": {"labels": 4, "missing": 4}, "b": {"labels": 2, "missing": 2}},
        [
            {"judge": "a", "reason": refused, "count": 4},
            {"judge": "b", "reason": refused, "count": 1},
            {"judge": "b", "reason": "transient: connection refused: other text", "count": 1},
        ],
        [],
        endpoints={"a": "openai/m at http://h/v1", "b": "openai/m at http://h/v1"},
        max_missing=0.05,
        allow_permanent=False,
    )
    assert status["reasons"] == [
        "2 judges have more than 5.0% of their labels missing: a 4 of 4, b 2 of 2"
    ]
    assert [(r["count"], r["cause"], r["judges"], r["reason"]) for r in status["top_failures"]] == [
        (6, "connection refused", ["a", "b"], refused)
    ]
    lines = failure_lines(status)
    assert "  6 x connection refused: [openai/m at http://h/v1] (2 judges: a, b)" in lines
    assert "      hint: is the server running at http://h/v1? Nothing accepted the connection" in (
        lines
    )


def test_a_heartbeat_line_without_a_terminal(tmp_path: Path) -> None:
    import asyncio

    from genir_eval.runner.progress import Heartbeat

    stream = io.StringIO()

    async def wait() -> int:
        beat = Heartbeat(lambda: "waiting for 3 replies", stream=stream, every_s=0.05)
        await asyncio.sleep(0.5)
        await beat.aclose()
        return beat.lines

    lines = asyncio.run(wait())
    assert lines >= 1
    assert stream.getvalue().splitlines()[0] == "genir-eval: waiting for 3 replies"


def test_meta_exits_3_when_every_label_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeLLMServer(reply=lambda request: REPLY) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-0123456789abcdef")
        code = main(
            ["meta", str(DEMO_CSV), "--judge", "link_usefulness.dna", "--json", "--quiet"]
            + ["--base-url", server.openai_base_url, "--cache-mode", "off", "--journal", "none"]
        )
    captured = capsys.readouterr()
    assert code == 3
    result = json.loads(captured.out)
    assert result["status"]["ok"] is False
    assert result["status"]["top_failures"][0]["endpoint"].endswith(server.openai_base_url)
    assert "RUN FAILED" in captured.err and "Traceback" not in captured.err


@pytest.mark.realtime
def test_a_hung_endpoint_is_given_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that accepts and never answers: attempts time out, and after give_up_after
    seconds of nothing but that the engine stops instead of retrying to the deadline."""
    from genir_eval.testing.fake_llm_server import FaultPlan

    with FakeLLMServer(faults=FaultPlan(rate=1.0, kinds=("hang",))) as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        scenario = parse_scenario(
            {
                "input": {"path": str(DEMO_CSV)},
                "llm": {"provider": "openai", "base_url": server.openai_base_url},
                "engine": {
                    "cache": False,
                    "timeout": 0.5,
                    "deadline": 600.0,
                    "max_attempts": 1000,
                    "give_up_after": 2.0,
                },
                "judges": [{"name": "link_usefulness.dna"}],
                "meta": {"n_boot": 20},
            },
            base_dir=tmp_path,
        )
        started = time.monotonic()
        run = run_scenario(scenario, out_dir=tmp_path / "run")
        elapsed = time.monotonic() - started
    status = run.info["status"]
    assert any("unreachable or silent" in reason for reason in status["reasons"])
    assert elapsed < 60  # the deadline (600 s) and the attempts (1000) were never reached


def test_every_failure_is_streamed_to_failures_jsonl_and_run_json_lists_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # run.json lists at most MAX_LISTED_FAILURES (3 here) of the missing judgments and
    # their total; failures.jsonl holds every one; the status, summary and report count them all
    from genir_eval.report import html
    from genir_eval.report.summary import format_summary
    from genir_eval.rundir.folder import load_run
    from genir_eval.runner import assemble

    monkeypatch.setattr(assemble, "MAX_LISTED_FAILURES", 3)
    monkeypatch.setattr(html, "MAX_FAILURE_GROUPS", 1)  # the report's table of reasons
    with FakeLLMServer(reply=lambda request: "no JSON here") as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        scenario = _write(tmp_path / "s.toml", server.openai_base_url)
        run_scenario(scenario, out_dir=tmp_path / "run")
    n = _judgments()
    written = load_run(tmp_path / "run")
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["failures_total"] == n > 3 and len(info["failures"]) == 3
    rows = [json.loads(x) for x in (tmp_path / "run" / "failures.jsonl").read_text().splitlines()]
    assert len(rows) == n and rows[:3] == [{"version": 1, **f} for f in info["failures"]]
    assert {r["judge"] for r in rows} == {"link_usefulness.dna"}
    assert len({(r["session_id"], r["turn"], r["item"]) for r in rows}) == n
    assert written.failures_total == n and len(list(written.iter_failures())) == n
    assert sum(f["count"] for f in info["status"]["top_failures"]) == n
    assert f"Missing labels: {n} (link_usefulness.dna {n})" in format_summary(written)
    report = (tmp_path / "run" / "report.html").read_text()
    # grouped by cause, each group counted: the groups' counts add up to n
    groups, n_groups = html.failure_groups(written)
    assert len(groups) == 1 and groups[0].judges == ["link_usefulness.dna"]
    if n_groups == 1:
        assert groups[0].count == n
    else:
        assert f"and {n_groups - 1} other causes (see failures.jsonl)" in report
    assert f"{n} judgments missing, for " in report


def test_a_refused_endpoint_reads_as_refused_once_with_a_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two judges on a port nobody listens on: the terminal and the report name the refused
    connection (not "Request timed out"), in one row with both judges and the hint, the
    report's table of causes is shown once, and each item's missing judgments are folded."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    scenario = _write(
        tmp_path / "s.toml", base_url, engine="give_up_after = 1.0\n[[judges]]\nname = 'spans'"
    )
    out = tmp_path / "run"
    assert main(["run", str(scenario), "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert "Request timed out" not in err
    rows = [line for line in err.splitlines() if " x connection refused: " in line]
    assert len(rows) == 1 and "(2 judges: link_usefulness.dna, spans)" in rows[0]
    assert f"hint: is the server running at {base_url}? Nothing accepted the connection" in err
    assert "2 judges have more than 5.0% of their labels missing" in err

    report = (out / "report.html").read_text(encoding="utf-8")
    assert report.count("<table id='top-failures'>") == 1 and "<table id='failures'>" not in report
    banner = report.split("<table id='top-failures'>", 1)[1].split("</table>", 1)[0]
    assert banner.count("<tr>") == 2  # the header and one cause
    assert "connection refused" in banner and "link_usefulness.dna, spans" in banner
    assert f"hint: is the server running at {base_url}?" in banner
    # outside the folded evidence the reason appears only at the top (reasons and table)
    folded = report.count("<details class='missing'>")
    assert folded >= _judgments()
    unfolded = re.sub(r"<details class='missing'>.*?</details>", "", report, flags=re.S)
    assert unfolded.count("Cannot connect to host") <= 3
