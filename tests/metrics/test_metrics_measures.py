"""Measures as value objects, and their values on small hand-worked inputs."""

from __future__ import annotations

import pytest

from genir_eval.errors import ConfigError
from genir_eval.metrics import (
    MEASURES,
    RSDCG_URGE,
    RSRBP_URGE,
    SDCG,
    SDCG_URGE,
    SRBP,
    SRBP_URGE,
    WEIGHTINGS,
    QueryMeasure,
    SessionMeasure,
    parse_measure,
    positional_weights,
)

TOL = 1e-9

# Computed by hand from URGE's weighting formulas (m = len(u), positions 1-based).
QUERY_CASES = [
    # u, decreasing, increasing, equal, middle_high, middle_low
    # [3,1,2]: w=(1,1/2,1/3) -> (25/6)/(11/6); w=(1,2,3) -> 11/6; mean 2;
    #          w=(1,2,1) -> 7/4; w=(1,1/2,1) -> 5.5/2.5
    ([3, 1, 2], 25 / 11, 11 / 6, 2.0, 7 / 4, 2.2),
    # [0,3,3,1]: (33/12)/(25/12); 19/10; 7/4; w=(1,2,2,1) -> 13/6; w=(1,1/2,1/2,1) -> 4/3
    ([0, 3, 3, 1], 1.32, 1.9, 1.75, 13 / 6, 4 / 3),
    ([2], 2.0, 2.0, 2.0, 2.0, 2.0),
]


@pytest.mark.parametrize(("u", *WEIGHTINGS), QUERY_CASES)
def test_query_weightings_match_hand_values(
    u, decreasing, increasing, equal, middle_high, middle_low
):
    expected = dict(
        zip(WEIGHTINGS, (decreasing, increasing, equal, middle_high, middle_low), strict=True)
    )
    for name, value in expected.items():
        measure = MEASURES[name]()
        assert isinstance(measure, QueryMeasure)
        assert measure.compute(u) == pytest.approx(value, abs=TOL), name


@pytest.mark.parametrize("name", WEIGHTINGS)
def test_query_weighting_of_empty_turn_is_none(name):
    assert MEASURES[name]().compute([]) is None


# Source: hand-worked from the stated formulas; m is the number of statements.
WEIGHT_CASES = [
    ("middle_high", 4, [1, 2, 2, 1]),
    ("middle_high", 5, [1, 2, 3, 2, 1]),
    ("middle_low", 4, [1, 1 / 2, 1 / 2, 1]),
    ("middle_low", 5, [1, 1 / 2, 1 / 3, 1 / 2, 1]),
    ("decreasing", 3, [1, 1 / 2, 1 / 3]),
]


@pytest.mark.parametrize(("how", "m", "expected"), WEIGHT_CASES)
def test_positional_weights(how, m, expected):
    assert positional_weights(how, m) == pytest.approx(expected, abs=TOL)


# u per turn [[3, 1], [], [2]]: the empty turn is skipped, so k = 1, 2 and n' = 2.
# Computed by hand from the formulas:
#   g_1 = (7 d_1 + 1 d_2) / (d_1 + d_2), d_i proportional to log2(i + 1): (7 + log2 3) / (1 + log2 3)
#       = 3.3211168434; g_2 = 2^2 - 1 = 3; turn-2 discount ln(2.05) / ln(1.05) = 14.7127972486
#   sDCG-URGE = 3.3211168434 + 3 / 14.7127972486 = 3.5250209651
#   sRBP-URGE (b=0): s_1 = 3, s_2 = 2, turn factor p = 0.05 -> 3 + 0.1 = 3.1
#   RS-DCG-URGE = 3.3211168434 e^-3 + 3 / 14.7127972486 = 0.3692527930
#   RS-RBP-URGE = 3 e^-0.05 + 2 * 0.05 = 2.9536882735
#   sDCG(b=2,bq=4): DCG_1 = 3 + 1/1 = 4, DCG_2 = 2, discount 1 + log4 2 = 1.5 -> 4 + 4/3
#   sRBP(p=0.8,b=0.5): bp = 0.4, factor 0.4/0.6; 0.2 (3.4 + 2 * 2/3) = 0.9466666667
#   sRBP-URGE(b=0.5,p=0.5): bp = 0.25, factor 1/3; 3.25 + 2/3
SESSION_CASES = [
    (SDCG_URGE(), 3.5250209651),
    (SRBP_URGE(), 3.1),
    (RSDCG_URGE(), 0.3692527930),
    (RSRBP_URGE(), 2.9536882735),
    (SDCG(), 16 / 3),
    (SRBP(), 0.9466666667),
    (SRBP_URGE(b=0.5, p=0.5), 3.25 + 2 / 3),
]


