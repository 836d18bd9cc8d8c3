"""The arena's memory is bounded by its window of pairs, not by the number of queries; the
window changes no output; the answer store leaves nothing behind."""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path

import pytest

from genir_eval.errors import InputError
from genir_eval.runner.arena import ArenaSettings, System, run_arena

#: each answer cites three sources of this many characters: about 13 KB of JSON an answer
SOURCE_CHARS = 4000


def _session(i: int, system: int, rng: random.Random) -> dict[str, object]:
    words = ("alpha", "beta", "gamma", "delta", "omega", "sigma")
    text = " ".join(rng.choice(words) for _ in range(SOURCE_CHARS // 6))[:SOURCE_CHARS]
    n_links = 1 + (i + system) % 3
    return {
        "version": 1,
        "session_id": f"q{i}",
        "language": "en",
        "turns": [
            {
                "index": 1,
                "query": f"query {i}",
                "response_text": "\n".join(
                    f"- point {k} {text[: 40 * (k + system)]} [{k}]" for k in range(1, n_links + 1)
                ),
                "links": [
                    {"id": k, "url": f"https://e.org/{system}/{k}", "title": f"t{k}", "text": text}
                    for k in range(1, 4)
                ],
            }
        ],
    }


def _systems(folder: Path, queries: int) -> tuple[System, ...]:
    rng = random.Random(queries)
    folder.mkdir()
    systems = []
    for system in range(3):
        path = folder / f"s{system}.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for i in range(queries):
                handle.write(json.dumps(_session(i, system, rng)) + "\n")
        systems.append(System(f"s{system}", path))
    return tuple(systems)


def _arena(systems: tuple[System, ...], out: Path, window: int, **settings: object) -> dict:
    arena = ArenaSettings(systems=systems, out=out, resamples=20, **settings)  # type: ignore[arg-type]
    return run_arena(arena, window=window)


def _traced_peak(systems: tuple[System, ...], out: Path) -> int:
    tracemalloc.start()
    try:
        _arena(systems, out, window=6)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_the_arenas_memory_does_not_grow_with_the_queries(tmp_path: Path) -> None:
    small, large = _systems(tmp_path / "n", 40), _systems(tmp_path / "4n", 160)
    _arena(small, tmp_path / "warm", window=6)  # lazy imports and caches filled once
    peak_small = _traced_peak(small, tmp_path / "out-n")
    peak_large = _traced_peak(large, tmp_path / "out-4n")
    # holding every answer, as the arena once did, would add the 3 x 120 answers of the
    # extra queries: 4.4 MB of their JSON alone, more as parsed records; a window of 6
    # pairs holds 12 answers at most, and each pair keeps a few numbers
    extra_answers = sum(s.path.stat().st_size for s in large) - sum(
        s.path.stat().st_size for s in small
    )
    assert extra_answers > 4_000_000
    assert peak_large - peak_small < extra_answers / 10, (peak_small, peak_large)


def test_the_window_changes_no_output(tmp_path: Path) -> None:
    systems = _systems(tmp_path / "in", 12)
    whole = _arena(systems, tmp_path / "whole", window=10_000, max_pairs=25, seed=3)
    windowed = _arena(systems, tmp_path / "windowed", window=4, max_pairs=25, seed=3)
    rows = (tmp_path / "whole" / "pairs.jsonl").read_text()
    assert rows == (tmp_path / "windowed" / "pairs.jsonl").read_text()
    assert len(rows.splitlines()) == 25
    for key in ("pairs", "systems", "matrix", "style_control", "consistency", "queries"):
        assert whole[key] == windowed[key], key


def test_max_pairs_is_a_seeded_uniform_sample(tmp_path: Path) -> None:
    systems = _systems(tmp_path / "in", 10)  # 10 queries x 3 pairs of systems
    chosen = sorted(random.Random(7).sample(range(30), 9))
    combos = [("s0", "s1"), ("s0", "s2"), ("s1", "s2")]
    expected = [(f"q{i // 3}", *combos[i % 3]) for i in chosen]
    _arena(systems, tmp_path / "out", window=2, max_pairs=9, seed=7)
    rows = [json.loads(x) for x in (tmp_path / "out" / "pairs.jsonl").read_text().splitlines()]
    assert [(r["session_id"], r["a"], r["b"]) for r in rows] == expected


def test_the_answer_store_is_removed(tmp_path: Path) -> None:
    systems = _systems(tmp_path / "in", 3)
    _arena(systems, tmp_path / "out", window=2)
    assert not list((tmp_path / "out").glob(".arena-answers*"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(systems[0].path.read_text().splitlines()[0] + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="not by bad"):
        _arena((systems[0], System("bad", bad)), tmp_path / "out2", window=2)
    assert not list((tmp_path / "out2").glob(".arena-answers*"))
