"""What a query's nuggets are made from: the cited sources of its answers, pooled (as TREC
pools the systems compared), with the session's earlier queries."""

from __future__ import annotations

from dataclasses import dataclass, field

from genir_eval.records import Session, Turn

__all__ = ["Source", "Pool", "cited_sources", "earlier_queries"]


@dataclass(frozen=True)
class Source:
    """A source text in a query's pool (told apart by url and text)."""

    url: str
    title: str
    text: str
    #: the log has no text for it: its title stands in
    title_only: bool = False


@dataclass
class Pool:
    """What a query's nuggets are made from: its text, the session's earlier queries, the
    cited sources of its answers (in the order first met) and how many answers cite them."""

    query: str
    context: tuple[str, ...]
    sources: dict[tuple[str, str], Source] = field(default_factory=dict)
    answers: int = 0

    def add(self, turn: Turn) -> None:
        self.answers += 1
        for source in cited_sources(turn):
            self.sources.setdefault((source.url, source.text), source)


def cited_sources(turn: Turn) -> list[Source]:
    """The turn's cited sources that have text; when none has (a log of urls and titles,
    as URGE's), the cited links' titles, marked as such: a title states little, but it is
    all the log says of what the answer drew on."""
    cited = [link for link in turn.links if link.id in set(turn.cited_link_ids)]
    with_text = [Source(link.url, link.title, link.text or "") for link in cited if link.has_text]
    if with_text:
        return with_text
    return [
        Source(link.url, link.title, link.title, title_only=True)
        for link in cited
        if link.title.strip()
    ]


def earlier_queries(session: Session, turn: Turn) -> tuple[str, ...]:
    return tuple(t.query for t in session.turns if t.index < turn.index)