@pytest.mark.parametrize(("measure", "expected"), SESSION_CASES, ids=str)
def test_session_measures_match_hand_values(measure, expected):
    assert measure.compute([[3, 1], [], [2]]) == pytest.approx(expected, abs=1e-9)


# u per turn [[3, 1, 2, 3], [], [2, 1, 3]]: three and four statements, so sDCG's statement
# discount max(1, log_b i) is past 1 (i = 3, 4) and b and bq both matter. By hand:
#   b=2, bq=4: DCG_1 = 3 + 1 + 2/log2 3 + 3/2 = 6.7618595071; DCG_2 = 2 + 1 + 3/log2 3
#              = 4.8927892607, over 1 + log4 2 = 1.5 -> 3.2618595071; sum 10.0237190143
#   b=3, bq=2: DCG_1 = 3 + 1 (log3 2 < 1) + 2/1 + 3/log3 4 = 8.3774437511; DCG_2 = 2 + 1
#              + 3/1 = 6, over 1 + log2 2 = 2 -> 3; sum 11.3774437511
# sDCG-URGE and RS-DCG-URGE on [[3, 1], [], [2]] with bq other than 1.05 (g_1 =
# 3.3211168434 as above; br cancels in g_k's normalisation, so it changes nothing):
#   bq=2: turn-2 discount ln(3)/ln(2) = 1.5849625007 -> 3.3211168434 + 3/1.5849625007
#   bq=1.5: ln(2.5)/ln(1.5) = 2.2598373 -> 3.3211168434 + 1.3275213 = 4.6486379915
#   RS-DCG-URGE(bq=2): 3.3211168434 e^-3 + 3/1.5849625007 = 2.0581379321
DISCOUNT_CASES = [
    (SDCG(), [[3, 1, 2, 3], [], [2, 1, 3]], 10.0237190143),
    (SDCG(b=3, bq=2), [[3, 1, 2, 3], [], [2, 1, 3]], 11.3774437511),
    (SDCG(b=3), [[3, 1, 2, 3], [], [2, 1, 3]], 8.3774437511 + 6 / 1.5),
    (SDCG(bq=2), [[3, 1, 2, 3], [], [2, 1, 3]], 6.7618595071 + 4.8927892607 / 2),
    (SDCG_URGE(bq=2), [[3, 1], [], [2]], 5.2139061041),
    (SDCG_URGE(bq=1.5), [[3, 1], [], [2]], 4.6486379915),
    (SDCG_URGE(br=3, bq=2), [[3, 1], [], [2]], 5.2139061041),
    (RSDCG_URGE(bq=2), [[3, 1], [], [2]], 2.0581379321),
]


@pytest.mark.parametrize(("measure", "u", "expected"), DISCOUNT_CASES, ids=str)
def test_statement_and_turn_discounts_follow_the_parameters(measure, u, expected):
    assert measure.compute(u) == pytest.approx(expected, abs=1e-9)


def test_first_turn_alone_is_undiscounted_and_urge_gain_of_constant_turn_is_2u_minus_1():
    # Source: the formula; with u constant, g = 2^u - 1 whatever the d_i, and k = 1 has
    # discount ln(bq)/ln(bq) = 1 and recency factor e^0 = 1.
    for measure in (SDCG_URGE(), RSDCG_URGE()):
        assert measure.compute([[2, 2, 2]]) == pytest.approx(3.0, abs=TOL)


