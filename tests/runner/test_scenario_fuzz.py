"""Malformed scenarios, generated: each ends in one located line, never a traceback.

Hypothesis takes a valid scenario and breaks it: a known key gets a value of any TOML kind
(NaN, infinities, huge or negative numbers, empty or odd strings, lists, tables, booleans),
a section gains an unknown key, a judge gets random options. Either the document is valid,
or :func:`parse_scenario` raises :class:`ConfigError` whose message is one line naming the
key it broke. Written to a file and given to ``genir-eval run``, an invalid one exits 2
with one line naming the file and the key, before any call.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from genir_eval.cli import main
from genir_eval.errors import ConfigError
from genir_eval.runner import parse_scenario
from genir_eval.runner.scenario import SECTIONS

pytestmark = pytest.mark.fuzz

ROOT = Path(__file__).resolve().parents[2]
DEMO_CSV = ROOT / "fixtures" / "demo_sessions.csv"

BASE: dict[str, Any] = {
    "version": 1,
    "name": "fuzz",
    "input": {"path": str(DEMO_CSV), "format": "urge", "skip_invalid": False, "limit": 3},
    "llm": {"provider": "offline", "model": "offline"},
    "engine": {
        "concurrency": 4,
        "rpm": 600.0,
        "tpm": 100000,
        "max_attempts": 2,
        "timeout": 10.0,
        "deadline": 30.0,
        "cache": False,
        "cache_mode": "off",
        "journal": False,
        "max_missing": 0.05,
        "allow_permanent": False,
        "stop_after": 5,
        "give_up_after": 45.0,
    },
    "judges": [
        {"name": "link_usefulness.dna", "id": "dna", "options": {"judges": 1}},
        {"name": "satisfaction.urs", "id": "urs"},
    ],
    "aggregate": {
        "link_judges": ["dna"],
        "measures": ["sdcg_urge"],
        "session": "decreasing",
        "gold": True,
    },
    "meta": {"enabled": True, "headline": "sdcg_urge", "n_boot": 10, "seed": 0},
    "output": {"dir": "out", "csv": True, "report": False},
}

# (section, key) pairs that exist; None is the top level
KNOWN = [(None, key) for key in ("version", "name", "description")] + [
    (section, key) for section, table in BASE.items() if isinstance(table, dict) for key in table
]

values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0, 1e308, -1.5, 0.5]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", " ", "offline", "http://", "x://y", "../nowhere", "nan", "inf"]),
    st.lists(st.one_of(st.text(max_size=5), st.integers(), st.booleans()), max_size=3),
    st.dictionaries(st.text(min_size=1, max_size=5), st.integers(), max_size=2),
)
keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)


@st.composite
def broken(draw: st.DrawFn) -> tuple[dict[str, Any], str, bool]:
    """A document, the key path that was broken (what the error must name), and whether no
    valid scenario is like it (an unknown key or judge option, a NaN, a table where a value
    goes): those must be refused; the others may be valid."""
    document = copy.deepcopy(BASE)
    how = draw(st.sampled_from(["value", "unknown key", "judge option", "judge value"]))
    if how == "value":
        section, key = draw(st.sampled_from(KNOWN))
        value = draw(values)
        table = document if section is None else document[section]
        if value is None:
            table.pop(key, None)
        else:
            table[key] = value
        # no key of BASE takes a table or a NaN
        surely = isinstance(value, dict) or (isinstance(value, float) and math.isnan(value))
        return document, key if section is None else f"{section}.{key}", surely
    if how == "unknown key":
        section = draw(st.sampled_from([None, "input", "llm", "engine", "meta", "output"]))
        key = draw(keys.map(lambda k: f"zz_{k}"))  # never a known key
        table = document if section is None else document[section]
        table[key] = draw(values.filter(lambda v: v is not None))
        return document, key if section is None else f"{section}.{key}", True
    judge = draw(st.integers(0, 1))
    if how == "judge option":
        options = document["judges"][judge].setdefault("options", {})
        options[draw(keys.map(lambda k: f"zz_{k}"))] = draw(values.filter(lambda v: v is not None))
        return document, f"judges[{judge}].options", True
    key = draw(st.sampled_from(["name", "id", "provider", "model", "base_url", "options", "x"]))
    value = draw(values.filter(lambda v: v is not None))
    document["judges"][judge][key] = value
    # an unknown judge key, or a NaN in any, is never valid
    surely = key == "x" or (isinstance(value, float) and math.isnan(value))
    return document, f"judges[{judge}]", surely


def _check_message(error: ConfigError, broken_key: str) -> str:
    text = str(error)
    assert "\n" not in text, text
    # located: the message starts with the key it is about, the broken one or, when the
    # broken value makes another key invalid (no link judge left for meta.headline), that one
    where = text.split(":", 1)[0]
    assert where == broken_key or where.startswith(broken_key) or where.startswith(SECTIONS), (
        broken_key,
        text,
    )
    return text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(broken())
def test_every_malformed_scenario_is_one_located_error(
    case: tuple[dict[str, Any], str, bool],
) -> None:
    document, broken_key, surely = case
    if surely:  # no valid scenario is like it: accepting it is the failure
        with pytest.raises(ConfigError) as refused:
            parse_scenario(document, base_dir=ROOT)
        _check_message(refused.value, broken_key)
        return
    try:
        parse_scenario(document, base_dir=ROOT)
    except ConfigError as error:
        _check_message(error, broken_key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
        )
    raise TypeError(type(value))


def _toml(document: dict[str, Any]) -> str:
    lines = [
        f"{json.dumps(k)} = {_toml_value(v)}"
        for k, v in document.items()
        if k != "judges" and not isinstance(v, dict)
    ]
    for key, table in document.items():
        if isinstance(table, dict):
            lines.append(f"[{json.dumps(key)}]")
            lines += [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in table.items()]
    for judge in document.get("judges") or []:
        lines.append("[[judges]]")
        lines += [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in judge.items()]
    return "\n".join(lines) + "\n"


# engine settings that must be positive finite numbers, and values none of them takes
# (`stop_after` is not one: 0 is documented as "never give the endpoint up")
POSITIVE = ["concurrency", "rpm", "tpm", "max_attempts", "timeout", "deadline"]
NEVER_POSITIVE = [math.nan, math.inf, -math.inf, 0, -1, -0.5, "", "fast", [], {}, True]


@st.composite
def surely_broken(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    """A document that no valid scenario is: an unknown key, an unknown judge option, or a
    value no positive engine setting takes (so validation must refuse every one)."""
    document = copy.deepcopy(BASE)
    how = draw(st.sampled_from(["unknown key", "judge option", "engine value"]))
    if how == "engine value":
        key = draw(st.sampled_from(POSITIVE))
        document["engine"][key] = draw(st.sampled_from(NEVER_POSITIVE))
        return document, f"engine.{key}"
    if how == "unknown key":
        section = draw(st.sampled_from([None, "input", "llm", "engine", "meta", "output"]))
        key = draw(keys.map(lambda k: f"zz_{k}"))  # never a known key
        table = document if section is None else document[section]
        table[key] = draw(values.filter(lambda v: v is not None))
        return document, key if section is None else f"{section}.{key}"
    judge = draw(st.integers(0, 1))
    options = document["judges"][judge].setdefault("options", {})
    options[draw(keys.map(lambda k: f"zz_{k}"))] = draw(values.filter(lambda v: v is not None))
    return document, f"judges[{judge}].options"


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(surely_broken())
def test_malformed_scenario_files_exit_2_with_one_line(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    case: tuple[dict[str, Any], str],
) -> None:
    document, broken_key = case
    with pytest.raises(ConfigError):  # every case is broken: accepting one is the failure
        parse_scenario(document, base_dir=ROOT)
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / "broken.toml"
    path.write_text(_toml(document), encoding="utf-8")
    capsys.readouterr()
    code = main(["run", str(path), "--out", str(folder / "run"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert str(path) in lines[0]
    assert not (folder / "run").exists()


@pytest.mark.parametrize(
    "raw",
    [b"\xff\xfe[input]\n", b'[input]\npath = "\xe9"\n', b"name = 'x'\n[input\n"],
)
def test_unreadable_scenario_files(
    tmp_path: Path, raw: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.toml"
    path.write_bytes(raw)
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and "Traceback" not in err


# Every key whose value is a file path (found by Hypothesis: a NUL in ``engine.cache`` was a
# ValueError from the operating system's path call, not a located error).
PATH_KEYS = [
    ("input", "path"),
    ("input", "sources"),
    ("input", "preferences"),
    ("engine", "cache"),
    ("engine", "journal"),
    ("engine", "prices"),
    ("output", "dir"),
]


@pytest.mark.parametrize(("section", "key"), PATH_KEYS)
@pytest.mark.parametrize("value", ["\x00", "runs/a\x00b"])
def test_a_path_holding_a_nul_is_one_located_error(section: str, key: str, value: str) -> None:
    document = copy.deepcopy(BASE)
    document.setdefault(section, {})[key] = value
    with pytest.raises(ConfigError) as caught:
        parse_scenario(document, base_dir=ROOT)
    text = _check_message(caught.value, f"{section}.{key}")
    assert "NUL" in text
