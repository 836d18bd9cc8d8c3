"""A misspelt JSONL key is an error naming the key it resembles; other unknown keys load.

Before, ``link_usefullness`` (or ``Session_ID``, ``responce_text``, ``thumb``...) was an
unknown key, accepted and ignored: the gold or text under it was lost without a word and
the run went on as if the log had none. Unknown keys that resemble no known one are still
accepted (files from newer versions, bookkeeping), as the format promises.
"""

from __future__ import annotations

import json

import pytest
from hostile_helpers import assert_located_failure, run_parse

LINE = {
    "session_id": "s1",
    "turns": [
        {
            "index": 1,
            "query": "q",
            "response_text": "Claim one.",
            "statements": [{"text": "Claim one.", "citations": [1]}],
            "links": [{"id": 1, "url": "https://a.example", "title": "A"}],
            "segments": [{"text": "Claim one.", "start": 0, "end": 10}],
        }
    ],
    "gold": {"link_usefulness": [{"1": 2}], "dissatisfaction": {"choices": ["1"]}},
}

# (path of the object, misspelt key, field named, known key suggested)
TYPOS = [
    ((), "sesion_id", "sesion_id", "session_id"),
    ((), "Session_ID", "Session_ID", "session_id"),
    ((), "task-type", "task-type", "task_type"),
    ((), "Gold", "Gold", "gold"),
    (("turns", 0), "responce_text", "turns[0].responce_text", "response_text"),
    (("turns", 0), "Links", "turns[0].Links", "links"),
    (("turns", 0, "statements", 0), "citation", "turns[0].statements[0].citation", "citations"),
    (("turns", 0, "links", 0), "tittle", "turns[0].links[0].tittle", "title"),
    (("turns", 0, "links", 0), "URL", "turns[0].links[0].URL", "url"),
    (("turns", 0, "segments", 0), "ends", "turns[0].segments[0].ends", "end"),
    (("gold",), "link_usefullness", "gold.link_usefullness", "link_usefulness"),
    (("gold",), "thumb", "gold.thumb", "thumbs"),
    (("gold",), "query satisfaction", "gold.query satisfaction", "query_satisfaction"),
    (("gold", "dissatisfaction"), "choice", "gold.dissatisfaction.choice", "choices"),
]


def _with(path: tuple, key: str, value: object = "x") -> dict:
    data = json.loads(json.dumps(LINE))
    target = data
    for part in path:
        target = target[part]
    target[key] = value
    return data


@pytest.mark.parametrize(("path", "key", "field", "known"), TYPOS)
def test_a_misspelt_key_is_a_located_error(tmp_path, capsys, path, key, field, known):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(_with(path, key)) + "\n", encoding="utf-8")
    code, err, written = run_parse(capsys, log, tmp_path / "out.jsonl")
    assert_located_failure(code, err, log)
    assert f"line 1, column {field!r}: unknown key" in err[0], err[0]
    assert f"did you mean {known!r}?" in err[0], err[0]
    assert written == []


@pytest.mark.parametrize(
    ("path", "key"),
    [((), "exported_by"), (("turns", 0), "latency_ms"), (("turns", 0, "links", 0), "rank")],
)
def test_an_unknown_key_unlike_any_known_one_still_loads(tmp_path, capsys, path, key):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(_with(path, key, 3)) + "\n", encoding="utf-8")
    code, err, written = run_parse(capsys, log, tmp_path / "out.jsonl")
    assert code == 0 and len(written) == 1, err
