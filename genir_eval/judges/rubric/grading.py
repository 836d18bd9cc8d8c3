"""RUBRIC: question banks per turn and graded answerability of passages.

After Farzi & Dietz (2024), "Pencils Down! Automatic Rubric-based Evaluation of
Retrieve/Generate Systems" (RUBRIC / EXAM++): a model writes, per query, ``N`` concise
questions (default 10) a good response must answer, or key facts (the nugget variant);
every passage is graded 0-5 on each question, with the answer it gives. Passages here are a
turn's response statements (items ``stmt:<i>``, 1-based) and its cited links (items
``link:<id>``: title + the statements citing the link).

The question banks are editable JSON files (one per session, with a ``version``), written
once and never overwritten: a person can fix, add or delete questions and rerun grading
only (``mode="grade"`` reads the files and generates nothing). The grading requests carry
the bank's hash in their prompt version, so edited questions are graded afresh while the
journal still serves everything unchanged.

A passage's label is its best grade over the questions (``label="max"``) or the highest
grade reached by at least ``min_questions`` questions (``label="count"``); ``threshold``
(default 4) makes it binary (``extra["relevant"]``). The turn label ``coverage`` is the
share of questions some response statement answers at grade >= ``threshold``.
:func:`write_qrels` and :func:`write_run` export the labels for trec_eval / ir_measures.

Baselines with the same engine: ``rubric-thomas`` (Thomas et al., 2024, "Large language
models can accurately predict searcher preferences": 0-2 with the M/T/O aspects) and
``rubric-yesno``, each grading every passage directly.

Offline twin (the offline provider's handlers below): questions templated over the key
phrases of the query and intent; a grade is the lexical coverage of a question's terms in
the passage, ``round(5 * coverage)``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from genir_eval.errors import ConfigError, InputError
from genir_eval.judges.base import JudgeStats, Label, ask, register_judge
from genir_eval.judges.common import generate_config
from genir_eval.judges.item import candidates_for_turn
from genir_eval.judges.lexical import STOPWORDS, key_terms, tokenize
from genir_eval.judges.parsing import (
    ReplyError,
    expect_int,
    expect_key,
    expect_mapping,
    extract_object,
)
from genir_eval.judges.prompting import (
    fence,
    load_template,
    render_messages,
    session_language,
    template_version,
)
from genir_eval.llm.base import Completion, JudgmentKey
from genir_eval.llm.offline import register_offline
from genir_eval.records import Session, Turn

if TYPE_CHECKING:
    from genir_eval.llm.engine import Engine
else:
    Engine = Any

__all__ = [
    "RUBRIC_FILE_VERSION",
    "PROMPT_VERSION",
    "Question",
    "Rubric",
    "RubricFile",
    "Passage",
    "turn_passages",
    "passage_label",
    "rubric_path",
    "read_rubric_file",
    "write_rubric_file",
    "RubricJudge",
    "DirectJudge",
    "write_qrels",
    "write_run",
    "trec_query_id",
    "offline_questions",
]

RUBRIC_FILE_VERSION = 1
PROMPT_VERSION = "rubric-v1"
GRADE_MAX = 5


# --- question banks and their files ---------------------------------------------------------


@dataclass(frozen=True)
class Question:
    id: str
    text: str


@dataclass(frozen=True)
class Rubric:
    """The questions of one turn (``turn=None``: one bank for the whole session)."""

    turn: int | None
    query: str
    questions: tuple[Question, ...]

    def digest(self) -> str:
        payload = json.dumps([[q.id, q.text] for q in self.questions], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class RubricFile:
    """A session's question banks as saved: ``kind`` is ``"questions"`` or ``"nuggets"``."""

    session_id: str
    kind: str
    rubrics: tuple[Rubric, ...]
    generator: Mapping[str, Any]
    version: int = RUBRIC_FILE_VERSION

    def for_turn(self, turn: int) -> Rubric | None:
        for rubric in self.rubrics:
            if rubric.turn == turn:
                return rubric
        for rubric in self.rubrics:
            if rubric.turn is None:
                return rubric
        return None


