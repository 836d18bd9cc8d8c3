"""A hostile corpus of hand-edited label stores and arena folders (issue 46, class 3): every
reader (`label export`, `label agreement`, `meta --labels`, `run --labels`, the server's
workspace) refuses a bad row with the file, table, row id, field and value, exit 2, no
traceback; a file that is not a genir-eval store is refused untouched; another run's store
and logs rewritten since the run are refused; an item key round-trips any name."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from genir_eval.cli import main

Edit = Callable[[sqlite3.Connection], None]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """``genir-eval ARGV`` in this process: its exit code and what it printed on stderr (a
    traceback would be an exception here, failing the test)."""
    code = main(list(argv))
    return code, capsys.readouterr().err


def _first_key(db: sqlite3.Connection, queue: str) -> str:
    return str(db.execute("SELECT item FROM queue WHERE queue=? LIMIT 1", (queue,)).fetchone()[0])


@pytest.fixture(scope="module")
def labelled(hostile_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store over the hostile run with a label in every queue (made through the
    workspace, as the server makes it)."""
    from genir_eval.runner.label.queue import open_workspace

    path = tmp_path_factory.mktemp("labelled") / "labels.sqlite"
    space = open_workspace(hostile_run, store=path)
    for name, queue in space.queues.items():
        value = queue.choices[-1].value
        for item in queue.items[:2]:
            space.store.save(name, item.key, "ann", value=value)
    return path


def _edited(labelled: Path, tmp_path: Path, edit: Edit) -> Path:
    path = tmp_path / "labels.sqlite"
    with sqlite3.connect(labelled) as source, sqlite3.connect(path) as copy:
        source.backup(copy)
    with sqlite3.connect(path) as db:
        edit(db)
    return path


def _set_value(queue: str, value: object) -> Edit:
    def edit(db: sqlite3.Connection) -> None:
        db.execute(
            "UPDATE events SET value=? WHERE id=(SELECT MIN(id) FROM events WHERE queue=?)",
            (value, queue),
        )

    return edit


def _set_item(queue: str, item: str) -> Edit:
    def edit(db: sqlite3.Connection) -> None:
        db.execute(
            "UPDATE events SET item=? WHERE id=(SELECT MIN(id) FROM events WHERE queue=?)",
            (item, queue),
        )

    return edit


def _set_event(field: str, value: object) -> Edit:
    def edit(db: sqlite3.Connection) -> None:
        db.execute(f"UPDATE events SET {field}=? WHERE id=(SELECT MIN(id) FROM events)", (value,))

    return edit


#: (case, edit, words the error must hold besides the file and table): each a hand edit a
#: labeller or a tool could make, none of which a reader may use or crash on.
CORPUS: list[tuple[str, Edit, tuple[str, ...]]] = [
    ("value abc", _set_value("link_usefulness", "abc"), ("value", "'abc'")),
    ("value 9e999", _set_value("link_usefulness", float("inf")), ("value", "inf")),
    ("link usefulness 7", _set_value("link_usefulness", 7), ("value", "7")),
    ("link usefulness -1", _set_value("link_usefulness", -1), ("value", "-1")),
    ("support 0.5", _set_value("citation_support", 0.5), ("value", "0.5")),
    ("satisfaction 9", _set_value("turn_satisfaction", 9), ("value", "9")),
    ("session satisfaction 2.5", _set_value("session_satisfaction", 2.5), ("value", "2.5")),
    ("value a blob", _set_value("link_usefulness", b"\x00\x01"), ("value",)),
    ("item link:garbage", _set_item("link_usefulness", "link:garbage"), ("item", "link:garbage")),
    ("item of another kind", _set_item("link_usefulness", 'turn:["s-plain",1]'), ("item",)),
    ("item a number", _set_item("link_usefulness", 5), ("item",)),
    ("item of no queue row", _set_item("link_usefulness", 'link:["nowhere",1,1]'), ("queue",)),
    ("labeller <script>", _set_event("labeller", "<script>"), ("labeller", "<script>")),
    ("seconds -5", _set_event("seconds", -5), ("seconds", "-5")),
    ("seconds text", _set_event("seconds", "soon"), ("seconds", "'soon'")),
    ("saved_at garbage", _set_event("saved_at", "yesterday"), ("saved_at", "yesterday")),
    ("judge_label nan text", _set_event("judge_label", "NaN"), ("judge_label", "'NaN'")),
    ("queue unknown", _set_event("queue", "vibes"), ("queue", "vibes")),
    ("skip with a value", _set_event("action", "skip"), ("value",)),
]


