"""CrowdRAG-25: cited answers people compared in pairs, converted to genir-eval's inputs.

CrowdRAG-25 (Gienapp et al., "The Viability of Crowdsourcing for RAG Evaluation", SIGIR 2025;
CC-BY 4.0) has, for TREC RAG 2024 topics, six answers per topic written from the same 20
passages (three styles, by crowd workers or an LLM) and people's pairwise preferences on seven
dimensions (MACE gold labels). ``../shared/crowdrag/README.md`` describes the three files read
here: ``responses.jsonl``, ``sources.jsonl`` and ``ratings.jsonl``.

:func:`convert_crowdrag` (``genir-eval parse DIR --format crowdrag --output OUT_DIR``) writes

* ``systems/<writer>-<style>.jsonl``: canonical JSONL, one session per topic
  (``session_id`` = the topic id) of one turn, the query and the answer: six "systems" over
  the same sessions;
* ``answers.jsonl``: every answer as its own session, ``<topic>/<writer>-<style>``, for one
  run over all of them;
* ``preferences.jsonl``: people's gold preferences (:mod:`genir_eval.ingest.preferences`),
  each row naming the two answers both ways (``session_a``/``session_b`` in
  ``answers.jsonl``, and ``session`` + ``turn`` 1 + ``system_a``/``system_b``), one row per
  rated pair and dimension, ``query`` the topic.

An answer's ``[i, j]`` markers cite its topic's passages by 0-based index; each cited passage
becomes a link with id ``i + 1`` (the canonical markers count from 1), the passage id as its
url and the passage text as its source text, so citation support is judged against what was
cited. Markers are read as the study wrote them, ``[ 14]`` and ``[4 16]`` too; ``[...]`` is
text. A marker naming a passage its topic does not have (``[20]`` of 20 passages) is what the
answer cites, so it is kept: a link with url ``<topic>#missing-passage-<i>`` and no source
text, which a support judge can only find unsupported; the summary counts such citations.
A pair rated twice (in both orders) is one row: its winner is the label most of its gold
labels give, and a pair whose labels split evenly is left out for that dimension (the rule of
the data's README: "the majority of its gold labels, ties dropped"); the summary counts them.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from genir_eval.errors import InputError
from genir_eval.ingest.jsonl import session_line
from genir_eval.ingest.preferences import Preference, write_preferences
from genir_eval.ingest.response import Citation, Piece, build_response
from genir_eval.ingest.validate import id_as_read, validate_session
from genir_eval.paths import (
    claim_folder,
    output_child,
    output_file,
    owned_files,
    plain_name,
    record_files,
)
from genir_eval.records import Link, Session, Turn
from genir_eval.stale import remove_stale_parts
from genir_eval.unique_keys import RepeatedKey, unique_keys

__all__ = [
    "CROWDRAG_CRITERIA",
    "CrowdRag",
    "CrowdRagAnswer",
    "ConversionSummary",
    "read_crowdrag",
    "convert_crowdrag",
]

#: CrowdRAG's seven dimensions; ``quality_overall`` has no tie option.
CROWDRAG_CRITERIA = (
    "correctness_topical",
    "coherence_logical",
    "coherence_stylistic",
    "coverage_broad",
    "coverage_deep",
    "consistency_internal",
    "quality_overall",
)
_GOLD = {"a": "a", "b": "b", "n": "tie"}
_SYSTEM_PART = re.compile(r"[a-z0-9_]+")
# "[1,3,16]", "[ 14]", "[0, 1, 4 16, 17]": numbers of at most six digits split by a comma (spaces
# around it allowed) or by spaces; the spaces before a marker belong to it, as with canonical
# markers. Every stretch of the text can be read one way only (a number ends where its digits
# do, a separator is a comma or spaces, the run of spaces before a marker starts after a
# non-space), so the match is linear: the pattern it replaces, ``[0-9]{1,6}(?:[ \t]*,?[ \t]*
# [0-9]{1,6})*``, split a run of digits in exponentially many ways ("[" and 30 digits never
# finished) and tried every space of a run as a marker's start.
_NUMBER = r"[0-9]{1,6}(?![0-9])"
_MARKER = re.compile(
    rf"(?<![ \t])[ \t]*\[[ \t]*({_NUMBER}(?:(?:[ \t]*,[ \t]*|[ \t]+){_NUMBER})*)[ \t]*(?:,[ \t]*)?\]"
)


@dataclass(frozen=True)
class CrowdRagAnswer:
    """One answer: its response uuid, topic, system (``<writer>-<style>``) and session, and
    how many of its citations name a passage its topic does not have."""

    response: str
    topic: str
    system: str
    session: Session
    missing_passages: int = 0


@dataclass(frozen=True)
class CrowdRag:
    """A CrowdRAG folder read: the answers in file order and the merged gold preferences."""

    answers: tuple[CrowdRagAnswer, ...]
    preferences: tuple[Preference, ...]
    rated_pairs: int
    split_dropped: int

    @property
    def systems(self) -> tuple[str, ...]:
        return tuple(sorted({a.system for a in self.answers}))

    @property
    def missing_passages(self) -> int:
        """Citations of a passage the answer's topic does not have (kept, without a source
        text)."""
        return sum(a.missing_passages for a in self.answers)


@dataclass(frozen=True)
class ConversionSummary:
    answers: int
    systems: int
    topics: int
    preferences: int
    rated_pairs: int
    split_dropped: int
    missing_passages: int = 0


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of ``path``; a bad line is located."""
    if not path.is_file():
        raise InputError("no such file" if not path.exists() else "not a file", path=str(path))
    try:
        with path.open("rb") as stream:
            for number, raw in enumerate(stream, start=1):
                if not raw.strip():
                    continue
                try:
                    data = json.loads(raw.decode("utf-8"), object_pairs_hook=unique_keys)
                except RepeatedKey as error:
                    raise InputError(
                        "the key appears twice in one object",
                        path=str(path),
                        line=number,
                        column=str(error.key),
                    ) from None
                except (UnicodeDecodeError, ValueError) as error:
                    raise InputError(
                        f"not a JSON object: {error}", path=str(path), line=number
                    ) from None
                except RecursionError:
                    raise InputError(
                        "the JSON is nested too deeply to read", path=str(path), line=number
                    ) from None
                if not isinstance(data, dict):
                    raise InputError("a line must be a JSON object", path=str(path), line=number)
                yield number, data
    except OSError as error:
        raise InputError(
            f"cannot read the file: {error.strerror or error}", path=str(path)
        ) from None