def rubric_path(directory: str | Path, session_id: str) -> Path:
    """``<directory>/<session id>.json``; a session id unsafe as a file name is replaced by
    a readable stem plus its hash."""
    safe = re.sub(r"[^\w.-]", "_", session_id)
    if safe != session_id or safe.startswith("."):
        digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:10]
        safe = f"{safe.strip('.')[:60]}-{digest}"
    return Path(directory) / f"{safe}.json"


def _rubric_to_dict(rubric_file: RubricFile) -> dict[str, Any]:
    return {
        "version": rubric_file.version,
        "session_id": rubric_file.session_id,
        "kind": rubric_file.kind,
        "generator": dict(rubric_file.generator),
        "rubrics": [
            {
                "turn": r.turn,
                "query": r.query,
                "questions": [{"id": q.id, "text": q.text} for q in r.questions],
            }
            for r in rubric_file.rubrics
        ],
    }


def write_rubric_file(rubric_file: RubricFile, directory: str | Path) -> Path:
    """Write the bank as indented UTF-8 JSON (for people to edit); returns the path."""
    path = rubric_path(directory, rubric_file.session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_rubric_to_dict(rubric_file), ensure_ascii=False, indent=2)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(text + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def read_rubric_file(path: str | Path) -> RubricFile:
    """Read and validate a bank (possibly edited by hand). Question ids may be changed or
    left out: a missing id becomes ``q<position>``; duplicate ids are an error."""
    where = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON: {error}", path=where, line=error.lineno) from None
    if not isinstance(data, dict):
        raise InputError("a rubric file must hold a JSON object", path=where)
    if data.get("version") != RUBRIC_FILE_VERSION:
        raise InputError(
            f"unsupported version {data.get('version')!r} (expected {RUBRIC_FILE_VERSION})",
            path=where,
            column="version",
        )
    rubrics = []
    for n, entry in enumerate(data.get("rubrics") or [], start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("questions"), list):
            raise InputError(f"rubric {n} needs a 'questions' list", path=where)
        turn = entry.get("turn")
        if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int)):
            raise InputError(f"rubric {n}: 'turn' must be an integer or null", path=where)
        questions: list[Question] = []
        for i, q in enumerate(entry["questions"], start=1):
            text = q.get("text") if isinstance(q, dict) else q
            if not isinstance(text, str) or not text.strip():
                raise InputError(f"rubric {n}, question {i}: empty text", path=where)
            qid = str(q.get("id") or f"q{i}") if isinstance(q, dict) else f"q{i}"
            if any(qid == other.id for other in questions):
                raise InputError(f"rubric {n}: question id {qid!r} appears twice", path=where)
            questions.append(Question(qid, text.strip()))
        rubrics.append(Rubric(turn, str(entry.get("query") or ""), tuple(questions)))
    return RubricFile(
        session_id=str(data.get("session_id") or ""),
        kind=str(data.get("kind") or "questions"),
        rubrics=tuple(rubrics),
        generator=dict(data.get("generator") or {}),
    )


# --- passages and labels ---------------------------------------------------------------------


@dataclass(frozen=True)
class Passage:
    """A gradable unit: ``stmt:<i>`` (a response statement) or ``link:<id>``."""

    id: str
    text: str

    @property
    def is_statement(self) -> bool:
        return not self.id.startswith("link:")


def turn_passages(turn: Turn) -> tuple[Passage, ...]:
    """The response's statements (the whole response as ``response`` when it has none),
    then the cited links, as title + the statements citing them."""
    out = [Passage(f"stmt:{i}", s.text) for i, s in enumerate(turn.statements, start=1)]
    if not out and turn.response_text.strip():
        out.append(Passage("response", turn.response_text))
    out += [Passage(f"link:{c.id}", c.text) for c in candidates_for_turn(turn)]
    return tuple(out)


def passage_label(grades: Sequence[int], rule: str = "max", min_questions: int = 1) -> int:
    """A passage's grade from its per-question grades: the best (``"max"``), or the highest
    ``g`` that at least ``min_questions`` questions reach (``"count"``; 0 when fewer
    questions than that are graded)."""
    if not grades:
        return 0
    if rule == "max":
        return max(grades)
    if rule == "count":
        ordered = sorted(grades, reverse=True)
        return ordered[min_questions - 1] if len(ordered) >= min_questions else 0
    raise ConfigError(f"label must be 'max' or 'count', got {rule!r}")


# --- reply parsing ---------------------------------------------------------------------------


