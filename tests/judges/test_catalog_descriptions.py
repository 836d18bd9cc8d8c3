"""``genir-eval judges`` describes each judge on its own, in plain text, with only the
options that judge reads."""

from __future__ import annotations

from genir_eval.judges.catalog import judge_catalog


def test_each_judge_has_its_own_description_without_markup() -> None:
    entries = {entry.name: entry for entry in judge_catalog()}
    item = [name for name in entries if name.startswith("item-")]
    assert len(item) == 6
    # each ITEM variant and baseline said apart, not one shared module sentence
    assert len({entries[name].summary for name in item}) == len(item)
    for entry in entries.values():
        assert entry.summary and ":mod:" not in entry.summary and "``" not in entry.summary


def test_an_item_option_is_listed_only_for_the_judge_that_reads_it() -> None:
    entries = {entry.name: entry for entry in judge_catalog()}

    def options(name: str) -> set[str]:
        return {option.name for option in entries[name].options}

    assert "k" in options("item-ar") and "k" not in options("item-as")
    assert {"samples", "seed"} <= options("item-ksample")
    assert not {"samples", "seed"} & options("item-vanilla")
