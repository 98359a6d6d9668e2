"""The store's schema and its version: created in a new store, migrated in an older one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ground_truth.errors import InputError

STORE_VERSION = "2"
"""The store's schema. 1: answers, failed calls, params, leases, meta (batch tables were added
to it later, with a store's first batch); 2: the provider batch tables belong to the schema.
A store of an older version is migrated in place when it is opened for writing (its rows are
kept); one of a newer version is refused (exit 2) rather than written in a shape this version
does not know."""
READABLE_VERSIONS = ("1", STORE_VERSION)
"""Versions a read-only open accepts: a version 1 store reads the same (it may lack batch
tables, which reading allows for)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS judgments (
    key TEXT PRIMARY KEY,
    judge TEXT NOT NULL,
    model TEXT,
    params_hash TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,
    schema_hash TEXT NOT NULL,
    rubric_hash TEXT NOT NULL,
    incident_id TEXT NOT NULL,
    trial TEXT NOT NULL,
    dimension_id TEXT NOT NULL,
    answers TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    requests INTEGER NOT NULL,
    usage TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS judgments_case ON judgments (incident_id, trial, dimension_id);
CREATE INDEX IF NOT EXISTS judgments_prompt ON judgments (prompt_hash, rubric_hash);
CREATE TABLE IF NOT EXISTS errors (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    judge TEXT NOT NULL,
    model TEXT,
    prompt_hash TEXT NOT NULL,
    incident_id TEXT NOT NULL,
    trial TEXT NOT NULL,
    dimension_id TEXT NOT NULL,
    error_kind TEXT,
    error TEXT,
    attempts INTEGER NOT NULL,
    requests INTEGER NOT NULL,
    attempt_errors TEXT NOT NULL,
    usage TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS params (
    params_hash TEXT PRIMARY KEY,
    params TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS leases (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires REAL NOT NULL
);
"""

_BATCH_SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    api_base TEXT,
    input_file_id TEXT NOT NULL,
    status TEXT NOT NULL,
    closed INTEGER NOT NULL DEFAULT 0,
    calls INTEGER NOT NULL,
    completed INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0,
    lost INTEGER NOT NULL DEFAULT 0,
    note TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS batch_calls (
    batch_id TEXT NOT NULL,
    key TEXT NOT NULL,
    call TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    PRIMARY KEY (batch_id, key)
);
CREATE INDEX IF NOT EXISTS batch_calls_key ON batch_calls (key);
"""
"""Part of schema version 2 (`STORE_VERSION`): creating it is what migrates a version 1 store."""


def has_table(db: sqlite3.Connection, name: str, schema: str = "main") -> bool:
    """Whether the database attached as `schema` has the table `name`."""
    sql = f"SELECT 1 FROM {schema}.sqlite_master WHERE type = 'table' AND name = ?"
    return db.execute(sql, (name,)).fetchone() is not None


def stored_version(db: sqlite3.Connection) -> str | None:
    """The store's `meta.store_version`, or None for a new (empty) database."""
    return _read_version(db) if has_table(db, "meta") else None


def _read_version(db: sqlite3.Connection) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE name = 'store_version'").fetchone()
    return None if row is None else str(row[0])


def migrate(db: sqlite3.Connection) -> None:
    """Create a new store's tables, or migrate an older store in place: its rows are kept
    and the tables it lacks are added. One transaction (a tiny disk has room for it, and two
    processes opening a new store at once wait for each other). A newer store is refused
    before anything is written."""
    found = stored_version(db)
    if found is not None and found not in READABLE_VERSIONS:
        return  # `check_version` says why not
    if found == STORE_VERSION:  # writes nothing, but a store that cannot be written fails
        db.execute(  # here, at open, not at its first answer
            "INSERT OR IGNORE INTO meta VALUES ('store_version', ?)", (STORE_VERSION,)
        )
        return
    db.executescript(
        f"BEGIN IMMEDIATE;{_SCHEMA}{_BATCH_SCHEMA}"
        f"INSERT OR IGNORE INTO meta VALUES ('store_version', '{STORE_VERSION}');"
        f"UPDATE meta SET value = '{STORE_VERSION}' WHERE name = 'store_version';"
        "COMMIT;"
    )


def check_version(db: sqlite3.Connection, path: Path, readonly: bool) -> None:
    """Refuse a store this version cannot read (or, opened for writing, write): exit 2."""
    accepted = READABLE_VERSIONS if readonly else (STORE_VERSION,)
    found = _read_version(db)  # a database without `meta` is no store: SQLite says so
    if found in accepted:
        return
    if found is not None and found.isdigit() and int(found) > int(STORE_VERSION):
        raise InputError(
            path,
            f"store version {found} was written by a newer diagnosis-judge (this one "
            f"reads versions {', '.join(READABLE_VERSIONS)} and writes {STORE_VERSION}); "
            "upgrade diagnosis-judge, or give another --store",
            field="meta.store_version",
        )
    raise InputError(
        path,
        f"store version {found!r}, expected one of {', '.join(map(repr, accepted))}",
        field="meta.store_version",
    )