def _questions_parser(n: int) -> Callable[[str], list[str]]:
    def parse(text: str) -> list[str]:
        obj = extract_object(text)
        if isinstance(obj, Mapping):
            obj = expect_key(obj, "questions", "nuggets", "facts")
        if isinstance(obj, str) or not isinstance(obj, Sequence):
            raise ReplyError("'questions' must be a list of strings")
        out = []
        for q in obj:
            if isinstance(q, Mapping):
                q = expect_key(q, "text", "question", "fact")
            if not isinstance(q, str):
                raise ReplyError("each question must be a string")
            if q.strip() and q.strip() not in out:
                out.append(q.strip())
        if not out:
            raise ReplyError("no questions in the reply")
        return out[: max(n, 1)]

    return parse


def _grades_parser(qids: Sequence[str]) -> Callable[[str], dict[str, Any]]:
    """``{"grades": {qid: g}, "answers": {qid: text}}`` covering exactly ``qids``."""

    def parse(text: str) -> dict[str, Any]:
        obj = extract_object(text)
        if isinstance(obj, Mapping):
            obj = expect_key(obj, "grades", "results")
        if isinstance(obj, Mapping):
            obj = [{"question": k, "grade": v} for k, v in obj.items()]
        if isinstance(obj, str) or not isinstance(obj, Sequence):
            raise ReplyError("'grades' must be a list of {question, grade, answer}")
        grades: dict[str, int] = {}
        answers: dict[str, str] = {}
        for entry in obj:
            entry = expect_mapping(entry, "grade entry")
            qid = str(expect_key(entry, "question", "id", "question_id")).strip()
            if qid not in qids and f"q{qid}" in qids:
                qid = f"q{qid}"
            if qid not in qids:
                raise ReplyError(f"unknown question id {qid!r}")
            grades[qid] = expect_int(expect_key(entry, "grade", "score"), 0, GRADE_MAX, qid)
            answer = entry.get("answer")
            answers[qid] = "" if answer is None else str(answer)
        missing = [q for q in qids if q not in grades]
        if missing:
            raise ReplyError(f"no grade for questions {missing}")
        return {"grades": grades, "answers": answers}

    return parse


def _pair_parser(text: str) -> dict[str, Any]:
    obj = extract_object(text, want=dict)
    grade = expect_int(expect_key(obj, "grade", "score"), 0, GRADE_MAX, "grade")
    answer = obj.get("answer")
    return {"grade": grade, "answer": "" if answer is None else str(answer)}


def _thomas_parser(text: str) -> int:
    obj = extract_object(text, want=dict)
    return expect_int(expect_key(obj, "O", "overall", "score"), 0, 2, "O")


_YES = {"yes", "true", "1", "relevant", "是", "相关"}
_NO = {"no", "false", "0", "not relevant", "否", "不相关"}


def _yesno_parser(text: str) -> int:
    obj = extract_object(text, want=dict)
    value = expect_key(obj, "relevant", "answer")
    word = str(value).strip().lower()
    if value is True or word in _YES:
        return 1
    if value is False or word in _NO:
        return 0
    raise ReplyError(f"'relevant' must be yes or no, got {value!r}")


def _usage_extra(completion: Completion, _value: Any) -> Mapping[str, Any]:
    return {
        "input_tokens": completion.usage.input_tokens,
        "output_tokens": completion.usage.output_tokens,
    }


# --- the rubric judge ------------------------------------------------------------------------

_RUBRIC_OPTIONS = {
    "n",
    "kind",
    "scope",
    "mode",
    "rubric_dir",
    "grading",
    "label",
    "min_questions",
    "threshold",
    "model",
    "max_tokens",
    "temperature",
    "language",
}


