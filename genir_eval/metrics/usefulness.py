"""Statement usefulness: the per-turn value list ``u_k`` every URGE metric is computed from.

URGE (the field study of a generative search engine whose sample lives in ``shared/urge``)
scores a response by its statements in reading order: a statement that carries citations is
worth the usefulness of the best link it cites (0-3, expert labels). A response that cites
nothing gets one response-level value instead, which the dataset stores in
``citation_usefulness`` as a single one-value statement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from genir_eval.records import Session, Turn

__all__ = ["statement_usefulness", "gold_statement_usefulness"]


def statement_usefulness(
    turn: Turn,
    link_labels: Mapping[int, float],
    *,
    no_citation_value: float | None = None,
) -> list[float]:
    """The usefulness of each cited statement of ``turn``, in statement order.

    For each statement carrying at least one citation, the maximum label of its cited links
    (``link_labels`` maps citation id to usefulness). A citation without a label is missing,
    not useless: it is ignored, and a statement none of whose citations is labelled is left
    out of the list (so positions count labelled statements only). A turn that cites nothing
    gives ``[no_citation_value]``, or ``[]`` when that is ``None``; an empty list means the
    turn has no value and session measures skip it.
    """
    if not turn.cited_link_ids:
        return [] if no_citation_value is None else [float(no_citation_value)]
    values: list[float] = []
    for statement in turn.statements:
        labels = [link_labels[c] for c in statement.citations if c in link_labels]
        if labels:
            values.append(float(max(labels)))
    return values


def _from_citation_usefulness(per_statement: Sequence[Sequence[float]]) -> list[float]:
    return [float(max(labels)) for labels in per_statement if labels]


def gold_statement_usefulness(session: Session) -> list[list[float]]:
    """``u_k`` for every turn of ``session`` from its gold labels (one list per turn).

    A turn with citations uses ``gold.link_usefulness`` of that turn through
    :func:`statement_usefulness`. A turn without citations (no statement cites anything, or
    the session was built without statements) uses ``gold.citation_usefulness`` of that
    turn: the maximum of each statement's values, statements without values skipped, which
    for URGE's no-citation turns is the single response-level value. A turn with no usable
    label gives ``[]``; so does every turn of a session without gold labels.
    """
    gold = session.gold
    out: list[list[float]] = []
    for position, turn in enumerate(session.turns):
        link_labels: Mapping[int, float] = {}
        if gold is not None and gold.link_usefulness is not None:
            if position < len(gold.link_usefulness):
                link_labels = gold.link_usefulness[position]
        citation_values: Sequence[Sequence[float]] = ()
        if gold is not None and gold.citation_usefulness is not None:
            if position < len(gold.citation_usefulness):
                citation_values = gold.citation_usefulness[position]
        if turn.cited_link_ids:
            out.append(statement_usefulness(turn, link_labels))
        else:
            out.append(_from_citation_usefulness(citation_values))
    return out
