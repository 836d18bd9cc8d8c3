"""Prompt templates: loading by language, rendering, and fencing untrusted log text.

A template is a text file in ``genir_eval/prompts/`` named ``<name>.<lang>.txt`` (``lang``
is ``en`` or ``zh``). Its ``=== system ===`` and ``=== user ===`` lines split it into
messages. ``{{name}}`` is replaced by a value; ``[[#flag]]...[[/flag]]`` is kept only when
``flag`` is true and ``[[^flag]]...[[/flag]]`` only when it is false, which is how the
prompt-variant switches (role, narrative, aspects, ...) turn sentences on and off.

How a prompt is built, so that no log text can change its structure:

1. the template's flag blocks are resolved (flags are the judge's options, never log text);
2. the template is split into its messages on its own ``=== role ===`` lines;
3. only then are the values filled in, into each message's content, in one pass (a value is
   never scanned again for placeholders, blocks or section lines).

So a log field holding ``=== system ===`` stays text inside the message it was put in. A
system message may hold no value at all (:func:`render_messages` refuses such a template),
so no log text ever reaches a system message.

Everything copied from a log (queries, responses, titles, urls, intents, source texts) goes
through :func:`fence`: it is wrapped in ``<<<BEGIN NAME>>>`` / ``<<<END NAME>>>`` markers;
any ``<<<`` or ``>>>`` inside the data is neutralised, so the data cannot close its fence and
pose as instructions, and so are the chat-template special tokens of the model families
(``<|im_start|>``, ``[INST]``, ``[SYSTEM_PROMPT]``, ``<s>``, ``<start_of_turn>``,
``<reserved_106>``, ``<用户>``, ``<seed:bos>``, ...: the list with its sources in
:mod:`genir_eval.judges.chat_tokens`; a search title ``[PDF] ...`` is no token), which a server
that formats the chat itself could otherwise read as a real turn boundary; they stay
readable, their brackets turned into look-alikes. The templates tell the model that fenced
text is data only.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from genir_eval.errors import ConfigError
from genir_eval.judges.chat_tokens import neutralise_chat_tokens
from genir_eval.llm.providers.base import Message
from genir_eval.paths import why_missing
from genir_eval.records import Session

__all__ = [
    "LANGUAGES",
    "session_language",
    "load_template",
    "check_template_file",
    "render",
    "render_messages",
    "template_sections",
    "fence",
    "template_version",
]

LANGUAGES = ("en", "zh")

Role = Literal["system", "user"]

_PLACEHOLDER = re.compile(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}")
_BLOCK = re.compile(r"\[\[([#^])([a-zA-Z_][a-zA-Z0-9_]*)\]\](.*?)\[\[/\2\]\]", re.DOTALL)
_SECTION = re.compile(r"^=== (system|user) ===[ \t]*$", re.MULTILINE)


def session_language(session: Session) -> str:
    """``"zh"`` or ``"en"``: the session's declared language, else detected from its text."""
    if session.language:
        return "zh" if session.language.lower().startswith("zh") else "en"
    from genir_eval.ingest.language import detect_language

    sample = " ".join(t.query + " " + t.response_text[:400] for t in session.turns)
    return detect_language(sample + " " + (session.intent or ""))


@lru_cache(maxsize=128)
def _packaged(name: str, language: str) -> str:
    path = resources.files("genir_eval.prompts").joinpath(f"{name}.{language}.txt")
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"no prompt template {name!r} for language {language!r}") from None


def load_template(name: str, language: str) -> str:
    """The packaged template ``name`` in ``language``; a path to a file is read as is (for
    user-supplied paraphrases)."""
    if language not in LANGUAGES:
        raise ConfigError(f"language must be one of {LANGUAGES}, got {language!r}")
    if _is_file_name(name):
        return check_template_file(name)
    return _packaged(name, language)


def _is_file_name(name: str) -> bool:
    return name.endswith(".txt") or "/" in name


