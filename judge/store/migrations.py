"""The store's schema: an ordered list of small named migrations, each recorded in the store's
`migrations` table once applied (after simonw/llm's `migrations.py`).

Opening a store for writing applies every migration it has not recorded, in order, in one
transaction with their records and the new `meta.store_version`: a new store gets them all, an
older one what it lacks (its rows kept), and a failure leaves it as it was. Opening read-only
migrates nothing, so reading code allows for what later migrations add (`has_table`).

The next schema change is one function at the end of the list, as issue 24's raw replies
were (`m004_replies`):

    @migration(version=2)
    def m004_replies(db: sqlite3.Connection) -> None:
        \"\"\"Every provider request of every call, to read back later.\"\"\"
        db.execute("CREATE TABLE replies (id INTEGER PRIMARY KEY, key TEXT NOT NULL, ...)")

`version` is the `meta.store_version` a store has once the migration ran, which is what a
diagnosis-judge checks before writing a store. Keep the last migration's when code that knows
nothing of the change still writes the store correctly (a new table, which older code ignores,
or a column older code leaves empty). Give the next number when such code would write it wrong
or fail: a column on `judgments`, `params` or `leases` (the code before migrations were
recorded fills those by position, and merges the first two with `SELECT *`), a table renamed or
dropped. Older code then refuses the store (exit 2, "written by a newer diagnosis-judge"), and a
fixture written by the code before the change goes into tests/fixtures/stores (`make_stores.py`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ground_truth.errors import InputError

Apply = Callable[[sqlite3.Connection], None]
IDENTITY_COLUMNS = ("model_version", "system_fingerprint", "seed")
"""The columns of `judgments` that `m006_judge_identity` adds."""


@dataclass(frozen=True)
class Migration:
    """One schema change: `apply` runs inside the opening transaction; the store is at
    `version` after it."""

    name: str
    version: int
    apply: Apply


MIGRATIONS: list[Migration] = []
"""Every schema change in the order it was made; a name, once released, never changes."""


def migration(version: int) -> Callable[[Apply], Apply]:
    """Register the decorated function as the next migration, named after it."""

    def register(apply: Apply) -> Apply:
        MIGRATIONS.append(Migration(apply.__name__, version, apply))
        return apply

    return register


# The first three are the schema as it stood before migrations were recorded. A store written
# then holds some of their tables already (which, its version does not say: a version 1 store
# holds the batch tables only once it batched), so they create only what is missing. A later
# migration runs only on stores that lack it and needs no such guard.


@migration(version=1)
def m001_answers(db: sqlite3.Connection) -> None:
    """Answers, failed calls, the params each key names, and `meta` (version 1)."""
    db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute(
        """CREATE TABLE IF NOT EXISTS judgments (
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
)"""
    )
    db.execute(
        "CREATE INDEX IF NOT EXISTS judgments_case ON judgments (incident_id, trial, dimension_id)"
    )
    db.execute(
        "CREATE INDEX IF NOT EXISTS judgments_prompt ON judgments (prompt_hash, rubric_hash)"
    )
    db.execute(
        """CREATE TABLE IF NOT EXISTS errors (
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
)"""
    )
    db.execute(
        "CREATE TABLE IF NOT EXISTS params (params_hash TEXT PRIMARY KEY, params TEXT NOT NULL)"
    )


@migration(version=1)
def m002_leases(db: sqlite3.Connection) -> None:
    """Which process is asking for which key, so processes sharing a store split the calls."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS leases"
        " (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL)"
    )


@migration(version=2)
def m003_batches(db: sqlite3.Connection) -> None:
    """Provider batches and the calls each holds (version 1 created them with a store's first
    batch; from version 2 every store has them)."""
    db.execute(
        """CREATE TABLE IF NOT EXISTS batches (
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
)"""
    )
    db.execute(
        """CREATE TABLE IF NOT EXISTS batch_calls (
    batch_id TEXT NOT NULL,
    key TEXT NOT NULL,
    call TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    PRIMARY KEY (batch_id, key)
)"""
    )
    db.execute("CREATE INDEX IF NOT EXISTS batch_calls_key ON batch_calls (key)")


