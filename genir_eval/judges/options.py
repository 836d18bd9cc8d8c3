"""A judge's options, declared once on its class: ``OPTIONS``, a table of :class:`Option`
(name, type, default, bound or choices, help).

Everything else reads that table: the judge's own check of what it is given
(:func:`check_judge_options`, unknown names and values of the wrong type or out of bound
refused with the judge and option named), the values a judge reads (:func:`option_values`,
the defaults under what was given), ``genir-eval judges`` (the catalog), a scenario's
``options = {...}`` (checked by building the judge) and ``--option KEY=VALUE``
(:func:`parse_judge_option`, the text read as the option's type). ir_measures'
``SUPPORTED_PARAMS`` is the model: the parameters are declared where they are used.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from genir_eval.errors import ConfigError, did_you_mean
from genir_eval.settings import Setting

__all__ = [
    "Option",
    "TYPES",
    "options_of",
    "check_judge_options",
    "option_values",
    "parse_judge_option",
    "parse_judge_options",
    "MODEL",
    "TEMPERATURE",
    "MAX_TOKENS",
    "LANGUAGE",
    "TEMPLATE",
    "LOGPROBS",
    "TOP_LOGPROBS",
    "SAMPLES",
    "RESPONSE_FORMAT",
    "CONTEXT_TOKENS",
]

#: An option's type: ``bool`` (true or false, nothing else: ``"no"`` is not false), ``int``
#: (a whole number; 3.0 is taken as 3), ``float``, ``text``, or ``texts`` (comma-separated
#: text or a list of texts).
TYPES = ("bool", "int", "float", "text", "texts")


@dataclass(frozen=True)
class Option:
    """One option of a judge: its default, its type (read from the default when not given),
    its bound (``range``, inclusive) or ``choices``, and what it does. ``only`` names the
    judges of a class registered under several names that read it (``k`` is ``item-ar``'s);
    the others take it and leave it unused, and the catalog lists it for those named only."""

    name: str
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    range: tuple[float, float] | None = None
    type: str | None = None
    only: tuple[str, ...] | None = None
    #: the value names files (comma-separated): a scenario resolves each against its folder
    path: bool = False

    def __post_init__(self) -> None:
        if self.value_type not in TYPES:
            raise TypeError(f"option {self.name!r}: give its type, one of {TYPES}")

    @property
    def value_type(self) -> str:
        if self.type is not None:
            return self.type
        if self.choices is not None:
            kinds = {type(c) for c in self.choices}
            return "bool" if kinds == {bool} else "text"
        return {bool: "bool", int: "int", float: "float", str: "text"}.get(
            type(self.default), "unknown"
        )

    def applies_to(self, judge: str) -> bool:
        return self.only is None or judge in self.only

    def check(self, judge: str, value: Any) -> None:
        """Refuse ``value`` unless it has this option's type and lies in its bound; ``None``
        is taken where the default is ``None`` (the option left unset)."""
        if value is None and self.default is None:
            return
        problem = self._problem(value)
        if problem:
            raise ConfigError(f"{judge}: option {self.name!r}: {problem}")

    def _problem(self, value: Any) -> str | None:
        kind = self.value_type
        if kind in ("int", "float"):
            low, high = self.range or (-float("inf"), float("inf"))
            try:
                Setting(self.name, kind == "int", low, high).check(value)
            except ValueError as error:
                return str(error)
        elif kind == "bool" and not isinstance(value, bool):
            return f"expected true or false, got {value!r}"
        elif kind == "text" and not isinstance(value, str):
            return f"expected text, got {value!r}"
        elif kind == "texts" and not (
            isinstance(value, str)
            or (isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value))
        ):
            return f"expected text or a list of texts, got {value!r}"
        if self.choices is not None and value not in self.choices:
            shown = ", ".join(
                json.dumps(c) if isinstance(c, bool) else str(c) for c in self.choices
            )
            return f"expected one of {shown}, got {value!r}"
        return None

    def parse(self, text: str) -> Any:
        """A command-line value (``--option KEY=VALUE``) read as this option's type: text as
        it is, a number or switch as JSON (``3``, ``0.5``, ``true``), then checked."""
        if self.value_type in ("text", "texts"):
            return text
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text
        except RecursionError:
            raise ConfigError(
                f"--option {self.name}: the JSON value is nested too deeply"
            ) from None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "default": self.default, "help": self.help}
        out["type"] = self.value_type
        if self.choices is not None:
            out["choices"] = list(self.choices)
        if self.range is not None:
            out["range"] = list(self.range)
        return out


def options_of(judge: Any) -> tuple[Option, ...]:
    """The options ``judge`` (an instance or class) reads: its class's ``OPTIONS`` table,
    without those declared for its siblings only (``only``); none when it declares none."""
    table: tuple[Option, ...] = getattr(judge, "OPTIONS", ())
    name = str(getattr(judge, "name", ""))
    return tuple(o for o in table if o.applies_to(name))


def check_judge_options(judge: str, table: tuple[Option, ...], options: Mapping[str, Any]) -> None:
    """Refuse an option ``judge`` does not declare (naming the closest one it does: a typo such
    as ``judgez`` must not be ignored, the run would measure something else) or a value of the
    wrong type or out of bound, with :class:`ConfigError` naming judge and option."""
    declared = {o.name: o for o in table}
    allowed = sorted(declared)
    for name, value in options.items():
        if name not in declared:
            suggestion = did_you_mean(str(name), allowed)
            raise ConfigError(
                f"{judge}: unknown option {name!r}{suggestion}; it takes: {', '.join(allowed)}"
            )
        declared[name].check(judge, value)


def option_values(table: tuple[Option, ...], options: Mapping[str, Any]) -> dict[str, Any]:
    """Every option's value: its default, under what was given."""
    return {**{o.name: o.default for o in table}, **options}


def parse_judge_option(judge: Any, text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` for ``judge`` (an instance or class with ``OPTIONS``), the value read as
    the option's declared type (:meth:`Option.parse`); a key the judge does not declare is
    read as JSON or text and left for the judge to refuse, naming the options it takes."""
    if "=" not in text:
        raise ConfigError(f"--option: expected KEY=VALUE, got {text!r}")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key:
        raise ConfigError(f"--option: expected KEY=VALUE, got {text!r}")
    declared = {o.name: o for o in getattr(judge, "OPTIONS", ())}
    if key in declared:
        return key, declared[key].parse(raw)
    try:
        return key, json.loads(raw)
    except json.JSONDecodeError:
        return key, raw
    except RecursionError:
        raise ConfigError(f"--option {key}: the JSON value is nested too deeply") from None


def parse_judge_options(judge: Any, texts: list[str]) -> dict[str, Any]:
    """Every ``--option KEY=VALUE`` of a command line for ``judge`` (:func:`parse_judge_option`),
    a key given twice refused (which value was meant cannot be told)."""
    options: dict[str, Any] = {}
    for text in texts:
        key, value = parse_judge_option(judge, text)
        if key in options:
            raise ConfigError(
                f"--option: {key!r} is given twice ({options[key]!r} and {value!r}); give it once"
            )
        options[key] = value
    return options


# The options most judges share, each declared once here and named in the tables of the
# judges that read it.

MODEL = Option("model", None, "model for this judge (default: the provider's default)", type="text")
TEMPERATURE = Option("temperature", 0.0, "sampling temperature", range=(0, 2))
MAX_TOKENS = Option(
    "max_tokens",
    None,
    "reply token budget (default: the judge's own)",
    type="int",
    range=(1, 1_000_000),
)
LANGUAGE = Option(
    "language",
    None,
    "prompt language, en or zh (default: the session's)",
    choices=("en", "zh"),
)
TEMPLATE = Option(
    "template", None, "a prompt file of your own replacing the built-in template", type="text"
)
LOGPROBS = Option(
    "logprobs",
    True,
    "ask for token log-probabilities and report the expected label (probability-weighted) "
    "and its entropy beside the label",
)
#: Alternatives asked per token: enough to hold every label of a 0-3 or 1-10 scale that
#: carries probability (OpenAI allows up to 20).
TOP_LOGPROBS = Option(
    "top_logprobs", 10, "alternatives asked per token for the expected label", range=(0, 20)
)
SAMPLES = Option(
    "samples",
    1,
    "without logprobs: k replies (the greedy one and k-1 at temperature 0.7), expected label = "
    "their mean",
    range=(1, 100),
)
RESPONSE_FORMAT = Option(
    "response_format",
    "json_object",
    "json_object, or json_schema: send the reply's schema for servers that enforce it",
    choices=("json_object", "json_schema"),
)
CONTEXT_TOKENS = Option(
    "context_tokens",
    8192,
    "the model's context window: long sessions' responses are cut to fit it",
    range=(256, 100_000_000),
)
