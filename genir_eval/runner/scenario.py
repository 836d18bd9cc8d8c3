"""Scenario files: what one evaluation run reads, asks, computes and writes.

A scenario is a TOML file (``scenarios/*.toml``). Paths inside it are relative to the file.
Every key is checked before anything runs: an unknown key (a typo) or a value of the wrong
kind raises :class:`~genir_eval.errors.ConfigError` naming the key and what was expected.

.. code-block:: toml

    version = 1                       # scenario format version (optional, 1)
    name = "demo-offline"             # optional, the file's stem by default
    description = "..."

    [input]
    path = "../fixtures/demo_sessions.csv"
    format = "urge"                   # urge | jsonl | markdown; detected when left out
    skip_invalid = false              # leave out (and report) sessions that fail to parse
    limit = 100                       # only the first N sessions (optional)
    sources = "sources.jsonl"         # source texts keyed by url (url, text; JSONL or CSV)
    preferences = "preferences.jsonl" # people's choices between two sessions (README):
                                      # every score's pair agreement with them in meta.json

    [llm]                             # defaults for every judge (optional)
    provider = "offline"              # offline | openai | anthropic | auto
    model = "gpt-4o-mini"             # the provider's default when left out
    base_url = "http://..."           # an OpenAI-compatible or Anthropic endpoint

    [engine]                          # the keys mirror the command line's engine options
    concurrency = 16                  # requests in flight (per provider/model)
    rpm = 600                         # requests per minute (optional)
    tpm = 200000                      # tokens per minute (optional)
    max_attempts = 6                  # attempts per call
    timeout = 60.0                    # seconds per attempt
    deadline = 300.0                  # seconds per judgment, retries included
    cache = "../.genir-cache/cache.sqlite"   # or false: no cache
    cache_mode = "read-write"         # read-write | replay | off
    journal = true                    # resume journal in the output directory (false: none;
                                      # a path: that file)
    prices = "prices.json"            # a price table overriding the packaged one (optional)
    max_missing = 0.05                # the run fails (exit 3) when a judge misses more labels
    allow_permanent = false           # true: permanent provider errors alone do not fail it
    stop_after = 5                    # consecutive 401/403/quota/404 errors before stopping
    give_up_after = 45.0              # seconds with no reply at all before giving up
    executor = "local"                # local | ray: shard the sessions over a Ray cluster
    ray_address = "auto"              # the Ray cluster (executor = "ray"; default: a new
                                      # local one, or this process's ray.init)
    ray_workers = 4                   # shards (default: the cluster's CPUs)

    [[judges]]                        # one table a judge, at most MAX_JUDGES (100)
    name = "link_usefulness.dna"      # a registered judge (genir-eval judges list)
    id = "dna"                        # column name in the outputs (optional, = name)
    provider = "openai"               # overrides [llm]; offline when neither says
    model = "gpt-4o-mini"
    base_url = "..."
    options = { language = "en" }    # passed to make_judge (prompt design switches)

    [aggregate]
    link_judges = ["dna"]             # judge ids whose link labels feed the link metrics
    measures = ["sdcg_urge", "srbp_urge", "decreasing"]   # parse_measure syntax; citation
                                      # measures ("citation_precision(partial=0.5)") score
                                      # the citation judges' labels
    session = "decreasing"            # query -> session aggregation of per-turn scores
    gold = true                       # also compute the measures from gold link labels
    [[aggregate.combine]]             # z-score combinations (mean of two z-scores)
    name = "sdcg+urs"
    scores = ["sdcg_urge", "satisfaction.urs"]

    [meta]
    enabled = true                    # run the meta-evaluation when gold labels exist
    headline = "sdcg_urge"            # the score the report leads with (default: the
                                      # judge with evidence of tracking people,
                                      # genir_eval/meta/headline.py)
    n_boot = 1000                     # bootstrap resamples for the 95% intervals
    seed = 0

    [output]
    dir = "../runs/demo-offline"
    csv = true                        # also write the tables as CSV
    report = true                     # write report.html
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genir_eval.errors import ConfigError, InputError, did_you_mean
from genir_eval.llm.config import DEFAULT_CACHE_PATH, EngineConfig, engine_fields
from genir_eval.llm.providers.factory import PROVIDER_NAMES
from genir_eval.paths import plain_name, real_path, why_missing
from genir_eval.runner.scenario_table import _show, _Table

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

__all__ = [
    "SCENARIO_VERSION",
    "MAX_JUDGES",
    "SECTIONS",
    "PROVIDER_ENV",
    "InputSpec",
    "LlmSpec",
    "EngineSpec",
    "JudgeSpec",
    "CombineSpec",
    "AggregateSpec",
    "MetaSpec",
    "OutputSpec",
    "Scenario",
    "load_scenario",
    "parse_scenario",
    "check_credentials",
    "score_names",
    "measure_groups",
    "nugget_measures",
]

#: The top-level keys a scenario file may have; any other is refused.
SECTIONS = (
    "version",
    "name",
    "description",
    "input",
    "llm",
    "engine",
    "judges",
    "aggregate",
    "meta",
    "output",
)

SCENARIO_VERSION = 1
PROVIDERS = PROVIDER_NAMES
#: The environment variable each provider's API key is read from.
PROVIDER_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


@dataclass(frozen=True)
class InputSpec:
    path: Path
    format: str | None = None
    skip_invalid: bool = False
    limit: int | None = None
    sources: Path | None = None
    preferences: Path | None = None


@dataclass(frozen=True)
class LlmSpec:
    """Where a judge's calls go: provider, model (``None``: the provider's default), URL."""

    provider: str = "offline"
    model: str | None = None
    base_url: str | None = None


#: A scenario's ``[engine]`` section: the engine's one configuration (``genir_eval.llm.config``),
#: read field by field from its declaration.
EngineSpec = EngineConfig


@dataclass(frozen=True)
class JudgeSpec:
    """One judge of the run; ``id`` names its labels and scores in the outputs."""

    name: str
    id: str
    llm: LlmSpec
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CombineSpec:
    name: str
    scores: tuple[str, str]


@dataclass(frozen=True)
class AggregateSpec:
    link_judges: tuple[str, ...] | None = None
    measures: tuple[str, ...] = ("sdcg_urge", "srbp_urge", "rsdcg_urge", "rsrbp_urge")
    session: str = "decreasing"
    gold: bool = True
    combine: tuple[CombineSpec, ...] = ()


@dataclass(frozen=True)
class MetaSpec:
    enabled: bool = True
    headline: str | None = None
    n_boot: int = 1000
    seed: int = 0


@dataclass(frozen=True)
class OutputSpec:
    dir: Path
    csv: bool = True
    report: bool = True


@dataclass(frozen=True)
class Scenario:
    """A parsed, validated scenario. ``document`` is the TOML as read (kept in run.json)."""

    name: str
    path: Path | None
    input: InputSpec
    engine: EngineSpec
    judges: tuple[JudgeSpec, ...]
    aggregate: AggregateSpec
    meta: MetaSpec
    output: OutputSpec
    description: str = ""
    document: Mapping[str, Any] = field(default_factory=dict)

    def judge(self, judge_id: str) -> JudgeSpec:
        for spec in self.judges:
            if spec.id == judge_id:
                return spec
        raise KeyError(judge_id)


# --- the sections (each value read through scenario_table._Table) -------------------------


def _resolve(base: Path, value: str, key: str) -> Path:
    """``value`` (the path at ``key``) made absolute against the scenario's folder."""
    if "\x00" in value:
        raise ConfigError(f"{key}: a file path cannot hold a NUL character, got {_show(value)}")
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else real_path(base / path)


