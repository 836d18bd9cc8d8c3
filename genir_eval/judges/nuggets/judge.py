"""``nuggets``: which of the facts a query needed does each answer state (TREC 2024 RAG).

After the AutoNuggetizer framework of the TREC 2024 RAG track (Pradeep et al., arXiv
2411.09607; "The Great Nugget Recall", arXiv 2504.15068), in three steps through the engine
(cache, journal, limits), every log value fenced:

1. **creation**, per query (a turn's query with what the session asked before it): the
   sources are read ``create_batch`` at a time, each call updating one list of nuggets
   (short atomic facts), capped at ``max_nuggets``. The sources are the cited sources' text
   of every answer to the query in the run's input (``pool="run"``, as TREC pools the
   systems compared; ``pool_logs`` adds other logs' answers, e.g. the other systems of an
   arena) or of the answer alone (``pool="turn"``);
2. **importance**, ``importance_batch`` nuggets a call: ``vital`` or ``okay``; the list is
   then ordered vital first and cut at ``max_nuggets``, as the nuggetizer does;
3. **assignment**, each answer against its query's nuggets, ``assign_batch`` nuggets a call:
   ``support``, ``partial_support`` or ``not_support``, with the reason.

Nuggets are an editable artefact: a run writes them to ``nuggets.jsonl`` in its folder
(:mod:`.files`: query id, nugget id, text, importance, origin), and the option ``nuggets``
reads such a file (or a TREC nuggetizer file) back, used as given: no nugget is made and
only the assignment runs. A query id is the dataset's topic (``meta.topic``, as CrowdRAG's
answers carry it) or the session id, with ``#<turn>`` for a session of several turns; with
``pool="turn"`` it is always the session's. A collection's file (every topic of an
evaluation) serves the queries the input has: the queries it has that the input does not
are counted in one line of :attr:`NuggetJudge.notes` (a file sharing no query with the input
is refused). Graded importance is kept as given and vital from ``vital_grade`` on
(:func:`~.files.vital_mark` states the rule in the same notes). With nuggets given, a turn's
query may be empty: the file's query stands in for it in the assignment prompt.

Each turn gets one label, item ``nuggets``: its query's nuggets, each with the answer's
assignment and reason, scored by the nugget measures (:mod:`genir_eval.metrics.nuggets`);
the judge's own score is TREC's "all" score (partial support counting half). A failed
creation or assignment call leaves the turn's label missing with the reason, never a guess.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from genir_eval.errors import ConfigError
from genir_eval.judges.base import JudgeStats, Label, ask
from genir_eval.judges.common import generate_config
from genir_eval.judges.nuggets.files import (
    VITAL_GRADE,
    Nugget,
    NuggetSet,
    nugget_rows,
    read_given_nuggets,
)
from genir_eval.judges.nuggets.pools import Pool, Source, cited_sources, earlier_queries
from genir_eval.judges.nuggets.replies import (
    assignments_schema,
    coverage_reason,
    created_schema,
    importance_schema,
    parse_assignments,
    parse_created,
    parse_importance,
)
from genir_eval.judges.options import (
    RESPONSE_FORMAT,
    Option,
    check_judge_options,
    option_values,
)
from genir_eval.judges.prompting import (
    fence,
    load_template,
    render_messages,
    session_language,
    template_version,
)
from genir_eval.kind_names import NUGGETS_FILE
from genir_eval.llm.providers.base import JudgmentKey
from genir_eval.paths import append_output, write_output
from genir_eval.records import Session, Turn

__all__ = [
    "NAME",
    "KIND",
    "TASKS",
    "NUGGETS_FILE",
    "Option",
    "Source",
    "NuggetJudge",
    "query_id",
    "cited_sources",
]

NAME = "nuggets"
KIND = "nuggets"
TASK_CREATE = "nuggets.create"
TASK_IMPORTANCE = "nuggets.importance"
TASK_ASSIGN = "nuggets.assign"
TASKS = (TASK_CREATE, TASK_IMPORTANCE, TASK_ASSIGN)
#: The file a run writes its nuggets to, in its folder.
_PROMPTS = Path(__file__).parent / "prompts"


def query_id(session: Session, turn: Turn, *, pooled: bool = True) -> str:
    """The query id a turn's nuggets are filed under (see the module docstring)."""
    topic = session.meta.get("topic") if pooled else None
    base = str(topic) if isinstance(topic, (str, int)) and str(topic) else session.session_id
    return base if len(session.turns) == 1 else f"{base}#{turn.index}"


