"""The hostile-input corpus: well-formed but hostile files given to the readers, each with the
command that reads it and what that command must do.

A case writes its files into an empty folder and returns the command line; the command must
exit with ``exit`` and print ``fragment`` (on stderr for an error, stdout otherwise), with no
traceback, within the test's time bound. The classes are those of the third red team
(issue 32): 1 hangs (super-linear parsing: every pattern applied to log text runs in linear
time, and what grows with a count has a documented bound), 6 tracebacks on well-formed
hostile input (deep JSON, out-of-range numbers, lone surrogates, an edited cache), 8 look-alike
session ids (a zero-width space, another Unicode normalisation form).

``python tests/hostile/hostile_cases.py`` runs every case in a subprocess with a timeout and
prints the failures and the counts per class (how the closing note's before/after counts
were taken).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: A run of spaces long enough that a quadratic pattern takes minutes on it.
SPACES = " " * 100_000


@dataclass(frozen=True)
class Case:
    name: str
    klass: int
    build: Callable[[Path], list[str]]
    exit: int
    fragment: str


def session(sid: str, text: str = "X is a thing [1]. More text.", **extra: Any) -> dict[str, Any]:
    turn = {
        "index": 1,
        "query": "what is x",
        "response_text": text,
        "links": [{"id": 1, "url": "https://a.example/x", "title": "A"}],
    }
    return {"session_id": sid, "turns": [turn], **extra}


def write_jsonl(path: Path, rows: Sequence[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _systems(d: Path) -> list[str]:
    """Two systems' logs over sessions s1 and s2, for the arena."""
    for name in ("sysA", "sysB"):
        write_jsonl(d / f"{name}.jsonl", [session("s1"), session("s2")])
    return [str(d / "sysA.jsonl"), str(d / "sysB.jsonl")]


def _arena(d: Path, *extra: str) -> list[str]:
    return [
        "arena",
        *_systems(d),
        "--out",
        str(d / "out"),
        "--provider",
        "offline",
        "--quiet",
        *extra,
    ]


def _pairs_line(d: Path, line: str) -> list[str]:
    (d / "pairs.jsonl").write_text(line + "\n", encoding="utf-8")
    return _arena(d, "--pairs", str(d / "pairs.jsonl"))


def _pair_turn(turn: str) -> Callable[[Path], list[str]]:
    return lambda d: _pairs_line(
        d, f'{{"session_id": "s1", "turn": {turn}, "a": "sysA", "b": "sysB"}}'
    )


def _parse(d: Path, name: str, content: str, *extra: str) -> list[str]:
    (d / name).write_text(content, encoding="utf-8")
    return ["parse", str(d / name), "-o", str(d / "out.jsonl"), *extra]


def _markdown(answer: str, sources: str = "[1] https://a.example/x") -> str:
    return f"# Session: m1\n\n## Query: what is x\n\n{answer}\n\nSources:\n{sources}\n"


def _preferences(d: Path, rows: Sequence[str] | str) -> list[str]:
    """``meta --preferences`` over two sessions with a pairwise-free offline judge."""
    write_jsonl(d / "sessions.jsonl", [session("s1"), session("s2")])
    text = rows if isinstance(rows, str) else "".join(r + "\n" for r in rows)
    (d / "prefs.jsonl").write_text(text, encoding="utf-8")
    return [
        "meta",
        str(d / "sessions.jsonl"),
        "--judge",
        "satisfaction.urs",
        "--provider",
        "offline",
        "--quiet",
        "--preferences",
        str(d / "prefs.jsonl"),
    ]


# -- CrowdRAG ----------------------------------------------------------------------------

_PASSAGES = [{"index": i, "id": f"doc#{i}", "text": f"Passage {i} text."} for i in range(3)]


