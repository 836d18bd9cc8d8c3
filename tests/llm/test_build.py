"""One way to open an engine: ``llm/build.py`` from an ``EngineConfig``; the engine holds no
second copy of the configuration's settings (``timeout`` was ``attempt_timeout`` there, with
its own default), and no module outside ``llm/`` calls ``Engine(...)``."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import inspect
from pathlib import Path

from genir_eval.llm import EngineConfig, build_engine, offline_engine
from genir_eval.llm.engine import Engine

ROOT = Path(__file__).resolve().parents[2]


def _engine_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name == "Engine":
                lines.append(node.lineno)
    return lines


def engines_built_outside_llm() -> list[str]:
    """``Engine(...)`` calls outside ``genir_eval/llm/`` and the engine's own tests."""
    found = []
    for folder in ("genir_eval", "bench", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith(("genir_eval/llm/", "tests/llm/", "bench/bench_engine.py")):
                continue
            found += [f"{relative}:{line}" for line in _engine_calls(path)]
    return found


def test_no_engine_is_built_outside_llm() -> None:
    assert engines_built_outside_llm() == []


def test_the_check_sees_an_engine_built_elsewhere() -> None:
    assert _engine_calls(Path(__file__).parent / "llm_helpers.py")  # builds one, on purpose


def test_the_engine_takes_its_settings_from_the_configuration_only() -> None:
    # cache, journal and prices are the opened stores and table (the configuration names
    # their files)
    opened = {"cache", "journal", "prices"}
    settings = {f.name for f in dataclasses.fields(EngineConfig)} - opened
    parameters = set(inspect.signature(Engine.__init__).parameters)
    assert "config" in parameters
    assert not parameters & (settings | {"attempt_timeout"})
    engine = offline_engine(quiet=True)
    try:
        assert engine.config == EngineConfig(cache=None, journal=False)
        assert engine.cache is None and engine.journal is None
    finally:
        asyncio.run(engine.aclose())


def test_a_built_engine_opens_and_owns_what_its_configuration_names(tmp_path: Path) -> None:
    config = EngineConfig(cache=tmp_path / "cache.sqlite", timeout=7.5, concurrency=3)
    engine = build_engine(config, "offline", quiet=True)
    try:
        assert engine.cache is not None and engine.cache.mode == "read-write"
        # journal=True: the cache file holds the journal too
        assert engine.journal is not None and engine.journal.path == tmp_path / "cache.sqlite"
        assert engine.config.timeout == 7.5 and engine.concurrency == 3
    finally:
        asyncio.run(engine.aclose())
    assert (tmp_path / "cache.sqlite").exists()