def _input(t: _Table, base: Path) -> InputSpec:
    if not t.has("path"):
        raise ConfigError(
            f"{t.key('path')}: required (the sessions file, relative to the scenario)"
        )
    spec = InputSpec(
        path=_resolve(base, t.string("path"), t.key("path")),
        format=t.string("format", None, choices=_formats()),
        skip_invalid=t.boolean("skip_invalid", False),
        limit=t.setting("limit", None),
        sources=None
        if not t.has("sources")
        else _resolve(base, t.string("sources"), t.key("sources")),
        preferences=None
        if not t.has("preferences")
        else _resolve(base, t.string("preferences"), t.key("preferences")),
    )
    t.finish()
    for key in ("sources", "preferences"):
        path = getattr(spec, key)
        if path is not None and not path.is_file():
            raise ConfigError(f"{t.key(key)}: {why_missing(path)}: {path}")
    return spec


def _formats() -> tuple[str, ...]:
    from genir_eval.ingest import FORMATS

    return tuple(FORMATS)


def _llm(t: _Table, default: LlmSpec) -> LlmSpec:
    return LlmSpec(
        provider=t.string("provider", default.provider, choices=PROVIDERS),
        model=t.string("model", default.model),
        base_url=t.url("base_url", default.base_url),
    )


def _engine(t: _Table, base: Path) -> EngineConfig:
    """The ``[engine]`` section, each key read as its field of :class:`EngineConfig`
    declares (a key left out keeps the declared default; the cache's default place is
    ``../.genir-cache/cache.sqlite`` beside the scenario's folder)."""
    values: dict[str, Any] = {}
    for f in engine_fields():
        if f.metadata["kind"] == "cache" and not t.has(f.name):
            t.get(f.name)
            values[f.name] = _resolve(base, f"../{DEFAULT_CACHE_PATH}", t.key(f.name))
        elif t.has(f.name):
            values[f.name] = _engine_value(t, base, f.name, f.metadata)
        else:
            t.get(f.name)
    spec = EngineConfig(**values)
    t.finish()
    return spec


