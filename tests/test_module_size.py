"""No module of the package is over 800 lines: a module that grows past it answers more than
one question and is split by the question each part answers (issue 33)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "genir_eval"
MAX_LINES = 800


def modules_over(limit: int, package: Path = PACKAGE) -> dict[str, int]:
    """Each ``.py`` file under ``package`` with more than ``limit`` lines, with its count."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            found[path.relative_to(package).as_posix()] = lines
    return found


def test_no_module_is_over_800_lines() -> None:
    assert modules_over(MAX_LINES) == {}


def test_the_check_finds_a_long_module(tmp_path: Path) -> None:
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_LINES, encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    assert modules_over(MAX_LINES, tmp_path) == {"sub/long.py": MAX_LINES + 1}
