"""What each judge sends a model, rendered for one session, and a short digest of it.

A model's judgments move with the exact text, order and markup of its prompt, and with the
settings sent beside it (``max_tokens``, the reply format, log-probabilities). A change to a
template, a fence, a value the judge fills in or how the messages are built is a change in
what a real model reads, even when the offline twins' tables stay byte-identical. Rendering
every judge's requests for a fixed session and hashing them makes such a change visible in
the commit that makes it (``bench/prompt_digests.py`` prints the digests and the messages;
``tests/judges/test_prompt_digests.py`` checks them against a table kept in the repository).

The judges are run through :class:`RecordingEngine`, which keeps every request and answers
each with text that is not a reply, so every judge renders its first prompts and the repair
prompt that follows an unusable reply; prompts a judge only builds from a usable reply are
rendered when the judge sends them itself from its ``later_prompts(session, engine)`` (the
nugget judge's assignment, with the session's statements standing for nuggets), else not (a
rubric's grading prompts, ITEM's later iterations).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from genir_eval.judges.registry import judge_names, make_judge
from genir_eval.llm.providers.base import Completion, Request
from genir_eval.records import Session

__all__ = ["RecordingEngine", "JudgePrompts", "judge_prompts", "all_judge_prompts"]

#: What the recording engine answers: no judge can parse it, so each asks its repair prompt.
UNUSABLE_REPLY = "not a reply"


class RecordingEngine:
    """An engine stand-in for rendering: it records every request and answers each with
    :data:`UNUSABLE_REPLY`; it sends nothing and stores nothing."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.provider = None
        self.model = "recorder"

    def resume(self, request: Request) -> None:
        return None

    async def complete(self, request: Request) -> Completion:
        self.requests.append(request)
        return Completion(text=UNUSABLE_REPLY)

    async def record(self, *args: object, **kwargs: object) -> None:
        return None

    def expect(self, n: int) -> None:
        return None


def _wire(request: Request) -> dict[str, Any]:
    """What of a request reaches a model: its messages, role by role, and its settings."""
    config = asdict(request.config)
    config.pop("model", None)  # the model is the user's choice, not the judge's prompt
    return {
        "task": request.task,
        "messages": [[message.role, message.content] for message in request.messages],
        "config": config,
    }


@dataclass(frozen=True)
class JudgePrompts:
    """A judge's requests for one session in one prompt language, in a stable order."""

    judge: str
    language: str
    requests: tuple[dict[str, Any], ...]

    @property
    def digest(self) -> str:
        """The first 16 hex digits of the SHA-256 of the requests' canonical JSON."""
        text = json.dumps(self.requests, ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def show(self) -> str:
        """The requests as a person reads them: each message's role and exact text, then
        the settings."""
        lines = []
        for number, request in enumerate(self.requests, start=1):
            lines.append(f"--- {self.judge} [{self.language}] request {number} ({request['task']})")
            for role, content in request["messages"]:
                lines.append(f"=== {role} ===")
                lines.append(content)
            settings = json.dumps(request["config"], ensure_ascii=False, sort_keys=True)
            lines.append(f"=== settings === {settings}")
        return "\n".join(lines)


async def _render(name: str, session: Session, language: str) -> list[Request]:
    engine = RecordingEngine()
    judge = make_judge(name, language=language)
    compare = getattr(judge, "compare", None)
    if compare is not None:
        # a pairwise judge compares two answers to one query: the session's first two
        # turns stand for two systems' answers
        from genir_eval.judges.pairwise import Pair

        first, second = session.turns[0], session.turns[1]
        pair = Pair(session.session_id, 1, first.query, "a", "b", first, second, language)
        await compare(pair, engine)
    else:
        await judge(session, engine)
    later = getattr(judge, "later_prompts", None)
    if later is not None:  # prompts the judge builds only from a usable reply
        await later(session, engine)
    return engine.requests


def judge_prompts(name: str, session: Session, language: str) -> JudgePrompts:
    """Judge ``name``'s requests for ``session`` with its prompts in ``language``, sorted by
    their text (the order in which concurrent calls start is not part of a prompt)."""
    requests = asyncio.run(_render(name, session, language))
    wire = sorted(
        (_wire(request) for request in requests),
        key=lambda item: json.dumps(item, ensure_ascii=False, sort_keys=True),
    )
    return JudgePrompts(name, language, tuple(wire))


def all_judge_prompts(
    session: Session, languages: Sequence[str] = ("en", "zh")
) -> list[JudgePrompts]:
    """Every registered judge's requests for ``session``, in each prompt language."""
    return [
        judge_prompts(name, session, language) for name in judge_names() for language in languages
    ]
