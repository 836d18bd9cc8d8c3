"""``genir-eval view --bundle DIR``: a static copy of a view, as a user makes it (the command
in its own process), that writes only its own regular files; and the command's refusals."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from view_helpers import HOSTILE

pytestmark = pytest.mark.slow


def view(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "genir_eval", "view", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_bundle_is_the_view_with_its_sessions(small_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "copy"
    done = view(str(small_run), "--bundle", str(out), "--view", "/?q=garden&sort=sdcg_urge")
    assert done.returncode == 0, done.stderr
    assert "2 of the view's 2 sessions" in done.stdout
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        ".genir-eval-folder.json",
        "index.html",
        "session-0-0.html",
        "session-0-2.html",
        "viewer.css",
        "viewer.js",
    ]
    index = (out / "index.html").read_text(encoding="utf-8")
    assert index.index("id='row-s0'") < index.index("id='row-s2'")
    assert "href='session-0-2.html'" in index and "/label-item" not in index
    # the rows ride along as JSON the script reads; no text in it can close its block
    block = re.search(r"<script type='application/json' id='view-data'>(.*?)</script>", index)
    assert block is not None
    data = json.loads(block.group(1))
    assert data["view"] == "q=garden&sort=sdcg_urge"
    assert any(HOSTILE.lower() in row["text"] for row in data["rows"])
    assert HOSTILE not in index
    session = (out / "session-0-2.html").read_text(encoding="utf-8")
    assert "href='index.html'" in session and "&lt;script&gt;" in session


def test_a_second_bundle_replaces_only_its_own_files(small_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "copy"
    assert view(str(small_run), "--bundle", str(out)).returncode == 0
    assert (out / "session-0-3.html").is_file()
    assert view(str(small_run), "--bundle", str(out), "--view", "task=A").returncode == 0
    assert not (out / "session-0-3.html").exists()  # no longer in the view: removed
    assert (out / "session-0-2.html").is_file()


def test_a_folder_of_other_files_is_refused(small_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    done = view(str(small_run), "--bundle", str(out))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "files genir-eval did not write here (notes.txt)" in done.stderr
    assert sorted(os.listdir(out)) == ["notes.txt"]


def _one_line_refusal(done: subprocess.CompletedProcess[str], words: str) -> None:
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert words in done.stderr and "Traceback" not in done.stderr


def test_a_link_in_the_bundle_folder_is_not_written_through(
    small_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "copy"
    assert view(str(small_run), "--bundle", str(out)).returncode == 0
    target = tmp_path / "elsewhere.html"
    target.write_text("keep", encoding="utf-8")
    (out / "index.html").unlink()
    (out / "index.html").symlink_to(target)
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.name != "index.html"}
    done = view(str(small_run), "--bundle", str(out))
    _one_line_refusal(done, "--bundle: a symbolic link to")
    assert target.read_text(encoding="utf-8") == "keep"
    assert (out / "index.html").is_symlink()
    # refused before any file was written or removed
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.name != "index.html"} == (
        before
    )


def test_a_fifo_in_the_bundle_folder_is_not_written_through(
    small_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "copy"
    assert view(str(small_run), "--bundle", str(out)).returncode == 0
    (out / "viewer.js").unlink()
    os.mkfifo(out / "viewer.js")
    done = view(str(small_run), "--bundle", str(out))
    _one_line_refusal(done, "--bundle: a FIFO (named pipe) stands there")
    assert stat.S_ISFIFO(os.lstat(out / "viewer.js").st_mode)


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_a_fifo_or_a_link_to_a_file_as_the_bundle_is_refused(
    small_run: Path, tmp_path: Path, kind: str
) -> None:
    keep = tmp_path / "precious.txt"
    keep.write_text("keep", encoding="utf-8")
    out = tmp_path / "copy"
    if kind == "fifo":
        os.mkfifo(out)
    else:
        out.symlink_to(keep)
    done = view(str(small_run), "--bundle", str(out))
    _one_line_refusal(done, "FIFO" if kind == "fifo" else "symbolic link")
    assert stat.S_ISFIFO(os.lstat(out).st_mode) if kind == "fifo" else out.is_symlink()
    assert keep.read_text(encoding="utf-8") == "keep"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--view", "sort=nope"], "--view: sort: no 'nope'"),
        (["--bundle-limit", "0"], "argument --bundle-limit: expected an integer >= 1"),
    ],
)
def test_a_wrong_option_is_one_line(
    small_run: Path, tmp_path: Path, args: list[str], words: str
) -> None:
    done = view(str(small_run), "--bundle", str(tmp_path / "b"), *args)
    assert done.returncode != 0 and words in done.stderr and "Traceback" not in done.stderr


def test_a_view_without_a_bundle_is_refused(small_run: Path) -> None:
    done = view(str(small_run), "--view", "task=A")
    assert done.returncode != 0 and "--view: the view to copy with --bundle DIR" in done.stderr


def test_a_folder_that_is_not_a_run_is_named(tmp_path: Path) -> None:
    done = view(str(tmp_path))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert str(tmp_path) in done.stderr and "not a finished run directory" in done.stderr


def test_beyond_the_loopback_needs_a_token(small_run: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "GENIR_EVAL_LABEL_TOKEN"}
    done = subprocess.run(
        [sys.executable, "-m", "genir_eval", "view", str(small_run), "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode != 0 and "needs a token" in done.stderr


def test_a_bundle_of_two_runs_has_each_session_across_them(small_run: Path, tmp_path: Path) -> None:
    from view_helpers import tiny_run

    other = tiny_run(tmp_path / "b", name="tiny-b", shift={"s1": -1.5})
    out = tmp_path / "copy"
    done = view(str(small_run), str(other), "--bundle", str(out), "--view", "task=B")
    assert done.returncode == 0, done.stderr
    index = (out / "index.html").read_text(encoding="utf-8")
    # s1 changed by 1.5, s3 not at all: s1 first; each opens its page across the runs
    assert index.index("data-session='s1'") < index.index("data-session='s3'")
    assert "href='compare-1.html'" in index and "id='q'" in index
    across = (out / "compare-1.html").read_text(encoding="utf-8")
    assert "href='session-0-1.html'" in across and "href='session-1-1.html'" in across
    assert "<td class=num>-1.500</td>" in across
    assert sorted(p.name for p in out.glob("session-*")) == [
        "session-0-1.html",
        "session-0-3.html",
        "session-1-1.html",
        "session-1-3.html",
    ]