def _engine_value(t: _Table, base: Path, name: str, meta: Mapping[str, Any]) -> Any:
    kind = meta["kind"]
    if kind == "setting":
        return t.setting(name, None)
    if kind == "choice":
        return t.string(name, None, choices=meta["choices"])
    if kind == "switch":
        return t.boolean(name, False)
    if kind == "text":
        return t.string(name, None)
    if kind == "path":
        return _resolve(base, t.string(name), t.key(name))
    value = t.get(name)
    if value is False:
        return None if kind == "cache" else False
    if kind == "journal" and value is True:
        return True
    if isinstance(value, str) and value.strip():
        return _resolve(base, value, t.key(name))
    expected = "a file path or false" if kind == "cache" else "true, false or a file path"
    raise ConfigError(f"{t.key(name)}: expected {expected}, got {_show(value)}")


def _option_paths(name: str, options: dict[str, Any], base: Path, key: str) -> dict[str, Any]:
    """A judge's options that name files (declared ``path`` in its option table) resolved
    against the scenario's folder, as ``input.path`` is; a comma-separated list, each."""
    from genir_eval.judges.base import REGISTRY

    for option in getattr(REGISTRY.get(name), "OPTIONS", ()):
        value = options.get(option.name)
        if option.path and isinstance(value, str) and value.strip():
            options[option.name] = ",".join(
                str(_resolve(base, part.strip(), f"{key}.{option.name}"))
                for part in value.split(",")
                if part.strip()
            )
    return options


