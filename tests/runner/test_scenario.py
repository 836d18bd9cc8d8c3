from __future__ import annotations

from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.errors import ConfigError
from genir_eval.runner.scenario import check_credentials, load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml"))

MINIMAL = {
    "input": {"path": "sessions.csv"},
    "judges": [{"name": "link_usefulness.dna"}],
}


def _with(**sections: object) -> dict[str, object]:
    return {**MINIMAL, **sections}


def test_shipped_scenarios_parse_and_their_inputs_exist() -> None:
    names = {p.stem for p in SCENARIOS}
    assert {"demo-offline", "urge-offline", "urge-openai", "urge-anthropic"} <= names
    for path in SCENARIOS:
        scenario = load_scenario(path)
        assert scenario.input.path.is_file(), f"{path.name}: {scenario.input.path} does not exist"
        assert scenario.output.dir.parent == ROOT / "runs"


def test_urge_scenarios_read_the_shared_sample(urge_sample_path: Path) -> None:
    for name in ("urge-offline", "urge-openai", "urge-anthropic"):
        assert (
            load_scenario(ROOT / "scenarios" / f"{name}.toml").input.path
            == urge_sample_path.resolve()
        )


def test_defaults() -> None:
    scenario = parse_scenario(MINIMAL, base_dir="/data", name="x")
    assert scenario.name == "x"
    assert scenario.input.path == Path("/data/sessions.csv")
    assert scenario.judges[0].llm.provider == "offline"  # the offline default when none
    assert scenario.judges[0].id == "link_usefulness.dna"
    assert scenario.engine.concurrency == 16 and scenario.engine.journal is True
    assert scenario.output.dir == Path("/runs/x")


def test_llm_defaults_and_per_judge_override() -> None:
    scenario = parse_scenario(
        _with(
            llm={"provider": "openai", "model": "gpt-4o-mini"},
            judges=[
                {"name": "link_usefulness.dna"},
                {"name": "spans", "provider": "anthropic", "model": "claude-x"},
            ],
        )
    )
    assert [(j.llm.provider, j.llm.model) for j in scenario.judges] == [
        ("openai", "gpt-4o-mini"),
        ("anthropic", "claude-x"),
    ]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (_with(enigne={}), r"enigne: unknown key \(did you mean 'engine'\?\)"),
        (
            _with(engine={"concurency": 4}),
            r"engine.concurency: unknown key \(did you mean 'concurrency'\?\)",
        ),
        (
            _with(engine={"concurrency": 0}),
            r"engine.concurrency: expected an integer >= 1 and <= 100000, got 0",
        ),
        (
            _with(engine={"concurrency": "ten"}),
            r"engine.concurrency: expected an integer >= 1 and <= 100000, got 'ten'",
        ),
        (
            _with(engine={"cache_mode": "rw"}),
            r"engine.cache_mode: expected one of read-write, replay, off, got 'rw'",
        ),
        (_with(engine={"cache": 3}), r"engine.cache: expected a file path or false"),
        ({"judges": [{"name": "spans"}]}, r"input: required"),
        (_with(input={"path": "a.csv", "format": "xlsx"}), r"input.format: expected one of"),
        (_with(judges=[]), r"judges: expected a non-empty list"),
        (
            _with(judges=[{"name": "link_usefulness.dan"}]),
            r"judges\[0\].name: unknown judge 'link_usefulness.dan' "
            r"\(did you mean 'link_usefulness.dna'\?\); expected one of: .*link_usefulness.dna",
        ),
        (
            _with(judges=[{"name": "spans", "modle": "x"}]),
            r"judges\[0\].modle: unknown key \(did you mean 'model'\?\)",
        ),
        (
            _with(judges=[{"name": "spans", "provider": "gemini"}]),
            r"judges\[0\].provider: expected one of auto, offline, openai, anthropic",
        ),
        (
            _with(judges=[{"name": "spans"}, {"name": "spans"}]),
            r"judges\[1\].id: 'spans' is used by another judge",
        ),
        (
            _with(judges=[{"name": "spans", "id": "0\n"}]),
            r"judges\[0\].id: '0\\n' is not a usable judge id",
        ),
        (
            _with(aggregate={"measures": ["sdcg_urge(bx=1)"]}),
            r"aggregate.measures: sDCG-URGE: unknown parameter",
        ),
        (_with(aggregate={"measures": ["ndcg"]}), r"aggregate.measures: unknown measure 'ndcg'"),
        (
            _with(aggregate={"measures": ["sdcg_urg"]}),
            r"unknown measure 'sdcg_urg' \(did you mean 'sdcg_urge'\?\); known: .*srbp_urge",
        ),
        (_with(aggregate={"session": "avg"}), r"aggregate.session: expected one of"),
        (
            _with(aggregate={"link_judges": ["dna"]}),
            r"aggregate.link_judges: 'dna' is not a judge of this scenario",
        ),
        (
            _with(aggregate={"combine": [{"scores": ["a"]}]}),
            r"aggregate.combine\[0\].scores: expected a list of two score names",
        ),
        (_with(meta={"n_boot": -1}), r"meta.n_boot: expected an integer >= 0"),
        (
            _with(meta={"headline": "sdcg-urge"}),
            r"meta.headline: 'sdcg-urge' is not a score of this scenario",
        ),
        (_with(version=2), r"version: expected 1, got 2"),
        (_with(engine={"executor": "dask"}), r"engine.executor: expected one of local, ray"),
        (_with(engine={"ray_workers": 0}), r"engine.ray_workers"),
    ],
)
def test_invalid_scenarios_name_the_key(document: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_scenario(document)


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('[input]\npath = "x.csv"\n[[judges]]\nname = "spans"\n[output]\ndri = "out"\n')
    with pytest.raises(
        ConfigError, match=r"bad.toml: output.dri: unknown key \(did you mean 'dir'\?\)"
    ):
        load_scenario(path)
    path.write_text("[input\n")
    with pytest.raises(ConfigError, match="bad.toml: not valid TOML"):
        load_scenario(path)
    with pytest.raises(ConfigError, match="no such scenario file"):
        load_scenario(tmp_path / "missing.toml")


def test_cli_invalid_scenario_exits_2_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        '[input]\npath = "x.csv"\n[[judges]]\nname = "spans"\n[engine]\nconcurrency = "many"\n'
    )
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "engine.concurrency: expected an integer >= 1" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("provider", "variable"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")]
)
def test_missing_key_fails_before_any_call(provider: str, variable: str) -> None:
    scenario = parse_scenario(_with(llm={"provider": provider}))
    with pytest.raises(
        ConfigError, match=f"needs the environment variable {variable}; it is not set"
    ):
        check_credentials(scenario, env={})
    check_credentials(scenario, env={variable: "sk-x"})


@pytest.mark.parametrize("name", ["urge-openai", "urge-anthropic"])
def test_llm_scenarios_without_key_exit_2(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert (
        main(["run", str(ROOT / "scenarios" / f"{name}.toml"), "--out", str(tmp_path / "out")]) == 2
    )
    err = capsys.readouterr().err
    variable = "OPENAI_API_KEY" if name == "urge-openai" else "ANTHROPIC_API_KEY"
    assert f"needs the environment variable {variable}" in err and f"{name}.toml" in err
    assert not (tmp_path / "out").exists()  # nothing written, nothing asked
