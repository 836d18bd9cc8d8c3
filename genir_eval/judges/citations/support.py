"""``citation_support``: for each (statement, cited link) pair, does the source support it?

The scale is the TREC 2024 RAG track's support assessment (Upadhyay et al., 2024): ``full``
(2), ``partial`` (1) or ``none`` (0). Each pair is one request showing the query, the
statement and the cited source (title, url and the source's text), all fenced as data; the
reply is ``{"support": ..., "evidence": ...}``, the evidence being the passage of the source
that supports the statement, copied word for word.

Labels: item ``cite:<statement>:<link id>`` (statement position 1-based, as in the turn's
statement list), value 2/1/0, ``extra`` with ``support`` (the word), ``evidence`` (the span
as it stands in the source, found there whitespace- and case-insensitively), ``basis``
(``"source_text"`` or ``"title_url"``), ``statement`` and ``link``.

Basis: a link with a source text (``links[].text``, the Markdown source block, or a side
file keyed by url) is judged on it. A link without one is judged from its title and url
only when the option ``allow_title_only`` is true (the prompt says so, no quote is asked,
and ``basis`` records it); otherwise its pairs are missing with that reason, without a call.

Options: ``allow_title_only`` (false), ``quote`` (``"strict"``: a supported verdict whose
evidence is not found in the source is an unusable reply, repaired once and else missing;
``"lenient"``: the verdict is kept and ``extra["evidence_found"]`` is false),
``max_source_chars`` (6000: longer source texts are cut, and the cut is marked), ``language``,
``template``, ``model``, ``temperature``, ``max_tokens``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping
from typing import Any

from genir_eval.judges.base import Label, ask, register_judge
from genir_eval.judges.common import BuiltinJudge, JudgeContext, generate_config
from genir_eval.judges.options import Option
from genir_eval.judges.parsing import ReplyError, expect_key, extract_object
from genir_eval.judges.prompting import fence, render_messages
from genir_eval.llm.providers.base import Completion
from genir_eval.records import SUPPORT_VALUE, Link, Session, Turn

__all__ = [
    "NAME",
    "KIND",
    "CitationSupportJudge",
    "citation_support",
    "parse_support",
    "find_evidence",
    "pair_item",
]

NAME = "citation_support"
KIND = "citation_support"
BASIS_TEXT = "source_text"
BASIS_TITLE = "title_url"

# Words a reply may use for each level (lower-cased, spaces and hyphens as one space).
_WORDS: dict[str, str] = {
    **dict.fromkeys(
        ("full", "fully supported", "full support", "supported", "fully", "yes", "2"), "full"
    ),
    **dict.fromkeys(
        ("partial", "partially supported", "partial support", "partially", "1"), "partial"
    ),
    **dict.fromkeys(
        ("none", "no", "no support", "not supported", "unsupported", "0", "contradicted"),
        "none",
    ),
    **dict.fromkeys(("完全支持", "完全", "支持"), "full"),
    **dict.fromkeys(("部分支持", "部分"), "partial"),
    **dict.fromkeys(("不支持", "无", "无支持", "没有支持", "矛盾"), "none"),
}

_QUOTES = "\"'“”‘’「」『』"


def pair_item(statement: int, link_id: int) -> str:
    """The label item of a (statement, cited link) pair: ``cite:<statement>:<link id>``."""
    return f"cite:{statement}:{link_id}"


def _without_ellipses(text: str) -> str:
    r"""``text`` without one leading and one trailing ellipsis (``...`` or ``…``) and the
    spaces after and before them: read from both ends, linear (the pattern it replaces,
    ``\s*(?:\.\.\.|…)$`` under ``re.sub``, restarted at every space of a run)."""
    start, end = 0, len(text)
    for mark in ("...", "…"):
        if text.startswith(mark):
            start = len(mark)
            while start < end and text[start].isspace():
                start += 1
            break
    for mark in ("...", "…"):
        if text.endswith(mark) and end - len(mark) >= start:
            end -= len(mark)
            while end > start and text[end - 1].isspace():
                end -= 1
            break
    return text[start:end]


def find_evidence(evidence: str, source: str) -> str | None:
    """The span of ``source`` that ``evidence`` quotes, or ``None`` when it quotes nothing
    there. Whitespace runs, letter case, quote marks and a leading or trailing ellipsis may
    differ; every word must be the source's, in order."""
    text = evidence.strip().strip(_QUOTES).strip()
    text = _without_ellipses(text).strip()
    if not text:
        return None
    parts = []
    for token in text.split():
        parts.append("".join(f"[{_QUOTES}]" if ch in _QUOTES else re.escape(ch) for ch in token))
    match = re.search(r"\s+".join(parts), source, flags=re.IGNORECASE)
    return match.group(0) if match else None


