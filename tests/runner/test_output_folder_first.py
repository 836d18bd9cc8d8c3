"""`genir-eval run` checks its output folder before any paid call, for every user, root
included (tests/runner/test_storage_faults.py's read-only folder skips for root without a
mount): a folder that cannot be made (its parent is a regular file) and a run's own folder
that can no longer be written (immutable for root, ``chattr +i``; read-only by its mode for
anyone else) are each refused with one located line before a single request reaches the
provider, and the same run into a writable folder does call it, so the count can fail."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.testing.fake_llm_server import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]


def _scenario(tmp_path: Path, server: FakeLLMServer) -> Path:
    scenario = tmp_path / "counted.toml"
    scenario.write_text(
        f'version = 1\nname = "counted"\n\n[input]\npath = "{ROOT / "fixtures" / "demo_sessions.csv"}"\n'
        'format = "urge"\nlimit = 2\n\n[llm]\nprovider = "openai"\nmodel = "fake-model"\n'
        f'base_url = "{server.openai_base_url}"\n\n[engine]\ncache = false\njournal = false\n\n'
        '[[judges]]\nname = "satisfaction.urs"\n',
        encoding="utf-8",
    )
    return scenario


def _refused_before_any_call(
    server: FakeLLMServer, scenario: Path, out: Path, capsys: pytest.CaptureFixture[str]
) -> str:
    before = server.stats.total
    code = main(["run", str(scenario), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert server.stats.total == before, "a request was sent before the folder was checked"
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "--out" in lines[0]  # about the output folder, the option that names it
    return lines[0]


@contextlib.contextmanager
def _unwritable(folder: Path) -> Iterator[None]:
    """``folder`` made unwritable for this user (immutable for root), or the test skipped."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            if os.access(folder, os.W_OK):
                pytest.skip("file modes are not enforced for this user")
            yield
        finally:
            folder.chmod(0o755)
        return
    chattr = shutil.which("chattr")
    if (
        chattr is None
        or subprocess.run([chattr, "+i", str(folder)], capture_output=True).returncode
    ):
        pytest.skip("root, and the folder cannot be made immutable here (chattr +i)")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(folder)], check=False)


def test_an_output_folder_that_cannot_be_made_fails_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLLMServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        scenario = _scenario(tmp_path, server)
        blocker = tmp_path / "a-file"
        blocker.write_text("not a folder\n", encoding="utf-8")
        line = _refused_before_any_call(server, scenario, blocker / "run", capsys)
        # the folder's claim (genir_eval/paths.py) refuses it as a folder
        assert str(blocker) in line and "cannot use it as a folder" in line
        # the fake server's replies are no ratings: the run fails, but only after calling it
        main(["run", str(scenario), "--out", str(tmp_path / "ok"), "--quiet"])
        capsys.readouterr()
        assert server.stats.total > 0


def test_a_runs_own_folder_no_longer_writable_fails_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLLMServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        scenario = _scenario(tmp_path, server)
        out = tmp_path / "run"
        # a first run makes and claims the folder, calling the server (whose replies are no
        # ratings: the run fails, with its files written)
        main(["run", str(scenario), "--out", str(out), "--quiet"])
        assert server.stats.total > 0 and (out / "run.json").is_file()
        capsys.readouterr()
        with _unwritable(out):
            line = _refused_before_any_call(server, scenario, out, capsys)
        # the write check (check_writable_folder) names the folder, not its own probe file
        assert f"{out}: cannot write to the output folder" in line, line
        assert "write-check" not in line and "make this one writable" in line
