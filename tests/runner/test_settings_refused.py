"""Settings that cannot work are refused before any call, naming the key; settings that
were ignored (--journal, --base-url alone) are honoured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.errors import ConfigError
from genir_eval.runner import Overrides, parse_scenario, run_scenario
from genir_eval.runner.run import apply_overrides
from genir_eval.testing.fake_llm_server import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
DEMO_CSV = ROOT / "fixtures" / "demo_sessions.csv"


def _document(**changes: object) -> dict[str, object]:
    document: dict[str, object] = {
        "input": {"path": str(DEMO_CSV)},
        "engine": {"cache": False},
        "judges": [{"name": "link_usefulness.dna", "id": "dna"}, {"name": "satisfaction.urs"}],
        "meta": {"n_boot": 10},
    }
    document.update(changes)
    return document


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            _document(judges=[{"name": "link_usefulness.dna", "options": {"judgez": 3}}]),
            r"judges\[0\]\.options: link_usefulness.dna: unknown option 'judgez' "
            r"\(did you mean 'judges'\?\)",
        ),
        (
            _document(judges=[{"name": "item-as", "options": {"max_iteration": 3}}]),
            r"judges\[0\]\.options: item-as: unknown option 'max_iteration' "
            r"\(did you mean 'max_iterations'\?\)",
        ),
        (
            _document(aggregate={"link_judges": ["satisfaction.urs"]}),
            r"aggregate\.link_judges: 'satisfaction.urs' gives no link labels \(a satisfaction "
            r"judge\); expected a judge of kind link_usefulness, item, rubric: dna",
        ),
        (
            _document(llm={"provider": "openai", "base_url": "localhost:8000/v1"}),
            r"llm\.base_url: expected an http\(s\) URL",
        ),
        (
            _document(judges=[{"name": "spans", "base_url": "ftp://x/v1"}]),
            r"judges\[0\]\.base_url: expected an http\(s\) URL",
        ),
        (
            _document(judges=[{"name": "spans", "options": {"template": "mine/spans.txt"}}]),
            r"judges\[0\]\.options\.template: no template file '.*/mine/spans.txt' "
            r"\('mine/spans.txt' relative to the scenario's folder",
        ),
        (
            _document(judges=[{"name": "spans", "options": {"template": "no_such_template"}}]),
            r"judges\[0\]\.options\.template: no prompt template 'no_such_template'",
        ),
        (_document(engine={"journal": 3}), r"engine\.journal: expected true, false or a file"),
    ],
)
def test_refused_naming_the_key(document: dict[str, object], message: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_scenario(document, base_dir=tmp_path)


def test_template_is_read_from_the_scenario_folder(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    template = (ROOT / "genir_eval" / "prompts" / "spans.en.txt").read_text(encoding="utf-8")
    (tmp_path / "mine" / "spans.txt").write_text(template.replace("useful", "helpful"))
    scenario = parse_scenario(
        _document(judges=[{"name": "spans", "options": {"template": "mine/spans.txt"}}]),
        base_dir=tmp_path,
    )
    assert scenario.judges[0].options["template"] == str(tmp_path / "mine" / "spans.txt")


def test_meta_option_typo_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["meta", str(DEMO_CSV), "--judge", "link_usefulness.dna", "--option", "nonsense=1"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err]
    assert "--option: link_usefulness.dna: unknown option 'nonsense'" in err


def test_base_url_alone_selects_the_openai_provider(tmp_path: Path) -> None:
    scenario = parse_scenario(_document(), base_dir=tmp_path)
    changed = apply_overrides(scenario, Overrides(base_url="http://127.0.0.1:9/v1"))
    assert {spec.llm.provider for spec in changed.judges} == {"openai"}
    assert {spec.llm.base_url for spec in changed.judges} == {"http://127.0.0.1:9/v1"}


@pytest.mark.slow
def test_run_journal_path_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--journal PATH: the judgments go to that file (and a second run into another folder
    resumes from it with no call); --journal none keeps none."""
    journal = tmp_path / "elsewhere" / "journal.sqlite"
    reply = '{"M": 2, "T": 2, "O": 2}'
    with FakeLLMServer(reply=lambda request: reply) as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        overrides = Overrides(base_url=server.openai_base_url, journal=str(journal))
        scenario = parse_scenario(
            _document(judges=[{"name": "link_usefulness.dna"}]), base_dir=tmp_path
        )
        first = run_scenario(scenario, out_dir=tmp_path / "a", overrides=overrides)
        calls = server.stats.total
        second = run_scenario(scenario, out_dir=tmp_path / "b", overrides=overrides)
        assert server.stats.total == calls > 0
        run_scenario(
            scenario,
            out_dir=tmp_path / "c",
            overrides=Overrides(base_url=server.openai_base_url, journal="none"),
        )
    assert journal.is_file()
    assert not (tmp_path / "a" / "journal.sqlite").exists()
    assert first.info["provider_calls"] == calls and second.info["provider_calls"] == 0
    assert not (tmp_path / "c" / "journal.sqlite").exists()


@pytest.mark.slow
def test_base_url_on_the_command_line_reaches_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = tmp_path / "offline.toml"
    scenario.write_text(
        f"[input]\npath = {json.dumps(str(DEMO_CSV))}\n[engine]\ncache = false\n"
        '[[judges]]\nname = "link_usefulness.dna"\n[meta]\nn_boot = 10\n'
    )
    with FakeLLMServer(reply=lambda request: '{"M": 1, "T": 1, "O": 1}') as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        code = main(
            ["run", str(scenario), "--out", str(tmp_path / "run"), "--quiet"]
            + ["--base-url", server.openai_base_url, "--model", "fake-model"]
        )
        assert code == 0 and server.stats.total > 0
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert {j["provider"] for j in info["judges"]} == {"openai"}
