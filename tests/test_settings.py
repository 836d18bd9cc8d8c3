"""Every numeric setting is finite and in range, on the command line, in a scenario and in
the Python API; a base URL is a URL."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.errors import ConfigError
from genir_eval.llm import EngineConfig
from genir_eval.settings import SETTINGS, check_base_url, check_setting, public_url
from genir_eval.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "scenarios" / "demo-offline.toml"

BAD_NUMBERS = [math.nan, math.inf, -math.inf, "below", 10**30, True]


@pytest.mark.parametrize("name", sorted(SETTINGS))
@pytest.mark.parametrize("value", BAD_NUMBERS, ids=repr)
def test_no_setting_takes_nan_inf_or_out_of_range(name: str, value: object) -> None:
    if value == "below":  # one under the setting's least value (-1 for most)
        value = int(SETTINGS[name].minimum) - 1
    with pytest.raises(ValueError, match=r"^expected (an integer|a number) "):
        check_setting(name, value)


def test_settings_take_their_bounds() -> None:
    """The ranges as declared: the lower bound itself unless it is exclusive."""
    assert check_setting("concurrency", 1) == 1
    assert check_setting("timeout", 0.001) == 0.001
    with pytest.raises(ValueError):
        check_setting("timeout", 0)
    assert check_setting("max_missing", 0) == 0.0 and check_setting("max_missing", 1) == 1.0
    with pytest.raises(ValueError):
        check_setting("max_missing", 1.5)
    assert check_setting("n_boot", 0) == 0
    with pytest.raises(ValueError):
        check_setting("n_boot", 10**9)
    assert check_setting("tpm", 5.0) == 5 and isinstance(check_setting("tpm", 5.0), int)
    with pytest.raises(ValueError):
        check_setting("tpm", 5.5)


def _counted_scenario(folder: Path, base_url: str, engine: str = "") -> Path:
    """Two demo sessions judged by one judge through the fake server at ``base_url``, which
    counts every request it receives; ``engine``: lines added to ``[engine]``."""
    scenario = folder / "counted.toml"
    scenario.write_text(
        f"""version = 1
name = "counted"

[input]
path = "{ROOT / "fixtures" / "demo_sessions.csv"}"
format = "urge"
limit = 2

[llm]
provider = "openai"
model = "fake-model"
base_url = "{base_url}"

[engine]
{engine}
cache = false
journal = false

[[judges]]
name = "satisfaction.urs"
""",
        encoding="utf-8",
    )
    return scenario


def test_the_counting_server_counts_a_valid_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The checks below can fail: the same run with valid settings calls the server."""
    with FakeLLMServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        scenario = _counted_scenario(tmp_path, server.openai_base_url)
        main(["run", str(scenario), "--out", str(tmp_path / "run"), "--quiet", "--timeout=5"])
        requests = server.stats.total
    capsys.readouterr()
    assert requests > 0


@pytest.mark.parametrize("option", ["--timeout", "--deadline", "--rpm", "--tpm", "--max-missing"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "1e400"])
def test_command_line_refuses_before_any_call(
    option: str,
    value: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeLLMServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        scenario = _counted_scenario(tmp_path, server.openai_base_url)
        code = main(["run", str(scenario), "--out", str(tmp_path / "run"), f"{option}={value}"])
        requests = server.stats.total
    assert code == 2
    err = capsys.readouterr().err
    assert option in err and "expected" in err and "Traceback" not in err
    assert len(err.splitlines()) == 1 and "usage:" not in err
    assert not (tmp_path / "run").exists()
    assert requests == 0


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("timeout", "nan"),
        ("deadline", "inf"),
        ("rpm", "-inf"),
        ("tpm", "nan"),
        ("max_missing", "2.0"),
        ("give_up_after", "inf"),
    ],
)
def test_scenario_refuses_before_any_call(
    key: str,
    value: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeLLMServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        scenario = _counted_scenario(tmp_path, server.openai_base_url, f"{key} = {value}")
        code = main(["run", str(scenario), "--out", str(tmp_path / "run")])
        requests = server.stats.total
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert str(scenario) in err and f"engine.{key}: expected" in err
    assert not (tmp_path / "run").exists()
    assert requests == 0


def test_n_boot_is_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = DEMO.read_text(encoding="utf-8").replace("n_boot = 1000", "n_boot = 10000000000")
    scenario = tmp_path / "boot.toml"
    scenario.write_text(text, encoding="utf-8")
    assert main(["run", str(scenario)]) == 2
    assert "meta.n_boot: expected an integer >= 0 and <= 1000000" in capsys.readouterr().err


def test_engine_configuration_refuses_impossible_settings() -> None:
    with pytest.raises(ConfigError, match="timeout: expected a number > 0"):
        EngineConfig(timeout=math.nan)
    with pytest.raises(ConfigError, match="rpm: expected"):
        EngineConfig(rpm=math.inf)
    with pytest.raises(ConfigError, match="concurrency: expected an integer >= 1"):
        EngineConfig(concurrency=0)
    with pytest.raises(ConfigError, match="cache_mode: expected one of"):
        EngineConfig(cache_mode="sometimes")


@pytest.mark.parametrize(
    "text", ["localhost:8000", "ftp://host/v1", "http://", "not a url", "http://h:port/v1"]
)
def test_base_url_must_be_an_http_url(text: str) -> None:
    with pytest.raises(ValueError, match="expected an http"):
        check_base_url(text)


def test_public_url_drops_credentials() -> None:
    """Credentials, query and fragment go; scheme, host, port and path stay."""
    assert public_url("https://user:sk-secret@h.example:8443/v1?key=x#f") == (
        "https://h.example:8443/v1"
    )
    assert public_url(None) is None


@pytest.mark.parametrize("name", sorted(s for s in SETTINGS if SETTINGS[s].integer))
def test_an_integer_setting_takes_its_maximum_exactly(name: str) -> None:
    """Integers are compared as integers: 2**63 - 1 as a float rounds past the maximum, and
    ``--seed 9223372036854775807`` was refused as out of range."""
    maximum = int(SETTINGS[name].maximum)
    assert check_setting(name, maximum) == maximum
    with pytest.raises(ValueError):
        check_setting(name, maximum + 1)