@pytest.mark.parametrize(("case", "edit", "words"), CORPUS, ids=[c[0] for c in CORPUS])
def test_export_refuses_a_bad_row_located(
    case: str,
    edit: Edit,
    words: tuple[str, ...],
    labelled: Path,
    hostile_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = _edited(labelled, tmp_path, edit)
    out = tmp_path / "export"
    code, err = _cli(
        capsys, "label", "export", str(hostile_run), "--store", str(store), "--out", str(out)
    )
    assert code == 2, err
    assert str(store) in err and "table events" in err and "id " in err, err
    for word in words:
        assert word in err, err
    assert not (out / "labels.jsonl").exists(), "nothing is written from a bad store"


@pytest.mark.parametrize("case", ["value abc", "support 0.5", "item link:garbage"])
def test_every_reader_refuses_a_bad_row(
    case: str,
    labelled: Path,
    hostile_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    edit = next(e for c, e, _ in CORPUS if c == case)
    store = str(_edited(labelled, tmp_path, edit))
    monkeypatch.chdir(hostile_run.parent)
    for argv in (
        ("label", "agreement", str(hostile_run), "--store", store),
        ("meta", "sessions.jsonl", "--judge", "link_usefulness.dna", "--labels", store),
        ("run", "hostile.toml", "--labels", store, "--out", str(tmp_path / "run")),
    ):
        code, err = _cli(capsys, *argv)
        assert code == 2 and "table events" in err, (argv, err)


def test_a_valid_edit_is_read(
    labelled: Path, hostile_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The corpus's control: a store edited within the rules (a label moved to another
    value of its scale) is read, and the value exported is the one written."""
    store = _edited(labelled, tmp_path, _set_value("link_usefulness", 1))
    out = tmp_path / "export"
    code, err = _cli(
        capsys, "label", "export", str(hostile_run), "--store", str(store), "--out", str(out)
    )
    assert code == 0, err
    rows = [json.loads(line) for line in (out / "labels.jsonl").read_text().splitlines()]
    first = min((r for r in rows if r["queue"] == "link_usefulness"), key=lambda r: r["id"])
    assert first["value"] == 1


# -- files that are not this run's store -------------------------------------------------


def _foreign(path: Path, journal: str) -> Path:
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA journal_mode={journal}")
        db.execute("CREATE TABLE cache (key TEXT PRIMARY KEY, reply TEXT)")
        db.execute("INSERT INTO cache VALUES ('k', 'v')")
    db.close()
    return path


@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_another_sqlite_file_is_refused_untouched(
    journal: str,
    hostile_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache = _foreign(tmp_path / "cache.sqlite", journal)
    before = cache.read_bytes()
    beside = sorted(p.name for p in tmp_path.iterdir())
    monkeypatch.chdir(hostile_run.parent)
    for argv in (
        ("meta", "sessions.jsonl", "--judge", "link_usefulness.dna", "--labels", str(cache)),
        ("label", "agreement", str(hostile_run), "--store", str(cache)),
        ("label", "export", str(hostile_run), "--store", str(cache), "--out", str(tmp_path / "o")),
    ):
        code, err = _cli(capsys, *argv)
        assert code == 2 and "not a genir-eval label store" in err, (argv, err)
    assert cache.read_bytes() == before
    if journal != "wal":  # reading a WAL file, even read-only, opens its -wal and -shm
        assert sorted(p.name for p in tmp_path.iterdir()) == beside, "no -wal or -shm made"
    with sqlite3.connect(cache) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == journal
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    db.close()
    assert tables == {"cache"}


def test_a_file_that_is_not_sqlite_is_refused_untouched(
    hostile_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = tmp_path / "journal.jsonl"
    journal.write_text('{"version": 1, "key": "x"}\n', encoding="utf-8")
    before = journal.read_bytes()
    code, err = _cli(capsys, "label", "agreement", str(hostile_run), "--store", str(journal))
    assert code == 2 and str(journal) in err and "label store" in err, err
    assert journal.read_bytes() == before


def _run_of(folder: Path, sessions_from: Path, keep: int) -> Path:
    """Another run: the hostile scenario over the first ``keep`` of its sessions."""
    from genir_eval.runner.run import run_scenario

    folder.mkdir(parents=True)
    lines = (sessions_from / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    (folder / "sessions.jsonl").write_text("\n".join(lines[:keep]) + "\n", encoding="utf-8")
    shutil.copy(sessions_from / "hostile.toml", folder / "hostile.toml")
    return run_scenario(folder / "hostile.toml").directory


@pytest.mark.slow
def test_another_runs_store_is_refused(
    labelled: Path, hostile_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = _run_of(tmp_path / "b", hostile_run.parent, keep=3)
    store = _edited(labelled, tmp_path, lambda db: None)
    before = sqlite3.connect(store).execute("SELECT COUNT(*) FROM queue").fetchone()[0]
    code, err = _cli(capsys, "label", "agreement", str(other), "--store", str(store))
    assert code == 2 and "another run" in err, err
    code, err = _cli(
        capsys, "label", "export", str(other), "--store", str(store), "--out", str(tmp_path / "o")
    )
    assert code == 2 and "another run" in err, err
    code, err = _cli(
        capsys, "meta", str(other.parent / "sessions.jsonl"), "--judge", "link_usefulness.dna",
        "--labels", str(store),
    )  # fmt: skip
    assert code == 2 and "other logs" in err, err
    after = sqlite3.connect(store).execute("SELECT COUNT(*) FROM queue").fetchone()[0]
    assert after == before, "no queue of the other run was added to the store"


@pytest.mark.slow
def test_logs_rewritten_since_the_run_are_refused(
    hostile_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run_of(tmp_path / "c", hostile_run.parent, keep=6)
    logs = run.parent / "sessions.jsonl"
    logs.write_text(logs.read_text(encoding="utf-8").replace("Tea", "Coffee"), encoding="utf-8")
    code, err = _cli(capsys, "label", "agreement", str(run), "--store", str(tmp_path / "s"))
    assert code == 2 and "changed since the run" in err and "sessions.jsonl" in err, err
    assert not (tmp_path / "s").exists()


# -- item keys --------------------------------------------------------------------------

#: Names a log or an arena may hold (sessions of URGE are numbers; system names are the
#: user's words): each must read back as it was.
NAMES = ["s-1", "a:b", "a::b:", ":", '"quoted"', "[1,2]", "名前:", "x\\y", "1"]


@pytest.mark.parametrize("name", NAMES)
def test_an_item_key_round_trips_any_name(name: str) -> None:
    from genir_eval.runner.label.keys import item_key, parse_item_key

    for kind, parts in (
        ("link", (name, 3, 2)),
        ("support", (name, 1, 2, 3)),
        ("turn", (name, 4)),
        ("session", (name,)),
        ("pair", (name, 2, f"sys:{name}", name + ":b")),
    ):
        assert parse_item_key(item_key(kind, *parts)) == (kind, parts)


def test_a_pair_of_systems_with_colons_exports_their_names(tmp_path: Path) -> None:
    """A system named ``gpt:4o`` against ``claude:3``: the preference row names both as
    they were (``rsplit(':', 3)`` made the session ``s1:2:gpt`` and the turn ``4o``)."""
    from genir_eval.runner.label.keys import item_key
    from genir_eval.runner.label.pairs import preference_rows

    (row,) = preference_rows({item_key("pair", "s1", 2, "gpt:4o", "claude:3"): 1.0})
    assert (row.session, row.turn, row.system_a, row.system_b, row.winner) == (
        "s1",
        2,
        "gpt:4o",
        "claude:3",
        "a",
    )


def test_a_version_1_store_is_migrated_or_refused(tmp_path: Path) -> None:
    from genir_eval.errors import InputError
    from genir_eval.runner.label.keys import item_key
    from genir_eval.runner.label.store import LabelStore

    def v1(path: Path, keys: list[tuple[str, str]]) -> Path:
        with sqlite3.connect(path) as db:
            db.executescript(
                "CREATE TABLE store (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                "CREATE TABLE queue (queue TEXT NOT NULL, position INTEGER NOT NULL, item TEXT "
                "NOT NULL, judge_label REAL, PRIMARY KEY (queue, item));"
                "CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL,"
                " item TEXT NOT NULL, labeller TEXT NOT NULL, action TEXT NOT NULL, value REAL,"
                " comment TEXT NOT NULL DEFAULT '', judge_label REAL, judge_shown INTEGER NOT "
                "NULL DEFAULT 0, seconds REAL, saved_at TEXT NOT NULL, undone_at TEXT);"
                "INSERT INTO store VALUES ('version', '1');"
            )
            for i, (queue, key) in enumerate(keys):
                db.execute("INSERT INTO queue VALUES (?, ?, ?, NULL)", (queue, i, key))
                db.execute(
                    "INSERT INTO events (queue, item, labeller, action, value, saved_at) "
                    "VALUES (?, ?, 'ann', 'label', 1, '2026-01-01T00:00:00+00:00')",
                    (queue, key),
                )
        db.close()
        return path

    plain = v1(
        tmp_path / "v1.sqlite",
        [("link_usefulness", "link:s:x:1:2"), ("pairwise", "pair:s:1:big:small")],
    )
    with pytest.raises(InputError, match="version 1.*migrates it"):
        LabelStore(plain, readonly=True)
    store = LabelStore(plain, create=True)
    assert {e.item for e in store.events()} == {
        item_key("link", "s:x", 1, 2),
        item_key("pair", "s", 1, "big", "small"),
    }
    ambiguous = v1(tmp_path / "v1b.sqlite", [("pairwise", "pair:s:1:gpt:4o:small")])
    with pytest.raises(InputError, match="ambiguous"):
        LabelStore(ambiguous, create=True)
    with sqlite3.connect(ambiguous) as db:
        assert db.execute("SELECT item FROM events").fetchone()[0] == "pair:s:1:gpt:4o:small"
    db.close()


# -- arena folders ------------------------------------------------------------------------


def _arena(folder: Path, document: object, pairs: list[object]) -> Path:
    folder.mkdir()
    (folder / "arena.json").write_text(json.dumps(document), encoding="utf-8")
    (folder / "pairs.jsonl").write_text(
        "".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8"
    )
    return folder


PAIR = {"session_id": "s-plain", "turn": 1, "a": "big", "b": "small", "winner": "a"}
ARENAS: list[tuple[str, object, list[object], tuple[str, ...]]] = [
    ("arena.json a list", [], [PAIR], ("arena.json", "a JSON object")),
    ("turn x", {"inputs": []}, [{**PAIR, "turn": "x"}], ("line 1", "turn", "'x'")),
    ("a row a list", {"inputs": []}, [PAIR, [1, 2]], ("line 2", "a JSON object")),
    ("no system b", {"inputs": []}, [{**PAIR, "b": None}], ("line 1", "b:")),
    ("inputs a string", {"inputs": "x.jsonl"}, [PAIR], ("arena.json", "inputs")),
    ("an input without a path", {"inputs": [{"name": "big"}]}, [PAIR], ("inputs, entry 1",)),
]


@pytest.mark.parametrize(("case", "document", "pairs", "words"), ARENAS, ids=[a[0] for a in ARENAS])
def test_an_arena_folder_of_the_wrong_shape_is_a_located_error(
    case: str,
    document: object,
    pairs: list[object],
    words: tuple[str, ...],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = _arena(tmp_path / "arena", document, pairs)
    code, err = _cli(capsys, "label", "agreement", str(folder), "--store", str(tmp_path / "s"))
    assert code == 2, err
    for word in words:
        assert word in err, err
