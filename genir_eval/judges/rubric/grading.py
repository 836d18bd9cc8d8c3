"""The RUBRIC judge and its direct baselines; see :mod:`genir_eval.judges.rubric`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from genir_eval.errors import ConfigError, InputError
from genir_eval.judges.base import JudgeStats, Label, ask, register_judge
from genir_eval.judges.common import generate_config
from genir_eval.judges.item.candidates import candidates_for_turn
from genir_eval.judges.options import (
    LANGUAGE,
    MAX_TOKENS,
    MODEL,
    TEMPERATURE,
    Option,
    check_judge_options,
    option_values,
)
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
from genir_eval.judges.rubric.bank import (
    Question,
    Rubric,
    RubricFile,
    read_rubric_file,
    rubric_path,
    write_rubric_file,
)
from genir_eval.llm.providers.base import Completion, JudgmentKey, composite_item
from genir_eval.records import Session, Turn

if TYPE_CHECKING:
    from genir_eval.llm.engine import Engine
else:
    Engine = Any

__all__ = [
    "PROMPT_VERSION",
    "GRADE_MAX",
    "Passage",
    "turn_passages",
    "passage_label",
    "RubricJudge",
    "DirectJudge",
    "DIRECT_SCALES",
    "JUDGES",
]

PROMPT_VERSION = "rubric-v1"
GRADE_MAX = 5
#: The direct grading baselines' scales (``rubric-thomas``, ``rubric-yesno``).
DIRECT_SCALES = ("thomas", "yesno")


# --- passages and labels ---------------------------------------------------------------------


def _checked(rubric_file: RubricFile, session: Session, path: Path) -> RubricFile:
    """The bank read from ``path``, if it is ``session``'s and names only its turns: a bank
    copied from another session, or for a turn the session lacks, would grade against the
    wrong questions or never be used."""
    if rubric_file.session_id and rubric_file.session_id != session.session_id:
        raise InputError(
            f"the bank of session {rubric_file.session_id!r}, not of {session.session_id!r}; "
            "move it aside to generate this session's bank",
            path=str(path),
            column="session_id",
        )
    for rubric in rubric_file.rubrics:
        if rubric.turn is not None and rubric.turn > len(session.turns):
            raise InputError(
                f"a bank for turn {rubric.turn}, but session {session.session_id!r} has "
                f"{len(session.turns)} turn(s)",
                path=str(path),
                column="rubrics",
            )
    return rubric_file


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


def _grades_reason(value: int, grades: Mapping[str, int], rule: str) -> str:
    """A passage's grade in words: which questions it answers, how well."""
    answered = sorted(((g, q) for q, g in grades.items() if g > 0), reverse=True)
    how = "its best answer" if rule == "max" else "the grade enough questions reach"
    if not answered:
        return f"grade {value}/{GRADE_MAX}: it answers none of the {len(grades)} rubric questions"
    shown = ", ".join(f"{q} {g}/{GRADE_MAX}" for g, q in answered[:4])
    more = f" and {len(answered) - 4} more" if len(answered) > 4 else ""
    return (
        f"grade {value}/{GRADE_MAX} ({how}): it answers {len(answered)} of the "
        f"{len(grades)} rubric questions ({shown}{more})"
    )


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