class RubricJudge:
    """Generates (or reads) question banks, then grades every passage of every turn.

    Options: ``n`` (10 questions), ``kind`` (``"questions"`` | ``"nuggets"``), ``scope``
    (``"turn"`` | ``"session"``: one bank from the intent and all queries), ``mode``
    (``"generate"``: read the bank file if there is one, else generate and save it;
    ``"grade"``: read only, a turn without a bank is missing), ``rubric_dir`` (where the
    files live; without it banks are generated and kept in the labels only), ``grading``
    (``"passage"``: one call per passage grading all questions; ``"pair"``: one call per
    question and passage), ``label`` (``"max"`` | ``"count"``), ``min_questions`` (1),
    ``threshold`` (4).
    """

    name = "rubric"
    kind = "rubric"

    def __init__(self, **options: Any) -> None:
        unknown = set(options) - _RUBRIC_OPTIONS
        if unknown:
            raise ConfigError(f"rubric: unknown options {sorted(unknown)}")
        self.options: Mapping[str, Any] = dict(options)
        self.n = int(options.get("n", 10))
        self.rubric_kind = str(options.get("kind", "questions"))
        self.scope = str(options.get("scope", "turn"))
        self.mode = str(options.get("mode", "generate"))
        self.grading = str(options.get("grading", "passage"))
        self.label_rule = str(options.get("label", "max"))
        self.min_questions = int(options.get("min_questions", 1))
        self.threshold = int(options.get("threshold", 4))
        self.rubric_dir = options.get("rubric_dir")
        checks = {
            "kind": (self.rubric_kind, ("questions", "nuggets")),
            "scope": (self.scope, ("turn", "session")),
            "mode": (self.mode, ("generate", "grade")),
            "grading": (self.grading, ("passage", "pair")),
            "label": (self.label_rule, ("max", "count")),
        }
        for option, (value, allowed) in checks.items():
            if value not in allowed:
                raise ConfigError(f"rubric: {option} must be one of {allowed}, got {value!r}")
        if self.n < 1 or self.min_questions < 1 or not 0 <= self.threshold <= GRADE_MAX:
            raise ConfigError("rubric: n and min_questions must be >= 1, threshold in 0-5")
        if self.mode == "grade" and not self.rubric_dir:
            raise ConfigError("rubric: mode 'grade' reads the banks from rubric_dir; set it")
        self.stats = JudgeStats()

    def _version(self, template: str, language: str, **shaping: Any) -> str:
        return f"{PROMPT_VERSION}:{template_version(load_template(template, language), shaping)}"

    async def __call__(self, session: Session, engine: Engine) -> list[Label]:
        language = str(self.options.get("language") or session_language(session))
        config = generate_config(engine, self.options, response_format="json")
        bank = await self._bank(session, engine, language, config)
        results = await asyncio.gather(
            *(self._turn(session, turn, bank, engine, language, config) for turn in session.turns)
        )
        return [label for labels in results for label in labels]

    # Question banks.

    async def _bank(
        self, session: Session, engine: Engine, language: str, config: Any
    ) -> RubricFile | str:
        """The session's bank, or why there is none."""
        path = rubric_path(self.rubric_dir, session.session_id) if self.rubric_dir else None
        if path is not None and path.exists():
            return read_rubric_file(path)
        if self.mode == "grade":
            return f"no rubric file {path}"
        template = f"rubric_generate_{self.rubric_kind}"
        version = self._version(template, language, n=self.n, scope=self.scope)

        async def generate(turn: int | None, query: str) -> Rubric | str:
            label = await ask(
                engine,
                JudgmentKey(session.session_id, turn, "rubric", self.name, version),
                render_messages(
                    load_template(template, language),
                    {
                        "query": fence(query, "QUERY"),
                        "intent": fence(session.intent or "", "INTENT"),
                        "n": self.n,
                    },
                ),
                config,
                "rubric.generate",
                {
                    "step": "generate",
                    "query": query,
                    "intent": session.intent,
                    "language": language,
                    "n": self.n,
                },
                _questions_parser(self.n),
                stats=self.stats,
                language=language,
                extra=_usage_extra,
            )
            if label.value is None:
                return f"rubric generation failed: {label.missing_reason}"
            questions = tuple(Question(f"q{i}", q) for i, q in enumerate(label.value, start=1))
            return Rubric(turn, query, questions)

        if self.scope == "session":
            queries = "\n".join(f"{t.index}. {t.query}" for t in session.turns)
            made = [await generate(None, queries)]
        else:
            made = list(await asyncio.gather(*(generate(t.index, t.query) for t in session.turns)))
        rubrics = tuple(r for r in made if isinstance(r, Rubric))
        failures = [r for r in made if isinstance(r, str)]
        rubric_file = RubricFile(
            session_id=session.session_id,
            kind=self.rubric_kind,
            rubrics=rubrics,
            generator={
                "judge": self.name,
                "prompt_version": version,
                "model": config.model,
                "n": self.n,
                "scope": self.scope,
            },
        )
        # A bank with a failed turn is not saved: the next run would otherwise read it as
        # complete and never retry the missing turn.
        if path is not None and not failures and not path.exists():
            write_rubric_file(rubric_file, self.rubric_dir)  # type: ignore[arg-type]
        if not rubrics:
            return failures[0] if failures else "no rubric generated"
        return rubric_file

    # Grading.

    async def _turn(
        self,
        session: Session,
        turn: Turn,
        bank: RubricFile | str,
        engine: Engine,
        language: str,
        config: Any,
    ) -> list[Label]:
        passages = turn_passages(turn)
        rubric = bank.for_turn(turn.index) if isinstance(bank, RubricFile) else None

        def key(item: str, version: str = PROMPT_VERSION, repeat: int = 0) -> JudgmentKey:
            return JudgmentKey(session.session_id, turn.index, item, self.name, version, repeat)

        if rubric is None or not rubric.questions:
            reason = bank if isinstance(bank, str) else f"no questions for turn {turn.index}"
            missing = [Label(key(p.id), None, missing_reason=reason) for p in passages]
            return missing + [Label(key("coverage"), None, missing_reason=reason)]

        template = "rubric_grade" if self.grading == "passage" else "rubric_grade_pair"
        # The bank's digest is part of the version: edited questions are graded afresh.
        version = self._version(template, language) + f":{rubric.digest()}"
        qids = [q.id for q in rubric.questions]
        graded = await asyncio.gather(
            *(
                self._grade(session, turn, rubric, p, engine, language, config, version)
                for p in passages
            )
        )
        labels: list[Label] = []
        best: dict[str, int] = {}
        statements_ok = True
        for passage, result in zip(passages, graded, strict=True):
            grades, answers, why, evidence = result
            if grades is None:
                labels.append(Label(key(passage.id, version), None, missing_reason=why))
                statements_ok = statements_ok and not passage.is_statement
                continue
            value = passage_label(list(grades.values()), self.label_rule, self.min_questions)
            labels.append(
                Label(
                    key(passage.id, version),
                    value,
                    extra={
                        "relevant": value >= self.threshold,
                        "grades": grades,
                        "answers": answers,
                        **evidence,
                    },
                )
            )
            if passage.is_statement:
                for qid, g in grades.items():
                    best[qid] = max(best.get(qid, 0), g)
        trace = {
            "questions": [{"id": q.id, "text": q.text} for q in rubric.questions],
            "threshold": self.threshold,
            "answered": sorted(q for q in qids if best.get(q, 0) >= self.threshold),
        }
        if not statements_ok or not any(p.is_statement for p in passages):
            why = "a response statement's grading is missing"
            if not any(p.is_statement for p in passages):
                why = "the turn has no response text"
            labels.append(Label(key("coverage", version), None, missing_reason=why, extra=trace))
        else:
            answered = sum(1 for q in qids if best.get(q, 0) >= self.threshold)
            labels.append(Label(key("coverage", version), answered / len(qids), extra=trace))
        return labels

    async def _grade(
        self,
        session: Session,
        turn: Turn,
        rubric: Rubric,
        passage: Passage,
        engine: Engine,
        language: str,
        config: Any,
        version: str,
    ) -> tuple[dict[str, int] | None, dict[str, str], str | None, dict[str, Any]]:
        """Grades of ``passage`` on every question (``None`` and why when missing)."""
        base_context = {
            "step": "grade",
            "query": turn.query,
            "language": language,
            "passage": passage.text,
        }
        query = fence(turn.query, "QUERY")
        if self.grading == "passage":
            questions = "\n".join(f"{q.id}: {q.text}" for q in rubric.questions)
            label = await ask(
                engine,
                JudgmentKey(
                    session.session_id, turn.index, f"grade:{passage.id}", self.name, version
                ),
                render_messages(
                    load_template("rubric_grade", language),
                    {
                        "query": query,
                        "questions": fence(questions, "QUESTIONS"),
                        "passage": fence(passage.text, "PASSAGE"),
                    },
                ),
                config,
                "rubric.grade",
                {**base_context, "questions": [(q.id, q.text) for q in rubric.questions]},
                _grades_parser([q.id for q in rubric.questions]),
                stats=self.stats,
                language=language,
                extra=_usage_extra,
            )
            if label.value is None:
                return None, {}, label.missing_reason, {}
            return (
                {str(k): int(v) for k, v in label.value["grades"].items()},
                dict(label.value["answers"]),
                None,
                _evidence([label]),
            )
        pair_labels = await asyncio.gather(
            *(
                ask(
                    engine,
                    JudgmentKey(
                        session.session_id,
                        turn.index,
                        f"grade:{passage.id}:{q.id}",
                        self.name,
                        version,
                    ),
                    render_messages(
                        load_template("rubric_grade_pair", language),
                        {
                            "query": query,
                            "questions": fence(q.text, "QUESTION"),
                            "passage": fence(passage.text, "PASSAGE"),
                        },
                    ),
                    config,
                    "rubric.grade_pair",
                    {**base_context, "questions": [(q.id, q.text)]},
                    _pair_parser,
                    stats=self.stats,
                    language=language,
                    extra=_usage_extra,
                )
                for q in rubric.questions
            )
        )
        missing = [lb for lb in pair_labels if lb.value is None]
        if missing:
            return None, {}, f"{missing[0].key.item}: {missing[0].missing_reason}", {}
        values = [dict(lb.value or {}) for lb in pair_labels]
        grades = {q.id: int(v["grade"]) for q, v in zip(rubric.questions, values, strict=True)}
        answers = {q.id: str(v["answer"]) for q, v in zip(rubric.questions, values, strict=True)}
        return grades, answers, None, _evidence(pair_labels)


