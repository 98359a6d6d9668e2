"""Every earlier schema's store, as its own code wrote it (tests/fixtures/stores, made by
`make_stores.py` from those commits), opens for writing with this code: it is migrated in place
to the current schema, the same a new store gets, and every row it held is still there and
served. Read-only opens migrate nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from judge.judgment import DimensionVerdict, QuestionAnswer
from judge.store import READABLE_VERSIONS, STORE_VERSION, CaseRef, KeyParts, Store, StoredBatch

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "stores").glob("store-*.sql"))
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
    """A new schema version brings a fixture written by the code before it."""
    assert {f.name.split("-")[1].lstrip("v") for f in FIXTURES} == set(READABLE_VERSIONS)


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.stem)
def test_an_earlier_store_is_migrated_with_its_rows_kept(fixture: Path, tmp_path: Path) -> None:
    path = build(fixture, tmp_path / "old.sqlite")
    before = contents(path)
    Store(path).close()
    after = contents(path)
    assert version(path) == STORE_VERSION
    Store(tmp_path / "new.sqlite").close()
    assert schema(path) == schema(tmp_path / "new.sqlite")
    for table, rows in before.items():
        if table != "meta":
            assert after[table] == rows, table
    assert {r for r in before["meta"] if r[0] != "store_version"} <= set(after["meta"])


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.stem)
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


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.stem)
def test_reading_an_earlier_store_writes_nothing(fixture: Path, tmp_path: Path) -> None:
    path = build(fixture, tmp_path / "old.sqlite")
    before, shape = contents(path), schema(path)
    with Store(path, readonly=True) as store:
        assert store.get(ANSWERED) is not None and store.stats()["judgments"] == 2
    assert contents(path) == before and schema(path) == shape
