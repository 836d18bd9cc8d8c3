"""Reading a measure back from its printed name: ``parse_measure("sDCG-URGE(br=1.35,
bq=1.05)")``, over the statement-usefulness measures (:mod:`.measures`) and the citation
measures (:mod:`.citations`) and the nugget measures (:mod:`.nuggets`). Apart from them so
none imports another back."""

from __future__ import annotations

import re
from dataclasses import fields

from genir_eval.errors import ConfigError, did_you_mean
from genir_eval.metrics.citations import CITATION_MEASURES
from genir_eval.metrics.measures import _FIELD, MEASURES, Measure
from genir_eval.metrics.nuggets import NUGGET_MEASURES

__all__ = ["parse_measure"]


def _registry() -> dict[str, type[Measure]]:
    """Every measure class by printed and by short name: the statement-usefulness measures
    above, the citation measures (:mod:`genir_eval.metrics.citations`) and the nugget
    measures (:mod:`genir_eval.metrics.nuggets`)."""
    every = {**MEASURES, **CITATION_MEASURES, **NUGGET_MEASURES}
    return {**{cls.NAME: cls for cls in every.values()}, **every}


_SYNTAX = re.compile(r"^\s*([A-Za-z][\w-]*)\s*(?:\((.*)\)\s*)?$")


def parse_measure(text: str) -> Measure:
    """The measure printed as ``text`` (``str(parse_measure(s))`` is canonical).

    Accepts the printed name or the short name, with or without parameters
    (``sDCG-URGE(br=1.35, bq=1.05)``, ``sdcg_urge``, ``sdcg_urge(bq=1.1)``); parameters left
    out take their defaults. Raises :class:`ConfigError` on anything else.
    """
    match = _SYNTAX.match(text)
    if match is None:
        raise ConfigError(f"cannot parse measure {text!r}")
    name, inner = match.group(1), match.group(2)
    registry = _registry()
    cls = registry.get(name)
    if cls is None:
        # listed by the names scenarios use (sdcg_urge), matched against both spellings
        short = sorted({**MEASURES, **CITATION_MEASURES, **NUGGET_MEASURES})
        hint = did_you_mean(name, short) or did_you_mean(name, registry)
        raise ConfigError(f"unknown measure {name!r}{hint}; known: {', '.join(short)}")
    allowed = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    kwargs: dict[str, float] = {}
    if inner is not None and inner.strip():
        for item in inner.split(","):
            key, sep, value = item.partition("=")
            key = _FIELD.get(key.strip(), key.strip())
            if not sep or key not in allowed:
                raise ConfigError(f"{cls.NAME}: unknown parameter {item.strip()!r} in {text!r}")
            if key in kwargs:
                raise ConfigError(f"{cls.NAME}: parameter {key!r} given twice in {text!r}")
            try:
                kwargs[key] = float(value)
            except ValueError:
                raise ConfigError(
                    f"{cls.NAME}: parameter {key!r} is not a number in {text!r}"
                ) from None
    return cls(**kwargs)