class RubricJudge:
    """Generates (or reads) question banks, then grades every passage of every turn.

    Its options are :attr:`OPTIONS`. ``scope="session"`` makes one bank from the intent and
    all queries; ``mode="generate"`` reads the bank file if there is one, else generates and
    saves it, ``"grade"`` reads only (a turn without a bank is missing); without
    ``rubric_dir`` banks are kept in the labels only; ``grading="pair"`` makes one call per
    question and passage instead of one per passage grading all questions.
    """

    name = "rubric"
    kind = "rubric"

    OPTIONS = (
        Option("n", 10, "questions per bank", range=(1, 1_000)),
        Option(
            "kind", "questions", "bank of questions or nuggets", choices=("questions", "nuggets")
        ),
        Option("scope", "turn", "one bank per turn, or per session", choices=("turn", "session")),
        Option(
            "mode",
            "generate",
            "generate: read or make banks; grade: read only",
            choices=("generate", "grade"),
        ),
        Option(
            "rubric_dir", None, "folder of bank files (default: kept in the labels)", type="text"
        ),
        Option(
            "grading",
            "passage",
            "one call per passage, or per question and passage",
            choices=("passage", "pair"),
        ),
        Option(
            "label",
            "max",
            "a passage's label: max grade or count of answered",
            choices=("max", "count"),
        ),
        Option(
            "min_questions", 1, "answered questions needed for a relevant passage", range=(1, 1_000)
        ),
        Option("threshold", 4, "grade (0-5) counted as answered", range=(0, GRADE_MAX)),
        MODEL,
        MAX_TOKENS,
        TEMPERATURE,
        LANGUAGE,
    )

    def __init__(self, **options: Any) -> None:
        check_judge_options(self.name, self.OPTIONS, options)
        self.options: Mapping[str, Any] = dict(options)
        self.values: Mapping[str, Any] = option_values(self.OPTIONS, options)
        self.n = int(self.values["n"])
        self.rubric_kind = str(self.values["kind"])
        self.scope = str(self.values["scope"])
        self.mode = str(self.values["mode"])
        self.grading = str(self.values["grading"])
        self.label_rule = str(self.values["label"])
        self.min_questions = int(self.values["min_questions"])
        self.threshold = int(self.values["threshold"])
        self.rubric_dir = self.values["rubric_dir"]
        if self.mode == "grade" and not self.rubric_dir:
            raise ConfigError("rubric: mode 'grade' reads the banks from rubric_dir; set it")
        self.stats = JudgeStats()

    def _version(self, template: str, language: str, **shaping: Any) -> str:
        return f"{PROMPT_VERSION}:{template_version(load_template(template, language), shaping)}"

    async def __call__(self, session: Session, engine: Engine) -> list[Label]:
        language = str(self.values["language"] or session_language(session))
        config = generate_config(engine, self.values, response_format="json")
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
            return _checked(read_rubric_file(path), session, path)
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
                        "reason": _grades_reason(value, grades, self.label_rule),
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
            trace["reason"] = (
                f"the response answers {answered} of the rubric's {len(qids)} questions "
                f"(a grade of at least {self.threshold}/{GRADE_MAX} in one of its statements)"
            )
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
                        composite_item("grade", passage.id, q.id),
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
    """Grades each passage of a turn directly on its ``scale``: ``"thomas"`` (0-2,
    :class:`ThomasJudge`) or ``"yesno"`` (:class:`YesNoJudge`).

    Labels use the same items as :class:`RubricJudge` (``stmt:<i>``, ``link:<id>``) with
    ``extra["relevant"]`` at ``threshold``, so both export and evaluate alike.
    ``links_only`` grades just the cited links.
    """

    kind = "rubric"
    scale = ""
    name = ""
    OPTIONS: tuple[Option, ...] = ()

    def __init__(self, **options: Any) -> None:
        check_judge_options(self.name, self.OPTIONS, options)
        self.options: Mapping[str, Any] = dict(options)
        self.values: Mapping[str, Any] = option_values(self.OPTIONS, options)
        self.threshold = int(self.values["threshold"])
        self.links_only = bool(self.values["links_only"])
        self.stats = JudgeStats()

    async def __call__(self, session: Session, engine: Engine) -> list[Label]:
        language = str(self.values["language"] or session_language(session))
        config = generate_config(engine, self.values, response_format="json")
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


_LINKS_ONLY = Option("links_only", True, "grade only the passages of cited links")


class ThomasJudge(DirectJudge):
    """Direct 0-2 grading with Thomas et al.'s prompt (a baseline for ``rubric``)."""

    scale = "thomas"
    name = "rubric-thomas"
    OPTIONS = (
        _LINKS_ONLY,
        Option("threshold", 1, "grade (0-2) counted as relevant", range=(0, 2)),
        MODEL,
        MAX_TOKENS,
        TEMPERATURE,
        LANGUAGE,
    )


class YesNoJudge(DirectJudge):
    """Direct yes/no relevance grading (a baseline for ``rubric``)."""

    scale = "yesno"
    name = "rubric-yesno"
    OPTIONS = (
        _LINKS_ONLY,
        # the grade is 0 (no) or 1 (yes): a threshold past 1 would count nothing as relevant
        Option("threshold", 1, "yes (1) counted as relevant", range=(0, 1)),
        MODEL,
        MAX_TOKENS,
        TEMPERATURE,
        LANGUAGE,
    )


@register_judge("rubric-thomas")
def rubric_thomas(**options: Any) -> DirectJudge:
    """Direct 0-2 grading with Thomas et al.'s prompt (a baseline for ``rubric``)."""
    return ThomasJudge(**options)


@register_judge("rubric-yesno")
def rubric_yesno(**options: Any) -> DirectJudge:
    """Direct yes/no relevance grading (a baseline for ``rubric``)."""
    return YesNoJudge(**options)


#: Every RUBRIC judge: the question bank, then the direct grading baselines.
JUDGES = (RubricJudge.name, *(f"rubric-{scale}" for scale in DIRECT_SCALES))
