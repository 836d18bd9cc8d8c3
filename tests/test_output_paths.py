"""The paths a command writes (genir_eval/paths.py): a regular file it created, never
through a device, FIFO, socket or link, never outside its output folder."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from genir_eval.errors import InputError
from genir_eval.paths import (
    append_output,
    check_output_path,
    database_refusal,
    output_child,
    output_file,
    plain_name,
    write_output,
)


def _things(folder: Path) -> dict[str, Path]:
    """A path with each kind of thing standing there."""
    (folder / "target.txt").write_text("keep\n", encoding="utf-8")
    made = {
        "fifo": folder / "fifo",
        "link": folder / "link",
        "loop": folder / "loop",
        "dangling": folder / "dangling",
        "folder": folder / "sub",
        "socket": folder / "sock",
    }
    os.mkfifo(made["fifo"])
    made["link"].symlink_to(folder / "target.txt")
    made["loop"].symlink_to("loop")
    made["dangling"].symlink_to(folder / "nowhere")
    made["folder"].mkdir()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(made["socket"]))
    listener.close()
    return made


WHAT = {
    "fifo": "FIFO",
    "link": "symbolic link to",
    "loop": "loops",
    "dangling": "does not exist",
    "folder": "a folder",
    "socket": "socket",
}


@pytest.mark.parametrize("kind", sorted(WHAT))
def test_nothing_is_written_where_something_else_stands(kind: str, tmp_path: Path) -> None:
    path = _things(tmp_path)[kind]
    before = os.lstat(path).st_mode
    with pytest.raises(InputError) as refused:
        write_output(path, "x", "--out")
    assert WHAT[kind] in str(refused.value) and "--out" in str(refused.value)
    assert os.lstat(path).st_mode == before
    assert (tmp_path / "target.txt").read_text(encoding="utf-8") == "keep\n"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_regular_file_is_replaced_and_a_new_one_made(tmp_path: Path) -> None:
    old = tmp_path / "old.txt"
    old.write_text("before", encoding="utf-8")
    write_output(old, "after", "-o")
    write_output(tmp_path / "new.bin", b"\x00\x01", "-o")
    assert old.read_text(encoding="utf-8") == "after"
    assert (tmp_path / "new.bin").read_bytes() == b"\x00\x01"
    assert stat.S_ISREG(os.lstat(old).st_mode)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), output_file(path, "-o") as handle:
        handle.write("half")
        raise RuntimeError("killed")
    assert path.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_a_missing_folder_is_named_unless_asked_not_to(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "x.html"
    with pytest.raises(InputError, match="does not exist"):
        check_output_path(path, "--html")
    assert check_output_path(path, "--html", folder_exists=False) == path


def test_appending_refuses_a_link_put_in_its_place(tmp_path: Path) -> None:
    path = tmp_path / "nuggets.jsonl"
    write_output(path, "", "nuggets")
    with append_output(path, "nuggets") as handle:
        handle.write("one\n")
    assert path.read_text(encoding="utf-8") == "one\n"
    path.unlink()
    (tmp_path / "elsewhere").write_text("keep\n", encoding="utf-8")
    path.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InputError, match="symbolic link"), append_output(path, "nuggets"):
        pass
    assert (tmp_path / "elsewhere").read_text(encoding="utf-8") == "keep\n"


@pytest.mark.parametrize("relative", ["../x", "/etc/passwd", "a/../../x", ""])
def test_a_child_outside_the_folder_is_refused(relative: str, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="outside the output folder"):
        output_child(tmp_path, relative, "--output")


def test_a_child_through_a_link_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "out" / "systems").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InputError, match="through a link"):
        output_child(tmp_path / "out", "systems/a.jsonl", "--output")
    assert output_child(tmp_path / "out", "a/b.jsonl", "--output") == tmp_path / "out/a/b.jsonl"


@pytest.mark.parametrize(
    "name", ["../../escaped", "a/b", "a\\b", "..", ".", "", "x\x1b[2J", "\u202eevil", "a\nb"]
)
def test_a_name_that_is_not_one_plain_name_is_refused(name: str) -> None:
    with pytest.raises(InputError, match="name"):
        plain_name(name, "name")


@pytest.mark.parametrize("name", ["demo", "my run 2", "v1.2_final", "中文", "a-b"])
def test_plain_names_pass(name: str) -> None:
    assert plain_name(name, "name") == name


def test_a_database_is_not_opened_through_a_device_or_a_fifo(tmp_path: Path) -> None:
    things = _things(tmp_path)
    assert database_refusal(things["fifo"]) == "a FIFO (named pipe)"
    assert database_refusal(things["socket"]) == "a socket"
    assert database_refusal(things["loop"]) == "a symbolic link that loops"
    assert database_refusal(os.devnull) == "a character device"
    assert database_refusal(things["link"]) is None  # a link to a regular file: a layout
    assert database_refusal(tmp_path / "new.sqlite") is None
