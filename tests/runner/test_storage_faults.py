"""Storage faults end in one line naming the file, what happened and what to do, exit 2,
never a sqlite3 or OS traceback, and never after the paid calls with their results lost.

A full disk is a tiny tmpfs when the tests run as root (which may mount one); a read-only
folder is a read-only mount then too, since root ignores file modes; without root, the
folder's mode. Both skip only when neither is possible.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.errors import StorageError
from genir_eval.llm import EngineConfig, open_engine
from genir_eval.llm.providers.base import Completion, GenerateConfig, JudgmentKey, Message, Request
from genir_eval.llm.providers.openai_provider import OpenAIProvider
from genir_eval.llm.store.cache import Cache
from genir_eval.llm.store.journal import Journal
from genir_eval.testing.fake_llm_server import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "scenarios" / "demo-offline.toml"


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err and "sqlite3." not in err
    return lines[0]


def _run(tmp_path: Path, *extra: str) -> int:
    return main(["run", str(DEMO), "--out", str(tmp_path / "run"), "--quiet", *extra])


def _damaged_database(path: Path) -> None:
    """A real cache and journal file, then cut in half (a crash while copying it)."""

    async def fill() -> None:
        journal = Journal(path)
        for i in range(3000):
            await journal.record(
                JudgmentKey("s", 1, f"link:{i}", "j", "v"), value=i, raw="r" * 200, fingerprint="f"
            )
        await journal.aclose()

    asyncio.run(fill())
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("kind", ["cache", "journal"])
@pytest.mark.parametrize("fault", ["folder", "not sqlite", "truncated", "under a file"])
def test_unusable_cache_or_journal_is_one_line(
    kind: str, fault: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "store.sqlite"
    if fault == "folder":
        path.mkdir()
    elif fault == "not sqlite":
        path.write_bytes(b"this is a spreadsheet, not a cache\n" * 200)
    elif fault == "truncated":
        _damaged_database(path)
    else:
        (tmp_path / "file").write_text("x")
        path = tmp_path / "file" / "store.sqlite"
    other = ["--cache-mode", "off"] if kind == "journal" else ["--journal", "none"]
    option = ["--cache", str(path)] if kind == "cache" else ["--journal", str(path)]
    assert _run(tmp_path, *option, *other) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert str(path) in line and f"cannot use this {kind} file" in line
    remedy = "--cache-mode off" if kind == "cache" else "--journal none"
    assert "move it aside" in line and remedy in line
    assert not (tmp_path / "run" / "run.json").exists()  # stopped before judging


def test_cache_commands_report_damaged_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "cache.sqlite"
    bad.write_bytes(b"\x00garbage" * 1000)
    for argv in (
        ["cache", "stats", "--cache", str(bad)],
        ["cache", "show", "abcdef", "--cache", str(bad)],
    ):
        assert main(argv) == 2
        line = _one_error_line(capsys.readouterr().err)
        assert str(bad) in line and "not a SQLite database" in line
    folder = tmp_path / "folder.sqlite"
    folder.mkdir()
    assert main(["cache", "stats", "--cache", str(folder)]) == 2
    assert "it is a folder" in _one_error_line(capsys.readouterr().err)


def test_journal_with_damaged_rows_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    Journal(path).close()
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO journal VALUES ('k', 1, 's', 1, 'i', 'j', 'v', 0, 'ok', '{not json', "
        "NULL, NULL, NULL, 1, NULL, 0)"
    )
    conn.commit()
    conn.close()
    with pytest.raises(StorageError, match="cannot use this journal file.*--journal none"):
        Journal(path)


def _can_mount() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("mount") is not None


@contextlib.contextmanager
def _tmpfs(where: Path, size: str, *, read_only: bool = False) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    options = f"size={size}" + (",ro" if read_only else "")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@contextlib.contextmanager
def _read_only_folder(where: Path) -> Iterator[Path]:
    if _can_mount():
        with _tmpfs(where, "1m", read_only=True) as folder:
            yield folder
        return
    where.mkdir()
    where.chmod(0o555)
    try:
        if os.access(where, os.W_OK):
            pytest.skip("file modes are not enforced for this user and no mount is possible")
        yield where
    finally:
        where.chmod(0o755)


def test_read_only_output_folder_fails_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # two demo sessions judged through the fake server, which counts what it receives: the
    # folder's check refuses before a single request (and the same run into a writable
    # folder does call it, so the count can fail)
    with FakeLLMServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        scenario = tmp_path / "counted.toml"
        scenario.write_text(
            f'version = 1\nname = "counted"\n\n[input]\npath = "{ROOT / "fixtures" / "demo_sessions.csv"}"\n'
            'format = "urge"\nlimit = 2\n\n[llm]\nprovider = "openai"\nmodel = "fake-model"\n'
            f'base_url = "{server.openai_base_url}"\n\n[engine]\ncache = false\njournal = false\n\n'
            '[[judges]]\nname = "satisfaction.urs"\n',
            encoding="utf-8",
        )
        with _read_only_folder(tmp_path / "ro") as folder:
            out = folder / "run"
            code = main(["run", str(scenario), "--out", str(out), "--quiet"])
            err = capsys.readouterr().err
        refused_after = server.stats.total
        main(["run", str(scenario), "--out", str(tmp_path / "writable"), "--quiet"])
        capsys.readouterr()
        valid_calls = server.stats.total - refused_after
    assert code == 2
    line = _one_error_line(err)
    assert str(folder) in line and "cannot write to the output folder" in line
    assert "--out" in line
    assert refused_after == 0 and valid_calls > 0


@pytest.mark.slow
def test_full_disk_when_writing_outputs_keeps_the_judgments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The output folder fills up after the judging: the error names the file and says
    that the judgments are in the journal; a second run elsewhere reuses them all."""
    if not _can_mount():
        pytest.skip("a full disk is simulated with a tmpfs, which needs root")
    journal = tmp_path / "journal.sqlite"
    with _tmpfs(tmp_path / "small", "160k") as small:
        out = small / "run"
        code = main(
            [
                "run",
                str(DEMO),
                "--out",
                str(out),
                "--quiet",
                "--cache-mode",
                "off",
                "--journal",
                str(journal),
            ]
        )
        err = capsys.readouterr().err
    assert code == 2
    line = _one_error_line(err)
    assert "No space left on device" in line and str(small) in line
    assert str(journal) in line and "no call is repeated" in line
    # the judgments survived: a run into a roomy folder answers every one from the journal
    again = tmp_path / "again"
    assert (
        main(
            [
                "run",
                str(DEMO),
                "--out",
                str(again),
                "--quiet",
                "--cache-mode",
                "off",
                "--journal",
                str(journal),
            ]
        )
        == 0
    )
    info = json.loads((again / "run.json").read_text())
    assert info["provider_calls"] == 0 and info["cache"]["resumed"] > 0