@pytest.mark.parametrize(
    "short", ["sdcg_urge", "srbp_urge", "rsdcg_urge", "rsrbp_urge", "sdcg", "srbp"]
)
def test_session_without_values_has_no_score(short):
    measure = MEASURES[short]()
    assert isinstance(measure, SessionMeasure)
    assert measure.compute([]) is None
    assert measure.compute([[], []]) is None


PRINTED = [
    (SDCG_URGE(), "sDCG-URGE(br=1.35,bq=1.05)"),
    (SRBP_URGE(), "sRBP-URGE(b=0,p=0.05)"),
    (RSDCG_URGE(), "RS-DCG-URGE(br=1.35,bq=1.05,lambda=3)"),
    (RSRBP_URGE(), "RS-RBP-URGE(b=0,p=0.05,lambda=0.05)"),
    (SDCG(), "sDCG(b=2,bq=4)"),
    (SRBP(), "sRBP(p=0.8,b=0.5)"),
    (MEASURES["middle_low"](), "middle_low"),
]


@pytest.mark.parametrize(("measure", "text"), PRINTED, ids=[t for _, t in PRINTED])
def test_measure_prints_its_parameters_and_parses_back(measure, text):
    assert str(measure) == text
    assert repr(measure) == text
    parsed = parse_measure(text)
    assert parsed == measure
    assert hash(parsed) == hash(measure)


@pytest.mark.parametrize("short", sorted(MEASURES))
def test_every_registered_measure_round_trips(short):
    measure = MEASURES[short]()
    assert measure.SHORT == short
    assert parse_measure(str(measure)) == measure
    assert parse_measure(short) == measure


def test_parse_accepts_spaces_short_names_and_partial_parameters():
    assert parse_measure("sDCG-URGE(br=1.35, bq=1.05)") == SDCG_URGE()
    assert parse_measure(" sdcg_urge(bq=1.1) ") == SDCG_URGE(br=1.35, bq=1.1)
    assert parse_measure("RS-DCG-URGE(lambda=1)") == RSDCG_URGE(lam=1)
    assert str(SDCG_URGE(br=2)) == "sDCG-URGE(br=2,bq=1.05)"
    assert SDCG_URGE(br=2) != SDCG_URGE()
    assert SDCG() != SDCG_URGE()


@pytest.mark.parametrize(
    "text",
    [
        "nDCG@10",
        "sDCG-URGE(x=1)",
        "sDCG-URGE(br=abc)",
        "sDCG-URGE(br=1,br=2)",
        "sDCG-URGE(br)",
        "(br=1)",
    ],
)
def test_parse_rejects_unknown_names_and_parameters(text):
    with pytest.raises(ConfigError):
        parse_measure(text)


@pytest.mark.parametrize(
    "build",
    [
        lambda: SDCG_URGE(br=1.0),
        lambda: SRBP_URGE(p=0.0),
        lambda: RSRBP_URGE(lam=-1),
        lambda: SRBP(b=1.5),
    ],
)
def test_parameters_outside_their_domain_are_rejected(build):
    with pytest.raises(ConfigError):
        build()


