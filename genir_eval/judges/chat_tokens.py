"""Chat-template special tokens: what a server that renders the chat itself may read as a
turn boundary, a role or a control token when it meets one in message text.

The tokens are data, not shapes: ``genir_eval/data/chat_tokens.json`` lists each model
family's special tokens as its tokenizer configuration or chat template spells them, with
the file they come from (Llama 2/3/4, CodeLlama, Mistral, Qwen/ChatML, Gemma, Phi,
DeepSeek, Command-R, Falcon, Yi, Baichuan, ChatGLM/GLM, InternLM, Seed-OSS, TeleChat,
MiniMax, BlueLM, Granite, OLMo, StarCoder, MiniCPM, MOSS, Skywork, gpt-oss, Kimi, Hunyuan,
T5, BERT). A family's numbered range (``<reserved_{n}>``, ``<unused{n}>``,
``<|reserved_special_token_{n}|>``) is one entry with ``{n}`` for its digits. The one shape
kept beside the list is a word between ``<|`` and ``|>`` (or their fullwidth forms), which
is how most families spell a new token and which no prose, markup or code writes (no
whitespace inside, so F#'s ``<| x |>`` stays code).

A shape that also matches ordinary text is never used: an earlier pattern took any
upper-case word in square brackets for a token and rewrote the search-result titles
``[PDF] Real Shading in Unreal Engine 4`` and ``[DOC] ...`` in what the link judges sent.
``bench/log_text_digests.py`` holds what the judges read of every URGE and CrowdRAG
development text equal across a change to this module, unless the change says why.

:func:`neutralise_chat_tokens` turns each token's brackets into look-alike characters
(‹ › ⟦ ⟧, and ¦ for a token without brackets), so the token reaches the model as the
text it was, readable, and no tokenizer reads it as its special token.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

__all__ = ["CHAT_TOKEN", "TokenFamily", "token_families", "neutralise_chat_tokens"]

#: The digits a numbered entry's ``{n}`` stands for.
_NUMBER = "[0-9]{1,6}"
_SLOT = "{n}"
# a word between <| and |> (ASCII or fullwidth bars): no whitespace, no bracket, no bar
_BARRED = r"<[|｜][A-Za-z_▁][^\s<>|｜\[\]]{0,63}[|｜]>"


@dataclass(frozen=True)
class TokenFamily:
    """One model family's special tokens and where they are defined."""

    family: str
    source: str
    tokens: tuple[str, ...]
    numbered: tuple[str, ...]


@lru_cache(maxsize=1)
def token_families() -> tuple[TokenFamily, ...]:
    """The families of ``genir_eval/data/chat_tokens.json``, in its order."""
    text = resources.files("genir_eval").joinpath("data/chat_tokens.json").read_text("utf-8")
    document: dict[str, Any] = json.loads(text)
    return tuple(
        TokenFamily(
            family=f["family"],
            source=f["source"],
            tokens=tuple(f["tokens"]),
            numbered=tuple(f.get("numbered", ())),
        )
        for f in document["families"]
    )


def _trie_pattern(entries: Iterable[str]) -> str:
    """One regular expression matching exactly ``entries`` (``{n}`` as digits), built as a
    trie so that each position of a text costs at most one token's length to try: an
    alternation of hundreds of literals would try them all at every ``<`` or ``[``."""
    trie: dict[str, Any] = {}
    for entry in entries:
        node = trie
        rest = entry
        while rest:
            step = _SLOT if rest.startswith(_SLOT) else rest[0]
            rest = rest[len(step) :]
            node = node.setdefault(step, {})
        node[""] = {}  # the end of an entry

    def compile_node(node: dict[str, Any]) -> str:
        ends = "" in node
        branches = [
            (_NUMBER if step == _SLOT else re.escape(step)) + compile_node(child)
            for step, child in sorted(node.items())
            if step
        ]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if ends else body

    return compile_node(trie)


def _pattern() -> re.Pattern[str]:
    entries = {
        entry
        for family in token_families()
        for entry in (*family.tokens, *family.numbered)
        if not re.fullmatch(_BARRED, entry)  # the barred shape matches these already
    }
    return re.compile(f"{_BARRED}|{_trie_pattern(entries)}")


#: Every listed token (and numbered range) and the barred shape, in one pattern.
CHAT_TOKEN = _pattern()

_LOOK_ALIKES = str.maketrans({"<": "‹", ">": "›", "[": "⟦", "]": "⟧"})
_BARS = str.maketrans({"|": "¦"})


def _neutral(token: str) -> str:
    changed = token.translate(_LOOK_ALIKES)
    return changed if changed != token else token.translate(_BARS)


def neutralise_chat_tokens(text: str) -> str:
    """``text`` with every chat-template special token's brackets replaced by look-alikes:
    the token stays readable as text and is no longer the token."""
    return CHAT_TOKEN.sub(lambda match: _neutral(match.group()), text)