@migration(version=2)
def m004_replies(db: sqlite3.Connection) -> None:
    """Every provider request of every call, to read back later (`judge.store.replies`): the
    prompt as hashes of its pieces, each piece once in `reply_texts`, and the reply text as it
    arrived. New tables only, which code that knows nothing of them leaves alone: version 2."""
    db.execute(
        """CREATE TABLE replies (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    judge TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,
    incident_id TEXT NOT NULL,
    trial TEXT NOT NULL,
    dimension_id TEXT NOT NULL,
    questions TEXT NOT NULL,
    request INTEGER NOT NULL,
    prompt TEXT,
    reply,
    finish_reason TEXT,
    error_kind TEXT,
    error TEXT,
    latency_s REAL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    cached_tokens INTEGER,
    cost_usd REAL,
    created_at TEXT NOT NULL
)"""
    )
    db.execute("CREATE INDEX replies_prompt ON replies (prompt_hash)")
    db.execute(
        "CREATE TABLE reply_texts (hash TEXT NOT NULL, part INTEGER NOT NULL, text BLOB NOT NULL,"
        " PRIMARY KEY (hash, part)) WITHOUT ROWID"
    )


@migration(version=2)
def m005_prompt_keys(db: sqlite3.Connection) -> None:
    """The prompt hash each call's render inputs gave (`judge.store.prompt_keys`), so a rerun
    finds its answers' keys without rendering a prompt. A new table only: version 2."""
    db.execute(
        "CREATE TABLE prompt_keys (inputs TEXT PRIMARY KEY, prompt_hash TEXT NOT NULL)"
        " WITHOUT ROWID"
    )


@migration(version=3)
def m006_judge_identity(db: sqlite3.Connection) -> None:
    """Which model answered each stored answer, as its provider said (`JudgeIdentity`): the
    model version the reply names, its `system_fingerprint`, the seed sent. Columns on
    `judgments`, which code before them would leave empty on every answer it writes over an
    older one: version 3, so that code refuses the store instead."""
    for column in IDENTITY_COLUMNS:
        kind = "INTEGER" if column == "seed" else "TEXT"
        db.execute(f"ALTER TABLE judgments ADD COLUMN {column} {kind}")


@migration(version=3)
def m007_appended_writes(db: sqlite3.Connection) -> None:
    """Fewer pages written per answer. `leases` holds its rows in its primary key's tree
    (WITHOUT ROWID): a claim writes one page, not the table's and its index's. `reply_texts`
    and `prompt_keys` become tables whose rows are appended (rowid), each with a unique index
    on what it is looked up by: a new row (a diagnosis's case, ~1 KB; two 64-digit hashes)
    lands on the table's last page, and only the index's smaller entries go to random pages
    of trees that grow with the store. Older code reads and writes all three as before (the
    same columns; `INSERT OR IGNORE` and `INSERT OR REPLACE` keep their meaning): version 3."""
    _rebuild(
        db,
        "leases",
        "(key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL) WITHOUT ROWID",
        "key, owner, expires",
    )
    _rebuild(
        db,
        "reply_texts",
        "(hash TEXT NOT NULL, part INTEGER NOT NULL, text BLOB NOT NULL, UNIQUE (hash, part))",
        "hash, part, text",
    )
    _rebuild(
        db,
        "prompt_keys",
        "(inputs TEXT NOT NULL UNIQUE, prompt_hash TEXT NOT NULL)",
        "inputs, prompt_hash",
    )