def _evidence(labels: Sequence[Label]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "calls": len(labels),
        "input_tokens": sum(int(lb.extra.get("input_tokens", 0) or 0) for lb in labels),
        "output_tokens": sum(int(lb.extra.get("output_tokens", 0) or 0) for lb in labels),
    }
    if len(labels) == 1:
        out["raw"] = labels[0].raw
        out["prompt_hash"] = labels[0].prompt_hash
    return out


@register_judge("rubric")
def rubric(**options: Any) -> RubricJudge:
    """Rubric question banks and graded answerability (see :class:`RubricJudge`)."""
    return RubricJudge(**options)


# --- direct-grading baselines ----------------------------------------------------------------


class DirectJudge:
    """Grades each passage of a turn directly: ``scale="thomas"`` (0-2) or ``"yesno"``.

    Labels use the same items as :class:`RubricJudge` (``stmt:<i>``, ``link:<id>``) with
    ``extra["relevant"]`` at ``threshold`` (default 1 on either scale), so both export and
    evaluate alike. ``links_only`` (default true) grades just the cited links.
    """

    kind = "rubric"

    def __init__(self, scale: str, **options: Any) -> None:
        allowed = {"threshold", "links_only", "model", "max_tokens", "temperature", "language"}
        unknown = set(options) - allowed
        if unknown:
            raise ConfigError(f"rubric-{scale}: unknown options {sorted(unknown)}")
        if scale not in ("thomas", "yesno"):
            raise ConfigError(f"unknown direct grading scale {scale!r}")
        self.scale = scale
        self.name = f"rubric-{scale}"
        self.options: Mapping[str, Any] = dict(options)
        self.threshold = int(options.get("threshold", 1))
        self.links_only = bool(options.get("links_only", True))
        self.stats = JudgeStats()

    async def __call__(self, session: Session, engine: Engine) -> list[Label]:
        language = str(self.options.get("language") or session_language(session))
        config = generate_config(engine, self.options, response_format="json")
        template = f"rubric_{self.scale}"
        version = f"{PROMPT_VERSION}:{template_version(load_template(template, language), {})}"
        parse = _thomas_parser if self.scale == "thomas" else _yesno_parser
        jobs = []
        for turn in session.turns:
            for passage in turn_passages(turn):
                if self.links_only and passage.is_statement:
                    continue
                jobs.append((turn, passage))

        async def grade(turn: Turn, passage: Passage) -> Label:
            label = await ask(
                engine,
                JudgmentKey(session.session_id, turn.index, passage.id, self.name, version),
                render_messages(
                    load_template(template, language),
                    {
                        "query": fence(turn.query, "QUERY"),
                        "passage": fence(passage.text, "PAGE"),
                    },
                ),
                config,
                f"rubric.{self.scale}",
                {"step": self.scale, "query": turn.query, "passage": passage.text},
                parse,
                stats=self.stats,
                language=language,
                extra=_usage_extra,
            )
            if label.value is None:
                return label
            return Label(
                label.key,
                label.value,
                raw=label.raw,
                prompt_hash=label.prompt_hash,
                extra={**label.extra, "relevant": int(label.value) >= self.threshold},
            )

        return list(await asyncio.gather(*(grade(t, p) for t, p in jobs)))