def _batches(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _digest(payload: Any) -> str:
    text = json.dumps(payload, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " [...]"


# --- the judge -------------------------------------------------------------------------------


class NuggetJudge:
    """The nugget judge (see the module docstring)."""

    name = NAME
    kind = KIND
    task = TASK_ASSIGN
    template = "nuggets"
    #: What the offline twin reads (:mod:`.twin`), shown beside its figures.
    baseline_note = (
        "the nugget twin is a deterministic baseline: its nuggets are the sentences of the "
        "pooled cited sources most related to the query (embedding cosine with the semantic "
        "extra, else shared query terms), vital when closely related; an answer supports a "
        "nugget by how much of it the whole answer covers: each clause's content words or, "
        "with the extra, its meaning, wherever they stand (never shared word sequences, so "
        "restating counts as copying); not an LLM's judgment"
    )

    OPTIONS: tuple[Option, ...] = (
        Option(
            "nuggets",
            None,
            "a nugget file (genir-eval's or TREC nuggetizer JSONL) used as given: no nugget "
            "is made, only the assignment runs (in a scenario, relative to its folder)",
            type="text",
            path=True,
        ),
        Option(
            "pool",
            "run",
            "run: a query's nuggets are made from the cited sources of every answer to it in "
            "the run's input (and pool_logs); turn: from the answer's own cited sources",
            choices=("run", "turn"),
        ),
        Option(
            "pool_logs",
            "",
            "more logs (comma-separated paths, canonical JSONL or any format genir-eval "
            "reads) whose answers' cited sources join each query's pool (in a scenario, "
            "relative to its folder)",
            path=True,
        ),
        Option(
            "vital_grade",
            None,
            "with a nugget file of graded importance (numbers, e.g. 1-4): the grade from which "
            "a nugget is vital (default: the middle of the file's grades)",
            type="float",
            range=(-1e9, 1e9),
        ),
        Option("max_nuggets", 30, "nuggets kept per query (TREC 2024 RAG: 30)", range=(1, 500)),
        Option("create_batch", 10, "sources read per creation call", range=(1, 200)),
        Option("importance_batch", 10, "nuggets labelled vital/okay per call", range=(1, 500)),
        Option("assign_batch", 10, "nuggets assigned per call", range=(1, 500)),
        Option("max_source_chars", 2000, "each source's text is cut at this", range=(50, 10**7)),
        Option("max_answer_chars", 8000, "each answer is cut at this", range=(100, 10**7)),
        Option(
            "model", None, "model for this judge (default: the provider's default)", type="text"
        ),
        Option("temperature", 0.0, "sampling temperature", range=(0, 2)),
        Option("max_tokens", 1500, "reply token budget", range=(16, 100_000)),
        RESPONSE_FORMAT,
        Option(
            "language",
            None,
            "prompt language, en or zh (default: the session's)",
            choices=("en", "zh"),
        ),
    )

    def __init__(self, **options: Any) -> None:
        check_judge_options(self.name, self.OPTIONS, options)
        self.options: Mapping[str, Any] = option_values(self.OPTIONS, options)
        self.stats = JudgeStats()
        self._given: dict[str, NuggetSet] | None = None
        self._pools: dict[str, Pool] = {}
        self._made: dict[str, NuggetSet | str] = {}
        self._pending: dict[str, asyncio.Future[NuggetSet | str]] = {}
        self._written: set[str] = set()
        self._out: Path | None = None
        self._templates: dict[tuple[str, str], tuple[str, str]] = {}
        self._prepared = False
        #: what the run should say of the nugget file (queries unused, the vital rule)
        self.notes: tuple[str, ...] = ()
        #: a graded nugget file's vital mark (``None``: importance given as words)
        self._mark: float | None = None
        if self.options["nuggets"] is None and self.options["vital_grade"] is not None:
            raise ConfigError(f"{NAME}: option 'vital_grade' is read only with 'nuggets'")

    @property
    def pooled(self) -> bool:
        return self.options["pool"] == "run"

    def _config(self, engine: Any, schema: Mapping[str, Any]) -> Any:
        """A call's settings: JSON replies, and with ``response_format=json_schema`` the
        step's reply schema, which bounds a reply (the nugget cap, short strings) on servers
        that constrain decoding to it."""
        constrained = self.options["response_format"] == "json_schema"
        return generate_config(
            engine,
            self.options,
            response_format="json",
            max_tokens=self.options["max_tokens"],
            json_schema=schema if constrained else None,
        )

    # -- the run's input, read once before any call ------------------------------------------

    def bind_run(
        self, sessions: Callable[[], Iterable[Session]] | None, out: Path | None
    ) -> tuple[str, ...]:
        """Read what the judge needs of the run before any call (``sessions()`` reads the
        run's sessions again): the given nugget file (every query id checked against the
        run's input, a bad line a located error), the pools of sources per query
        (``pool="run"``), and where the run's nugget file goes (``out/nuggets.jsonl``,
        written afresh, a query's nuggets added as they are settled). Returns the files it
        writes into ``out``, which ``run.json`` lists with their digests."""
        self._prepare(sessions)
        if out is None:
            return ()
        self._out = Path(out)
        self._out.mkdir(parents=True, exist_ok=True)
        write_output(self._out / NUGGETS_FILE, "", "the run's nugget file")
        self._written = set()
        return (NUGGETS_FILE,)

    def _prepare(self, run_sessions: Any = None) -> None:
        """Read the pools (and check the given nugget file's query ids) in one pass over the
        run's sessions and ``pool_logs``. The pools hold each distinct cited source's text
        once: memory grows with the sources of the input, not with its answers."""
        self._prepared = True
        if not self.pooled and self.options["nuggets"] is None:
            return  # each answer's own sources, read as it is judged
        logs = [p.strip() for p in str(self.options["pool_logs"] or "").split(",") if p.strip()]
        readers: list[Any] = [run_sessions] if run_sessions is not None else []
        for log in logs:
            readers.append(lambda log=log: _log_sessions(log))
        qids: set[str] = set()
        for reader in readers:
            for session in reader():
                for turn in session.turns:
                    qid = query_id(session, turn, pooled=self.pooled)
                    if reader is run_sessions:
                        qids.add(qid)
                    if self.pooled and self.options["nuggets"] is None:
                        pool = self._pools.get(qid)
                        if pool is None:
                            pool = self._pools[qid] = Pool(
                                turn.query, earlier_queries(session, turn)
                            )
                        pool.add(turn)
        if self.options["nuggets"] is not None:
            self._read_given(qids if run_sessions is not None else None)

    def _read_given(self, qids: set[str] | None) -> None:
        """Read the given nugget file against the run's query ids (``None``: unknown)."""
        given = read_given_nuggets(
            str(self.options["nuggets"]), vital_grade=self.options["vital_grade"], qids=qids
        )
        self._given, self._mark, self.notes = given.sets, given.mark, given.notes

    # -- nuggets for a query ---------------------------------------------------------------

    def _template(self, step: str, language: str) -> tuple[str, str]:
        found = self._templates.get((step, language))
        if found is None:
            text = load_template(str(_PROMPTS / f"{step}.{language}.txt"), language)
            # the vital rule settles importance after the calls: no prompt shows it
            unshaping = ("model", "nuggets", "vital_grade")
            shaping = {k: v for k, v in self.options.items() if k not in unshaping}
            found = self._templates[(step, language)] = (text, template_version(text, shaping))
        return found

    async def nuggets_for(
        self, session: Session, turn: Turn, engine: Any, language: str
    ) -> NuggetSet | str:
        """The turn's query's nuggets (made once per query id), or why there are none."""
        if not self._prepared:
            self._prepare()
        qid = query_id(session, turn, pooled=self.pooled)
        if self._given is not None:
            given = self._given.get(qid)
            if given is None:
                return f"the nugget file {self.options['nuggets']} has no nuggets for query {qid!r}"
            self._write(given)
            return given
        if not turn.query.strip():
            return (
                f"query {qid!r} is empty: nuggets are made from a query; give them "
                "(option nuggets) to assign them without one"
            )
        done = self._made.get(qid)
        if done is not None:
            return done
        pending = self._pending.get(qid)
        if pending is None or pending.get_loop() is not asyncio.get_running_loop():
            pool = self._pools.get(qid)
            if pool is None or not self.pooled:
                pool = Pool(turn.query, earlier_queries(session, turn))
                pool.add(turn)
            pending = asyncio.ensure_future(self._create(qid, pool, engine, language))
            self._pending[qid] = pending
        made = await asyncio.shield(pending)
        self._made[qid] = made
        self._pending.pop(qid, None)
        if isinstance(made, NuggetSet):
            self._write(made)
        return made

    def _write(self, nugget_set: NuggetSet) -> None:
        if self._out is None or nugget_set.qid in self._written:
            return
        self._written.add(nugget_set.qid)
        with append_output(self._out / NUGGETS_FILE, "the run's nugget file") as handle:
            for row in nugget_rows(nugget_set):
                if self._mark is not None and not isinstance(row["importance"], str):
                    row[VITAL_GRADE] = self._mark  # read back, it splits as this run did
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")

    def _query_values(self, pool: Pool) -> dict[str, str]:
        earlier = "\n".join(f"- {q}" for q in pool.context)
        return {
            "query": fence(pool.query, "QUERY"),
            "context": fence(earlier, "EARLIER QUERIES") if earlier else "(first query)",
        }

    async def _create(self, qid: str, pool: Pool, engine: Any, language: str) -> NuggetSet | str:
        """Make the query's nuggets: the sources a window at a time, then importance."""
        sources = list(pool.sources.values())
        if not sources:
            return f"no nuggets for query {qid!r}: none of its answers cites a source"
        facts: list[str] = []
        for i, window in enumerate(_batches(sources, int(self.options["create_batch"])), 1):
            label = await self._create_step(qid, pool, facts, window, i, engine, language)
            if label.value is None:
                return f"nugget creation failed (call {i}): {label.missing_reason}"
            facts = list(label.value)
        if not facts:
            return f"no nuggets for query {qid!r}: the sources gave none"
        importance = await self._importance(qid, pool, facts, engine, language)
        if isinstance(importance, str):
            return importance
        limit = int(self.options["max_nuggets"])
        order = sorted(range(len(facts)), key=lambda i: (importance[i] != "vital", i))[:limit]
        provider = getattr(engine, "provider", None)
        who = f"{getattr(provider, 'name', '')}/{getattr(provider, 'model', '') or ''}"
        titles = sum(1 for s in sources if s.title_only)
        basis = f" ({titles} by title only)" if titles else ""
        origin = (
            f"made by {NAME} ({who}) from {len(sources)} cited sources{basis} of "
            f"{pool.answers} answer(s)"
        )
        nuggets = tuple(
            Nugget(f"n{rank}", facts[i], importance[i], origin)
            for rank, i in enumerate(order, start=1)
        )
        return NuggetSet(qid, pool.query, nuggets)

    async def _create_step(
        self,
        qid: str,
        pool: Pool,
        facts: Sequence[str],
        window: Sequence[Source],
        number: int,
        engine: Any,
        language: str,
    ) -> Label:
        """One creation call: the list so far updated with a window of sources."""
        limit = int(self.options["max_nuggets"])
        cut = int(self.options["max_source_chars"])
        text, version = self._template("create", language)
        values = {
            **self._query_values(pool),
            "count": str(len(facts)),
            "nuggets": "\n".join(f"- {f}" for f in facts) if facts else "(none yet)",
            "sources": "\n".join(
                fence(_cut(s.text, cut), f"SOURCE {j}") for j, s in enumerate(window, 1)
            ),
            "max_nuggets": str(limit),
        }
        context = {
            "query": pool.query,
            "earlier": list(pool.context),
            "nuggets": list(facts),
            "sources": [_cut(s.text, cut) for s in window],
            "max_nuggets": limit,
        }
        config = self._config(engine, created_schema(limit))
        return await ask(
            engine,
            JudgmentKey(f"nuggets:{qid}", None, f"create:{number}", NAME, version),
            render_messages(text, values),
            config,
            TASK_CREATE,
            context,
            parse_created(limit),
            stats=self.stats,
            language=language,
        )

    async def _importance(
        self, qid: str, pool: Pool, facts: Sequence[str], engine: Any, language: str
    ) -> list[str] | str:
        text, version = self._template("importance", language)
        ids = [f"f{i}" for i in range(1, len(facts) + 1)]
        size = int(self.options["importance_batch"])

        async def one(batch: int, chosen: Sequence[str]) -> Label:
            shown = [(i, facts[ids.index(i)]) for i in chosen]
            values = {
                **self._query_values(pool),
                "nuggets": "\n".join(fence(t, f"NUGGET {i}") for i, t in shown),
            }
            key = JudgmentKey(
                f"nuggets:{qid}", None, f"importance:{batch}", NAME, f"{version}:{_digest(shown)}"
            )
            context = {"query": pool.query, "nuggets": [[i, t] for i, t in shown]}
            return await ask(
                engine,
                key,
                render_messages(text, values),
                self._config(engine, importance_schema(list(chosen))),
                TASK_IMPORTANCE,
                context,
                parse_importance(list(chosen)),
                stats=self.stats,
                language=language,
            )

        labels = await asyncio.gather(
            *(one(b, chosen) for b, chosen in enumerate(_batches(ids, size), 1))
        )
        found: dict[str, str] = {}
        for label in labels:
            if label.value is None:
                return f"nugget importance failed: {label.missing_reason}"
            found.update(label.value)
        return [found[i] for i in ids]

    # -- assignment ------------------------------------------------------------------------

    def language(self, session: Session) -> str:
        return str(self.options.get("language") or session_language(session))

    async def __call__(self, session: Session, engine: Any) -> list[Label]:
        language = self.language(session)
        return list(
            await asyncio.gather(
                *(self._turn(session, turn, engine, language) for turn in session.turns)
            )
        )

    async def _turn(self, session: Session, turn: Turn, engine: Any, language: str) -> Label:
        text, version = self._template("assign", language)
        key = JudgmentKey(session.session_id, turn.index, "nuggets", NAME, version)
        found = await self.nuggets_for(session, turn, engine, language)
        if isinstance(found, str):
            return Label(key, None, missing_reason=found)
        if not found.nuggets:
            return Label(key, None, missing_reason=f"query {found.qid!r} has no nuggets")
        assigned: dict[str, dict[str, str]] = {}
        calls: list[dict[str, Any]] = []
        if not turn.response_text.strip():
            assigned = {
                n.id: {"assignment": "not_support", "reason": "the answer is empty"}
                for n in found.nuggets
            }
        else:
            size = int(self.options["assign_batch"])
            labels = await asyncio.gather(
                *(
                    self._assign(session, turn, found, batch, b, engine, language)
                    for b, batch in enumerate(_batches(found.nuggets, size), 1)
                )
            )
            failed = [lb for lb in labels if lb.value is None]
            calls = [
                {"item": lb.key.item, "raw": lb.raw, "prompt_hash": lb.prompt_hash} for lb in labels
            ]
            if failed:
                reasons = "; ".join(f"{lb.key.item}: {lb.missing_reason}" for lb in failed)
                return Label(key, None, missing_reason=f"nugget assignment failed: {reasons}")
            for lb in labels:
                assert lb.value is not None
                assigned.update(lb.value)
        nuggets = [
            {
                "id": n.id,
                "text": n.text,
                "importance": n.importance,
                **({"grade": n.grade} if n.grade is not None else {}),
                "assignment": assigned[n.id]["assignment"],
                "reason": assigned[n.id]["reason"],
            }
            for n in found.nuggets
        ]
        value = {"qid": found.qid, "nuggets": nuggets}
        return Label(key, value, extra={"reason": coverage_reason(nuggets), "calls": calls})

    async def _assign(
        self,
        session: Session,
        turn: Turn,
        found: NuggetSet,
        batch: Sequence[Nugget],
        number: int,
        engine: Any,
        language: str,
    ) -> Label:
        text, version = self._template("assign", language)
        answer = _cut(turn.response_text, int(self.options["max_answer_chars"]))
        # an answer logged without its query is assigned against the nugget file's query
        query = turn.query if turn.query.strip() else found.query
        values = {
            "query": fence(query, "QUERY") if query.strip() else "(not given)",
            "answer": fence(answer, "ANSWER"),
            "nuggets": "\n".join(fence(n.text, f"NUGGET {n.id}") for n in batch),
        }
        shown = [[n.id, n.text] for n in batch]
        key = JudgmentKey(
            session.session_id,
            turn.index,
            f"nuggets:{number}",
            NAME,
            f"{version}:{_digest([found.qid, shown])}",
        )
        config = self._config(engine, assignments_schema([n.id for n in batch]))
        context = {"query": query, "answer": answer, "nuggets": shown}
        return await ask(
            engine,
            key,
            render_messages(text, values),
            config,
            TASK_ASSIGN,
            context,
            parse_assignments([n.id for n in batch]),
            stats=self.stats,
            language=language,
        )

    async def later_prompts(self, session: Session, engine: Any) -> None:
        """Send the assignment prompts, which a run builds only from usable nuggets, with
        the session's statements standing for its queries' nuggets (the first vital): what
        :mod:`genir_eval.judges.prompt_digests` renders after the creation prompts."""
        language = self.language(session)
        size = int(self.options["assign_batch"])
        for turn in session.turns:
            nuggets = tuple(
                Nugget(f"n{i}", s.text, "vital" if i == 1 else "okay")
                for i, s in enumerate(turn.statements, start=1)
            )
            found = NuggetSet(query_id(session, turn, pooled=self.pooled), turn.query, nuggets)
            for number, batch in enumerate(_batches(found.nuggets, size), 1):
                await self._assign(session, turn, found, batch, number, engine, language)

    def __repr__(self) -> str:
        return f"make_judge({NAME!r}, pool={self.options['pool']!r})"


def _log_sessions(path: str) -> Iterable[Session]:
    from genir_eval.ingest import iter_sessions

    if not Path(path).exists():
        raise ConfigError(f"{NAME}: option 'pool_logs': no such file {path!r}")
    yield from iter_sessions(path)