@migration(version=4)
def m008_leases_appended(db: sqlite3.Connection) -> None:
    """Leases as a table whose rows are appended (rowid) and no index. A lease stays until the
    batch holding its key's answer commits (`judge.store.grouped`), so a run at a few hundred
    answers a second holds hundreds, over a dozen pages of a tree ordered by random keys: each
    loop turn's claims (one commit) rewrote ~5 of them, 3.5 KB to the WAL per answer at 2,000
    submissions, more than the answers' own batches bar their pages. Appended, a claim writes
    the table's last page; the claims of a turn, the renewals and a batch's releases each read
    the table once (`claim_many`). The code before it would write a lease twice over
    (`INSERT OR REPLACE` needs the unique key), so it must refuse the store: version 4."""
    _rebuild(
        db, "leases", "(key TEXT NOT NULL, owner TEXT NOT NULL, expires REAL NOT NULL)",
        "key, owner, expires",
    )  # fmt: skip


SHORT = 8
"""Hex digits of a hash that the indexes of `m009_short_indexes` hold."""


def short(column: str) -> str:
    """The indexed expression of a hash column: its first `SHORT` hex digits. A query names
    it exactly so (SQLite uses an index on an expression only for the same expression), and
    compares the whole column too, so that two hashes that share their start are told apart
    (`same_hash`, and `rows_in(..., short=True)` for a list)."""
    return f"substr({column}, 1, {SHORT})"


def same_hash(column: str, param: str = "?1") -> str:
    """A condition that `column` holds the hash bound to `param`, which finds the row through
    `short`'s index at version 5 and through the older unique index on `column` in a store
    opened read-only. The whole column is compared with `BETWEEN x AND x`, not `= x`: SQLite
    rewrites `short(column)` as `short(x)` once it reads `column = x` (constant propagation),
    and the index on `short(column)` no longer matches."""
    return f"{short(column)} = substr({param}, 1, {SHORT}) AND {column} BETWEEN {param} AND {param}"


_JUDGMENTS_V5 = """(
    key TEXT NOT NULL,
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
    created_at TEXT NOT NULL,
    model_version TEXT,
    system_fingerprint TEXT,
    seed INTEGER
)"""


@migration(version=5)
def m009_short_indexes(db: sqlite3.Connection) -> None:
    """Indexes on the first 8 hex digits of a hash (`short`) instead of the whole: ~17 bytes
    an entry instead of ~80. Five indexes are ordered by random hashes (the answers' key and
    prompt, the reply log's prompt, the prompt pieces, the prompt keys): once one outgrows a
    batch of answers each answer rewrites about one page of each, so the bytes written per
    answer grew with the store (~11 KB of ~17 KB at 10,000 answers, `benchmarks/store_logs.py
    --writes`). The key, the pieces and the prompt keys lose their unique index: the store
    keeps them unique itself (`judge.store.answers`, `replies`, `prompt_keys`), which the code
    before would not (`INSERT OR REPLACE` and `INSERT OR IGNORE` need the unique index):
    version 5."""
    columns = ", ".join(row[1] for row in db.execute("PRAGMA table_info(judgments)"))
    _rebuild(db, "judgments", _JUDGMENTS_V5, columns)
    db.execute(f"CREATE INDEX judgments_key ON judgments ({short('key')})")
    db.execute(f"CREATE INDEX judgments_prompt ON judgments ({short('prompt_hash')})")
    db.execute("CREATE INDEX judgments_case ON judgments (incident_id, trial, dimension_id)")
    db.execute("DROP INDEX IF EXISTS replies_prompt")
    db.execute(f"CREATE INDEX replies_prompt ON replies ({short('prompt_hash')})")
    _rebuild(
        db, "reply_texts", "(hash TEXT NOT NULL, part INTEGER NOT NULL, text BLOB NOT NULL)",
        "hash, part, text",
    )  # fmt: skip
    db.execute(f"CREATE INDEX reply_texts_hash ON reply_texts ({short('hash')})")
    _rebuild(
        db,
        "prompt_keys",
        "(inputs TEXT NOT NULL, prompt_hash TEXT NOT NULL)",
        "inputs, prompt_hash",
    )
    db.execute(f"CREATE INDEX prompt_keys_inputs ON prompt_keys ({short('inputs')})")


