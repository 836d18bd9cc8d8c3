"""``[tool.mutmut]`` mutates the decision modules against every test of them, the same list
``bench/mutation.py`` runs a module at a time."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _modules() -> dict[str, tuple[list[str], list[str]]]:
    spec = importlib.util.spec_from_file_location("bench_mutation", ROOT / "bench" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MODULES


def test_the_mutation_config_is_the_scripts_modules() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]
    modules = _modules()
    files = {f for mutated, _ in modules.values() for f in mutated}
    tests = {t for _, selection in modules.values() for t in selection}
    assert set(config["only_mutate"]) == files
    assert set(config["pytest_add_cli_args_test_selection"]) == tests
    for path in files | tests:
        assert (ROOT / path).is_file(), path
    # the gate's own tests, which the first configuration left out, are in
    assert {
        "tests/runner/test_gate_verdict.py",
        "tests/runner/test_compare_pairwise.py",
        "tests/runner/test_citation_run.py",
    } <= set(modules["compare"][1])


#: A module every stage imports for its records: only the tests of what is mutated in it count.
ONLY_WHEN_NAMED = {"genir_eval.llm.providers.base": "redact"}


def test_every_test_file_of_a_mutated_module_is_selected() -> None:
    # a test file importing a mutated module is in that module's selection
    modules = _modules()
    for name, (files, selection) in modules.items():
        dotted = [f.removesuffix(".py").replace("/", ".") for f in files]
        for test in sorted((ROOT / "tests").rglob("test_*.py")):
            text = test.read_text(encoding="utf-8")
            imports = [
                d
                for d in dotted
                if (f"from {d} import" in text or f"import {d}" in text)
                and ONLY_WHEN_NAMED.get(d, "") in text
            ]
            if imports:
                relative = str(test.relative_to(ROOT))
                assert relative in selection, (name, relative, imports)
