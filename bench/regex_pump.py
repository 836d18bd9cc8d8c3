"""Pump every compiled pattern of genir_eval with adversarial strings; list the super-linear ones.

For each module-level ``re.Pattern`` of the package (in a tuple or list too), and each way a
pattern is applied (``finditer``, which tries every start, and ``match``, at the start
only), the text is ``prefix + unit * n + suffix`` for a few dozen units (spaces, digits,
brackets, markup, ...). A pattern is flagged when the time grows more than 8x from n = 3,000
to 12,000 and again more than 3x to 24,000 (linear time grows 4x, then 2x). A flagged
``finditer`` on a pattern the code only ``match``-es at a line start is not a hang there:
read the use before fixing. An exponential pattern never returns on the first size: run the
tool under ``timeout`` and read the last name printed.

    python bench/regex_pump.py                  # every pattern (slow: minutes each)
    python bench/regex_pump.py ingest.markers   # those of modules whose name holds this
"""

from __future__ import annotations

import importlib
import itertools
import pkgutil
import re
import sys
import time
from collections.abc import Callable

import genir_eval

UNITS = [
    " ", "\t", "\n", "1", "a", "A", "[", "]", ",", ".", "`", "#", "-", "*", "<", ">", '"', ":",
    "/", "(", ")", "{", "_", "\\", "。", "=", "|", "!", ";", "+", "[1", "1,", "1 ", " ,", "[ ",
    "<a ", ". ", "\n ", " \n", "1.", "a ", "Aa ", "a\n", "12", "1, ", "[1]", "<!--", "http://a",
    "- ", "a:", "\n\n", " \t", ",1", " 1", "a.", "...", " -", "not ", "no ",
]  # fmt: skip
PREFIXES = ["", "[", "[1", "# ", "http://a", "<", "```", "sources", "t"]
SUFFIXES = ["", "!", "x\n"]


def patterns(wanted: str = "") -> dict[str, re.Pattern[str]]:
    found: dict[str, re.Pattern[str]] = {}
    for info in pkgutil.walk_packages(genir_eval.__path__, "genir_eval."):
        if info.name.endswith("__main__") or wanted not in info.name:
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra (ray) that is not installed
            continue
        for name, value in vars(module).items():
            values = value if isinstance(value, (tuple, list)) else [value]
            for i, item in enumerate(values):
                if isinstance(item, re.Pattern) and isinstance(item.pattern, str):
                    suffix = f"[{i}]" if values is value else ""
                    found[f"{info.name}.{name}{suffix}"] = item
    return found


def _best(apply: Callable[[str], object], text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        apply(text)
        best = min(best, time.perf_counter() - started)
        if best < 0.004:
            break
    return best


def pump(pattern: re.Pattern[str]) -> list[str]:
    """The (method, prefix, unit, suffix) that make ``pattern`` super-linear, one a method."""
    methods: dict[str, Callable[[str], object]] = {
        "finditer": lambda text: list(pattern.finditer(text)),
        "match": pattern.match,
    }
    found = []
    for method, apply in methods.items():
        for prefix, unit, suffix in itertools.product(PREFIXES, UNITS, SUFFIXES):

            def text(n: int, prefix: str = prefix, unit: str = unit, suffix: str = suffix) -> str:
                return prefix + unit * (n // len(unit)) + suffix

            small = _best(apply, text(3000))
            if small < 0.002:
                continue
            large = _best(apply, text(12000))
            if large / small > 8 and large > 0.02 and _best(apply, text(24000)) / large > 3:
                found.append(f"{method}: {prefix!r} + {unit!r} * n + {suffix!r}")
                break
    return found


def main(wanted: str = "") -> None:
    for name, pattern in sorted(patterns(wanted).items()):
        found = pump(pattern)
        print(f"{'SUPER-LINEAR' if found else 'ok':12} {name}  {'; '.join(found)}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
