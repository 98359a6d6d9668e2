"""The store's file, kept safe: opened (created or migrated, its version and pages checked),
watched for being deleted or replaced under a run (what it held is then rescued beside it), and
its `meta` values."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from ground_truth.errors import InputError

from ..errors import StorageError, os_reason
from . import migrations
from .failures import REASONS, guarded, open_error


def now() -> str:
    """The time a row is written: UTC, to the millisecond, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def read_only_uri(path: Path) -> str:
    """Reading needs the `-shm` file beside the store, which a read-only folder cannot get; a
    store closed cleanly (no `-wal` file) is then read as immutable instead."""
    uri = f"file:{urllib.parse.quote(str(path.absolute()))}?mode=ro"
    shared = path.with_name(path.name + "-shm")
    wal = path.with_name(path.name + "-wal")
    if not shared.exists() and not wal.exists() and not os.access(path.parent, os.W_OK):
        uri += "&immutable=1"
    return uri


BUSY_SECONDS = 30
"""How long a statement waits for another process's lock on the store before it fails (the
connection's busy timeout, set by `sqlite3.connect(timeout=...)`)."""


def enter_wal(db: sqlite3.Connection) -> None:
    """`PRAGMA journal_mode = WAL`, tried again while another process holds the file's lock.
    SQLite answers this pragma with SQLITE_BUSY at once, without waiting as `busy_timeout`
    asks, when another connection is creating or converting the same file: of three
    processes opening one new store together, one failed in about one start of five
    ("locked by another process", two `judge eval` runs sharing a new store)."""
    deadline = time.monotonic() + BUSY_SECONDS
    pause = 0.005
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorname", None) != "SQLITE_BUSY":
                raise
            if time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.1)


CHECKPOINT_PAGES = 16000
"""Pages (4 KB each) the WAL may hold before a commit copies them into the store
(`wal_autocheckpoint`; SQLite's default is 1,000). A checkpoint writes each page the WAL holds
once, however many commits rewrote it (an index's pages, the last page of a table), and syncs
the file: fewer, larger checkpoints write fewer pages. At 8,000 a run of 10,000 answers (~60
MB of WAL) checkpointed once before its end and wrote ~0.6 KB per answer more to the store
than it keeps (`benchmarks/store_logs.py --writes`: 1 KB less in all at 16,000). The WAL then
takes up to ~64 MB beside the store while it is open."""
WAL_KEEP_BYTES = 32 * 2**20
"""Size the WAL file is cut back to after a checkpoint that emptied it (`journal_size_limit`):
a large merge's WAL does not stay on disk at its largest."""


def journal_files(path: Path) -> list[Path]:
    """The `-wal` and `-shm` files SQLite keeps beside the store at `path`."""
    return [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]


