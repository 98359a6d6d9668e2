"""Every earlier schema's store, as its own code wrote it (tests/fixtures/stores, made by
`make_stores.py` from those commits), opens for writing with this code: it is migrated in place
to the current schema, the same a new store gets, every named migration recorded, and every row
it held is still there and served. Read-only opens migrate nothing. A migration runs once, a
failing one leaves the store as it was, and one that raises the version shuts older code out."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES

from ground_truth import InputError
from judge import DimensionVerdict, QuestionAnswer
from judge.store import (
    READABLE_VERSIONS,
    STORE_VERSION,
    CaseRef,
    KeyParts,
    Store,
    StoredBatch,
    merge_stores,
)
from judge.store.migrations import IDENTITY_COLUMNS, MIGRATIONS, Migration, migrate

STORE_DUMPS = sorted((FIXTURES / "stores").glob("store-*.sql"))
MAIN = next(f for f in STORE_DUMPS if f.name == "store-v2-2225f7b.sql")
"""The last store written before migrations were recorded: what the code before them reads."""
ANSWERED = KeyParts("llm", "openai/m", "p1", "prompt-0", "schema", "rubric-0")


def build(fixture: Path, path: Path) -> Path:
    with sqlite3.connect(path) as db:
        db.executescript(fixture.read_text())
    db.close()
    return path


def query(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as db:
        found = db.execute(sql).fetchall()
    db.close()
    return found


def tables(path: Path) -> list[str]:
    found = query(path, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    return [name for (name,) in found]


def contents(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    return {t: sorted(query(path, f"SELECT * FROM {t}"), key=repr) for t in tables(path)}


def schema(path: Path) -> dict[str, Any]:
    """Each table's columns (name, type, not null, default, key) and each index's columns."""
    shape: dict[str, Any] = {t: query(path, f"PRAGMA table_info({t})") for t in tables(path)}
    for name, table in query(path, "SELECT name, tbl_name FROM sqlite_master WHERE type='index'"):
        shape[f"index {name}"] = (table, query(path, f"PRAGMA index_info({name})"))
    return shape


def version(path: Path) -> str:
    return str(query(path, "SELECT value FROM meta WHERE name = 'store_version'")[0][0])


def test_there_is_a_store_of_every_readable_version() -> None:
    """A new schema version brings a fixture written by the code before it (and so may a
    migration that keeps the version: `store-v3-*` was written before m007)."""
    older = set(READABLE_VERSIONS) - {STORE_VERSION}
    found = {f.name.split("-")[1].lstrip("v") for f in STORE_DUMPS}
    assert older <= found <= set(READABLE_VERSIONS)


@pytest.mark.parametrize("fixture", STORE_DUMPS, ids=lambda f: f.stem)
def test_an_earlier_store_is_migrated_with_its_rows_kept(fixture: Path, tmp_path: Path) -> None:
    path = build(fixture, tmp_path / "old.sqlite")
    before = contents(path)
    Store(path).close()
    after = contents(path)
    assert version(path) == STORE_VERSION
    Store(tmp_path / "new.sqlite").close()
    assert schema(path) == schema(tmp_path / "new.sqlite")
    for table, rows in before.items():
        if table == "migrations":
            assert set(rows) <= set(after[table])
        elif table != "meta":  # a column a migration added is empty in the rows it had
            width = len(rows[0]) if rows else 0
            assert [row[:width] for row in after[table]] == rows, table
            assert all(cell is None for row in after[table] for cell in row[width:]), table
    assert {r for r in before["meta"] if r[0] != "store_version"} <= set(after["meta"])
    assert [name for name, _ in after["migrations"]] == sorted(m.name for m in MIGRATIONS)


def test_a_store_of_this_code_has_the_tables_the_code_before_migrations_wrote(
    tmp_path: Path,
) -> None:
    """The same tables and columns, but for the tables that code does not know and leaves
    alone (`migrations`, m004's reply log, m005's prompt keys) and m006's identity columns on
    `judgments`, which it would leave empty: version 3, which that code refuses. m008 keeps
    `leases` as appended rows with no index or key (version 4): the same columns. m009 indexes
    the start of each hash, and `judgments.key` is no longer the table's key (version 5)."""
    Store(tmp_path / "new.sqlite").close()
    shape = schema(tmp_path / "new.sqlite")
    assert version(tmp_path / "new.sqlite") == "5" == STORE_VERSION
    short = [(0, -2, None)]  # one column: an expression
    assert shape.pop("index judgments_key") == ("judgments", short)
    assert shape.pop("index judgments_prompt") == ("judgments", short)
    shape["judgments"][0] = (0, "key", "TEXT", 0, None, 1)
    added = ("migrations", "replies", "reply_texts", "replies_prompt", "prompt_keys")
    ours = {k: v for k, v in shape.items() if not any(name in k for name in added)}
    assert len(ours) == len(shape) - 2 - 6  # the tables; the keys of migrations, log, prompts
    identity = [c for c in ours["judgments"] if c[1] in IDENTITY_COLUMNS]
    assert [c[1] for c in identity] == list(IDENTITY_COLUMNS)
    ours["judgments"] = [c for c in ours["judgments"] if c not in identity]
    before = schema(build(MAIN, tmp_path / "main.sqlite"))
    for index in ("sqlite_autoindex_leases_1", "sqlite_autoindex_judgments_1", "judgments_prompt"):
        del before[f"index {index}"]
    before["leases"][0] = (0, "key", "TEXT", 1, None, 0)  # NOT NULL, no longer the key
    assert ours == before


