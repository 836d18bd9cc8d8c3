"""Prompt templates: loading by language, rendering, and fencing untrusted log text.

A template is a text file in ``genir_eval/prompts/`` named ``<name>.<lang>.txt`` (``lang``
is ``en`` or ``zh``). Its ``=== system ===`` and ``=== user ===`` lines split it into
messages. ``{{name}}`` is replaced by a value; ``[[#flag]]...[[/flag]]`` is kept only when
``flag`` is true and ``[[^flag]]...[[/flag]]`` only when it is false, which is how the
prompt-variant switches (role, narrative, aspects, ...) turn sentences on and off.

Everything copied from a log (queries, responses, titles, urls, intents) goes through
:func:`fence`: it is wrapped in ``<<<BEGIN NAME>>>`` / ``<<<END NAME>>>`` markers and any
``<<<`` or ``>>>`` inside the data is neutralised, so the data cannot close its fence and
pose as instructions. The templates tell the model that fenced text is data only.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from genir_eval.errors import ConfigError
from genir_eval.llm.base import Message
from genir_eval.paths import why_missing
from genir_eval.records import Session

__all__ = [
    "LANGUAGES",
    "session_language",
    "load_template",
    "check_template_file",
    "render",
    "render_messages",
    "fence",
    "template_version",
]

LANGUAGES = ("en", "zh")

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
    return text


def template_version(text: str, options: Mapping[str, Any] | None = None) -> str:
    """A short, stable id of a template and the options that shape it (the cache key part
    that tells prompt variants apart)."""
    digest = hashlib.sha256(text.encode("utf-8"))
    shaping = dict(options or {})
    for key in sorted(shaping):
        digest.update(f"\x00{key}={shaping[key]!r}".encode())
    return digest.hexdigest()[:12]


def render(text: str, values: Mapping[str, Any], flags: Mapping[str, bool] | None = None) -> str:
    """Fill ``{{name}}`` from ``values`` and keep or drop ``[[#flag]]`` blocks."""
    flags = flags or {}

    def block(match: re.Match[str]) -> str:
        sign, flag, body = match.group(1), match.group(2), match.group(3)
        on = bool(flags.get(flag, False))
        return body if on == (sign == "#") else ""

    previous = None
    while previous != text:  # blocks may nest
        previous, text = text, _BLOCK.sub(block, text)

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise ConfigError(f"prompt template needs a value for {{{{{key}}}}}")
        return str(values[key])

    rendered = _PLACEHOLDER.sub(fill, text)
    return re.sub(r"\n{3,}", "\n\n", rendered).strip() + "\n"


def render_messages(
    text: str, values: Mapping[str, Any], flags: Mapping[str, bool] | None = None
) -> tuple[Message, ...]:
    """Render a template into its system and user messages (a template without section
    markers is one user message)."""
    rendered = render(text, values, flags)
    parts = _SECTION.split(rendered)
    if len(parts) == 1:
        return (Message("user", rendered.strip()),)
    messages: list[Message] = []
    for role, body in zip(parts[1::2], parts[2::2], strict=True):
        if body.strip():
            messages.append(Message("system" if role == "system" else "user", body.strip()))
    return tuple(messages)


def _neutralise(text: str) -> str:
    # The fence markers are built from <<< and >>>; data must never contain them, or it
    # could close its own fence. Runs of three or more become single guillemets.
    text = re.sub(r"<{3,}", lambda m: "‹" * len(m.group()), text)
    return re.sub(r">{3,}", lambda m: "›" * len(m.group()), text)


def fence(text: str | None, name: str) -> str:
    """``text`` as an inert data block named ``name`` (upper case, e.g. ``QUERY``)."""
    body = _neutralise(text or "")
    return f"<<<BEGIN {name}>>>\n{body}\n<<<END {name}>>>"