# Every parameter's domain, by its bounds (the measures' docstrings): values taken, values
# refused with the message naming the measure and the bound.
DOMAINS = [
    # (measure class, parameter, taken, refused, message)
    (SDCG_URGE, "br", [1.0001, 1.5, 2.0], [1.0, 0.5], "sDCG-URGE: br must be > 1"),
    (SDCG_URGE, "bq", [1.0001, 1.5, 2.5], [1.0, 0.0], "sDCG-URGE: bq must be > 1"),
    (RSDCG_URGE, "br", [1.0001, 1.5], [1.0], "RS-DCG-URGE: br must be > 1"),
    (RSDCG_URGE, "bq", [1.0001, 1.5], [1.0], "RS-DCG-URGE: bq must be > 1"),
    (RSDCG_URGE, "lam", [0.0, 0.5, 3.0], [-0.001], "RS-DCG-URGE: lambda must be >= 0"),
    (SRBP_URGE, "b", [0.0, 0.5, 1.0], [-0.001, 1.001], "sRBP-URGE: b must be in [0, 1]"),
    (SRBP_URGE, "p", [0.001, 0.5, 0.999], [0.0, 1.0], "sRBP-URGE: p must be in (0, 1)"),
    (RSRBP_URGE, "b", [0.0, 1.0], [-0.001, 1.001], "RS-RBP-URGE: b must be in [0, 1]"),
    (RSRBP_URGE, "p", [0.001, 0.999], [0.0, 1.0], "RS-RBP-URGE: p must be in (0, 1)"),
    (RSRBP_URGE, "lam", [0.0, 0.5], [-0.001], "RS-RBP-URGE: lambda must be >= 0"),
    (SDCG, "b", [1.0001, 1.5, 3.0], [1.0, 0.5], "sDCG: b must be > 1"),
    (SDCG, "bq", [1.0001, 1.5, 4.0], [1.0], "sDCG: bq must be > 1"),
    (SRBP, "p", [0.001, 0.5, 0.999], [0.0, 1.0], "sRBP: p must be in (0, 1)"),
    (SRBP, "b", [0.0, 0.5, 1.0], [-0.001, 1.001], "sRBP: b must be in [0, 1]"),
]


@pytest.mark.parametrize(
    ("cls", "name", "taken", "refused", "message"),
    DOMAINS,
    ids=[f"{c.SHORT}.{n}" for c, n, *_ in DOMAINS],
)
def test_each_parameter_takes_its_domain_and_refuses_past_its_bounds(
    cls, name, taken, refused, message
):
    for value in taken:
        assert getattr(cls(**{name: value}), name) == value
    for value in refused:
        with pytest.raises(ConfigError) as error:
            cls(**{name: value})
        assert str(error.value) == message


def test_parameters_must_be_numbers_not_bools():
    with pytest.raises(ConfigError) as error:
        SDCG(b=True)
    assert str(error.value) == "sDCG: parameter 'b' must be a number"
    with pytest.raises(ConfigError, match="parameter 'bq' must be a number"):
        SDCG(bq="4")


def test_middle_weightings_turn_at_the_middle_for_six_statements():
    # by hand: m = 6, rising while i - 1 < 3 (i = 1, 2, 3), then m + 1 - i
    assert positional_weights("middle_high", 6) == [1, 2, 3, 3, 2, 1]
    assert positional_weights("middle_low", 6) == pytest.approx([1, 1 / 2, 1 / 3, 1 / 3, 1 / 2, 1])
    assert positional_weights("equal", 3) == [1.0, 1.0, 1.0]
    assert positional_weights("increasing", 3) == [1.0, 2.0, 3.0]
    with pytest.raises(ConfigError) as error:
        positional_weights("sideways", 3)
    assert str(error.value) == (
        "unknown positional weighting 'sideways'; expected one of ('decreasing', 'increasing', "
        "'equal', 'middle_high', 'middle_low')"
    )


def test_parse_errors_name_what_is_wrong():
    def message(text):
        with pytest.raises(ConfigError) as error:
            parse_measure(text)
        return str(error.value)

    assert message("nDCG@10(") == "cannot parse measure 'nDCG@10('"
    assert message("sdcg_urg") == (
        "unknown measure 'sdcg_urg' (did you mean 'sdcg_urge'?); known: citation_precision, "
        "citation_recall, decreasing, equal, increasing, middle_high, middle_low, nugget_recall, "
        "rsdcg_urge, rsrbp_urge, sdcg, sdcg_urge, srbp, srbp_urge, unsupported_claims, "
        "vital_nugget_recall, weighted_nugget_recall"
    )
    assert message("sdcg(b=1,b=2)") == "sDCG: parameter 'b' given twice in 'sdcg(b=1,b=2)'"
    assert message("sDCG(b=2=3)") == "sDCG: parameter 'b' is not a number in 'sDCG(b=2=3)'"
