"""Every place in the package that creates, replaces or writes a file, listed: each goes
through genir_eval/paths.py (``output_file``, ``write_output``, ``append_output``,
``check_output_path``, ``database_refusal``), which writes only regular files the command
created and refuses a device, a FIFO, a socket, a link or a path outside the output folder
(issue 46, point 1). A new writer fails :func:`test_every_writer_is_listed` until it is added
to :data:`WRITERS` with the reason it is safe, so no writer can bypass the rule unseen."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "genir_eval"

#: (module, enclosing function, call) -> why the write is safe. Found by walking every
#: module's calls (see _writes), checked against the code by the test below.
WRITERS: dict[tuple[str, str, str], str] = {
    ("paths.py", "_output_file", "os.open"): "the one writer: O_CREAT|O_EXCL|O_NOFOLLOW temp",
    ("paths.py", "_output_file", "open"): "the handle on that fresh temporary file",
    ("paths.py", "_output_file", "os.replace"): "renamed after check_output_path",
    ("paths.py", "append_output", "os.open"): "O_APPEND|O_NOFOLLOW, fstat says regular",
    ("paths.py", "append_output", "open"): "the handle on that checked descriptor",
    ("rundir/files.py", "_replace", "os.replace"): "a table's part file, after check_output_path",
    ("rundir/writer.py", "_Part.__init__", "os.open"): "a fresh part file: O_CREAT|O_EXCL",
    ("rundir/writer.py", "_Part.__init__", "open"): "the handle on that part file",
    ("cli/__init__.py", "_GuardedStream._close", "os.open"): "os.devnull, read-only use of it",
    ("llm/store/_sqlite.py", "connect", "sqlite3.connect"): "after database_refusal",
    ("runner/arena_answers.py", "AnswerStore.__init__", "sqlite3.connect"): (
        "a fresh .part file of a random name in the arena's claimed folder"
    ),
    ("runner/web/session.py", "_journal", "sqlite3.connect"): (
        "a reader: the run's journal opened read-only (mode=ro), a regular file (is_file)"
    ),
    ("runner/label/store.py", "LabelStore._connect", "sqlite3.connect"): (
        "the label store: a database opened, not an output written (issue 46 point 3's)"
    ),
}

_MODE_WRITES = set("wax+")
_ALWAYS = {
    "os.replace",
    "os.rename",
    "os.open",
    "os.fdopen",
    "os.mkfifo",
    "os.link",
    "os.symlink",
    "shutil.copy",
    "shutil.copy2",
    "shutil.copyfile",
    "shutil.move",
    "shutil.copytree",
    "tempfile.mkstemp",
    "sqlite3.connect",
}


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return "?"


def _mode(call: ast.Call, position: int) -> str | None:
    if len(call.args) > position and isinstance(call.args[position], ast.Constant):
        value = call.args[position].value  # type: ignore[attr-defined]
        return value if isinstance(value, str) else None
    for keyword in call.keywords:
        if keyword.arg == "mode" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    return None


def _is_write(call: ast.Call) -> str | None:
    """The call's name when it creates, replaces or writes a file."""
    name = _name(call.func)
    if name in _ALWAYS:
        return name
    if name == "open" and set(_mode(call, 1) or "r") & _MODE_WRITES:
        return "open"
    if name == "open" and _mode(call, 1) is None and call.args:
        first = call.args[0]
        if isinstance(first, ast.Name) and first.id == "fd":
            return "open"  # a descriptor opened for writing above
    attribute = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    if attribute in ("write_text", "write_bytes", "touch", "symlink_to", "hardlink_to"):
        return f".{attribute}"
    if attribute == "open" and set(_mode(call, 0) or "r") & _MODE_WRITES:
        return ".open"
    if attribute in ("replace", "rename") and len(call.args) == 1 and not call.keywords:
        # Path.replace(target) / Path.rename(target); str.replace takes two arguments
        return f".{attribute}"
    return None


def _writes(tree: ast.Module) -> Iterator[tuple[str, str]]:
    """(enclosing function's qualified name, call) of every write in a module."""

    def walk(node: ast.AST, scope: list[str]) -> Iterator[tuple[str, str]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield from walk(child, [*scope, child.name])
                continue
            if isinstance(child, ast.Call):
                found = _is_write(child)
                if found:
                    yield ".".join(scope) or "<module>", found
            yield from walk(child, scope)

    yield from walk(tree, [])


def package_writers() -> set[tuple[str, str, str]]:
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found |= {(module, scope, call) for scope, call in _writes(tree)}
    return found


def test_every_writer_is_listed() -> None:
    found = package_writers()
    unlisted = sorted(found - set(WRITERS))
    assert not unlisted, (
        "a write that does not go through genir_eval/paths.py's output_file / write_output: "
        f"{unlisted}; write through them, or list it in WRITERS with why it is safe"
    )
    gone = sorted(set(WRITERS) - found)
    assert not gone, f"listed writers no longer in the code (remove them from WRITERS): {gone}"


def test_the_scan_sees_each_kind_of_write() -> None:
    source = (
        "def f(p, q):\n"
        "    open(p, 'w')\n"
        "    p.open('ab')\n"
        "    p.write_text('x')\n"
        "    p.write_bytes(b'x')\n"
        "    p.replace(q)\n"
        "    os.replace(p, q)\n"
        "    shutil.copy(p, q)\n"
        "    tempfile.mkstemp()\n"
        "    open(p)\n"
        "    'a'.replace('a', 'b')\n"
        "    dataclasses.replace(p, x=1)\n"
    )
    calls = [call for _, call in _writes(ast.parse(source))]
    assert calls == [
        "open",
        ".open",
        ".write_text",
        ".write_bytes",
        ".replace",
        "os.replace",
        "shutil.copy",
        "tempfile.mkstemp",
    ]