def _crowdrag(
    d: Path,
    *,
    text: str = "Servers host websites [0, 1].",
    responses: str | None = None,
    sources: str | None = None,
    ratings: str | None = None,
    topic: str = "t1",
) -> list[str]:
    folder = d / "crowdrag"
    folder.mkdir()
    answers = [("r1", "llm", "bullet", text), ("r2", "human", "essay", "A server [1].")]
    (folder / "responses.jsonl").write_text(
        responses
        if responses is not None
        else "".join(
            json.dumps(
                {"response": r, "topic": topic, "query": "q", "style": s, "writer": w, "text": t}
            )
            + "\n"
            for r, w, s, t in answers
        ),
        encoding="utf-8",
    )
    (folder / "sources.jsonl").write_text(
        sources
        if sources is not None
        else json.dumps({"topic": topic, "query": "q", "references": _PASSAGES}) + "\n",
        encoding="utf-8",
    )
    gold = {
        f"{c}_gold": "a"
        for c in (
            "correctness_topical",
            "coherence_logical",
            "coherence_stylistic",
            "coverage_broad",
            "coverage_deep",
            "consistency_internal",
            "quality_overall",
        )
    }
    (folder / "ratings.jsonl").write_text(
        ratings
        if ratings is not None
        else json.dumps({"query_id": topic, "response_a": "r1", "response_b": "r2", **gold}) + "\n",
        encoding="utf-8",
    )
    return ["parse", str(folder), "--format", "crowdrag", "-o", str(d / "converted")]


def _deep(kind: str = "array", depth: int = 100_000) -> str:
    return "[" * depth + "]" * depth if kind == "array" else '{"a":' * depth + "1" + "}" * depth


# -- the cache -----------------------------------------------------------------------------


def _cache_with_run(d: Path, **row: Any) -> list[str]:
    """A cache file whose one ``cache_runs`` row has been edited to ``row``'s values."""
    from genir_eval.llm.store.cache import Cache

    path = d / "cache.sqlite"
    Cache(path).close()
    values = {
        "run_id": "0123456789abcdef",
        "started": 1.0,
        "finished": 2.0,
        "provider": "openai",
        "model": "m",
        "mode": "read-write",
        "stats": json.dumps({"hits": 1, "misses": 2, "calls": 2}),
        **row,
    }
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO cache_runs (run_id, started, finished, provider, model, mode, stats) "
            "VALUES (:run_id, :started, :finished, :provider, :model, :mode, :stats)",
            values,
        )
    db.close()
    return ["cache", "stats", "--cache", str(path)]


