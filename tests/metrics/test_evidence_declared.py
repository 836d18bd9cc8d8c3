"""Every measure and every built-in judge kind declares what its scores rest on, and the
pages read that declaration: ``sdcg_urge`` is a link-usefulness score (URGE's measures are
sums of statement usefulness read from the links a statement cites), the citation measures
rest on citation support, nugget recall on the nuggets."""

from __future__ import annotations

import pytest

from genir_eval.judges import BUILTIN_KINDS
from genir_eval.metrics.citations import CITATION_MEASURES
from genir_eval.metrics.measures import MEASURES
from genir_eval.metrics.nuggets import NUGGET_MEASURES
from genir_eval.metrics.parse import parse_measure
from genir_eval.records import EVIDENCE_KINDS, evidence_kind


@pytest.mark.parametrize("name", sorted({**MEASURES, **CITATION_MEASURES, **NUGGET_MEASURES}))
def test_every_measure_declares_its_evidence(name: str) -> None:
    declared = parse_measure(name).EVIDENCE
    assert declared in EVIDENCE_KINDS


# the declarations, from each measure's definition (its module's docstring and formula)
@pytest.mark.parametrize(
    ("measure", "evidence"),
    [
        ("sdcg_urge", "link usefulness"),
        ("srbp_urge", "link usefulness"),
        ("decreasing", "link usefulness"),
        ("citation_precision", "citation support"),
        ("unsupported_claims", "citation support"),
        ("nugget_recall", "nuggets"),
        ("vital_nugget_recall", "nuggets"),
    ],
)
def test_the_declared_evidence_of_each_family(measure: str, evidence: str) -> None:
    assert parse_measure(measure).EVIDENCE == evidence


def test_every_builtin_kind_declares_its_evidence() -> None:
    for kind in BUILTIN_KINDS:
        assert kind.evidence in EVIDENCE_KINDS, kind.name


def test_an_undeclared_kind_of_evidence_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown kind of evidence 'grounding'"):
        evidence_kind("grounding")
