"""The nugget judge's offline twin: a restatement earns what a verbatim copy earns, an
answer that does not say the fact earns nothing, a missing number caps the assignment."""

from __future__ import annotations

import pytest

from genir_eval.judges.nuggets.twin import assignment, create_reply, importance_reply
from genir_eval.judges.offline.semantic import available

NUGGET = "Managed database backups are kept for seven days by default"
VERBATIM = "Managed database backups are kept for seven days by default, the docs say."
# the same fact in other words (invented)
PARAPHRASE = "By default, a managed database's backups are retained for a week."
UNRELATED = "The support team answers tickets within one business day."

needs_meaning = pytest.mark.skipif(
    not available(), reason="a restatement is found by meaning: the semantic extra"
)


@needs_meaning
def test_restating_earns_what_copying_earns() -> None:
    copied, _ = assignment(NUGGET, VERBATIM)
    restated, why = assignment(NUGGET, PARAPHRASE)
    assert copied == "support"
    assert restated == copied, why


def test_an_answer_that_does_not_say_it_is_not_support() -> None:
    label, reason = assignment(NUGGET, UNRELATED)
    assert label == "not_support"
    assert "content words" in reason


def test_a_number_the_answer_lacks_caps_at_partial() -> None:
    label, reason = assignment(
        "Backups are kept for 35 days on the Pro plan",
        "Backups are kept for 7 days on the Pro plan.",
    )
    assert label == "partial_support"
    assert "lacks 35" in reason


def test_creation_keeps_relevant_distinct_facts_up_to_the_cap() -> None:
    context = {
        "query": "how long are database backups kept",
        "earlier": [],
        "nuggets": [],
        "sources": [
            "Managed database backups are kept for seven days. Managed database backups are "
            "kept for seven days by default. The office cafeteria serves lunch at noon daily.",
            "On the Pro plan backup retention can be raised to thirty five days.",
        ],
        "max_nuggets": 5,
    }
    made = create_reply(context)["nuggets"]
    assert any("seven days" in n for n in made)
    assert any("thirty five days" in n for n in made)
    assert not any("cafeteria" in n for n in made)  # no term of the query
    assert sum("seven days" in n for n in made) == 1  # the near-duplicate merged
    assert len(create_reply({**context, "max_nuggets": 1})["nuggets"]) == 1


def test_importance_labels_every_nugget() -> None:
    got = importance_reply(
        {
            "query": "how long are database backups kept",
            "nuggets": [["f1", "Database backups are kept seven days"], ["f2", "Lunch is at noon"]],
        }
    )["importance"]
    assert got == {"f1": "vital", "f2": "okay"}


def test_an_answer_denying_the_nugget_does_not_support_it() -> None:
    nugget = "A cup of drip coffee holds more caffeine than a shot of espresso"
    label, reason = assignment(
        nugget, "A cup of drip coffee does not hold more caffeine than a shot of espresso."
    )
    assert label == "not_support"
    assert "opposite" in reason and "hold" in reason
    same, _ = assignment(
        nugget, "A cup of drip coffee holds more caffeine than a shot of espresso."
    )
    assert same == "support"