def _string(data: dict[str, Any], key: str, path: Path, number: int) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        problem = "missing" if key not in data else f"must be a non-empty string, not {value!r}"
        raise InputError(problem, path=str(path), line=number, column=key)
    return value


def _read_sources(path: Path) -> dict[str, dict[int, tuple[str, str]]]:
    """topic -> passage index -> (passage id, text)."""
    topics: dict[str, dict[int, tuple[str, str]]] = {}
    first: dict[str, int] = {}  # each topic as it reads (its session id) -> its line
    for number, data in _lines(path):
        topic = _string(data, "topic", path, number)
        earlier = first.setdefault(id_as_read(topic), number)
        if earlier != number:
            same = "" if topic in topics else " (or one that reads the same)"
            raise InputError(
                f"topic {topic!r} is given twice{same}: first on line {earlier}",
                path=str(path),
                line=number,
                column="topic",
            )
        references = data.get("references")
        if not isinstance(references, list) or not references:
            raise InputError(
                "must be a non-empty list of passages",
                path=str(path),
                line=number,
                column="references",
            )
        passages: dict[int, tuple[str, str]] = {}
        for k, ref in enumerate(references):
            field = f"references[{k}]"
            if not isinstance(ref, dict):
                raise InputError("must be an object", path=str(path), line=number, column=field)
            index = ref.get("index")
            if type(index) is not int or index < 0:
                raise InputError(
                    f"must be a passage index (an integer from 0), not {index!r}",
                    path=str(path),
                    line=number,
                    column=f"{field}.index",
                )
            if index in passages:
                raise InputError(
                    f"passage {index} is given twice",
                    path=str(path),
                    line=number,
                    column=f"{field}.index",
                )
            passage_id = _string(ref, "id", path, number) if "id" in ref else ""
            text = ref.get("text")
            if not isinstance(text, str) or not text.strip():
                raise InputError(
                    "must be the passage's text",
                    path=str(path),
                    line=number,
                    column=f"{field}.text",
                )
            passages[index] = (passage_id.strip() or f"{topic}#{index}", text)
        topics[topic] = passages
    if not topics:
        raise InputError("the file holds no topic", path=str(path))
    return topics


def _answer_turn(
    text: str, query: str, topic: str, passages: dict[int, tuple[str, str]]
) -> tuple[Turn, int]:
    """The answer as a turn, and how many of its citations name a passage the topic lacks:
    markers become citations of links ``index + 1``, a missing passage a link without a
    source text."""
    pieces: list[Piece] = []
    position = 0
    missing = 0
    for match in _MARKER.finditer(text):
        pieces.append(text[position : match.start()])
        for raw in re.split(r"[ \t,]+", match.group(1).strip()):
            index = int(raw)
            if index in passages:
                url = passages[index][0]
            else:
                url = f"{topic}#missing-passage-{index}"
                missing += 1
            pieces.append(Citation(id=index + 1, url=url, title=""))
        position = match.end()
    pieces.append(text[position:])
    parsed = build_response(pieces)
    links = tuple(
        Link(
            id=lk.id,
            url=lk.url,
            title=lk.title,
            text=passages[lk.id - 1][1] if lk.id - 1 in passages else None,
        )
        for lk in parsed.links
    )
    turn = Turn(
        index=1,
        query=query,
        response_text=parsed.response_text,
        statements=parsed.statements,
        links=links,
        segments=parsed.segments,
    )
    return turn, missing