@pytest.mark.parametrize("fixture", STORE_DUMPS, ids=lambda f: f.stem)
def test_a_migrated_store_serves_its_answers_and_takes_new_ones(
    fixture: Path, tmp_path: Path
) -> None:
    path = build(fixture, tmp_path / "old.sqlite")
    had_batches = "batches" in tables(path)
    with Store(path) as store:
        served = store.get(ANSWERED)
        stats = store.stats()
        assert served is not None and served.cached
        assert [(a.answer, a.evidence) for a in served.answers] == [("Yes", "quote 0")]
        assert store.params("p1") == {"temperature": 0}
        assert stats["judgments"] == 2 and stats["errors"] == {"server": 1}
        assert [b.id for b in store.batches()] == (["batch_1"] if had_batches else [])
        assert store.claim("k-new", "me", 60).state == "claimed"
        answer = QuestionAnswer(question_id="Q9", answer="No", evidence="new")
        store.put(
            KeyParts("llm", "openai/m", "p1", "prompt-9", "schema", "r"),
            CaseRef("inc-9", "t1", "D1"),
            DimensionVerdict(answers=[answer]),
        )
        store.add_batch(StoredBatch("batch_2", "openai", "m", None, "file-2", "validating"), [])
        assert store.stats()["judgments"] == 3 and len(store.batches()) == len(stats["batches"]) + 1


@pytest.mark.parametrize("fixture", STORE_DUMPS, ids=lambda f: f.stem)
def test_reading_an_earlier_store_writes_nothing(fixture: Path, tmp_path: Path) -> None:
    path = build(fixture, tmp_path / "old.sqlite")
    before, shape = contents(path), schema(path)
    with Store(path, readonly=True) as store:
        assert store.get(ANSWERED) is not None and store.stats()["judgments"] == 2
    assert contents(path) == before and schema(path) == shape


def raw(path: Path) -> contextlib.closing[sqlite3.Connection]:
    """A connection as the store opens one (autocommit: migrations take their own transaction)."""
    return contextlib.closing(sqlite3.connect(path, isolation_level=None))


def run_once(calls: list[str]) -> Migration:
    def m900_notes(db: sqlite3.Connection) -> None:
        calls.append("m900_notes")
        db.execute("CREATE TABLE notes (key TEXT PRIMARY KEY, note TEXT NOT NULL)")

    return Migration("m900_notes", int(STORE_VERSION), m900_notes)


def test_a_new_migration_runs_once_on_a_current_store(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    Store(path).close()
    calls: list[str] = []
    for _ in range(2):
        with raw(path) as db:
            migrate(db, [*MIGRATIONS, run_once(calls)])
    assert calls == ["m900_notes"] and "notes" in tables(path)
    assert [n for (n,) in query(path, "SELECT name FROM migrations")][-1] == "m900_notes"
    with Store(path) as store:  # a migration this code does not know: a newer, compatible one
        store.put(*answer())
    assert version(path) == STORE_VERSION and "m900_notes" in str(contents(path)["migrations"])


def test_a_failing_migration_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    path = build(STORE_DUMPS[0], tmp_path / "old.sqlite")
    before, shape = contents(path), schema(path)

    def m006_broken(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE half (x)")
        raise sqlite3.OperationalError("disk I/O error")

    with raw(path) as db, pytest.raises(sqlite3.OperationalError):
        migrate(db, [*MIGRATIONS, Migration("m006_broken", 2, m006_broken)])
    assert contents(path) == before and schema(path) == shape and version(path) == "1"


def test_a_migration_that_raises_the_version_shuts_out_this_code(tmp_path: Path) -> None:
    """What a breaking change does to the code before it: refused with exit 2, nothing written."""
    path = tmp_path / "s.sqlite"
    Store(path).close()

    def m005_judgments_reply(db: sqlite3.Connection) -> None:
        db.execute("ALTER TABLE judgments ADD COLUMN reply TEXT")

    breaking = Migration("m005_judgments_reply", int(STORE_VERSION) + 1, m005_judgments_reply)
    with raw(path) as db:
        migrate(db, [*MIGRATIONS, breaking])
    before = contents(path)
    with pytest.raises(InputError, match="written by a newer diagnosis-judge"):
        Store(path)
    assert contents(path) == before and version(path) == str(int(STORE_VERSION) + 1)


def test_a_column_a_migration_adds_breaks_neither_writing_nor_merging(tmp_path: Path) -> None:
    """So adding one (issue 24's reply logging, say) is one migration for this code."""
    path, plain = tmp_path / "s.sqlite", tmp_path / "plain.sqlite"
    Store(path).close()

    def m005_latency(db: sqlite3.Connection) -> None:
        for table in ("judgments", "params", "leases"):
            db.execute(f"ALTER TABLE {table} ADD COLUMN latency_s REAL")

    with raw(path) as db:
        migrate(db, [*MIGRATIONS, Migration("m005_latency", int(STORE_VERSION), m005_latency)])
    with Store(path) as store, Store(plain) as other:
        store.put(*answer())
        store.remember_params("p", {"t": 0})
        assert store.claim("k", "me", 60).state == "claimed"
        other.put(KeyParts("j", "m", "p", "other", "s", "r"), *answer()[1:])
    assert merge_stores(path, [plain]).added == 1
    assert merge_stores(tmp_path / "merged.sqlite", [path]).added == 2


def answer() -> tuple[KeyParts, CaseRef, DimensionVerdict]:
    verdict = DimensionVerdict(answers=[QuestionAnswer(question_id="Q1", answer="Yes")])
    return KeyParts("j", "m", "p", "prompt", "s", "r"), CaseRef("i", "t", "D1"), verdict