def _template(value: Any, base: Path, key: str) -> str:
    """A judge's ``template=``: a packaged template's name, or a file path resolved against
    the scenario's folder (and read now, so a missing or unreadable file fails before any
    call, named with where it was looked for)."""
    from genir_eval.judges.prompting import load_template

    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{key}: expected a template name or a file path, got {_show(value)}")
    if value.endswith(".txt") or "/" in value or os.sep in value:
        path = _resolve(base, value, key)
        if not path.is_file():
            raise ConfigError(
                f"{key}: no template file {str(path)!r} ({value!r} relative to the scenario's "
                f"folder {str(base)!r}: {why_missing(path)})"
            )
        try:
            path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(f"{key}: cannot read template file {str(path)!r}: {error}") from None
        return str(path)
    try:
        load_template(value, "en")
    except ConfigError as error:
        raise ConfigError(f"{key}: {error}") from None
    return value


#: How many judges one scenario may run: the report's agreement between judges takes every
#: two of them, so 2,000 judges would be two million comparisons.
MAX_JUDGES = 100


def _judges(value: Any, default: LlmSpec, base: Path) -> tuple[JudgeSpec, ...]:
    if value is None:
        raise ConfigError("judges: required: at least one [[judges]] table")
    if not isinstance(value, list) or not value:
        raise ConfigError(
            f"judges: expected a non-empty list of [[judges]] tables, got {_show(value)}"
        )
    if len(value) > MAX_JUDGES:
        raise ConfigError(
            f"judges: {len(value)} [[judges]] tables; a scenario holds at most {MAX_JUDGES} "
            "(the report compares every two judges: the work grows with the square of their "
            "number)"
        )
    specs: list[JudgeSpec] = []
    ids: set[str] = set()
    for i, item in enumerate(value):
        t = _Table(item, f"judges[{i}]")
        if not t.has("name"):
            raise ConfigError(f"{t.key('name')}: required (a registered judge name)")
        name = t.string("name")
        judge_id = t.string("id", name)
        if not judge_id.isprintable():
            # the id names columns, files and lines of every output
            raise ConfigError(
                f"{t.key('id')}: {judge_id!r} is not a usable judge id (printable characters)"
            )
        options = t.get("options")
        if options is None:
            options = {}
        if not isinstance(options, Mapping):
            raise ConfigError(f"{t.key('options')}: expected a table, got {_show(options)}")
        options = _option_paths(name, dict(options), base, t.key("options"))
        if "template" in options:
            options["template"] = _template(
                options["template"], base, f"{t.key('options')}.template"
            )
        specs.append(JudgeSpec(name=name, id=judge_id, llm=_llm(t, default), options=options))
        t.finish()
        if judge_id in ids:
            raise ConfigError(
                f"{t.key('id')}: {judge_id!r} is used by another judge; give each an id"
            )
        ids.add(judge_id)
    return tuple(specs)


def _aggregate(t: _Table, judges: Sequence[JudgeSpec]) -> AggregateSpec:
    link_judges = t.strings("link_judges", None)
    known = [j.id for j in judges]
    for judge_id in link_judges or ():
        if judge_id not in known:
            raise ConfigError(
                f"{t.key('link_judges')}: {judge_id!r} is not a judge of this scenario"
                f"{did_you_mean(judge_id, known)}; expected one of: {', '.join(known)}"
            )
    combine = []
    raw_combine = t.get("combine") or []
    if not isinstance(raw_combine, list):
        raise ConfigError(f"{t.key('combine')}: expected a list of [[aggregate.combine]] tables")
    for i, item in enumerate(raw_combine):
        c = _Table(item, f"{t.key('combine')}[{i}]")
        scores = c.strings("scores", None)
        if scores is None or len(scores) != 2:
            raise ConfigError(f"{c.key('scores')}: expected a list of two score names")
        name = c.string("name", f"z({scores[0]}+{scores[1]})")
        combine.append(CombineSpec(name=name, scores=(scores[0], scores[1])))
        c.finish()
    spec = AggregateSpec(
        link_judges=link_judges,
        measures=t.strings("measures", AggregateSpec.measures),
        session=t.string("session", "decreasing"),
        gold=t.boolean("gold", True),
        combine=tuple(combine),
    )
    t.finish()
    _check_measures(t, spec)
    return spec


