"""One option table per judge (its class's ``OPTIONS``) is what builds, checks, lists and
reads the judge's options. The three cases below drifted while the options were declared in
several tables: a bound keyed by option name whatever the judge, a grade scale the judge's
check did not know, and two bounds for one option."""

from __future__ import annotations

import json

import pytest

from genir_eval.cli import main
from genir_eval.errors import ConfigError
from genir_eval.judges import make_judge
from genir_eval.judges.options import Option, parse_judge_option
from genir_eval.judges.pairwise import PairwiseJudge


def test_pairwise_takes_the_source_length_its_table_allows() -> None:
    # the pairwise table allows 0 (no source text shown); a table of all judges' options
    # bounded max_source_chars at >= 1 for every judge and refused it
    judge = make_judge("pairwise", max_source_chars=0)
    assert judge.options["max_source_chars"] == 0
    with pytest.raises(ConfigError, match=r"pairwise: option 'max_source_chars': expected"):
        make_judge("pairwise", max_source_chars=-1)


@pytest.mark.parametrize(("judge", "highest"), [("rubric-yesno", 1), ("rubric-thomas", 2)])
def test_a_direct_grading_threshold_lies_on_its_scale(judge: str, highest: int) -> None:
    assert make_judge(judge, threshold=highest).threshold == highest
    for beyond in (highest + 1, 5):
        with pytest.raises(ConfigError, match=rf"{judge}: option 'threshold': expected an integer"):
            make_judge(judge, threshold=beyond)


def test_citation_support_has_one_bound_for_the_source_length() -> None:
    # 200: the judge's own bound (a supported verdict quotes the source); the looser >= 1
    # of the shared table is gone, and the catalog shows the bound the judge applies
    (option,) = [o for o in PairwiseJudge.OPTIONS if o.name == "max_source_chars"]
    assert option.range == (0, 1e6)
    assert make_judge("citation_support", max_source_chars=200).max_source_chars == 200
    for refused in (1, 199):
        with pytest.raises(ConfigError, match=r"expected an integer >= 200"):
            make_judge("citation_support", max_source_chars=refused)
    (listed,) = [o for o in make_judge("citation_support").OPTIONS if o.name == "max_source_chars"]
    assert listed.range == (200, 100_000_000)


def test_an_option_reads_its_command_line_text_as_its_type() -> None:
    # text options keep their text (a model named 5 is "5", not the number 5); numbers and
    # switches are read as JSON and checked by the judge
    assert parse_judge_option(PairwiseJudge, "model=5") == ("model", "5")
    assert parse_judge_option(PairwiseJudge, "max_source_chars=0") == ("max_source_chars", 0)
    assert parse_judge_option(PairwiseJudge, "logprobs=false") == ("logprobs", False)
    with pytest.raises(ConfigError, match="expected KEY=VALUE"):
        parse_judge_option(PairwiseJudge, "=3")


def test_an_option_without_a_type_is_refused_where_it_is_declared() -> None:
    with pytest.raises(TypeError, match="give its type"):
        Option("model", None, "a model")


def test_the_catalog_lists_type_bound_and_choices(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judges", "--json"]) == 0
    listed = {j["name"]: j for j in json.loads(capsys.readouterr().out)}
    yesno = {o["name"]: o for o in listed["rubric-yesno"]["options"]}
    assert yesno["threshold"]["range"] == [0, 1] and yesno["threshold"]["type"] == "int"
    assert yesno["links_only"]["type"] == "bool"
    quote = {o["name"]: o for o in listed["citation_support"]["options"]}["quote"]
    assert quote["choices"] == ["strict", "lenient"]
    # rubric reads no template file: it neither lists nor takes one
    assert "template" not in {o["name"] for o in listed["rubric"]["options"]}
    with pytest.raises(ConfigError, match="rubric: unknown option 'template'"):
        make_judge("rubric", template="x.txt")
