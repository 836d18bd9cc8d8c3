"""The import rules of docs/architecture.md's map, checked against the code: each folder imports
(at module level) only the folders its row names, so the map and the package cannot drift apart.
Imports inside a function (a kind's comparison with gold reading meta/ when it is called) and
under ``TYPE_CHECKING`` are not layering and are not counted."""

from __future__ import annotations

import ast
from pathlib import Path

import genir_eval

PACKAGE = Path(genir_eval.__file__).parent
BASE = {
    "records",
    "errors",
    "settings",
    "paths",
    "columns",
    "hashes",
    "unique_keys",
    "kind_names",
    "stale",
    "owned",
    "figures",
}
# folder -> the folders (besides itself and the base modules) it may import, as the map says
MAY_IMPORT: dict[str, set[str]] = {
    "base": set(),
    "ingest": set(),
    "llm": set(),
    "judges": {"ingest", "llm"},
    "metrics": set(),
    "meta": {"ingest", "judges", "metrics"},
    "rundir": set(),
    "report": {"ingest", "judges", "meta", "metrics", "rundir"},
    "runner": {"ingest", "judges", "llm", "metrics", "meta", "rundir", "report"},
    "label": {"ingest", "judges", "llm", "metrics", "meta", "rundir", "report", "runner"},
    "cli": {"ingest", "judges", "llm", "metrics", "meta", "rundir", "report", "runner", "label"},
    "testing": {"llm"},
    "prompts": set(),
}


def _folder(name: str) -> str:
    return "base" if name in BASE else name


def _imports(tree: ast.Module) -> list[tuple[int, str]]:
    found = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "genir_eval" and len(parts) > 1:
                found.append((node.lineno, parts[1]))
    return found


def layering_breaches() -> list[str]:
    breaches = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        top = relative.parts[0].removesuffix(".py")
        if top in {"__init__", "__main__"}:
            continue
        source = _folder(top)
        allowed = MAY_IMPORT[source] | {source, "base"}
        for line, target in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if _folder(target) not in allowed:
                breaches.append(f"{relative.as_posix()}:{line} imports {target}")
    return breaches


def test_every_folder_imports_only_what_the_map_allows() -> None:
    assert layering_breaches() == []


def test_every_folder_of_the_package_has_a_rule() -> None:
    folders = {
        _folder(p.name.removesuffix(".py"))
        for p in PACKAGE.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"
    } - {"__init__", "__main__"}
    assert folders == set(MAY_IMPORT)


def test_the_check_sees_a_breach() -> None:
    # a base module importing the runner is what the rule is there to refuse
    tree = ast.parse("from genir_eval.runner import run_scenario\nimport genir_eval.errors\n")
    assert _imports(tree) == [(1, "runner"), (2, "errors")]
    assert _folder("runner") not in MAY_IMPORT["base"] | {"base"}


def test_the_map_names_every_folder() -> None:
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    for folder in set(MAY_IMPORT) - {"base", "prompts"}:
        assert f"| `{folder}/` |" in text, folder