def _check_measures(t: _Table, spec: AggregateSpec) -> None:
    from genir_eval.metrics import AGGREGATIONS, parse_measure

    for text in spec.measures:
        try:
            parse_measure(text)
        except ConfigError as error:
            raise ConfigError(f"{t.key('measures')}: {error}") from None
    if spec.session not in AGGREGATIONS:
        raise ConfigError(
            f"{t.key('session')}: expected one of {', '.join(AGGREGATIONS)}, got {spec.session!r}"
        )


def _meta(t: _Table) -> MetaSpec:
    spec = MetaSpec(
        enabled=t.boolean("enabled", True),
        headline=t.string("headline", None),
        n_boot=t.setting("n_boot", 1000),
        seed=t.setting("seed", 0),
    )
    t.finish()
    return spec


def _output(t: _Table, base: Path, name: str) -> OutputSpec:
    spec = OutputSpec(
        dir=_resolve(base, t.string("dir", f"../runs/{name}"), t.key("dir")),
        csv=t.boolean("csv", True),
        report=t.boolean("report", True),
    )
    t.finish()
    return spec


def _check_judges(judges: Sequence[JudgeSpec]) -> dict[str, str]:
    """Build every judge once (no call) so unknown names and options fail now; returns
    each judge id's kind."""
    from genir_eval.judges.registry import judge_names, make_judge

    known = judge_names()
    kinds: dict[str, str] = {}
    for i, spec in enumerate(judges):
        if spec.name not in known:
            raise ConfigError(
                f"judges[{i}].name: unknown judge {spec.name!r}"
                f"{did_you_mean(spec.name, known)}; expected one of: "
                f"{', '.join(known)}"
            )
        try:
            judge = make_judge(spec.name, **spec.options)
        except (ConfigError, TypeError, ValueError) as error:
            raise ConfigError(f"judges[{i}].options: {error}") from None
        kinds[spec.id] = str(getattr(judge, "kind", ""))
    return kinds


def _check_link_judges(aggregate: AggregateSpec, kinds: Mapping[str, str]) -> None:
    from genir_eval.judges.kinds import judge_kind, judge_kinds

    link_kinds = [kind.name for kind in judge_kinds() if kind.labels_links]
    givers = [judge_id for judge_id, kind in kinds.items() if judge_kind(kind).labels_links]
    for judge_id in aggregate.link_judges or ():
        if not judge_kind(kinds.get(judge_id)).labels_links:
            raise ConfigError(
                f"aggregate.link_judges: {judge_id!r} gives no link labels (a "
                f"{kinds.get(judge_id) or 'unknown'} judge); expected a judge of kind "
                f"{', '.join(link_kinds)}: {', '.join(givers) or 'none in this scenario'}"
            )


