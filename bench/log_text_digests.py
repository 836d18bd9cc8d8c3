"""Did a change move what the judges read of real logs? For every URGE and CrowdRAG
development session, a digest of every log text as the judges' prompts carry it (fenced,
fence markers and chat-template tokens neutralised: genir_eval/judges/prompting.py's
``fence``), how many of those texts the neutraliser changed, and (``--requests``) a digest
of every judge's English requests for the session.

    python bench/log_text_digests.py                 # dataset, session, texts, changed, digest
    python bench/log_text_digests.py --check         # against the table (exit 1 on a change)
    python bench/log_text_digests.py --write         # rewrite the table (say why in the commit)
    python bench/log_text_digests.py --requests ...  # also each session's judges' requests

``bench/prompt_digests.py`` holds the judges' templates and settings still for one fixture
session; this table holds the other half, the real texts put into them: a change to the
fence or to genir_eval/judges/chat_tokens.py that rewrites a real title (``[PDF] Real
Shading in Unreal Engine 4`` once became ``⟦PDF⟧ ...``) moves a row here.
``tests/judges/test_log_text_digests.py`` fails on any row that moved (the ``requests``
column in its slow test); a change that moves one rewrites the table with ``--write
--requests`` in the same commit and says why. The ``changed`` column counts the texts the
neutraliser alters: 0 on every row, since real logs hold no chat-template token.

The data are read from ``../shared/urge/urge_sample_dev.csv`` and ``../shared/crowdrag/``
(never copied into the repository): URGE's 12 sessions as they load, CrowdRAG's 120 answers
each a one-turn session with its topic's passages as the cited links' texts.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from genir_eval.ingest import load_sessions
from genir_eval.ingest.crowdrag import read_crowdrag
from genir_eval.judges.prompt_digests import judge_prompts
from genir_eval.judges.prompting import _neutralise, fence
from genir_eval.judges.registry import judge_names, make_judge
from genir_eval.records import Session

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
URGE = SHARED / "urge" / "urge_sample_dev.csv"
CROWDRAG = SHARED / "crowdrag"
TABLE = ROOT / "bench" / "log_text_digests.tsv"
HEADER = "dataset\tsession\ttexts\tchanged\tdigest\trequests"


def development_sessions() -> Iterator[tuple[str, Session]]:
    """``(dataset, session)`` for every development session, in a fixed order."""
    for session in load_sessions(URGE).sessions:
        yield "urge", session
    for answer in read_crowdrag(CROWDRAG).answers:
        yield (
            "crowdrag",
            dataclasses.replace(answer.session, session_id=f"{answer.topic}/{answer.system}"),
        )


def log_texts(value: Any) -> Iterator[str]:
    """Every string a session holds, depth first in field order (what a judge may read)."""
    if isinstance(value, str):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for item in dataclasses.fields(value):
            yield from log_texts(getattr(value, item.name))
    elif isinstance(value, dict):
        for key in sorted(value, key=str):
            yield from log_texts(value[key])
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from log_texts(item)


def _digest(payload: Any) -> str:
    text = json.dumps(payload, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def text_row(dataset: str, session: Session) -> dict[str, Any]:
    texts = list(log_texts(session))
    return {
        "dataset": dataset,
        "session": session.session_id,
        "texts": len(texts),
        "changed": sum(1 for t in texts if _neutralise(t) != t),
        "digest": _digest([fence(t, "TEXT") for t in texts]),
    }


def requests_digest(session: Session) -> str:
    """A digest of every judge's English requests for ``session`` (the pairwise judges'
    when it has two turns to compare)."""
    digests = []
    for name in judge_names():
        if getattr(make_judge(name), "compare", None) is not None and len(session.turns) < 2:
            continue
        digests.append([name, judge_prompts(name, session, "en").digest])
    return _digest(digests)


def rows(*, requests: bool) -> list[dict[str, Any]]:
    out = []
    for dataset, session in development_sessions():
        row = text_row(dataset, session)
        row["requests"] = requests_digest(session) if requests else "-"
        out.append(row)
    return out


def line(row: dict[str, Any]) -> str:
    return "\t".join(str(row[k]) for k in HEADER.split("\t"))


def read_table(path: Path = TABLE) -> dict[tuple[str, str], dict[str, str]]:
    """``(dataset, session) -> row`` from the checked-in table."""
    names = HEADER.split("\t")
    table = {}
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if number == 1 or not text.strip():
            continue
        fields = text.split("\t")
        if len(fields) != len(names):
            raise SystemExit(f"{path}, line {number}: expected {len(names)} fields")
        row = dict(zip(names, fields, strict=True))
        table[(row["dataset"], row["session"])] = row
    return table


def differences(
    now: list[dict[str, Any]], table: dict[tuple[str, str], dict[str, str]], columns: list[str]
) -> list[str]:
    """One line per session whose ``columns`` are not the table's (or that is missing)."""
    out = []
    current = {(r["dataset"], r["session"]): r for r in now}
    for key in sorted(current.keys() | table.keys()):
        a, b = table.get(key), current.get(key)
        if a is None or b is None:
            out.append(f"{key[0]} {key[1]}: {'not in the table' if a is None else 'gone'}")
            continue
        moved = [f"{c} {a[c]} -> {b[c]}" for c in columns if str(b[c]) != a[c]]
        if moved:
            out.append(f"{key[0]} {key[1]}: {', '.join(moved)}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--requests", action="store_true", help="also render every judge")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--check", action="store_true", help="compare with the table (exit 1)")
    what.add_argument("--write", action="store_true", help="rewrite the table")
    args = parser.parse_args()
    now = rows(requests=args.requests)
    if args.write:
        if not args.requests:
            raise SystemExit("--write needs --requests: the table holds both digests")
        TABLE.write_text("\n".join([HEADER, *map(line, now)]) + "\n", encoding="utf-8")
        print(f"wrote {len(now)} rows to {TABLE.relative_to(ROOT)}")
        return 0
    if args.check:
        columns = ["texts", "changed", "digest"] + (["requests"] if args.requests else [])
        moved = differences(now, read_table(), columns)
        for text in moved:
            print(text)
        print(f"{len(moved)} of {len(now)} sessions differ from {TABLE.relative_to(ROOT)}")
        return 1 if moved else 0
    print(HEADER)
    print("\n".join(map(line, now)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
