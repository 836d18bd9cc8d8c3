"""Agreement figures: between people (Krippendorff's alpha, published example), judge
against people (weighted kappa, MAE), and the people's label of an item."""

from __future__ import annotations

import math

import pytest

from genir_eval.label.agreement import (
    krippendorff_alpha,
    people_label,
    queue_agreement,
    stratified_ppi,
)
from genir_eval.label.items import Item
from genir_eval.label.store import Event


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


def test_stratified_ppi_by_hand() -> None:
    # stratum 0: judged 0 1 0 1, people 1 1 on the first two: rectifier -1 0 (mean -0.5,
    # variance 0.5), unlabelled judged 0 1 (mean 0.5, variance 0.5): 0.5 + 0.5 = 1.0 with
    # variance 0.5/2 + 0.5/2 = 0.5. Stratum 1: judged 1 2, both labelled 2 2: 2.0, variance
    # 0. Weights 4/6 and 2/6: 4/3, variance (4/6)^2 0.5 = 2/9.
    out = stratified_ppi(
        [0, 0, 0, 0, 1, 1], [0, 1, 0, 1, 1, 2], [1, 1, None, None, 2, 2], bounds=(0, 3)
    )
    assert out["estimate"] == pytest.approx(4 / 3, abs=1e-12)
    half = 1.959963984540054 * math.sqrt(2 / 9)
    assert out["ci"] == pytest.approx([4 / 3 - half, 4 / 3 + half], abs=1e-9)
    assert out["strata"] == {"0": {"items": 4, "labelled": 2}, "1": {"items": 2, "labelled": 2}}
    assert "least certain" in out["note"]


def test_stratified_ppi_needs_two_labels_a_stratum() -> None:
    out = stratified_ppi([0, 0, 1, 1], [0, 1, 1, 1], [1, None, 2, 2])
    assert out["estimate"] is None and "stratum 0 has 1 labelled of 2" in out["reason"]
