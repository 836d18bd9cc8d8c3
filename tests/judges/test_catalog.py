"""``genir-eval judges`` / ``measures``: the catalog matches the registries."""

from __future__ import annotations

import json

import pytest

from genir_eval.cli import main
from genir_eval.judges import judge_names, make_judge
from genir_eval.judges.catalog import judge_catalog
from genir_eval.judges.options import options_of
from genir_eval.metrics import CITATION_MEASURES, NUGGET_MEASURES
from genir_eval.metrics.measures import MEASURES


def test_every_registered_judge_declares_its_options_on_its_class() -> None:
    for name in judge_names():
        assert options_of(make_judge(name)), name


@pytest.mark.parametrize("name", judge_names())
def test_declared_options_and_defaults_are_accepted(name: str) -> None:
    # every option at its declared default builds the judge (judges that check their
    # options refuse unknown ones, so a renamed option fails here)
    entry = next(e for e in judge_catalog() if e.name == name)
    options = {o.name: o.default for o in entry.options if o.default is not None}
    judge = make_judge(name, **options)
    assert judge.kind == entry.kind


def test_judges_command_lists_kind_options_and_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judges", "--json"]) == 0
    listed = {j["name"]: j for j in json.loads(capsys.readouterr().out)}
    assert set(listed) == set(judge_names())
    dna = listed["link_usefulness.dna"]
    assert dna["kind"] == "link_usefulness"
    assert {"name": "judges", "default": 1}.items() <= next(
        o for o in dna["options"] if o["name"] == "judges"
    ).items()
    assert all(o["help"] for j in listed.values() for o in j["options"])
    assert main(["judges"]) == 0
    text = capsys.readouterr().out
    assert (
        "link_usefulness.true  [link_usefulness]" in text
        and "reply token budget (default: the judge's own)" in text
    )


def test_measures_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measures", "--json"]) == 0
    listed = {m["name"]: m for m in json.loads(capsys.readouterr().out)}
    assert set(listed) == set(MEASURES) | set(CITATION_MEASURES) | set(NUGGET_MEASURES)
    nuggets = listed["vital_nugget_recall"]
    assert nuggets["parameters"] == {"partial": 0.5} and nuggets["level"] == "nugget"
    assert not listed["unsupported_claims"]["higher_is_better"]
    sdcg = listed["sdcg_urge"]
    assert sdcg["printed"] == "sDCG-URGE(br=1.35,bq=1.05)" and sdcg["level"] == "session"
    assert sdcg["parameters"] == {"br": 1.35, "bq": 1.05} and sdcg["higher_is_better"]
    assert all(m["range"] and m["summary"] for m in listed.values())
    assert main(["measures"]) == 0
    assert "gold:sdcg_urge" in capsys.readouterr().out