def _read_answers(
    path: Path, sources: dict[str, dict[int, tuple[str, str]]]
) -> list[CrowdRagAnswer]:
    answers: list[CrowdRagAnswer] = []
    seen: dict[str, int] = {}
    systems: dict[tuple[str, str], int] = {}
    for number, data in _lines(path):
        response = _string(data, "response", path, number)
        topic = _string(data, "topic", path, number)
        query = _string(data, "query", path, number)
        text = _string(data, "text", path, number)
        parts = []
        for key in ("writer", "style"):
            value = _string(data, key, path, number)
            if not _SYSTEM_PART.fullmatch(value):
                raise InputError(
                    f"must be lower-case letters, digits or '_' (it names a file), not {value!r}",
                    path=str(path),
                    line=number,
                    column=key,
                )
            parts.append(value)
        system = "-".join(parts)
        if response in seen:
            raise InputError(
                f"response {response!r} is already on line {seen[response]}",
                path=str(path),
                line=number,
                column="response",
            )
        if (topic, system) in systems:
            raise InputError(
                f"topic {topic!r} already has a {system} answer (line {systems[topic, system]})",
                path=str(path),
                line=number,
                column="style",
            )
        if topic not in sources:
            raise InputError(
                f"topic {topic!r} has no passages in sources.jsonl",
                path=str(path),
                line=number,
                column="topic",
            )
        seen[response] = systems[topic, system] = number
        try:
            turn, missing = _answer_turn(text, query, topic, sources[topic])
            session = Session(session_id=topic, turns=(turn,), source="crowdrag", language="en")
            validate_session(session)
        except InputError as error:
            raise InputError(error.message, path=str(path), line=number, column="text") from None
        answers.append(
            CrowdRagAnswer(
                response=response,
                topic=topic,
                system=system,
                session=session,
                missing_passages=missing,
            )
        )
    if not answers:
        raise InputError("the file holds no answer", path=str(path))
    return answers


def _read_ratings(
    path: Path, answers: dict[str, CrowdRagAnswer]
) -> tuple[list[Preference], int, int]:
    """The merged preferences, how many distinct pairs were rated, and how many
    (pair, dimension) splits were left out."""
    labels: dict[tuple[str, str, str], list[str]] = defaultdict(list)  # (first, second, criterion)
    order: dict[frozenset[str], tuple[str, str]] = {}
    for number, data in _lines(path):
        topic = _string(data, "query_id", path, number)
        pair = []
        for key in ("response_a", "response_b"):
            response = _string(data, key, path, number)
            answer = answers.get(response)
            if answer is None:
                raise InputError(
                    f"response {response!r} is not in responses.jsonl",
                    path=str(path),
                    line=number,
                    column=key,
                )
            if answer.topic != topic:
                raise InputError(
                    f"response {response!r} answers topic {answer.topic!r}, not {topic!r}",
                    path=str(path),
                    line=number,
                    column=key,
                )
            pair.append(response)
        if pair[0] == pair[1]:
            raise InputError(
                "the pair compares an answer with itself",
                path=str(path),
                line=number,
                column="response_b",
            )
        first, second = order.setdefault(frozenset(pair), (pair[0], pair[1]))
        flipped = pair[0] != first
        for criterion in CROWDRAG_CRITERIA:
            key = f"{criterion}_gold"
            gold = data.get(key)
            allowed = ("a", "b") if criterion == "quality_overall" else ("a", "b", "n")
            if gold not in allowed:
                raise InputError(
                    f"must be one of {', '.join(allowed)}, not {gold!r}",
                    path=str(path),
                    line=number,
                    column=key,
                )
            winner = _GOLD[str(gold)]
            if flipped and winner != "tie":
                winner = "b" if winner == "a" else "a"
            labels[first, second, criterion].append(winner)
    if not order:
        raise InputError("the file holds no rated pair", path=str(path))
    preferences: list[Preference] = []
    dropped = 0
    for (first, second, criterion), given in labels.items():
        (winner, count), *rest = Counter(given).most_common()
        if rest and rest[0][1] == count:
            dropped += 1
            continue
        a, b = answers[first], answers[second]
        preferences.append(
            Preference(
                winner=winner,
                query=a.topic,
                session_a=f"{a.topic}/{a.system}",
                session_b=f"{b.topic}/{b.system}",
                session=a.topic,
                system_a=a.system,
                system_b=b.system,
                turn=1,
                criterion=criterion,
            )
        )
    return preferences, len(order), dropped


