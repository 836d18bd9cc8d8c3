"""Did a change move what the judges send a model? Renders every registered judge's requests
(messages role by role, and the settings sent with them) for one fixed fixture session, in
both prompt languages, and prints a digest per judge.

    python bench/prompt_digests.py                                  # judge, language, digest
    python bench/prompt_digests.py --show link_usefulness.dna       # its messages, exact text
    python bench/prompt_digests.py --show link_usefulness.dna --language zh
    python bench/prompt_digests.py --check                          # against the table
    python bench/prompt_digests.py --write                          # rewrite the table

The session is ``fixtures/prompt_session.jsonl`` (``fixtures/make_prompt_session.py``): two
turns, cited links with source texts, a task type and an intent (every value some judge
fills in), with a run of blank lines, chat-template tokens and a fence line among them.
``bench/prompt_digests.tsv`` holds the digests of the code as committed;
``tests/judges/test_prompt_digests.py`` fails when a judge's digest differs from it. A change
that moves a prompt rewrites the table with ``--write`` in the same commit, and says so: the
real model's figures (the README's judge-quality table) are measured again for the judges
whose digest moved. ``--check`` exits 1 and names the judges that differ.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from genir_eval.ingest import load_sessions
from genir_eval.judges.prompt_digests import JudgePrompts, all_judge_prompts, judge_prompts
from genir_eval.records import Session

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "prompt_session.jsonl"
SESSION = "prompt-check"
TABLE = ROOT / "bench" / "prompt_digests.tsv"
HEADER = "judge\tlanguage\tdigest\trequests"


def fixture_session() -> Session:
    """The fixed session every judge's prompts are rendered for."""
    for session in load_sessions(FIXTURE).sessions:
        if session.session_id == SESSION:
            return session
    raise SystemExit(f"{FIXTURE}: no session {SESSION!r}")


def table_rows(prompts: list[JudgePrompts]) -> list[str]:
    return [f"{p.judge}\t{p.language}\t{p.digest}\t{len(p.requests)}" for p in prompts]


def read_table(path: Path = TABLE) -> dict[tuple[str, str], str]:
    """``(judge, language) -> digest`` from the checked-in table."""
    rows: dict[tuple[str, str], str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if number == 1 or not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 4:
            raise SystemExit(f"{path}, line {number}: expected 4 tab-separated fields")
        rows[(fields[0], fields[1])] = fields[2]
    return rows


def differences(prompts: list[JudgePrompts], table: dict[tuple[str, str], str]) -> list[str]:
    """One line per judge and language whose digest is not the table's (or is missing from
    it, or is in it but no longer registered)."""
    out = []
    now = {(p.judge, p.language): p.digest for p in prompts}
    for key in sorted(now.keys() | table.keys()):
        if now.get(key) != table.get(key):
            out.append(f"{key[0]} [{key[1]}]: table {table.get(key, '-')}, now {now.get(key, '-')}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--show", metavar="JUDGE", help="print this judge's requests in full")
    parser.add_argument("--language", choices=("en", "zh"), help="with --show: one language")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--check", action="store_true", help="compare with the table (exit 1)")
    what.add_argument("--write", action="store_true", help="rewrite the table")
    args = parser.parse_args()
    session = fixture_session()
    if args.show:
        for language in [args.language] if args.language else ["en", "zh"]:
            prompts = judge_prompts(args.show, session, language)
            print(prompts.show())
            print(f"digest {prompts.digest}")
        return 0
    prompts = all_judge_prompts(session)
    if args.write:
        TABLE.write_text("\n".join([HEADER, *table_rows(prompts)]) + "\n", encoding="utf-8")
        print(f"wrote {len(prompts)} digests to {TABLE.relative_to(ROOT)}")
        return 0
    if args.check:
        changed = differences(prompts, read_table())
        for line in changed:
            print(line)
        print(f"{len(changed)} of {len(prompts)} digests differ from {TABLE.relative_to(ROOT)}")
        return 1 if changed else 0
    print(HEADER)
    print("\n".join(table_rows(prompts)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
