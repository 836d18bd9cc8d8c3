"""Building blocks for the hostile-input tests: one logical session, written in each format.

A session here is a list of turns, each a query and a list of ``(text, citation ids)``
parts; every cited id gets a link. :func:`render` writes it as an URGE CSV row, a canonical
JSONL line (markers in ``response_text``, statements derived by the reader) or a Markdown
session, so one defect can be planted in all three formats.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from genir_eval.cli import main
from genir_eval.ingest import URGE_COLUMNS

Part = tuple[str, tuple[int, ...]]
LogicalTurn = tuple[str, Sequence[Part]]

SUFFIX = {"urge": ".csv", "jsonl": ".jsonl", "markdown": ".md"}

ANCHOR = '<a class="citation ml-xs inline" aria-label="Source {n}" href="{url}">{n}</a>'


def url(n: int) -> str:
    return f"https://s{n}.example/page"


def _ids(turn: LogicalTurn) -> list[int]:
    return sorted({i for _, ids in turn[1] for i in ids})


def html_of(parts: Sequence[Part]) -> str:
    body = "".join(
        f"<span>{text}</span>" + "".join(ANCHOR.format(n=i, url=url(i)) for i in ids)
        for text, ids in parts
    )
    return f'<div dir="auto"><div class="prose"><p>{body}</p></div></div>'


def marked_text(parts: Sequence[Part]) -> str:
    return "".join(text + "".join(f"[{i}]" for i in ids) for text, ids in parts)


def urge_row(turns: Sequence[LogicalTurn], **overrides: str) -> dict[str, str]:
    row = {
        "conversation": json.dumps(
            {f"回合{k}": {"用户": q, "AI助手": "-"} for k, (q, _) in enumerate(turns, 1)},
            ensure_ascii=False,
        ),
        "search intent": "intent",
        "task_type": "Factual QA",
        "session-level satisfaction": "4",
        "query-level satisfaction": json.dumps([3] * len(turns)),
        "link_usefulness": json.dumps([{str(i): 2 for i in _ids(t)} for t in turns]),
        "citation_usefulness": "",
        "useful_text_user_self": "",
        "useful_text_external_annotation": "",
        "dis_sat_reason": "",
        "response_html": json.dumps([html_of(parts) for _, parts in turns], ensure_ascii=False),
    }
    row.update(overrides)
    return row


def urge_csv(rows: Sequence[dict[str, str]], header: Sequence[str] = URGE_COLUMNS) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([row.get(name, "") for name in header])
    return out.getvalue()


def jsonl_object(session_id: str, turns: Sequence[LogicalTurn]) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "turns": [
            {
                "index": k,
                "query": q,
                "response_text": marked_text(parts),
                "links": [{"id": i, "url": url(i), "title": f"Source {i}"} for i in _ids(t)],
            }
            for k, t in enumerate(turns, 1)
            for q, parts in [t]
        ],
        "gold": {
            "session_satisfaction": 4,
            "link_usefulness": [{str(i): 2 for i in _ids(t)} for t in turns],
        },
    }


def markdown_session(session_id: str, turns: Sequence[LogicalTurn]) -> str:
    lines = [f"# Session: {session_id}", "task_type: Factual QA"]
    for turn in turns:
        query, parts = turn
        lines += [f"## Query: {query}", marked_text(parts), ""]
        ids = _ids(turn)
        if ids:
            lines.append("Sources:")
            lines += [f"[{i}] Source {i} - {url(i)}" for i in ids]
        lines.append("")
    return "\n".join(lines) + "\n"


def render(fmt: str, sessions: Sequence[Sequence[LogicalTurn]]) -> str:
    """The text of a file holding ``sessions`` in ``fmt`` (ids ``s-1``, ``s-2``...)."""
    if fmt == "urge":
        return urge_csv([urge_row(turns) for turns in sessions])
    if fmt == "jsonl":
        return "".join(
            json.dumps(jsonl_object(f"s-{k}", t), ensure_ascii=False) + "\n"
            for k, t in enumerate(sessions, 1)
        )
    return "".join(markdown_session(f"s-{k}", t) for k, t in enumerate(sessions, 1))


def run_parse(capsys: Any, path: Path, out: Path, *extra: str) -> tuple[int, list[str], list[str]]:
    """``genir-eval parse`` in this process: exit code, stderr lines, output lines.

    An exception escaping ``main`` (a traceback for the user) fails the calling test.
    """
    capsys.readouterr()
    code = main(["parse", str(path), "-o", str(out), *extra])
    err = capsys.readouterr().err.splitlines()
    written = out.read_text(encoding="utf-8").splitlines() if out.exists() else []
    return code, err, written


def assert_located_failure(code: int, err: list[str], path: Path) -> None:
    """Exit 2, one line, naming the file and a place in it."""
    assert code == 2, err
    assert len(err) == 1, err
    line = err[0]
    assert line.startswith(f"genir-eval: error: {path}"), line
    assert "Traceback" not in line
