"""The package's rooms: modules, lines, modules over 800 lines, imports of genir_eval at module
level and inside functions, imports against the stage map, import cycles, loops between a folder's files and
sub-folders and imports of a package a module lies in, for this tree
or another (a ``git archive`` of an older commit):

    python bench/rooms.py                 # this tree
    python bench/rooms.py /tmp/c18eb91    # another tree, read with this tree's stage map

The stage map and the import graph are tests/test_layers.py's.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]


def _layers():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("layers", ROOT / "tests" / "test_layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    tree = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    package = tree / "genir_eval"
    layers = _layers()
    layers.PACKAGE = package
    modules = layers._module_names()
    lines = {
        name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in modules.items()
    }
    top = inside = 0
    for path in modules.values():
        parsed = ast.parse(path.read_text(encoding="utf-8"))
        at_top = {id(node) for node in parsed.body}
        for node in ast.walk(parsed):
            named = (
                isinstance(node, ast.ImportFrom) and (node.module or "").startswith("genir_eval")
            ) or (
                isinstance(node, ast.Import)
                and any(a.name.startswith("genir_eval") for a in node.names)
            )
            if named:
                top, inside = (top + 1, inside) if id(node) in at_top else (top, inside + 1)
    big = sorted(((n, m) for m, n in lines.items() if n > 800), reverse=True)
    cycles = list(nx.simple_cycles(layers.import_graph()))
    print(f"modules {len(modules)}, lines {sum(lines.values())}")
    print("over 800 lines: " + ", ".join(f"{m.removeprefix('genir_eval.')} {n}" for n, m in big))
    print(f"imports of genir_eval: {top} at module level, {inside} inside functions or blocks")
    print(f"imports against the stage map: {len(layers.layering_breaches())}")
    print(f"import cycles: {len(cycles)}")
    print(
        f"loops between a folder's files and sub-folders: {len(layers.folder_cycles(layers.import_graph()))}"
    )
    print(f"imports of a package a module lies in: {len(layers.ancestor_imports())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
