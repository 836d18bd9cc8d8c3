"""A file in UTF-16 or UTF-32, or with lines broken by CR alone, is named as such in every
format, instead of "byte 0xff" or a message about the first line's content."""

from __future__ import annotations

import pytest
from hostile_helpers import SUFFIX, assert_located_failure, render, run_parse

SESSIONS = [[("q one", [("Claim one.", (1,)), (" Claim two.", ())])]] * 2


@pytest.mark.parametrize("fmt", sorted(SUFFIX))
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_utf16_or_utf32_file_is_named_as_such(tmp_path, capsys, fmt, encoding):
    path = tmp_path / f"log{SUFFIX[fmt]}"
    text = render(fmt, SESSIONS)
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    path.write_bytes(data)
    code, err, _ = run_parse(capsys, path, tmp_path / "out.jsonl")
    assert_located_failure(code, err, path)
    assert "line 1" in err[0] and "UTF-16 or UTF-32 text" in err[0], err[0]


@pytest.mark.parametrize("fmt", sorted(SUFFIX))
def test_lines_broken_by_cr_alone_are_named(tmp_path, capsys, fmt):
    path = tmp_path / f"log{SUFFIX[fmt]}"
    path.write_bytes(render(fmt, SESSIONS).replace("\n", "\r").encode("utf-8"))
    code, err, _ = run_parse(capsys, path, tmp_path / "out.jsonl")
    assert_located_failure(code, err, path)
    assert "line 1" in err[0] and "carriage return alone (CR)" in err[0], err[0]


@pytest.mark.parametrize("fmt", sorted(SUFFIX))
def test_crlf_and_a_utf8_bom_still_load(tmp_path, capsys, fmt):
    path = tmp_path / f"log{SUFFIX[fmt]}"
    path.write_bytes(b"\xef\xbb\xbf" + render(fmt, SESSIONS).replace("\n", "\r\n").encode())
    code, err, written = run_parse(capsys, path, tmp_path / "out.jsonl")
    assert code == 0 and len(written) == 2, err