def parse_support(text: str, source: str | None, *, quote: str = "strict") -> dict[str, Any]:
    """``{"support", "evidence", "evidence_found"}`` from a reply; ``source`` is the text
    the evidence must come from (``None``: judged from title and url, no quote asked)."""
    obj = extract_object(text, want=dict)
    raw = expect_key(obj, "support", "verdict", "label")
    word = re.sub(r"[\s_-]+", " ", str(raw).strip().lower()).strip(" .\"'")
    level = _WORDS.get(word)
    if level is None:
        raise ReplyError(f'\'support\' must be "full", "partial" or "none", got {raw!r}')
    evidence = obj.get("evidence") or obj.get("quote") or ""
    if not isinstance(evidence, str):
        raise ReplyError("'evidence' must be a string copied from the source")
    if level == "none" or source is None:
        return {"support": level, "evidence": "", "evidence_found": None}
    if not evidence.strip():
        if quote == "strict":
            raise ReplyError(f"support is {level!r} but 'evidence' is empty: quote the source")
        return {"support": level, "evidence": "", "evidence_found": False}
    span = find_evidence(evidence, source)
    if span is None:
        if quote == "strict":
            raise ReplyError(
                "'evidence' is not a passage of the source: copy it word for word from the source"
            )
        return {"support": level, "evidence": evidence.strip(), "evidence_found": False}
    return {"support": level, "evidence": span, "evidence_found": True}


def _usage(completion: Completion, _value: Any) -> Mapping[str, Any]:
    return {
        "input_tokens": completion.usage.input_tokens,
        "output_tokens": completion.usage.output_tokens,
    }


class CitationSupportJudge(BuiltinJudge):
    name = NAME
    kind = KIND
    template = "citation_support"
    task = NAME
    OPTIONS = (
        Option(
            "allow_title_only",
            False,
            "judge a link without source text from its title and url (else: missing)",
        ),
        Option(
            "quote",
            "strict",
            "strict: a supported verdict must quote the source; lenient: keep it, flagged",
            choices=("strict", "lenient"),
        ),
        # at least 200: a source cut shorter leaves no room for the quote a supported verdict
        # must carry (this judge's own bound, always applied over the looser one of 1 that a
        # table of all judges' options once gave the same name)
        Option(
            "max_source_chars",
            6000,
            "source text beyond this is cut (and marked)",
            range=(200, 100_000_000),
        ),
        *BuiltinJudge.OPTIONS,
    )

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.allow_title_only = bool(self.values["allow_title_only"])
        self.quote = str(self.values["quote"])
        self.max_source_chars = int(self.values["max_source_chars"])

    def _source_block(self, link: Link, basis: str) -> str:
        lines = [f"title: {link.title}", f"url: {link.url}"]
        if basis == BASIS_TEXT:
            text = (link.text or "").strip()
            if len(text) > self.max_source_chars:
                text = text[: self.max_source_chars] + " … [source text cut here]"
            lines += ["", text]
        return fence("\n".join(lines), "SOURCE")

    async def __call__(self, session: Session, engine: Any) -> list[Label]:
        language = self.language(session)
        text = self.template_text(language)
        version = self.prompt_version(text)
        config = generate_config(engine, self.values, response_format="json")

        async def one(turn: Turn, position: int, link_id: int) -> Label:
            statement = turn.statements[position - 1]
            key = self.key(session, turn.index, pair_item(position, link_id), version)
            where = {"statement": position, "link": link_id}
            link = turn.link(link_id)
            if link is None:
                reason = f"citation [{link_id}] has no entry in the turn's link list"
                return Label(key, None, missing_reason=reason, extra={**where, "basis": None})
            if link.has_text:
                basis = BASIS_TEXT
            elif self.allow_title_only:
                basis = BASIS_TITLE
            else:
                reason = (
                    f"no source text for link [{link_id}]; set allow_title_only=true to judge "
                    "it from title and url"
                )
                return Label(key, None, missing_reason=reason, extra={**where, "basis": None})
            source = link.text if basis == BASIS_TEXT else None
            values = {
                "query": fence(turn.query, "QUERY"),
                "statement": fence(statement.text, "STATEMENT"),
                "source": self._source_block(link, basis),
            }
            messages = render_messages(text, values, {"title_only": basis == BASIS_TITLE})
            parse: Callable[[str], dict[str, Any]] = lambda reply: parse_support(  # noqa: E731
                reply, source, quote=self.quote
            )
            context = JudgeContext(
                session,
                turn,
                self.options,
                link_id=link_id,
                extra={
                    "statement": statement.text,
                    "statement_index": position,
                    "basis": basis,
                    "title": link.title,
                    "url": link.url,
                    "source": source,
                },
            )
            label = await ask(
                engine,
                key,
                messages,
                config,
                self.task,
                context,
                parse,
                stats=self.stats,
                language=language,
                extra=_usage,
            )
            extra = {**label.extra, **where, "basis": basis}
            if label.value is None:
                return Label(
                    key,
                    None,
                    missing_reason=label.missing_reason,
                    raw=label.raw,
                    prompt_hash=label.prompt_hash,
                    extra=extra,
                )
            verdict: Mapping[str, Any] = label.value
            extra.update(verdict)
            return Label(
                key,
                SUPPORT_VALUE[str(verdict["support"])],
                raw=label.raw,
                prompt_hash=label.prompt_hash,
                extra=extra,
            )

        pairs = [
            (turn, position, link_id)
            for turn in session.turns
            for position, statement in enumerate(turn.statements, start=1)
            for link_id in dict.fromkeys(statement.citations)
        ]
        return list(await asyncio.gather(*(one(*pair) for pair in pairs)))


@register_judge(NAME)
def citation_support(**options: Any) -> CitationSupportJudge:
    """Options: allow_title_only, quote, max_source_chars, language, template, model,
    temperature, max_tokens (see the module docstring)."""
    return CitationSupportJudge(**options)