def measure_groups(
    measures: Sequence[str], *, citation_judge: bool = False
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The scenario's measures split into those scoring statement usefulness (from link
    labels) and the citation measures (from citation support labels). With a citation judge
    and no citation measure listed, the citation measures are precision, recall and the
    unsupported-claim rate at their defaults. The nugget measures are neither
    (:func:`nugget_measures`)."""
    from genir_eval.metrics import (
        DEFAULT_CITATION_MEASURES,
        CitationMeasure,
        NuggetMeasure,
        parse_measure,
    )

    usefulness: list[str] = []
    citation: list[str] = []
    for text in measures:
        measure = parse_measure(text)
        if isinstance(measure, NuggetMeasure):
            continue  # scored from a nugget judge's labels (nugget_measures)
        (citation if isinstance(measure, CitationMeasure) else usefulness).append(text)
    if citation_judge and not citation:
        citation = list(DEFAULT_CITATION_MEASURES)
    return tuple(usefulness), tuple(citation)


def nugget_measures(measures: Sequence[str], *, nugget_judge: bool = False) -> tuple[str, ...]:
    """The scenario's nugget measures (from a nugget judge's assignments); with a nugget
    judge and none listed, TREC 2024 RAG's four scores (all and vital, with partial
    support counting half and strict)."""
    from genir_eval.metrics import DEFAULT_NUGGET_MEASURES, NuggetMeasure, parse_measure

    listed = tuple(text for text in measures if isinstance(parse_measure(text), NuggetMeasure))
    if nugget_judge and not listed:
        return DEFAULT_NUGGET_MEASURES
    return listed


def score_names(
    judges: Sequence[JudgeSpec], aggregate: AggregateSpec, kinds: Mapping[str, str]
) -> list[str]:
    """The scores a run of this scenario produces (see :mod:`genir_eval.runner.assemble`);
    a judge with several items per turn also gives ``<judge id>:<item>``."""
    from genir_eval.judges.kinds import judge_kind

    link_judges = aggregate.link_judges
    if link_judges is None:
        link_judges = tuple(j.id for j in judges if judge_kind(kinds.get(j.id)).feeds_link_measures)
    citation_judges = [j.id for j in judges if judge_kind(kinds.get(j.id)).judges_citations]
    usefulness, citation = measure_groups(aggregate.measures, citation_judge=bool(citation_judges))
    names = [
        j.id
        for j in judges
        if not (
            judge_kind(kinds.get(j.id)).feeds_link_measures
            or judge_kind(kinds.get(j.id)).judges_citations
        )
    ]
    for position, judge_id in enumerate(link_judges):
        suffix = "" if position == 0 else f"@{judge_id}"
        names.extend(f"{m}{suffix}" for m in usefulness)
    for position, judge_id in enumerate(citation_judges):
        suffix = "" if position == 0 else f"@{judge_id}"
        names.extend(f"{m}{suffix}" for m in citation)
    nugget_judges = [j.id for j in judges if judge_kind(kinds.get(j.id)).judges_nuggets]
    nuggets = nugget_measures(aggregate.measures, nugget_judge=bool(nugget_judges))
    for position, judge_id in enumerate(nugget_judges):
        suffix = "" if position == 0 else f"@{judge_id}"
        names.extend(f"{m}{suffix}" for m in nuggets)
    if aggregate.gold:
        names.extend(f"gold:{m}" for m in usefulness)
        names.extend(f"gold:{m}" for m in citation)
    names.extend(c.name for c in aggregate.combine)
    return names


def _why_not_a_score(name: str, aggregate: AggregateSpec) -> str:
    """Where the scenario leaves a known measure out: a measure name is a score only when
    ``aggregate.measures`` lists it (a typo there makes the correct name unknown here)."""
    from genir_eval.metrics import parse_measure

    measure = name.split("@", 1)[0].removeprefix("gold:")
    try:
        parse_measure(measure)
    except ConfigError:
        return ""
    if measure in aggregate.measures:
        return ""
    listed = ", ".join(aggregate.measures) or "none"
    return f": aggregate.measures does not list {measure!r} (it lists {listed})"


def _check_scores(
    judges: Sequence[JudgeSpec], aggregate: AggregateSpec, meta: MetaSpec, kinds: Mapping[str, str]
) -> None:
    known = score_names(judges, aggregate, kinds)
    base = [n for n in known if n not in {c.name for c in aggregate.combine}]

    def check(name: str, key: str, allowed: Sequence[str]) -> None:
        if name in allowed or any(name.startswith(f"{j.id}:") for j in judges):
            return
        # a measure the scenario leaves out is named as such, with no look-alike offered
        why = _why_not_a_score(name, aggregate) or did_you_mean(name, allowed)
        raise ConfigError(
            f"{key}: {name!r} is not a score of this scenario{why}; expected one of: "
            f"{', '.join(allowed)}"
        )

    for i, combo in enumerate(aggregate.combine):
        for name in combo.scores:
            check(name, f"aggregate.combine[{i}].scores", base)
    if meta.headline is not None:
        check(meta.headline, "meta.headline", known)


def _plain_name(name: str) -> str:
    """The scenario's name, which names its output folder (``runs/<name>``): one plain
    name, so that ``name = "../../escaped"`` cannot lead the run out of ``runs/``."""
    try:
        return plain_name(name, "name")
    except InputError as error:
        raise ConfigError(error.message) from None


def parse_scenario(
    document: Mapping[str, Any], *, base_dir: str | os.PathLike[str] = ".", name: str = "scenario"
) -> Scenario:
    """A validated :class:`Scenario` from a parsed TOML ``document``; relative paths are
    resolved against ``base_dir`` (the scenario file's folder)."""
    base = real_path(base_dir)
    top = _Table(document, "")
    version = top.integer("version", SCENARIO_VERSION, minimum=1)
    if version != SCENARIO_VERSION:
        raise ConfigError(f"version: expected {SCENARIO_VERSION}, got {version}")
    scenario_name = _plain_name(top.string("name", name))
    description = top.string("description", "")
    input_spec = _input(top.table("input"), base) if top.has("input") else None
    if input_spec is None:
        raise ConfigError("input: required: an [input] table with the sessions' path")
    llm_table = top.table("llm")
    default_llm = _llm(llm_table, LlmSpec())
    llm_table.finish()
    engine = _engine(top.table("engine"), base)
    judges = _judges(top.get("judges"), default_llm, base)
    aggregate = _aggregate(top.table("aggregate"), judges)
    meta = _meta(top.table("meta"))
    output = _output(top.table("output"), base, scenario_name)
    top.finish(list(SECTIONS))
    kinds = _check_judges(judges)
    _check_link_judges(aggregate, kinds)
    _check_scores(judges, aggregate, meta, kinds)
    return Scenario(
        name=scenario_name,
        path=None,
        input=input_spec,
        engine=engine,
        judges=judges,
        aggregate=aggregate,
        meta=meta,
        output=output,
        description=description,
        document=dict(document),
    )


def load_scenario(path: str | os.PathLike[str]) -> Scenario:
    """Read and validate the scenario file at ``path`` (no call is made, nothing is read
    but the file itself and the judge registry)."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"{file}: {why_missing(file, 'scenario file')}")
    try:
        text = file.read_bytes().decode("utf-8")
    except OSError as error:
        raise ConfigError(f"{file}: cannot read the scenario: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        line = file.read_bytes()[: error.start].count(b"\n") + 1
        raise ConfigError(
            f"{file}: line {line}: not UTF-8 text (byte 0x{error.object[error.start]:02x}); "
            "save the scenario as UTF-8"
        ) from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{file}: not valid TOML: {error}") from None
    except RecursionError:  # tomllib reads nested arrays and tables recursively
        raise ConfigError(f"{file}: not valid TOML: nested too deeply to read") from None
    try:
        scenario = parse_scenario(document, base_dir=real_path(file).parent, name=file.stem)
    except ConfigError as error:
        raise ConfigError(f"{file}: {error}") from None
    return _with_path(scenario, real_path(file))


def _with_path(scenario: Scenario, path: Path) -> Scenario:
    from dataclasses import replace

    return replace(scenario, path=path)


def check_credentials(scenario: Scenario, env: Mapping[str, str] | None = None) -> None:
    """Fail before any call when a judge's provider needs an API key that is not set."""
    env = os.environ if env is None else env
    for i, spec in enumerate(scenario.judges):
        variable = PROVIDER_ENV.get(spec.llm.provider)
        if spec.llm.provider == "openai" and spec.llm.base_url:
            continue  # a local OpenAI-compatible server takes any key (see OpenAIProvider)
        if variable and not env.get(variable):
            raise ConfigError(
                f"judges[{i}] ({spec.id}) uses provider {spec.llm.provider!r}, which needs the "
                f"environment variable {variable}; it is not set. Export it, or run an offline "
                "scenario (e.g. scenarios/urge-offline.toml)"
            )
