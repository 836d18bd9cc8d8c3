"""People's labels as gold (genir_eval/runner/label/gold.py): a session gets gold from any
label people gave it, its session satisfaction alone included, and nothing else; a session
nobody labelled gets none.

The store is a stand-in holding the labels by queue and item (the keys the label store gives
items, runner/label/keys.py's item_key: ``session:["<id>"]``, ``turn:["<id>",<turn>]``); the
people's label is the median of theirs (here one each, or 2 and 4 and 5: 4)."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace
from typing import Any

from genir_eval.records import Session, Turn
from genir_eval.runner.label.gold import PeopleGold, write_gold_sessions
from genir_eval.runner.label.keys import item_key


class _Store:
    """What PeopleGold reads of a label store: ``labels(queue)``, item -> labeller -> event."""

    def __init__(self, labels: dict[str, dict[str, dict[str, float]]]) -> None:
        self._labels = labels

    def labels(self, queue: str) -> dict[str, dict[str, Any]]:
        return {
            item: {who: SimpleNamespace(value=value) for who, value in by.items()}
            for item, by in self._labels.get(queue, {}).items()
        }


def _session(sid: str) -> Session:
    turns = tuple(Turn(i, f"q{i}", f"answer {i}", (), ()) for i in (1, 2))
    return Session(sid, turns)


STORE = _Store(
    {
        "session_satisfaction": {
            item_key("session", "only-session"): {"ann": 2.0, "bob": 4.0, "cy": 5.0}
        },
        "turn_satisfaction": {item_key("turn", "one-turn", 2): {"ann": 3.0}},
    }
)


def test_a_session_with_only_its_satisfaction_labelled_has_gold() -> None:
    gold = PeopleGold(STORE)  # type: ignore[arg-type]
    found = gold.gold(_session("only-session"))
    assert found is not None
    assert found.session_satisfaction == 4.0
    assert found.query_satisfaction is None
    assert found.link_usefulness is None and found.citation_support is None
    turn = gold.gold(_session("one-turn"))
    assert turn is not None and turn.query_satisfaction == (None, 3.0)
    assert turn.session_satisfaction is None
    assert gold.gold(_session("nobody")) is None


def test_export_writes_the_gold_of_every_labelled_session() -> None:
    stream = io.BytesIO()
    sessions = [_session("nobody"), _session("only-session"), _session("one-turn")]
    count = write_gold_sessions(sessions, PeopleGold(STORE), stream)  # type: ignore[arg-type]
    assert count == 2
    rows = [json.loads(line) for line in stream.getvalue().decode().splitlines()]
    assert [r["session_id"] for r in rows] == ["nobody", "only-session", "one-turn"]
    assert rows[0].get("gold") is None
    assert rows[1]["gold"]["session_satisfaction"] == 4.0