def create_private(path: Path) -> None:
    """Create `path` empty, readable and writable by its owner only, unless it exists: a store
    holds diagnoses and the provider's replies. SQLite gives its `-wal` and `-shm` files the
    mode of the store, and takes an empty file for a new database."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


IN_CHUNK = 500
"""Values bound in one `IN (...)` query (SQLite allows a few hundred parameters or more)."""


def rows_in(
    db: sqlite3.Connection,
    sql: str,
    values: Iterable[Any],
    before: Sequence[Any] = (),
    short: bool = False,
) -> Iterator[Any]:
    """The rows of `sql`, whose `{marks}` stands for the placeholders of an `IN (...)` list,
    over every one of `values`, asked `IN_CHUNK` at a time (`before`: the values of the
    placeholders ahead of the list). With `short`, `{marks}` stands twice: first for the
    values' starts, then for the values, as `migrations.short` has hashes looked up (a list
    of one is given twice: SQLite reads `IN (x)` as `= x`, see `migrations.same_hash`)."""
    wanted = list(values)
    for start in range(0, len(wanted), IN_CHUNK):
        chunk = wanted[start : start + IN_CHUNK]
        if short and len(chunk) == 1:
            chunk *= 2
        starts = [value[: migrations.SHORT] for value in chunk] if short else []
        marks = ",".join("?" * len(chunk))
        yield from db.execute(sql.format(marks=marks), [*before, *starts, *chunk])


def execute_in(
    db: sqlite3.Connection, sql: str, values: Iterable[Any], before: Sequence[Any] = ()
) -> None:
    """`rows_in` for a statement that returns no rows (an `UPDATE` or `DELETE`)."""
    for _ in rows_in(db, sql, values, before):
        pass


class StoreFile:
    """One open store file. Use from one thread (the event loop's); other processes may read
    or write the same file at the same time (WAL, busy timeout)."""

    def __init__(self, path: str | Path, readonly: bool = False):
        self.path = Path(path)
        if readonly and not self.path.is_file():
            raise InputError(self.path, "no such store file", field="--replay-store")
        self._db = self._connect(readonly)
        self._identity = None if readonly else self._file_identity()
        self._lost: StorageError | None = None

    def _connect(self, readonly: bool) -> sqlite3.Connection:
        """Open, create the tables if new, and check the version and every page's structure
        (`quick_check`, about 0.1 s for a 90 MB store): a corrupted store fails here, before the
        run asks anything, not halfway through."""
        if not readonly:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                create_private(self.path)
            except OSError as exc:
                raise StorageError(self.path, os_reason(exc)) from exc
        uri = f"file:{urllib.parse.quote(str(self.path.absolute()))}?mode=rwc"
        if readonly:
            uri = read_only_uri(self.path)
        try:
            db = self._db = sqlite3.connect(
                uri, uri=True, timeout=BUSY_SECONDS, isolation_level=None
            )
        except sqlite3.DatabaseError as exc:
            raise open_error(self.path, exc) from exc
        try:
            if not readonly:
                enter_wal(db)
                db.execute("PRAGMA synchronous = NORMAL")
                db.execute(f"PRAGMA wal_autocheckpoint = {CHECKPOINT_PAGES}")
                db.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")
                migrations.migrate(db)
            migrations.check_version(db, self.path, readonly)
            self._check_pages()
        except sqlite3.DatabaseError as exc:
            db.close()
            raise open_error(self.path, exc) from exc
        except BaseException:
            db.close()
            raise
        return db

    def _check_pages(self) -> None:
        (found,) = self._db.execute("PRAGMA quick_check(1)").fetchone()
        if found != "ok":
            corrupt = REASONS["SQLITE_CORRUPT"].format(path=self.path)
            raise StorageError(self.path, f"{corrupt} ({found})")

    def _file_identity(self) -> tuple[int, int]:
        try:
            st = os.stat(self.path)
        except OSError as exc:
            raise StorageError(self.path, os_reason(exc)) from exc
        return st.st_dev, st.st_ino

    def _check_file(self) -> None:
        """Before a commit: is the store still the file we opened? SQLite would go on writing
        to a deleted file's inode, and every answer written there would be lost at exit. Once
        lost, every later commit fails with the same message (the rescue happens once)."""
        if self._lost is not None:
            raise StorageError(self.path, self._lost.reason)
        if self._identity is None:  # opened read-only: SQLite refuses the write itself
            return
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._lost = StorageError(self.path, f"deleted during the run; {self._rescue()}")
            raise self._lost from None
        except OSError as exc:
            raise StorageError(self.path, os_reason(exc)) from exc
        if (st.st_dev, st.st_ino) != self._identity:
            reason = f"replaced by another file during the run; {self._rescue()}"
            self._lost = StorageError(self.path, reason)
            raise self._lost

    def _rescue(self) -> str:
        """Copy what this connection still holds of a deleted or replaced store to a new file
        beside it (never to its own name: the old `-wal` and `-shm` files may still be there)."""
        target = self.path.with_name(f"{self.path.stem}.recovered{self.path.suffix}")
        if target.exists():
            return f"its answers were not saved ({target} exists)"
        try:
            (count,) = self._db.execute("SELECT count(*) FROM judgments").fetchone()
            target.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.closing(sqlite3.connect(target)) as copy:
                self._db.backup(copy)
        except (sqlite3.Error, OSError) as exc:
            return f"its answers could not be saved: {exc}"
        finally:
            self._empty_wal()
        return f"the {count} answers it held were saved to {target} (rename it to resume)"

    def _empty_wal(self) -> None:
        """Move our `-wal` file's pages into the file we opened and empty it: SQLite leaves
        it behind when the store is deleted or replaced, and would otherwise apply it to
        whatever file is next opened under the store's name."""
        with contextlib.suppress(sqlite3.Error):
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction (`BEGIN IMMEDIATE`: the write lock is taken at the start, so
        it waits on another process's lock there rather than failing halfway). The connection
        commits each statement by itself otherwise (`isolation_level=None`), and `with db:`
        does not begin a transaction."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _release_later(self, key: str, owner: str) -> bool:
        """Whether a lease's release waits for the batch of its key's answer (`Answers`)."""
        return False

    def close(self) -> None:
        self._db.close()
        if self._lost is not None and not self.path.exists():
            for journal in journal_files(self.path):  # the deleted store's: nothing reads them
                journal.unlink(missing_ok=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @guarded
    def get_meta(self, name: str) -> str | None:
        """A value kept in the store's `meta` table (e.g. an endpoint's working reply format)."""
        row = self._db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])

    @guarded
    def set_meta(self, name: str, value: str) -> None:
        """Keep `value` under `name` for later runs; `store_version` is the store's own."""
        if name == "store_version":
            raise ValueError("store_version is written by the store itself")
        self._check_file()
        with self._transaction():
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (name, value))