def check_template_file(name: str) -> str:
    """The text of a user's template file, or :class:`ConfigError` naming the file when it
    cannot be read, is empty, or fills in none of the judge's values (``{{query}}`` ...):
    such a prompt would be judged without the log it is about. A name that is not a file
    name (a packaged template) is returned as is."""
    if not _is_file_name(name):
        return name
    path = Path(name)
    if not path.exists():
        raise ConfigError(f"prompt template file {name!r}: {why_missing(path)}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"prompt template file {name!r} is not UTF-8 text (byte "
            f"0x{error.object[error.start]:02x} at byte {error.start + 1})"
        ) from None
    except OSError as error:
        raise ConfigError(
            f"cannot read the prompt template file {name!r}: {error.strerror or error}"
        ) from None
    if not text.strip():
        raise ConfigError(f"prompt template file {name!r} is empty")
    if not _PLACEHOLDER.search(text):
        raise ConfigError(
            f"prompt template file {name!r} fills in none of the judge's values (such as "
            "{{query}}): the model would judge without seeing the log"
        )
    parts = _SECTION.split(text)
    for role, body in zip(parts[1::2], parts[2::2], strict=True):
        if role == "system":
            _refuse_system_values(body, f"prompt template file {name!r}")
    return text


def template_version(text: str, options: Mapping[str, Any] | None = None) -> str:
    """A short, stable id of a template and the options that shape it (the cache key part
    that tells prompt variants apart)."""
    digest = hashlib.sha256(text.encode("utf-8"))
    shaping = dict(options or {})
    for key in sorted(shaping):
        digest.update(f"\x00{key}={shaping[key]!r}".encode())
    return digest.hexdigest()[:12]


def _shape(text: str, flags: Mapping[str, bool] | None) -> str:
    """The template with its flag blocks kept or dropped and runs of blank lines closed up:
    everything that depends on the template alone, done before any value is filled in."""
    flags = flags or {}

    def block(match: re.Match[str]) -> str:
        sign, flag, body = match.group(1), match.group(2), match.group(3)
        on = bool(flags.get(flag, False))
        return body if on == (sign == "#") else ""

    previous = None
    while previous != text:  # blocks may nest
        previous, text = text, _BLOCK.sub(block, text)
    return _close_blank_lines(text)


def _fill(text: str, values: Mapping[str, Any]) -> str:
    """``{{name}}`` replaced by ``values[name]`` in one pass: a filled-in value is never read
    again as template (its own ``{{...}}``, ``[[...]]`` or ``=== role ===`` lines are text)."""

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise ConfigError(f"prompt template needs a value for {{{{{key}}}}}")
        return str(values[key])

    return _PLACEHOLDER.sub(fill, text)


def render(text: str, values: Mapping[str, Any], flags: Mapping[str, bool] | None = None) -> str:
    """Fill ``{{name}}`` from ``values`` and keep or drop ``[[#flag]]`` blocks: one text,
    for templates that are not chat prompts (a chat prompt goes through
    :func:`render_messages`, which splits before it fills)."""
    return _close_blank_lines(_fill(_shape(text, flags), values)).strip() + "\n"


def _refuse_system_values(body: str, where: str = "a prompt template") -> None:
    found = _PLACEHOLDER.search(body)
    if found is not None:
        raise ConfigError(
            f"{where}'s system message may not fill in a value ({found.group(0)}): values "
            "come from logs, and log text goes into user messages only"
        )


def template_sections(
    text: str, flags: Mapping[str, bool] | None = None
) -> tuple[tuple[Role, str], ...]:
    """The template's messages as ``(role, body)`` before any value is filled in: split on
    the template's own ``=== system ===`` / ``=== user ===`` lines (a template without them
    is one user message); empty sections are left out. A system section that holds a
    placeholder is refused: values come from logs, and log text never goes into a system
    message."""
    shaped = _shape(text, flags)
    parts = _SECTION.split(shaped)
    if len(parts) == 1:
        pairs = [("user", shaped)]
    else:
        pairs = list(zip(parts[1::2], parts[2::2], strict=True))
    sections: list[tuple[Role, str]] = []
    for role, body in pairs:
        body = body.strip()
        if not body:
            continue
        if role == "system":
            _refuse_system_values(body)
        sections.append(("system" if role == "system" else "user", body))
    return tuple(sections)


def render_messages(
    text: str, values: Mapping[str, Any], flags: Mapping[str, bool] | None = None
) -> tuple[Message, ...]:
    """The template's system and user messages with ``values`` filled in. The template is
    split into messages first (:func:`template_sections`), then each message's content is
    filled, so no value can add, remove or re-role a message.

    Runs of blank lines in a filled message close up to one blank line, in the values too
    (a response's ``\n\n\n`` between a heading and its paragraph), as they did when the
    whole prompt was filled first and closed up after: the judges' figures with real models
    were measured on prompts read that way, and the local 1.5B model's link labels move
    with such a blank line inside the cited statements."""
    return tuple(
        Message(role, _close_blank_lines(_fill(body, values)))
        for role, body in template_sections(text, flags)
    )


def _close_blank_lines(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text)


def _neutralise(text: str) -> str:
    # The fence markers are built from <<< and >>>; data must never contain them, or it
    # could close its own fence. Runs of three or more become single guillemets.
    text = re.sub(r"[<＜﹤]{3,}", lambda m: "‹" * len(m.group()), text)
    text = re.sub(r"[>＞﹥]{3,}", lambda m: "›" * len(m.group()), text)
    return neutralise_chat_tokens(text)


def fence(text: str | None, name: str) -> str:
    """``text`` as an inert data block named ``name`` (upper case, e.g. ``QUERY``)."""
    body = _neutralise(text or "")
    return f"<<<BEGIN {name}>>>\n{body}\n<<<END {name}>>>"