def _scenario_judges(d: Path, n: int) -> list[str]:
    write_jsonl(d / "s.jsonl", [session("s1")])
    lines = ["version = 1", 'name = "many"', "[input]", 'path = "s.jsonl"', 'format = "jsonl"']
    for i in range(n):
        lines += ["[[judges]]", 'name = "link_usefulness.dna"', f'id = "j{i}"']
    lines += ["[output]", 'dir = "run"']
    (d / "many.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["run", str(d / "many.toml"), "--quiet"]


def _scenario_text(d: Path, extra: str) -> list[str]:
    write_jsonl(d / "s.jsonl", [session("s1")])
    text = f'version = 1\nname = "deep"\n[input]\npath = "s.jsonl"\n{extra}\n'
    (d / "deep.toml").write_text(text, encoding="utf-8")
    return ["run", str(d / "deep.toml"), "--quiet"]


PREFERENCE_ROW = '{"session_a": "s1", "session_b": "s2", "winner": "a"}'


def _criteria(d: Path, n: int) -> list[str]:
    rows = [
        json.dumps({"session_a": "s1", "session_b": "s2", "winner": "a", "criterion": f"c{i}"})
        for i in range(n)
    ]
    return _preferences(d, rows)


def _two_ids(first: str, second: str) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        write_jsonl(d / "ids.jsonl", [session(first), session(second)])
        return ["parse", str(d / "ids.jsonl"), "-o", str(d / "out.jsonl")]

    return build


def _two_markdown_ids(first: str, second: str) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        text = (
            _markdown("X [1].").replace("m1", first)
            + "\n"
            + _markdown("Y [1].").replace("m1", second)
        )
        return _parse(d, "ids.md", text)

    return build


LINKS = [{"id": 1, "url": "https://a.example/x", "title": "A"}]

CASES: list[Case] = [
    # ---- class 1: hangs --------------------------------------------------------------------
    Case(
        "jsonl-marker-then-spaces",
        1,
        lambda d: _parse(
            d, "s.jsonl", json.dumps(session("s1", "See [1]." + SPACES + "end")) + "\n"
        ),
        0,
        "parsed 1 session",
    ),
    Case(
        "jsonl-spaces-then-bracket",
        1,
        lambda d: _parse(d, "s.jsonl", json.dumps(session("s1", "See [1]" + SPACES + "[x")) + "\n"),
        0,
        "parsed 1 session",
    ),
    Case(
        "jsonl-statement-gap-spaces",
        1,
        lambda d: _parse(
            d,
            "s.jsonl",
            json.dumps(
                {
                    "session_id": "s1",
                    "turns": [
                        {
                            "index": 1,
                            "query": "q",
                            "response_text": "A." + SPACES + "B.",
                            "statements": [
                                {"text": "A.", "citations": [1]},
                                {"text": "B.", "citations": []},
                            ],
                            "links": LINKS,
                        }
                    ],
                }
            )
            + "\n",
        ),
        0,
        "parsed 1 session",
    ),
    Case(
        "markdown-marker-then-spaces",
        1,
        lambda d: _parse(d, "s.md", _markdown("See [1]." + SPACES + "end")),
        0,
        "parsed 1 session",
    ),
    Case(
        "markdown-sources-heading-spaces",
        1,
        lambda d: _parse(d, "s.md", _markdown("See [1].\nSources" + SPACES + "x")),
        0,
        "parsed 1 session",
    ),
    Case(
        "markdown-source-line-long-url",
        1,
        lambda d: _parse(d, "s.md", _markdown("See [1].", "[1] http://a" + "a" * 100_000 + " x")),
        2,
        "has no url",
    ),
    Case(
        "markdown-source-title-spaces",
        1,
        lambda d: _parse(d, "s.md", _markdown("See [1].", "[1] title" + SPACES + "x")),
        2,
        "s.md",
    ),
    Case(
        "markdown-source-dash-spaces",
        1,
        lambda d: _parse(
            d, "s.md", _markdown("See [1].", "[1] t -" + SPACES + "- http://a.example/x" + SPACES)
        ),
        0,
        "parsed 1 session",
    ),
    Case(
        "crowdrag-bracket-30-digits",
        1,
        lambda d: _crowdrag(d, text="Servers [" + "1" * 30 + " host websites [0]."),
        0,
        "answers",
    ),
    Case(
        "crowdrag-bracket-digits-spaces",
        1,
        lambda d: _crowdrag(d, text="Servers [" + "1 " * 50_000 + "x host websites [0]."),
        0,
        "answers",
    ),
    Case(
        "crowdrag-spaces-then-text",
        1,
        lambda d: _crowdrag(d, text="Servers [0]." + SPACES + "done"),
        0,
        "answers",
    ),
    Case(
        "scenario-2000-judges",
        1,
        lambda d: _scenario_judges(d, 2000),
        2,
        "at most",
    ),
    Case(
        "preferences-many-criteria",
        1,
        lambda d: _criteria(d, 5000),
        2,
        "criteria",
    ),
    # ---- class 6: tracebacks on well-formed hostile input ----------------------------------
    Case("pairs-deep-array", 6, lambda d: _pairs_line(d, _deep("array")), 2, "pairs.jsonl, line 1"),
    Case(
        "pairs-deep-object", 6, lambda d: _pairs_line(d, _deep("object")), 2, "pairs.jsonl, line 1"
    ),
    Case(
        "gold-deep-array",
        6,
        lambda d: (
            (d / "gold.jsonl").write_text(_deep() + "\n")
            and _arena(d, "--gold", str(d / "gold.jsonl"))
        ),
        2,
        "gold.jsonl, line 1",
    ),
    Case(
        "preferences-deep-object",
        6,
        lambda d: _preferences(d, [_deep("object")]),
        2,
        "prefs.jsonl, line 1",
    ),
    Case(
        "preferences-deep-array",
        6,
        lambda d: _preferences(d, [_deep("array")]),
        2,
        "prefs.jsonl, line 1",
    ),
    Case(
        "crowdrag-responses-deep",
        6,
        lambda d: _crowdrag(d, responses=_deep("object") + "\n"),
        2,
        "responses.jsonl, line 1",
    ),
    Case(
        "crowdrag-sources-deep",
        6,
        lambda d: _crowdrag(d, sources=_deep("array") + "\n"),
        2,
        "sources.jsonl, line 1",
    ),
    Case(
        "crowdrag-ratings-deep",
        6,
        lambda d: _crowdrag(d, ratings=_deep("object") + "\n"),
        2,
        "ratings.jsonl, line 1",
    ),
    Case(
        "sources-file-deep",
        6,
        lambda d: (
            (d / "src.jsonl").write_text(_deep("object") + "\n")
            and _parse(
                d, "s.jsonl", json.dumps(session("s1")) + "\n", "--sources", str(d / "src.jsonl")
            )
        ),
        2,
        "src.jsonl, line 1",
    ),
    Case(
        "scenario-toml-deep-array",
        6,
        lambda d: _scenario_text(d, "x = " + _deep("array")),
        2,
        "nested too deeply",
    ),
    Case(
        "scenario-toml-deep-table",
        6,
        lambda d: _scenario_text(d, "x = " + "{a=" * 100_000 + "1" + "}" * 100_000),
        2,
        "nested too deeply",
    ),
    Case(
        "arena-option-deep",
        6,
        lambda d: _arena(d, "--option", "style=" + _deep("array", 30_000)),
        2,
        "--option style",
    ),
    Case(
        "meta-option-deep",
        6,
        lambda d: (
            _preferences(d, [PREFERENCE_ROW])[:-2] + ["--option", "x=" + _deep("array", 30_000)]
        ),
        2,
        "--option x",
    ),
    Case(
        "jsonl-deep",
        6,
        lambda d: _parse(d, "s.jsonl", _deep("object") + "\n"),
        2,
        "s.jsonl, line 1",
    ),
    Case("pairs-turn-1e20", 6, _pair_turn("1e20"), 2, "turn"),
    Case("pairs-turn-huge-int", 6, _pair_turn("1" + "0" * 30), 2, "turn"),
    Case("pairs-turn-nan", 6, _pair_turn("NaN"), 2, "turn"),
    Case("pairs-turn-infinity", 6, _pair_turn("Infinity"), 2, "turn"),
    Case("pairs-turn-negative", 6, _pair_turn("-3"), 2, "turn"),
    Case("pairs-turn-float", 6, _pair_turn("1.5"), 2, "turn"),
    Case("pairs-turn-bool", 6, _pair_turn("true"), 2, "turn"),
    Case(
        "pairs-session-surrogate",
        6,
        lambda d: _pairs_line(d, '{"session_id": "\\ud800", "turn": 1, "a": "sysA", "b": "sysB"}'),
        2,
        "pairs.jsonl, line 1",
    ),
    Case(
        "jsonl-session-surrogate",
        6,
        lambda d: _parse(d, "s.jsonl", json.dumps(session("s\ud800")) + "\n"),
        2,
        "surrogate",
    ),
    Case(
        "preferences-session-surrogate",
        6,
        lambda d: _preferences(d, ['{"session_a": "s\\ud800", "session_b": "s2", "winner": "a"}']),
        2,
        "prefs.jsonl, line 1",
    ),
    Case(
        "preferences-criterion-surrogate",
        6,
        lambda d: _preferences(
            d, ['{"session_a": "s1", "session_b": "s2", "winner": "a", "criterion": "\\udfff"}']
        ),
        2,
        "prefs.jsonl, line 1",
    ),
    Case(
        "crowdrag-topic-surrogate",
        6,
        lambda d: _crowdrag(d, topic="t\ud800"),
        2,
        "surrogate",
    ),
    Case(
        "crowdrag-text-surrogate",
        6,
        lambda d: _crowdrag(d, text="Servers \udc80 host [0]."),
        2,
        "surrogate",
    ),
    Case(
        "sources-file-surrogate",
        6,
        lambda d: (
            write_jsonl(d / "src.jsonl", [{"url": "https://a.example/x", "text": "t\ud800"}])
            and _parse(
                d, "s.jsonl", json.dumps(session("s1")) + "\n", "--sources", str(d / "src.jsonl")
            )
        ),
        2,
        "src.jsonl, line 1",
    ),
    Case(
        "arena-system-name-surrogate",
        6,
        lambda d: [
            "arena",
            "sys\udcff=" + _systems(d)[0],
            *_systems(d)[1:],
            "--out",
            str(d / "out"),
            "--provider",
            "offline",
            "--quiet",
        ],
        2,
        "system",
    ),
    Case(
        "cache-stats-run-stats-not-json",
        6,
        lambda d: _cache_with_run(d, stats="{not json"),
        2,
        "cache_runs",
    ),
    Case(
        "cache-stats-run-stats-list",
        6,
        lambda d: _cache_with_run(d, stats="[1, 2]"),
        2,
        "cache_runs",
    ),
    Case(
        "cache-stats-run-started-text",
        6,
        lambda d: _cache_with_run(d, started="yesterday"),
        2,
        "cache_runs",
    ),
    Case(
        "cache-stats-run-id-null",
        6,
        lambda d: _cache_with_run(d, run_id=None),
        2,
        "cache_runs",
    ),
    Case(
        "cache-stats-run-started-huge",
        6,
        lambda d: _cache_with_run(d, started=1e300),
        2,
        "cache_runs",
    ),
    Case(
        "cache-stats-run-hits-text",
        6,
        lambda d: _cache_with_run(
            d, stats=json.dumps({"hits": "many", "misses": [], "calls": None})
        ),
        2,
        "cache_runs",
    ),
    # ---- class 8: look-alike session ids ---------------------------------------------------
    Case("jsonl-id-zero-width-space", 8, _two_ids("s1", "s1\u200b"), 2, "line 1"),
    Case("jsonl-id-nfd", 8, _two_ids("caf\u00e9", "cafe\u0301"), 2, "line 1"),
    Case("jsonl-id-soft-hyphen", 8, _two_ids("s\u00ad1", "s1"), 2, "line 1"),
    Case("jsonl-id-bom", 8, _two_ids("\ufeffs1", "s1"), 2, "line 1"),
    Case("jsonl-id-word-joiner", 8, _two_ids("s\u20601", "s1"), 2, "line 1"),
    Case("jsonl-id-nbsp", 8, _two_ids("s 1", "s\u00a01"), 2, "line 1"),
    Case("jsonl-id-variation-selector", 8, _two_ids("s1\ufe0f", "s1"), 2, "line 1"),
    Case("markdown-id-zero-width-joiner", 8, _two_markdown_ids("m1", "m\u200d1"), 2, "line 1"),
    Case(
        "crowdrag-topic-zero-width-space",
        8,
        lambda d: _crowdrag(
            d,
            sources="".join(
                json.dumps({"topic": t, "query": "q", "references": _PASSAGES}) + "\n"
                for t in ("t1", "t1\u200b")
            ),
        ),
        2,
        "line 1",
    ),
    Case("jsonl-ids-distinct-still-read", 8, _two_ids("s1", "s2"), 0, "parsed 2 sessions"),
]


def run_case(case: Case, folder: Path, *, timeout: float | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``case`` run in ``folder``: in this process, or in a
    subprocess (``timeout`` seconds at most; exit -1 when it runs out)."""
    argv = case.build(folder)
    if timeout is None:
        import contextlib
        import io

        from genir_eval.cli import main

        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        return code, out.getvalue(), err.getvalue()
    import os
    import subprocess
    import sys

    script = "import sys; from genir_eval.cli import main; sys.exit(main(sys.argv[1:]))"
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, *argv],
            capture_output=True,
            timeout=timeout,
            cwd=folder,
            env={**os.environ, "PYTHONIOENCODING": "utf-8:surrogateescape"},
            errors="replace",
        )
    except subprocess.TimeoutExpired:
        return -1, "", f"no answer in {timeout:.0f} s"
    return done.returncode, done.stdout, done.stderr


def outcome(case: Case, code: int, out: str, err: str) -> str | None:
    """What is wrong with a case's run, or ``None`` when it did what the case says."""
    if code == -1:
        return err
    if "Traceback" in err:
        return "traceback: " + err.strip().splitlines()[-1]
    if code != case.exit:
        return f"exit {code}, expected {case.exit}: {(err or out).strip()[-300:]}"
    where = err if case.exit else out + err
    if case.fragment not in where:
        return f"{case.fragment!r} not in {where.strip()[-300:]!r}"
    if case.exit == 2 and len(err.strip().splitlines()) != 1:
        return f"not one line: {err.strip()[-300:]!r}"
    return None


if __name__ == "__main__":
    import sys
    import tempfile
    from collections import Counter

    timeout = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    failed: Counter[int] = Counter()
    total: Counter[int] = Counter()
    for case in CASES:
        total[case.klass] += 1
        with tempfile.TemporaryDirectory() as tmp:
            code, out, err = run_case(case, Path(tmp), timeout=timeout)
        problem = outcome(case, code, out, err)
        if problem:
            failed[case.klass] += 1
            print(f"FAIL class {case.klass} {case.name}: {problem}", flush=True)
        else:
            print(f"ok   class {case.klass} {case.name}", flush=True)
    for klass in sorted(total):
        print(f"class {klass}: {failed[klass]} of {total[klass]} cases fail")