@register_judge("rubric-thomas")
def rubric_thomas(**options: Any) -> DirectJudge:
    """Direct 0-2 grading with Thomas et al.'s prompt (a baseline for ``rubric``)."""
    return DirectJudge("thomas", **options)


@register_judge("rubric-yesno")
def rubric_yesno(**options: Any) -> DirectJudge:
    """Direct yes/no relevance grading (a baseline for ``rubric``)."""
    return DirectJudge("yesno", **options)


# --- TREC export -----------------------------------------------------------------------------


def trec_query_id(session_id: str, turn: int | None) -> str:
    """``<session id>:<turn>``, whitespace replaced (TREC files split on whitespace)."""
    sid = re.sub(r"\s+", "_", session_id) or "_"
    return f"{sid}:{'all' if turn is None else turn}"


def _passage_labels(labels: Iterable[Label]) -> list[tuple[Label, float]]:
    """The graded passages' labels with their grade (missing ones left out)."""
    return [
        (lb, float(lb.value))
        for lb in labels
        if lb.value is not None
        and (lb.key.item.startswith(("stmt:", "link:")) or lb.key.item == "response")
    ]


def _open(target: str | Path | IO[str]) -> tuple[IO[str], bool]:
    if isinstance(target, (str, Path)):
        return open(target, "w", encoding="utf-8"), True
    return target, False


