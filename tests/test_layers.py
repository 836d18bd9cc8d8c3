"""The import rules of docs/architecture.md's map, checked against the code: each folder imports
only the folders its row names, so the map and the package cannot drift apart. Every import
counts, at module level, inside a function or under ``TYPE_CHECKING``: an import deferred into
a function is still a dependency. And no module imports itself through others (no cycle in the
graph of module-level imports between the package's modules)."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

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
    "cli": {
        "ingest",
        "judges",
        "llm",
        "metrics",
        "meta",
        "rundir",
        "report",
        "runner",
    },
    "testing": {"llm"},
    "prompts": set(),
}


def _folder(name: str) -> str:
    return "base" if name in BASE else name


def _imports(tree: ast.Module) -> list[tuple[int, str]]:
    """Every import of a genir_eval folder in ``tree`` (line, folder), wherever it stands."""
    found = []
    for node in ast.walk(tree):
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


def test_the_check_sees_an_import_inside_a_function() -> None:
    # a kind's comparison with gold reading meta/ when called was not counted before
    tree = ast.parse(
        "def blocks():\n    from genir_eval.meta import evaluate\n    return evaluate\n"
    )
    assert _imports(tree) == [(2, "meta")]
    assert "meta" not in MAY_IMPORT["judges"]


def test_the_map_names_every_folder() -> None:
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    for folder in set(MAY_IMPORT) - {"base", "prompts"}:
        assert f"| `{folder}/` |" in text, folder


def _module_names() -> dict[str, Path]:
    return {
        ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts): path
        for path in PACKAGE.rglob("*.py")
    }


def import_graph() -> nx.DiGraph:
    """Module -> the package's modules it imports, at module level or inside a function.
    A package's ``__init__`` only gathers its modules' names for users: an import of one is
    not followed (a name imported through it comes from one of its modules)."""
    modules = _module_names()
    graph = nx.DiGraph()
    for name, path in modules.items():
        if path.name == "__init__.py":
            continue
        graph.add_node(name)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [
                    f"{node.module}.{a.name}"
                    if f"{node.module}.{a.name}" in modules
                    else node.module
                    for a in node.names
                ]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                if target in modules and modules[target].name != "__init__.py" and target != name:
                    graph.add_edge(name, target)
    return graph


def test_no_module_imports_itself_through_others() -> None:
    # metrics/measures <-> metrics/citations and the offline twins' citations -> reasons ->
    # features -> semantic -> citations were such cycles
    assert list(nx.simple_cycles(import_graph())) == []


def test_the_cycle_check_sees_a_cycle() -> None:
    graph = import_graph()
    assert graph.has_edge("genir_eval.metrics.citations", "genir_eval.metrics.measures")
    graph.add_edge("genir_eval.metrics.measures", "genir_eval.metrics.citations")
    assert list(nx.simple_cycles(graph)) != []


def _child(module: str, package: str) -> str | None:
    """The child of ``package`` (a module or a sub-package) that ``module`` lies in."""
    prefix = package + "."
    return module[len(prefix) :].split(".")[0] if module.startswith(prefix) else None


def folder_cycles(graph: nx.DiGraph) -> list[str]:
    """Inside each package, its files and sub-folders as single nodes, an edge where a module
    of one imports a module of another: each such graph must be acyclic, or a folder reaches
    back up into one that imports it (``judges/item/`` -> ``judges/offline/`` ->
    ``judges/item/`` was one, through files that were not a cycle themselves)."""
    packages = {
        ".".join(path.relative_to(PACKAGE.parent).parent.parts)
        for path in PACKAGE.rglob("__init__.py")
    }
    found = []
    for package in sorted(packages):
        rooms = nx.DiGraph()
        for a, b in graph.edges:
            ca, cb = _child(a, package), _child(b, package)
            if ca and cb and ca != cb:
                rooms.add_edge(ca, cb)
        found += [f"{package}: {' -> '.join(c)}" for c in nx.simple_cycles(rooms)]
    return found


def test_no_folder_imports_itself_through_another() -> None:
    assert folder_cycles(import_graph()) == []


def test_the_folder_check_sees_a_cycle_of_folders() -> None:
    graph = import_graph()
    # offline/item.py imports item/candidates.py; item/loop.py reading the twins' lexical
    # module when it stood in offline/ closed the loop, though no file imported itself
    assert graph.has_edge("genir_eval.judges.offline.item", "genir_eval.judges.item.candidates")
    graph.add_edge("genir_eval.judges.item.loop", "genir_eval.judges.offline.features")
    cycles = folder_cycles(graph)
    assert cycles and all(c.startswith("genir_eval.judges: ") for c in cycles)
    assert any({"item", "offline"} <= set(c.split(": ")[1].split(" -> ")) for c in cycles)


def _ancestor_hits(name: str, tree: ast.Module, modules: dict[str, Path]) -> list[tuple[int, str]]:
    """The imports in module ``name``'s ``tree`` of a package ``name`` lies in (line, what)."""
    parts = name.split(".")
    ancestors = {".".join(parts[:i]) for i in range(1, len(parts))}
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in ancestors:
            for alias in node.names:
                target = f"{node.module}.{alias.name}"
                # a module or sub-package named through its package is not the __init__
                if target not in modules and f"{target}.__init__" not in modules:
                    hits.append((node.lineno, target))
        elif isinstance(node, ast.Import):
            hits += [(node.lineno, a.name) for a in node.names if a.name in ancestors]
    return hits


def ancestor_imports() -> list[str]:
    """A module importing a package it lies in (``from genir_eval import __version__`` in
    ``runner/run.py``, ``import genir_eval.judges`` in ``judges/base.py``, ``COMMANDS`` from
    ``cli/__init__.py`` in each command): the package's ``__init__`` gathers its modules, so
    it stands above each of them."""
    modules = _module_names()
    found = []
    for name, path in sorted(modules.items()):
        if path.name in ("__init__.py", "__main__.py"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [
            f"{path.relative_to(PACKAGE.parent).as_posix()}:{line} {target}"
            for line, target in _ancestor_hits(name, tree, modules)
        ]
    return found


def test_no_module_imports_a_package_it_lies_in() -> None:
    assert ancestor_imports() == []


def test_the_ancestor_check_sees_one() -> None:
    modules = _module_names()
    tree = ast.parse(
        "from genir_eval import __version__\n"
        "from genir_eval.judges import base, registry\n"
        "from genir_eval.judges import make_judge\n"
        "def later():\n    import genir_eval.judges\n"
    )
    assert _ancestor_hits("genir_eval.judges.spans", tree, modules) == [
        (1, "genir_eval.__version__"),
        (3, "genir_eval.judges.make_judge"),
        (5, "genir_eval.judges"),
    ]
    # from outside the package, the same imports are no one's ancestor
    assert _ancestor_hits("genir_eval.runner.run", tree, modules) == [(1, "genir_eval.__version__")]
