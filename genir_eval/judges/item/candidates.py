"""ITEM's candidates (a turn's cited links with the statements citing them) and prompts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from genir_eval.judges.prompting import fence, load_template, render_messages
from genir_eval.llm.providers.base import Message
from genir_eval.records import Turn

__all__ = [
    "PROMPT_VERSION",
    "Candidate",
    "candidates_for_turn",
    "format_candidates",
    "render_prompt",
]

PROMPT_VERSION = "item-v1"


@dataclass(frozen=True)
class Candidate:
    """A cited link as the judge sees it: title, url and the statements citing it."""

    id: int
    title: str
    url: str
    statements: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return "\n".join((self.title, *self.statements)).strip()


def candidates_for_turn(turn: Turn) -> tuple[Candidate, ...]:
    """The turn's links in the log's citation order (order of first citation, then the
    links no statement cites, by id), each with the distinct statements citing it."""
    citing: dict[int, list[str]] = {}
    for statement in turn.statements:
        for cid in statement.citations:
            texts = citing.setdefault(cid, [])
            if statement.text not in texts:
                texts.append(statement.text)
    order = list(turn.cited_link_ids)
    order += sorted(link.id for link in turn.links if link.id not in citing)
    out = []
    for cid in order:
        link = turn.link(cid)
        if link is None:
            # Cited but absent from the link list: judged on its statements alone.
            out.append(Candidate(cid, "", "", tuple(citing.get(cid, ()))))
        else:
            out.append(Candidate(cid, link.title, link.url, tuple(citing.get(cid, ()))))
    return tuple(out)


def format_candidates(candidates: Sequence[Candidate], language: str) -> str:
    """Each candidate as its citation number and a fenced block (title, url, citing
    statements): everything copied from the log stays inside a fence."""
    cited = "被引用于" if language == "zh" else "cited for"
    blocks = []
    for c in candidates:
        lines = [f"title: {c.title}", f"url: {c.url}"]
        lines += [f"{cited}: {s}" for s in c.statements]
        blocks.append(f"[{c.id}]\n{fence(chr(10).join(lines), f'PAGE {c.id}')}")
    if not blocks:
        return "(无)" if language == "zh" else "(none)"
    return "\n\n".join(blocks)


def render_prompt(name: str, language: str, **values: str) -> tuple[Message, ...]:
    """The messages of packaged template ``name`` (``prompts/<name>.<language>.txt``)."""
    return render_messages(load_template(name, language), values)