def test_full_disk_for_the_journal_stops_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not _can_mount():
        pytest.skip("a full disk is simulated with a tmpfs, which needs root")
    with _tmpfs(tmp_path / "small", "48k") as small:
        journal = small / "journal.sqlite"
        code = _run(tmp_path, "--cache-mode", "off", "--journal", str(journal))
        err = capsys.readouterr().err
    assert code == 2
    line = _one_error_line(err)
    assert str(journal) in line and "the disk is full" in line


def test_a_cache_that_cannot_be_written_does_not_fail_the_run(tmp_path: Path) -> None:
    """Cache writes are a saving, not a result: a put that fails is counted and the run
    ends normally with every reply."""

    class FullCache(Cache):
        async def put(self, *args: object, **kwargs: object) -> None:
            raise StorageError("cannot use this cache file: the disk is full", path=str(self.path))

        async def record_run(self, *args: object, **kwargs: object) -> None:
            raise StorageError("cannot use this cache file: the disk is full", path=str(self.path))

    requests = [
        Request(
            key=JudgmentKey("s", 1, f"link:{i}", "j", "v"),
            messages=(Message("user", f"question {i}"),),
            config=GenerateConfig(model="fake-model"),
            task="t",
        )
        for i in range(5)
    ]

    async def run(server: FakeLLMServer) -> tuple[list[object], dict[str, object]]:
        provider = OpenAIProvider(
            model="fake-model", base_url=server.openai_base_url, api_key=server.api_key
        )
        engine = open_engine(EngineConfig(), provider, cache=FullCache(tmp_path / "cache.sqlite"))
        async with engine:
            results = [await engine.complete(r) for r in requests]
        return results, engine.stats()

    with FakeLLMServer() as server:
        results, stats = asyncio.run(run(server))
    assert all(isinstance(r, Completion) for r in results)
    assert stats["errors_seen"] == {"cache write: StorageError": 6}  # 5 puts + the run record