def read_crowdrag(folder: str | Path) -> CrowdRag:
    """Read a CrowdRAG folder (``responses.jsonl``, ``sources.jsonl``, ``ratings.jsonl``);
    the first problem raises a located :class:`InputError`."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(
            "no such folder"
            if not folder.exists()
            else "not a folder (CrowdRAG is a folder of "
            "responses.jsonl, sources.jsonl and ratings.jsonl)",
            path=str(folder),
        )
    sources = _read_sources(folder / "sources.jsonl")
    answers = _read_answers(folder / "responses.jsonl", sources)
    preferences, rated, dropped = _read_ratings(
        folder / "ratings.jsonl", {a.response: a for a in answers}
    )
    return CrowdRag(
        answers=tuple(answers),
        preferences=tuple(preferences),
        rated_pairs=rated,
        split_dropped=dropped,
    )


def _answer_session(answer: CrowdRagAnswer) -> Session:
    return Session(
        session_id=f"{answer.topic}/{answer.system}",
        turns=answer.session.turns,
        source="crowdrag",
        language="en",
        meta={"topic": answer.topic, "system": answer.system, "response": answer.response},
    )


def _write(path: Path, write: Callable[[IO[bytes]], object]) -> None:
    """Write ``path`` through a temporary file beside it, moved into place when complete."""
    # ".NAME.<pid>.<random>.tmp": the next conversion removes the one a killed one left
    with output_file(path, "--output", binary=True) as out:
        write(out)


#: The command named in the output folder's marker, and the files only it writes there.
CONVERTER = "parse --format crowdrag"
CONVERTED = ("answers.jsonl", "preferences.jsonl")


def _earlier_files(output: Path, marker: Mapping[str, Any]) -> list[str]:
    """What the last conversion into ``output`` wrote: the marker's list, or, in a folder a
    conversion wrote before folders were marked, its ``systems/*.jsonl``."""
    listed = owned_files(dict(marker))
    if listed or not (output / "systems").is_dir():
        return listed
    return [f"systems/{entry.name}" for entry in (output / "systems").glob("*.jsonl")]


def _remove_earlier(output: Path, earlier: Iterable[str], written: Sequence[str]) -> None:
    """Remove the files an earlier conversion wrote that this one did not (another dataset's
    systems, which ``arena OUT/systems/*.jsonl`` would otherwise pick up); nothing else."""
    for name in sorted(set(earlier) - set(written)):
        if Path(name).is_absolute() or ".." in Path(name).parts:
            continue  # not a name a conversion writes: an edited marker
        with contextlib.suppress(FileNotFoundError):
            (output / name).unlink()


def convert_crowdrag(folder: str | Path, output: str | Path) -> ConversionSummary:
    """Read the CrowdRAG ``folder`` and write the systems, answers and preferences files
    under ``output`` (created when missing); see the module docstring for what each holds."""
    data = read_crowdrag(folder)
    output = Path(output)
    marker = claim_folder(output, CONVERTER, signature=CONVERTED, option="--output")
    by_system: dict[str, list[CrowdRagAnswer]] = defaultdict(list)
    for answer in data.answers:
        by_system[answer.system].append(answer)
    written = [
        *CONVERTED,
        *(f"systems/{plain_name(system, 'a system name')}.jsonl" for system in by_system),
    ]
    try:
        (output / "systems").mkdir(parents=True, exist_ok=True)
        remove_stale_parts(output, CONVERTED)
        remove_stale_parts(output / "systems", [Path(name).name for name in written])
        for system, answers in sorted(by_system.items()):
            _write(
                output_child(output, f"systems/{system}.jsonl", "--output"),
                lambda out, answers=answers: out.writelines(  # type: ignore[misc]
                    session_line(a.session) for a in answers
                ),
            )
        _write(
            output / "answers.jsonl",
            lambda out: out.writelines(session_line(_answer_session(a)) for a in data.answers),
        )
        _write(output / "preferences.jsonl", lambda out: write_preferences(data.preferences, out))
        _remove_earlier(output, _earlier_files(output, marker), written)
        record_files(output, CONVERTER, written)
    except OSError as error:
        raise InputError(
            f"cannot write the output: {error.strerror or error}", path=str(output)
        ) from None
    return ConversionSummary(
        answers=len(data.answers),
        systems=len(by_system),
        topics=len({a.topic for a in data.answers}),
        preferences=len(data.preferences),
        rated_pairs=data.rated_pairs,
        split_dropped=data.split_dropped,
        missing_passages=data.missing_passages,
    )