def write_qrels(
    labels: Iterable[Label], target: str | Path | IO[str], *, binary: bool = False
) -> int:
    """TREC qrels, one ``query_id 0 doc_id label`` line per graded passage (missing labels
    are left out: unjudged, not irrelevant). ``binary`` writes ``extra["relevant"]`` as
    0/1 instead of the grade. Returns the number of lines."""
    rows = []
    for lb, grade in _passage_labels(labels):
        value = int(bool(lb.extra.get("relevant"))) if binary else int(grade)
        rows.append((trec_query_id(lb.key.session_id, lb.key.turn), lb.key.item, value))
    stream, close = _open(target)
    try:
        for qid, doc, value in sorted(rows):
            stream.write(f"{qid} 0 {doc} {value}\n")
    finally:
        if close:
            stream.close()
    return len(rows)


def _score(label: Label, grade: float) -> float:
    """The passage's grade, ties broken by its mean grade over the questions."""
    grades = label.extra.get("grades")
    mean = (sum(grades.values()) / len(grades)) if isinstance(grades, Mapping) and grades else 0.0
    return grade + mean / (GRADE_MAX + 1)


def write_run(labels: Iterable[Label], target: str | Path | IO[str], *, tag: str = "rubric") -> int:
    """A TREC run, ``query_id Q0 doc_id rank score tag``: each turn's passages by grade
    (mean grade over the questions breaks ties, then the passage order). Returns the number
    of lines."""
    if not re.fullmatch(r"\S+", tag):
        raise ConfigError("a run tag cannot contain whitespace")
    by_query: dict[str, list[tuple[str, float]]] = {}
    for lb, grade in _passage_labels(labels):
        qid = trec_query_id(lb.key.session_id, lb.key.turn)
        by_query.setdefault(qid, []).append((lb.key.item, _score(lb, grade)))
    stream, close = _open(target)
    n = 0
    try:
        for qid in sorted(by_query):
            ranked = sorted(by_query[qid], key=lambda pair: -pair[1])
            for rank, (doc, score) in enumerate(ranked, start=1):
                stream.write(f"{qid} Q0 {doc} {rank} {score:.4f} {tag}\n")
                n += 1
    finally:
        if close:
            stream.close()
    return n


# --- offline twin ----------------------------------------------------------------------------

