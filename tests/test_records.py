from genir_eval.records import (
    Dissatisfaction,
    Gold,
    Link,
    Segment,
    Session,
    Statement,
    Turn,
    session_from_dict,
    session_to_dict,
)


def _session() -> Session:
    turn = Turn(
        index=1,
        query="what is a server",
        response_text="A server serves. It hosts sites.",
        statements=(Statement("A server serves.", (1, 2)), Statement("It hosts sites.", ())),
        links=(Link(1, "https://a.example", "A"), Link(2, "https://b.example", "B")),
        segments=(Segment("A server serves.", 0, 16), Segment(" It hosts sites.", 16, 32)),
    )
    gold = Gold(
        session_satisfaction=4,
        query_satisfaction=(4,),
        link_usefulness=({1: 3, 2: 0},),
        citation_usefulness=(((3, 0), ()),),
        useful_spans_user=(("A server serves.",),),
        useful_spans_external=((),),
        dissatisfaction=Dissatisfaction(("2",), "stale prices"),
    )
    return Session("s1", (turn,), source="test", language="en", task_type="Factual QA", gold=gold)


def test_round_trip_is_lossless() -> None:
    session = _session()
    data = session_to_dict(session)
    assert data["version"] == 1
    assert session_from_dict(data) == session


def test_cited_link_ids_in_first_citation_order() -> None:
    assert _session().turns[0].cited_link_ids == (1, 2)


def test_the_package_version_is_pyproject_s() -> None:
    from pathlib import Path

    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    import genir_eval
    from genir_eval.records import PACKAGE_VERSION

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    declared = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
    assert PACKAGE_VERSION == declared == genir_eval.__version__