def _rebuild(db: sqlite3.Connection, table: str, shape: str, columns: str) -> None:
    """Make `table` again as `shape`, its rows kept (meanwhile in a temporary table: the
    schema never holds both, and stays on the file's first page, where `recover` and
    `looks_like_a_store` find it when the header is damaged)."""
    db.execute(f"CREATE TEMP TABLE {table}_rows AS SELECT {columns} FROM main.{table}")
    db.execute(f"DROP TABLE main.{table}")
    db.execute(f"CREATE TABLE main.{table} {shape}")
    db.execute(f"INSERT INTO main.{table} ({columns}) SELECT {columns} FROM temp.{table}_rows")
    db.execute(f"DROP TABLE temp.{table}_rows")


def target_version(migrations: Sequence[Migration]) -> str:
    """The `store_version` of a store with all of `migrations` applied."""
    return str(max(m.version for m in migrations))


STORE_VERSION = target_version(MIGRATIONS)
"""The `store_version` this code writes. A store of an older version is migrated in place when
it is opened for writing; one of a newer version is refused (exit 2) rather than written in a
shape this code does not know."""
READABLE_VERSIONS = tuple(sorted({str(m.version) for m in MIGRATIONS}, key=int))
"""Versions a read-only open accepts: every one this code's migrations passed through (an older
store reads the same, allowing for the tables it lacks)."""


def has_table(db: sqlite3.Connection, name: str, schema: str = "main") -> bool:
    """Whether the database attached as `schema` has the table `name`."""
    sql = f"SELECT 1 FROM {schema}.sqlite_master WHERE type = 'table' AND name = ?"
    return db.execute(sql, (name,)).fetchone() is not None


def applied(db: sqlite3.Connection) -> set[str]:
    """The names of the migrations the store records (none before migrations were recorded)."""
    if not has_table(db, "migrations"):
        return set()
    return {name for (name,) in db.execute("SELECT name FROM migrations")}


def migrate(db: sqlite3.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> None:
    """Apply the migrations the store has not recorded, in one `BEGIN IMMEDIATE` transaction
    (a tiny disk has room for it, and two processes opening a new store at once wait for each
    other). A current store only has its `meta` written to, which fails at open, not at the
    first answer, when the store cannot be written. A store of a version `migrations` does not
    lead to (a newer one) is left alone for `check_version` to refuse."""
    readable = {str(m.version) for m in migrations}
    found = stored_version(db)
    if found is not None and found not in readable:
        return
    if found == target_version(migrations) and not {m.name for m in migrations} - applied(db):
        db.execute("INSERT OR IGNORE INTO meta VALUES ('store_version', ?)", (found,))
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        _apply(db, migrations, readable)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _apply(db: sqlite3.Connection, migrations: Sequence[Migration], readable: set[str]) -> None:
    found = stored_version(db)  # again: another process may have migrated it meanwhile
    if found is not None and found not in readable:
        return
    db.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done = applied(db)
    for step in migrations:
        if step.name not in done:
            step.apply(db)
            applied_at = datetime.now(UTC).isoformat(timespec="milliseconds")
            db.execute("INSERT INTO migrations VALUES (?, ?)", (step.name, applied_at))
    version = target_version(migrations)
    db.execute("INSERT OR REPLACE INTO meta VALUES ('store_version', ?)", (version,))


def stored_version(db: sqlite3.Connection) -> str | None:
    """The store's `meta.store_version`, or None for a new (empty) database."""
    return _read_version(db) if has_table(db, "meta") else None


def _read_version(db: sqlite3.Connection) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE name = 'store_version'").fetchone()
    return None if row is None else str(row[0])


def check_version(db: sqlite3.Connection, path: Path, readonly: bool) -> None:
    """Refuse a store this code cannot read (or, opened for writing, write): exit 2."""
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


def has_columns(
    db: sqlite3.Connection, table: str, names: Sequence[str], schema: str = "main"
) -> bool:
    """Whether `schema.table` has every column in `names` (a store opened read-only is not
    migrated, so an older one may lack what later migrations add)."""
    found = {row[1] for row in db.execute(f"PRAGMA {schema}.table_info({table})")}
    return set(names) <= found