# Words of the templates below: they are not what a question asks about, so grading
# leaves them out of the question's terms.
_QUESTION_TEMPLATES = {
    "en": ("What does a good answer say about {phrase}?", "{query}"),
    "zh": ("关于“{phrase}”，好的回答应给出什么信息？", "{query}"),
}
_TEMPLATE_TERMS = frozenset(
    key_terms(_QUESTION_TEMPLATES["en"][0].format(phrase=""))
    + key_terms(_QUESTION_TEMPLATES["zh"][0].format(phrase=""))
)
_SPLIT_CJK = re.compile(
    "|".join(sorted((w for w in STOPWORDS if not w.isascii()), key=len, reverse=True))
)
_RUNS = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[^\W_]+", re.UNICODE)


def _phrases(text: str) -> list[str]:
    """Content phrases of ``text``: CJK runs cut at function words, and Latin words that
    are not stopwords; each at least two characters, in order, without repeats."""
    out: list[str] = []
    for match in _RUNS.finditer(text or ""):
        run = match.group(0)
        pieces = _SPLIT_CJK.split(run) if not run.isascii() else [run.lower()]
        for piece in pieces:
            if len(piece) >= 2 and piece.lower() not in STOPWORDS and piece not in out:
                out.append(piece)
    return out


def offline_questions(query: str, intent: str | None, n: int, language: str) -> list[str]:
    """The offline twin's bank: the query itself, then one templated sub-question per key
    phrase of the query and then of the intent, up to ``n``."""
    template, whole = _QUESTION_TEMPLATES["zh" if language == "zh" else "en"]
    questions = [whole.format(query=query.strip())] if query.strip() else []
    for phrase in _phrases(query) + _phrases(intent or ""):
        question = template.format(phrase=phrase)
        if question not in questions:
            questions.append(question)
    return questions[:n]


def _question_terms(question: str) -> list[str]:
    terms = [t for t in key_terms(question) if t not in _TEMPLATE_TERMS]
    return terms or key_terms(question)


def _lexical_grade(question: str, passage: str) -> tuple[int, str]:
    """``round(5 * coverage)`` of the question's terms in the passage, and the passage
    sentence that covers most of them as the extracted answer."""
    terms = _question_terms(question)
    if not terms:
        return 0, ""
    present = set(tokenize(passage))
    covered = sum(1 for t in terms if t in present) / len(terms)
    grade = int(round(GRADE_MAX * covered + 1e-9))
    sentences = [s for s in re.split(r"(?<=[。！？.!?；;\n])", passage) if s.strip()]
    best = max(
        sentences,
        key=lambda s: sum(1 for t in terms if t in set(tokenize(s))),
        default="",
    )
    return grade, (best.strip()[:200] if grade > 0 else "")


def _offline_rubric(request: Any) -> str:
    ctx: Mapping[str, Any] = request.context
    step = ctx["step"]
    if step == "generate":
        questions = offline_questions(ctx["query"], ctx.get("intent"), ctx["n"], ctx["language"])
        return json.dumps({"questions": questions}, ensure_ascii=False)
    if step == "grade":
        entries = []
        for qid, text in ctx["questions"]:
            grade, answer = _lexical_grade(text, ctx["passage"])
            entries.append({"question": qid, "grade": grade, "answer": answer})
        if request.task == "rubric.grade_pair":
            only = entries[0]
            return json.dumps(
                {"grade": only["grade"], "answer": only["answer"]}, ensure_ascii=False
            )
        return json.dumps({"grades": entries}, ensure_ascii=False)
    # Direct baselines: query-term coverage of the passage.
    terms = key_terms(ctx["query"])
    present = set(tokenize(ctx["passage"]))
    covered = (sum(1 for t in terms if t in present) / len(terms)) if terms else 0.0
    if step == "thomas":
        overall = 2 if covered >= 0.5 else 1 if covered >= 0.2 else 0
        return json.dumps({"M": overall, "T": 1, "O": overall})
    return json.dumps({"relevant": "yes" if covered >= 0.3 else "no"})


for _task in (
    "rubric.generate",
    "rubric.grade",
    "rubric.grade_pair",
    "rubric.thomas",
    "rubric.yesno",
):
    register_offline(_task, _offline_rubric)
