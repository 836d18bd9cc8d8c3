"""Judge options and prompt files that cannot work are refused before any call, naming them.

Before, ``judges=1e9`` (a billion simulated raters) hung the run, ``judges=nan`` or
``role="no"`` (true: a non-empty string) slipped through or failed with Python's wording,
``--option judges=3 --option judges=4`` kept the last, ``--link-judge`` accepted any name,
and a template file that was a folder or not UTF-8 raised a traceback, while an empty one,
or one filling in none of the judge's values, ran prompts that never showed the log.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.errors import ConfigError
from genir_eval.judges.registry import make_judge
from genir_eval.runner import parse_scenario
from genir_eval.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
DEMO_CSV = ROOT / "fixtures" / "demo_sessions.csv"

# (judge, option, value): each out of range or of the wrong kind
REFUSED = [
    ("link_usefulness.dna", "judges", 10**9),
    ("link_usefulness.dna", "judges", 1e9),
    ("link_usefulness.dna", "judges", 0),
    ("link_usefulness.dna", "judges", math.nan),
    ("link_usefulness.dna", "judges", "3"),
    ("link_usefulness.dna", "judges", True),
    ("link_usefulness.dna", "judges", 2.5),
    ("link_usefulness.dna", "samples", 10_000),
    ("link_usefulness.dna", "top_logprobs", 21),
    ("link_usefulness.dna", "temperature", -0.1),
    ("link_usefulness.dna", "temperature", math.inf),
    ("link_usefulness.dna", "max_tokens", 0),
    ("link_usefulness.dna", "role", "no"),
    ("link_usefulness.dna", "aspects", 0),
    ("link_usefulness.dna", "logprobs", "false"),
    ("satisfaction.urs", "context_tokens", 10),
    ("citation_support", "max_source_chars", -1),
    ("citation_support", "allow_title_only", 1),
    ("item-ar", "k", 0),
    ("item-ksample", "samples", 10**6),
    ("item-ksample", "seed", -1),
    ("item-as", "max_iterations", 10**5),
    ("item-as", "rouge_threshold", 1.5),
    ("item-as", "offline_threshold", math.nan),
    ("rubric", "n", 10**7),
    ("rubric", "min_questions", 0),
    ("rubric", "threshold", 6),
    ("rubric-thomas", "links_only", "yes"),
]


@pytest.mark.parametrize(("judge", "option", "value"), REFUSED)
def test_a_judge_option_of_the_wrong_kind_or_range_is_refused(judge, option, value):
    with pytest.raises(ConfigError) as caught:
        make_judge(judge, **{option: value})
    assert f"{judge}: option {option!r}: expected" in str(caught.value)


@pytest.mark.parametrize(("judge", "option", "value"), REFUSED[:8])
def test_the_scenario_names_the_judge_and_option(judge, option, value):
    document = {
        "input": {"path": str(DEMO_CSV)},
        "engine": {"cache": False},
        "judges": [{"name": judge, "options": {option: value}}],
    }
    with pytest.raises(ConfigError, match=rf"judges\[0\]\.options: .*option '{option}'"):
        parse_scenario(document)


@pytest.mark.parametrize(
    ("judge", "options"),
    [
        ("link_usefulness.dna", {"judges": 100, "temperature": 2, "role": False}),
        ("link_usefulness.dna", {"judges": 3.0, "top_logprobs": 0}),
        ("rubric", {"n": 5, "threshold": 0, "min_questions": 2}),
        ("item-ksample", {"samples": 3, "seed": 2**63 - 1}),
    ],
)
def test_options_within_range_are_taken(judge, options):
    made = make_judge(judge, **options)
    # taken as given (a whole float such as 3.0 as the integer it is)
    for name, value in options.items():
        assert made.options[name] == value and type(made.options[name]) is not str


def _meta(capsys, *extra: str, server: FakeLLMServer | None = None) -> tuple[int, str]:
    capsys.readouterr()
    where = (
        ["--provider", "openai", "--base-url", server.openai_base_url]
        if server is not None
        else ["--provider", "offline"]
    )
    code = main(
        [
            "meta",
            str(DEMO_CSV),
            "--judge",
            "link_usefulness.dna",
            *where,
            "--cache-mode",
            "off",
            "--journal",
            "none",
            "--quiet",
            "--bootstrap",
            "10",
            *extra,
        ]
    )
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--option", "judges=1e9"], "option 'judges': expected an integer >= 1 and <= 100"),
        (["--option", "judges=NaN"], "option 'judges': expected an integer"),
        (["--option", "judges=3", "--option", "judges=4"], "'judges' is given twice (3 and 4)"),
        (["--option", "role=true", "--option", " role=false"], "'role' is given twice"),
        (["--link-judge", "nonexistent"], "--link-judge: 'nonexistent' is not a link judge"),
        (["--link-judge", "satisfaction.urs"], "'satisfaction.urs' is not a link judge"),
    ],
)
def test_meta_refuses_the_option_before_any_call(capsys, monkeypatch, extra, words):
    """Refused before any call: a provider that counts its requests received none."""
    with FakeLLMServer(reply=lambda request: '{"M": 2, "T": 3, "O": 2}') as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        code, err = _meta(capsys, *extra, server=server)
        requests = server.stats.total
    assert code == 2
    assert len(err.splitlines()) == 1 and words in err, err
    assert requests == 0


def test_the_counting_server_counts_a_valid_meta_run(capsys, monkeypatch):
    """The check above can fail: the same command without the bad option calls the server."""
    with FakeLLMServer(reply=lambda request: '{"M": 2, "T": 3, "O": 2}') as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        code, err = _meta(capsys, server=server)
        requests = server.stats.total
    assert code == 0, err
    assert requests > 0


# (file content, words): template files that cannot be used
TEMPLATES = [
    (None, "cannot read the prompt template file"),  # a folder
    (b"\xff\xfe{{query}}", "is not UTF-8 text (byte 0xff at byte 1)"),
    (b"", "is empty"),
    (b"  \n\n", "is empty"),
    (b"Rate this answer from 0 to 3.", "fills in none of the judge's values"),
    (b"Rate {query} from 0 to 3.", "fills in none of the judge's values"),
]


@pytest.mark.parametrize(("content", "words"), TEMPLATES)
def test_an_unusable_template_file_is_refused_naming_it(tmp_path, capsys, content, words):
    path = tmp_path / "mine.txt"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises(ConfigError, match="prompt template file") as caught:
        make_judge("link_usefulness.dna", template=str(path))
    assert str(path) in str(caught.value) and words in str(caught.value)
    code, err = _meta(capsys, "--prompt-selection", "--splits", "3", "--paraphrase", str(path))
    assert code == 2 and len(err.splitlines()) == 1, err
    assert str(path) in err and words in err, err


def test_a_template_filling_in_the_query_is_taken(tmp_path):
    path = tmp_path / "mine.txt"
    path.write_text("Rate {{query}} from 0 to 3.", encoding="utf-8")
    judge = make_judge("link_usefulness.dna", template=str(path))
    # the judge's prompts are this file's text: its version differs from the built-in one's
    assert judge.template_text("en") == "Rate {{query}} from 0 to 3."
    builtin = make_judge("link_usefulness.dna")
    assert judge.prompt_version(judge.template_text("en")) != builtin.prompt_version(
        builtin.template_text("en")
    )