# Where the run writer can meet a full disk, from the first part file to run.json: each
# place is made to fail with each errno; the run must end in one line (exit 2) saying where
# the judgments are, leave no part file, and a second run must make no call at all.
_WRITER_FAULTS = {
    "creating a part file": ("_Part", "__init__"),
    "appending evidence or failures rows": ("_Part", "write"),
    "appending table rows": ("_Table", "write"),
    "rewriting the tables (JSONL and CSV)": ("RunWriter", "_rewrite"),
    "renaming a file into place": (None, "_replace"),
    "writing meta.json or run.json": (None, "write_json"),
    "writing report.html": (None, "write_text_atomic"),
}
_ERRNOS = {
    errno.ENOSPC: "No space left on device",
    errno.EDQUOT: "Disk quota exceeded",
    errno.EIO: "Input/output error",
    errno.EFBIG: "File too large",
}


_CASES = [
    pytest.param(place, code, id=f"{place}-{_ERRNOS[code]}")
    for place in sorted(_WRITER_FAULTS)
    for code in sorted(_ERRNOS)
    # every place with a full disk and a quota; the other errors where rows are appended
    if code in (errno.ENOSPC, errno.EDQUOT) or place == "appending table rows"
]


@pytest.mark.slow
@pytest.mark.parametrize(("place", "code"), _CASES)
def test_a_disk_that_fills_in_the_run_writer_keeps_the_judgments(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    place: str,
    code: int,
) -> None:
    from genir_eval.rundir import files, writer

    owner, name = _WRITER_FAULTS[place]
    # a function is patched in every module of the run folder that calls it (the writer
    # and the file helpers it calls); a class's method on the writer's class
    targets = [m for m in (files, writer) if hasattr(m, name)]
    if owner is not None:
        targets = [getattr(writer, owner)]

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(code, _ERRNOS[code], str(tmp_path / "run" / "some.part"))

    journal = tmp_path / "journal.sqlite"
    argv = ["--cache-mode", "off", "--journal", str(journal)]
    with monkeypatch.context() as patched:
        for target in targets:
            patched.setattr(target, name, full)
        assert _run(tmp_path, *argv) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith("genir-eval: error: ") and _ERRNOS[code] in line
    # the output folder's own check (before any call) meets the faults of the writer's
    # first steps; past it, the line says where the judgments are
    before_any_call = "cannot write to the output folder" in line or "before any call" in line
    if place == "creating a part file":
        assert before_any_call
    if before_any_call:
        assert "--out DIR" in line or "nothing was asked yet (before any call)" in line
    else:
        assert "cannot write the run's outputs" in line
        assert str(journal) in line and "no call is repeated" in line
    out = tmp_path / "run"
    assert not (out / "run.json").exists()
    assert not [p.name for p in out.glob(".*.part")]
    # the promise: running again makes no call, every judgment comes from the journal
    assert _run(tmp_path, *argv) == 0
    info = json.loads((out / "run.json").read_text())
    assert (info["provider_calls"] > 0) if before_any_call else (info["provider_calls"] == 0)
    assert before_any_call or info["cache"]["resumed"] > 0


def test_a_disk_that_fills_with_the_journal_in_the_output_folder_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default journal lives in the output folder: when the disk fills there, the line
    says the disk is full and to free space (the journal keeps what it holds), not to move
    the journal aside."""
    if not _can_mount():
        pytest.skip("a full disk is simulated with a tmpfs, which needs root")
    for size in ("16k", "160k"):
        with _tmpfs(tmp_path / f"small-{size}", size) as small:
            code = main(
                ["run", str(DEMO), "--out", str(small / "run"), "--quiet", "--cache-mode", "off"]
            )
            err = capsys.readouterr().err
        assert code == 2
        line = _one_error_line(err)
        assert "the disk is full; free some space and run again" in line
        assert "move it aside" not in line
