"""Agreement figures: between people (Krippendorff's alpha, published example), judge
against people (weighted kappa, MAE), and the people's label of an item."""

from __future__ import annotations

import math

import pytest

from genir_eval.runner.label.agreement import (
    krippendorff_alpha,
    people_label,
    queue_agreement,
    random_sample,
)
from genir_eval.runner.label.items import Item
from genir_eval.runner.label.store import Event


def _event(item: str, who: str, value: float) -> Event:
    return Event(0, "q", item, who, "label", value, "", None, False, None, "t")


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with
# four observers and twelve units (None: not labelled): ordinal alpha 0.815 as published.
RELIABILITY = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


def test_krippendorff_alpha_published_example() -> None:
    labels: dict[str, dict[str, Event]] = {}
    for who, values in RELIABILITY.items():
        for unit, value in enumerate(values):
            if value is not None:
                labels.setdefault(f"u{unit}", {})[who] = _event(f"u{unit}", who, value)
    out = krippendorff_alpha(labels, [1, 2, 3, 4, 5])
    assert out["alpha"] == pytest.approx(0.815, abs=0.001)
    assert out["items"] == 11 and out["labellers"] == 4  # unit 12 has one label only


def test_alpha_needs_shared_items() -> None:
    labels = {"u1": {"ann": _event("u1", "ann", 1)}}
    out = krippendorff_alpha(labels, [0, 1, 2, 3])
    assert out["alpha"] is None and "fewer than 2 items" in out["reason"]


def test_people_label_is_the_lower_median() -> None:
    by = {w: _event("u", w, v) for w, v in zip("abcd", (3, 1, 2, 0), strict=True)}
    assert people_label("q", by) == 1  # sorted 0 1 2 3: the lower middle


def test_judge_against_people_by_hand() -> None:
    # judge 0,1,2,3 against people 0,1,3,3: linear-weighted kappa worked out by hand
    judged = [0.0, 1.0, 2.0, 3.0]
    people = [0.0, 1.0, 3.0, 3.0]
    items = [Item(f"k{i}", "link_usefulness", "s", 1, (), {"dna": j}) for i, j in enumerate(judged)]
    labels = {f"k{i}": {"ann": _event(f"k{i}", "ann", p)} for i, p in enumerate(people)}
    out = queue_agreement("link_usefulness", items, labels)
    (judge,) = out["judges"]
    # observed: mean |i-j| = 1/4; expected: judge uniform on 0-3, people 0:1/4 1:1/4 3:1/2
    expected_disagreement = sum(
        0.25 * p * abs(i - j) for i in range(4) for j, p in ((0, 0.25), (1, 0.25), (3, 0.5))
    )
    assert judge["kappa_linear"] == pytest.approx(1 - 0.25 / expected_disagreement, abs=1e-9)
    assert judge["mae"] == pytest.approx(0.25) and judge["n"] == 4
    assert out["labelled"] == 4 and out["between_people"]["alpha"] is None
    assert math.isclose(judge["people_mean"]["estimate"], 7 / 4)


def test_ppi_rests_on_the_random_prefix_by_hand() -> None:
    # six items judged 0 1 2 3 0 1; the random stream's order is k0..k5; people labelled
    # k0 k1 k2 (1 1 2) and k4 (0), not k3: the sample is k0 k1 k2 (k4 lies past the gap).
    # Classic PPI: judge mean over the rest (k3 k4 k5: 3 0 1, 4/3) minus the mean of judge
    # minus person on the sample ((-1 + 0 + 0) / 3): 4/3 + 1/3 = 5/3.
    judged = [0.0, 1.0, 2.0, 3.0, 0.0, 1.0]
    items = [Item(f"k{i}", "link_usefulness", "s", 1, (), {"dna": f}) for i, f in enumerate(judged)]
    labels = {
        f"k{i}": {"ann": _event(f"k{i}", "ann", y)} for i, y in ((0, 1), (1, 1), (2, 2), (4, 0))
    }
    order = [f"k{i}" for i in range(6)]
    assert random_sample(order, labels, set()) == ["k0", "k1", "k2"]
    out = queue_agreement("link_usefulness", items, labels, permutation=order)
    (judge,) = out["judges"]
    assert out["random_sample"] == 3 and judge["n"] == 4  # agreement uses every label
    assert judge["ppi"]["n_sample"] == 3
    assert judge["ppi"]["estimate"] == pytest.approx(5 / 3, abs=1e-12)
    # rectifier -1 0 0 (variance 1/3), the rest's judged 3 0 1 (variance 7/3):
    # standard error sqrt(7/3 / 3 + 1/3 / 3)
    se = math.sqrt(7 / 9 + 1 / 9)
    assert judge["ppi"]["std_error"] == pytest.approx(se, abs=1e-12)
    # k3 skipped: the sample runs on past it and takes k4
    assert random_sample(order, labels, {"k3"}) == ["k0", "k1", "k2", "k4"]
