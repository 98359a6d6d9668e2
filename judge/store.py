"""The judgment store: one SQLite file that is the cache, the checkpoint and the replay source.

One row per (case, dimension) answer a judge gave, keyed by a content hash of what decides
the answer (see `KeyParts`); the parts are stored beside it, so a miss can say what changed.
Failed calls go to their own table: they are kept for the record, never served as answers.

Plain JSON in TEXT columns (no pickle), readable with the `sqlite3` shell:

    sqlite3 results.sqlite "select judge, dimension_id, json_extract(answers, '$[0].answer')
                            from judgments limit 5"

WAL journal with `synchronous=NORMAL`: every `put` is its own committed transaction, and a
committed WAL transaction survives the process being killed (only an OS crash or power loss can
lose the last ones). The API key is never handed to the store: params come from the judge's
`cache_identity()`, which leaves secrets out, and `scrub_params` drops any that slip in.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar

from ground_truth.errors import InputError

from .errors import StorageError, os_reason
from .judgment import DimensionVerdict, QuestionAnswer, Usage

STORE_VERSION = "2"
"""The store's schema. 1: answers, failed calls, params, leases, meta (batch tables were added
to it later, with a store's first batch); 2: the provider batch tables belong to the schema.
A store of an older version is migrated in place when it is opened for writing (its rows are
kept); one of a newer version is refused (exit 2) rather than written in a shape this version
does not know."""
READABLE_VERSIONS = ("1", STORE_VERSION)
"""Versions a read-only open accepts: a version 1 store reads the same (it may lack batch
tables, which reading allows for)."""
COMPONENTS = ("judge", "model", "params", "prompt", "schema", "rubric")
_SECRET = re.compile(r"key|token|secret|password|authorization|credential", re.I)

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


def short_hash(data: Any) -> str:
    """First 16 hex digits of SHA-256 over `data` as canonical JSON (non-JSON values via str)."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def scrub_params(params: dict[str, Any]) -> dict[str, Any]:
    """Params without anything that looks like a credential (`api_key`, `token`, ...)."""
    return {k: v for k, v in params.items() if not _SECRET.search(k)}


@dataclass(frozen=True)
class KeyParts:
    """What decides a judge's answer: who (judge name, model, params that change answers),
    what was asked (rendered prompt, response schema) and under which rubric dimension."""

    judge: str
    model: str | None
    params: str
    prompt: str
    schema: str
    rubric: str

    @functools.cached_property
    def key(self) -> str:
        parts = {c: getattr(self, c) for c in COMPONENTS}
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    def differences(self, other: KeyParts) -> list[str]:
        return [c for c in COMPONENTS if getattr(self, c) != getattr(other, c)]


@dataclass(frozen=True)
class Claim:
    """What `Store.claim` found: `answered` (the store holds the answer now), `claimed` (the
    caller holds the lease until `expires`; `took_over` when it had expired in another's hands)
    or `held` (another owner holds it until `expires`)."""

    state: Literal["answered", "claimed", "held"]
    owner: str | None = None
    expires: float = 0.0
    took_over: bool = False


@dataclass(frozen=True)
class StoredBatch:
    """A provider batch job as the store records it (`Store.add_batch`)."""

    id: str
    provider: str
    model: str
    api_base: str | None
    input_file_id: str
    status: str
    closed: bool = False
    calls: int = 0
    completed: int = 0
    failed: int = 0
    lost: int = 0
    note: str | None = None
    created_at: str | None = None


@dataclass(frozen=True)
class CaseRef:
    """Which case and dimension a stored answer belongs to."""

    incident_id: str
    trial: str
    dimension_id: str


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _dump(model: Any) -> str | None:
    return None if model is None else model.model_dump_json()


# ------------------------------------------------------------------ failures, in words

_REASONS = {
    "SQLITE_READONLY": "read-only: the store cannot be written (check the permissions of the "
    "file and its folder, and the mount); answers stored before are kept",
    "SQLITE_CORRUPT": "corrupted: database disk image is malformed "
    "(`sqlite3 {path} .recover > saved.sql` saves what is still readable)",
    "SQLITE_FULL": "disk full: no space left to store answers; the answers stored before are "
    "kept, and a rerun asks only the rest",
    "SQLITE_NOTADB": "not a judgment store: file is not a database",
    "SQLITE_CANTOPEN": "cannot open the store or create its journal beside it "
    "(check that the folder exists and is writable)",
    "SQLITE_BUSY": "locked by another process for more than 30 s",
    "SQLITE_LOCKED": "locked by another connection",
    "SQLITE_IOERR": "I/O error",
}


def _sqlite_reason(exc: sqlite3.DatabaseError, path: Path) -> str:
    """SQLite's error in words a user acts on: the primary code of `exc` picks them."""
    name = getattr(exc, "sqlite_errorname", None) or ""
    for code, reason in _REASONS.items():
        if name == code or name.startswith(code + "_"):
            words = reason.format(path=path)
            return f"{words} ({name}: {exc})" if code == "SQLITE_IOERR" else words
    return f"{exc} ({name})" if name else str(exc)


def _open_error(path: Path, exc: sqlite3.DatabaseError) -> InputError | StorageError:
    """A file that is no SQLite database at all is bad input (exit 2); any other failure to
    open a store is a storage failure (exit 4), and one SQLite cannot open because the file or
    its folder cannot be written says so (SQLite itself only says "unable to open")."""
    name = getattr(exc, "sqlite_errorname", None)
    if name == "SQLITE_NOTADB":
        return InputError(path, _REASONS["SQLITE_NOTADB"])
    if name in {"SQLITE_CANTOPEN", "SQLITE_READONLY"} and (where := _read_only(path)):
        return StorageError(path, f"read-only: {where}; answers stored before are kept")
    return StorageError(path, _sqlite_reason(exc, path))


def _read_only(path: Path) -> str | None:
    """Which of the store file and its folder cannot be written (`access` also sees a
    read-only mount for root), or None."""
    if path.exists() and not os.access(path, os.W_OK):
        return "the file cannot be written"
    if not os.access(path.parent, os.W_OK):
        return "its folder cannot be written (the store needs its -wal and -shm files beside it)"
    return None


def _read_only_uri(path: Path) -> str:
    """Reading needs the `-shm` file beside the store, which a read-only folder cannot get; a
    store closed cleanly (no `-wal` file) is then read as immutable instead."""
    uri = f"file:{urllib.parse.quote(str(path.absolute()))}?mode=ro"
    shared = path.with_name(path.name + "-shm")
    wal = path.with_name(path.name + "-wal")
    if not shared.exists() and not wal.exists() and not os.access(path.parent, os.W_OK):
        uri += "&immutable=1"
    return uri


P = ParamSpec("P")
R = TypeVar("R")


def _guarded(method: Callable[Concatenate[Store, P], R]) -> Callable[Concatenate[Store, P], R]:
    """`method`, with SQLite's errors raised as a `StorageError` naming the store."""

    @functools.wraps(method)
    def wrapper(self: Store, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise StorageError(self.path, _sqlite_reason(exc, self.path)) from exc

    return wrapper


class Store:
    """A judgment store on disk. Use from one thread (the event loop's); other processes may
    read or write the same file at the same time (WAL, busy timeout)."""

    def __init__(self, path: str | Path, readonly: bool = False):
        self.path = Path(path)
        if readonly and not self.path.is_file():
            raise InputError(self.path, "no such store file", field="--replay-store")
        self._db = self._connect(readonly)
        self._identity = None if readonly else self._file_identity()
        self._lost: StorageError | None = None
        self._known_params: set[str] = set()

    def _connect(self, readonly: bool) -> sqlite3.Connection:
        """Open, create the tables if new, and check the version and every page's structure
        (`quick_check`, about 0.1 s for a 90 MB store): a corrupted store fails here, before the
        run asks anything, not halfway through."""
        if not readonly:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StorageError(self.path, os_reason(exc)) from exc
        uri = f"file:{urllib.parse.quote(str(self.path.absolute()))}?mode=rwc"
        if readonly:
            uri = _read_only_uri(self.path)
        try:
            db = self._db = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None)
        except sqlite3.DatabaseError as exc:
            raise _open_error(self.path, exc) from exc
        try:
            self._db.execute("PRAGMA busy_timeout = 30000")
            if not readonly:
                self._db.execute("PRAGMA journal_mode = WAL")
                self._db.execute("PRAGMA synchronous = NORMAL")
                self._create_or_migrate()
            self._check_version(READABLE_VERSIONS if readonly else (STORE_VERSION,))
            self._check_pages()
        except sqlite3.DatabaseError as exc:
            db.close()
            raise _open_error(self.path, exc) from exc
        except BaseException:
            db.close()
            raise
        return db

    def _version(self) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE name = 'store_version'").fetchone()
        return None if row is None else str(row[0])

    def _create_or_migrate(self) -> None:
        """Create a new store's tables, or migrate an older store in place: its rows are kept
        and the tables it lacks are added. One transaction (a tiny disk has room for it, and two
        processes opening a new store at once wait for each other). A newer store is refused
        before anything is written."""
        has_meta = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
        ).fetchone()
        found = self._version() if has_meta else None
        if found is not None and found not in READABLE_VERSIONS:
            return  # `_check_version` says why not
        if found == STORE_VERSION:  # writes nothing, but a store that cannot be written fails
            self._db.execute(  # here, at open, not at its first answer
                "INSERT OR IGNORE INTO meta VALUES ('store_version', ?)", (STORE_VERSION,)
            )
            return
        self._db.executescript(
            f"BEGIN IMMEDIATE;{_SCHEMA}{_BATCH_SCHEMA}"
            f"INSERT OR IGNORE INTO meta VALUES ('store_version', '{STORE_VERSION}');"
            f"UPDATE meta SET value = '{STORE_VERSION}' WHERE name = 'store_version';"
            "COMMIT;"
        )

    def _check_version(self, accepted: tuple[str, ...]) -> None:
        found = self._version()
        if found in accepted:
            return
        if found is not None and found.isdigit() and int(found) > int(STORE_VERSION):
            raise InputError(
                self.path,
                f"store version {found} was written by a newer diagnosis-judge (this one "
                f"reads versions {', '.join(READABLE_VERSIONS)} and writes {STORE_VERSION}); "
                "upgrade diagnosis-judge, or give another --store",
                field="meta.store_version",
            )
        raise InputError(
            self.path,
            f"store version {found!r}, expected one of {', '.join(map(repr, accepted))}",
            field="meta.store_version",
        )

    def _check_pages(self) -> None:
        (found,) = self._db.execute("PRAGMA quick_check(1)").fetchone()
        if found != "ok":
            corrupt = _REASONS["SQLITE_CORRUPT"].format(path=self.path)
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

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ metadata

    @_guarded
    def get_meta(self, name: str) -> str | None:
        """A value kept in the store's `meta` table (e.g. an endpoint's working reply format)."""
        row = self._db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])

    @_guarded
    def set_meta(self, name: str, value: str) -> None:
        """Keep `value` under `name` for later runs; `store_version` is the store's own."""
        if name == "store_version":
            raise ValueError("store_version is written by the store itself")
        self._check_file()
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (name, value))

    # ------------------------------------------------------------------ reading

    @_guarded
    def get(self, parts: KeyParts) -> DimensionVerdict | None:
        """The stored answer for exactly these parts, or None."""
        row = self._db.execute(
            "SELECT answers, attempts, requests, usage FROM judgments WHERE key = ?",
            (parts.key,),
        ).fetchone()
        return None if row is None else _verdict(*row)

    @_guarded
    def keys_present(self, keys: Iterable[str]) -> set[str]:
        found: set[str] = set()
        batch = list(keys)
        for i in range(0, len(batch), 500):
            chunk = batch[i : i + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT key FROM judgments WHERE key IN ({marks})"
            found.update(r[0] for r in self._db.execute(sql, chunk))
        return found

    @_guarded
    def miss_reason(self, parts: KeyParts, case: CaseRef) -> str | None:
        """Why the store's answers for this case and dimension do not fit `parts`: the parts in
        which the closest stored answer differs (None when there is none)."""
        rows = self._db.execute(
            "SELECT judge, model, params_hash, prompt_hash, schema_hash, rubric_hash"
            " FROM judgments WHERE incident_id = ? AND trial = ? AND dimension_id = ?"
            " ORDER BY created_at DESC LIMIT 50",
            (case.incident_id, case.trial, case.dimension_id),
        ).fetchall()
        if not rows:
            return None
        changed = min((parts.differences(KeyParts(*row)), row) for row in rows)
        components, row = changed
        if components == ["params"] and (diff := self._params_diff(row[2], parts.params)):
            return f"params changed: {diff}"
        return (", ".join(components) + " changed") if components else None

    def _params_diff(self, old_hash: str, new_hash: str) -> str:
        old, new = self.params(old_hash) or {}, self.params(new_hash) or {}
        keys = sorted(set(old) | set(new))
        diffs = [f"{k} {old.get(k)!r} -> {new.get(k)!r}" for k in keys if old.get(k) != new.get(k)]
        return ", ".join(diffs)

    @_guarded
    def params(self, params_hash: str) -> dict[str, Any] | None:
        row = self._db.execute(
            "SELECT params FROM params WHERE params_hash = ?", (params_hash,)
        ).fetchone()
        return json.loads(row[0]) if row else None

    @_guarded
    def find(
        self, prompt_hash: str, rubric_hash: str, judge: str | None = None
    ) -> list[tuple[str, DimensionVerdict]]:
        """Stored answers to this prompt under this rubric dimension: (judge name, verdict)."""
        sql = (
            "SELECT judge, answers, attempts, requests, usage FROM judgments"
            " WHERE prompt_hash = ? AND rubric_hash = ?"
        )
        args: list[Any] = [prompt_hash, rubric_hash]
        if judge is not None:
            sql += " AND judge = ?"
            args.append(judge)
        return [(r[0], _verdict(*r[1:])) for r in self._db.execute(sql + " ORDER BY judge", args)]

    @_guarded
    def judges(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT DISTINCT judge FROM judgments ORDER BY 1")]

    @_guarded
    def stats(self) -> dict[str, Any]:
        one = self._db.execute
        by_judge = one("SELECT judge, model, count(*) FROM judgments GROUP BY 1, 2 ORDER BY 1")
        errors = one("SELECT error_kind, count(*) FROM errors GROUP BY 1 ORDER BY 1")
        usage = one(
            "SELECT sum(json_extract(usage, '$.prompt_tokens')),"
            " sum(json_extract(usage, '$.completion_tokens')),"
            " sum(json_extract(usage, '$.cost_usd')),"
            " sum(usage IS NOT NULL AND json_extract(usage, '$.cost_usd') IS NULL)"
            " FROM judgments"
        ).fetchone()
        return {
            "path": str(self.path),
            "judgments": one("SELECT count(*) FROM judgments").fetchone()[0],
            "cases": one(
                "SELECT count(DISTINCT incident_id || '/' || trial) FROM judgments"
            ).fetchone()[0],
            "by_judge": [{"judge": j, "model": m, "judgments": n} for j, m, n in by_judge],
            "errors": {k or "error": n for k, n in errors},
            "prompt_tokens": usage[0] or 0,
            "completion_tokens": usage[1] or 0,
            "cost_usd": usage[2] if not usage[3] else None,
            "batches": self._batch_stats(),
        }

    def _has_batches(self) -> bool:
        """Whether the store has recorded a batch (its batch tables exist)."""
        found = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'batches'"
        ).fetchone()
        return found is not None

    def _batch_stats(self) -> list[dict[str, Any]]:
        """Every provider batch: id, status, calls, completed, failed, lost, open or closed."""
        return [
            {
                "id": b.id,
                "provider": b.provider,
                "model": b.model,
                "api_base": b.api_base,
                "status": b.status,
                "open": not b.closed,
                "calls": b.calls,
                "completed": b.completed,
                "failed": b.failed,
                "lost": b.lost,
                "note": b.note,
                "created_at": b.created_at,
            }
            for b in self.batches()
        ]

    def rows(self, table: str = "judgments") -> Iterator[dict[str, Any]]:
        if table not in {"judgments", "errors"}:
            raise ValueError(f"unknown table {table!r}")
        try:
            cursor = self._db.execute(f"SELECT * FROM {table} ORDER BY rowid")
            names = [d[0] for d in cursor.description]
            json_columns = {"answers", "usage", "attempt_errors"}
            for row in cursor:
                record = dict(zip(names, row, strict=True))
                for column in json_columns & set(record):
                    if record[column] is not None:
                        record[column] = json.loads(record[column])
                yield record
        except sqlite3.DatabaseError as exc:
            raise StorageError(self.path, _sqlite_reason(exc, self.path)) from exc

    # ------------------------------------------------------------------ writing

    @_guarded
    def remember_params(self, params_hash: str, params: dict[str, Any]) -> None:
        if params_hash in self._known_params:
            return
        text = json.dumps(scrub_params(params), sort_keys=True, default=str)
        self._check_file()
        with self._db:
            self._db.execute("INSERT OR IGNORE INTO params VALUES (?, ?)", (params_hash, text))
        self._known_params.add(params_hash)

    @_guarded
    def put(self, parts: KeyParts, case: CaseRef, verdict: DimensionVerdict) -> None:
        """Record a finished call: an answer (replacing an older one) or an error row."""
        self._check_file()
        if verdict.error is None:
            self._put_answer(parts, case, verdict)
        else:
            self._put_error(parts, case, verdict)

    def _put_answer(self, parts: KeyParts, case: CaseRef, verdict: DimensionVerdict) -> None:
        with self._db:
            self._insert_answer(parts, case, verdict)

    def _insert_answer(self, parts: KeyParts, case: CaseRef, verdict: DimensionVerdict) -> None:
        answers = json.dumps([a.model_dump(exclude_none=True) for a in verdict.answers])
        self._db.execute(
            "INSERT OR REPLACE INTO judgments VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                parts.key,
                parts.judge,
                parts.model,
                parts.params,
                parts.prompt,
                parts.schema,
                parts.rubric,
                case.incident_id,
                case.trial,
                case.dimension_id,
                answers,
                verdict.attempts,
                verdict.requests,
                _dump(verdict.usage),
                _now(),
            ),
        )

    def _put_error(self, parts: KeyParts, case: CaseRef, verdict: DimensionVerdict) -> None:
        with self._db:
            self._insert_error(parts, case, verdict)

    def _insert_error(self, parts: KeyParts, case: CaseRef, verdict: DimensionVerdict) -> None:
        self._db.execute(
            "INSERT INTO errors (key, judge, model, prompt_hash, incident_id, trial,"
            " dimension_id, error_kind, error, attempts, requests, attempt_errors, usage,"
            " created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                parts.key,
                parts.judge,
                parts.model,
                parts.prompt,
                case.incident_id,
                case.trial,
                case.dimension_id,
                verdict.error_kind,
                verdict.error,
                verdict.attempts,
                verdict.requests,
                json.dumps(verdict.attempt_errors, sort_keys=True),
                _dump(verdict.usage),
                _now(),
            ),
        )

    # ------------------------------------------------------------------ leases

    @_guarded
    def claim(
        self,
        key: str,
        owner: str,
        seconds: float,
        served: bool = True,
        now: float | None = None,
        gone: Callable[[str], bool] | None = None,
    ) -> Claim:
        """Take the lease on `key` for `seconds` unless another owner's lease is still live, in
        one `BEGIN IMMEDIATE` transaction (so two processes cannot both take it). With `served`
        an answer already stored wins over any lease (`answered`). A lease whose owner `gone`
        says has died is taken over at once."""
        self._check_file()
        now = time.time() if now is None else now
        self._db.execute("BEGIN IMMEDIATE")
        try:
            claim = self._claim(key, owner, now + seconds, now, served, gone)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        return claim

    def _claim(
        self,
        key: str,
        owner: str,
        until: float,
        now: float,
        served: bool,
        gone: Callable[[str], bool] | None,
    ) -> Claim:
        one = self._db.execute
        if served and one("SELECT 1 FROM judgments WHERE key = ?", (key,)).fetchone():
            return Claim("answered")
        row = one("SELECT owner, expires FROM leases WHERE key = ?", (key,)).fetchone()
        live = row is not None and row[1] > now and not (gone and gone(row[0]))
        if row is not None and row[0] != owner and live:
            return Claim("held", row[0], row[1])
        one("INSERT OR REPLACE INTO leases VALUES (?, ?, ?)", (key, owner, until))
        return Claim("claimed", owner, until, took_over=row is not None and row[0] != owner)

    @_guarded
    def renew(self, key: str, owner: str, seconds: float) -> bool:
        """Extend our lease; False when it is no longer ours (it expired and was taken over)."""
        with self._db:
            cursor = self._db.execute(
                "UPDATE leases SET expires = ? WHERE key = ? AND owner = ?",
                (time.time() + seconds, key, owner),
            )
        return cursor.rowcount == 1

    @_guarded
    def release(self, key: str, owner: str) -> None:
        with self._db:
            self._db.execute("DELETE FROM leases WHERE key = ? AND owner = ?", (key, owner))

    # ------------------------------------------------------------------ provider batches

    @_guarded
    def add_batch(self, batch: StoredBatch, calls: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Record a submitted provider batch and the calls it holds (key, what to store its
        answer under), in one transaction: from here a killed run resumes it by id."""
        self._check_file()
        now = _now()
        with self._db:
            self._db.execute(
                "INSERT INTO batches (id, provider, model, api_base, input_file_id, status,"
                " calls, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    batch.id,
                    batch.provider,
                    batch.model,
                    batch.api_base,
                    batch.input_file_id,
                    batch.status,
                    len(calls),
                    now,
                    now,
                ),
            )
            self._db.executemany(
                "INSERT INTO batch_calls (batch_id, key, call) VALUES (?, ?, ?)",
                [(batch.id, key, json.dumps(call, sort_keys=True)) for key, call in calls],
            )

    @_guarded
    def rename_batch(self, old_id: str, new_id: str, status: str) -> None:
        """Give a batch recorded before the provider named it its real id, in one transaction."""
        self._check_file()
        with self._db:
            self._db.execute(
                "UPDATE batches SET id = ?, status = ?, updated_at = ? WHERE id = ?",
                (new_id, status, _now(), old_id),
            )
            self._db.execute(
                "UPDATE batch_calls SET batch_id = ? WHERE batch_id = ?", (new_id, old_id)
            )

    @_guarded
    def open_batches(self, keys: Iterable[str]) -> list[StoredBatch]:
        """The batches not yet closed that hold any of `keys`, oldest first."""
        if not self._has_batches():
            return []
        wanted = list(keys)
        found: set[str] = set()
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                r[0]
                for r in self._db.execute(
                    "SELECT DISTINCT c.batch_id FROM batch_calls c JOIN batches b"
                    f" ON b.id = c.batch_id WHERE b.closed = 0 AND c.key IN ({marks})",
                    chunk,
                )
            )
        return [b for b in self.batches() if b.id in found]

    @_guarded
    def batches(self) -> list[StoredBatch]:
        """Every batch the store knows, oldest first."""
        if not self._has_batches():
            return []
        rows = self._db.execute(
            "SELECT id, provider, model, api_base, input_file_id, status, closed, calls,"
            " completed, failed, lost, note, created_at FROM batches ORDER BY created_at, id"
        )
        names = [d[0] for d in rows.description]
        found = [dict(zip(names, row, strict=True)) for row in rows]
        return [StoredBatch(**{**batch, "closed": bool(batch["closed"])}) for batch in found]

    @_guarded
    def batch_calls(self, batch_id: str) -> list[tuple[str, dict[str, Any], str]]:
        """A batch's calls: (key, what its answer is stored under, state)."""
        rows = self._db.execute(
            "SELECT key, call, state FROM batch_calls WHERE batch_id = ? ORDER BY rowid",
            (batch_id,),
        )
        return [(key, json.loads(call), state) for key, call, state in rows]

    @_guarded
    def update_batch(
        self, batch_id: str, status: str, completed: int, failed: int, **closing: Any
    ) -> None:
        """The provider's latest status and counts; `closed=True, lost=N, note=...` once its
        results are all in the store."""
        self._check_file()
        with self._db:
            self._db.execute(
                "UPDATE batches SET status = ?, completed = ?, failed = ?, updated_at = ?,"
                " closed = coalesce(?, closed), lost = coalesce(?, lost),"
                " note = coalesce(?, note) WHERE id = ?",
                (
                    status,
                    completed,
                    failed,
                    _now(),
                    closing.get("closed"),
                    closing.get("lost"),
                    closing.get("note"),
                    batch_id,
                ),
            )

    @_guarded
    def put_batch_result(
        self,
        batch_id: str,
        key: str,
        state: str,
        result: tuple[KeyParts, CaseRef, DimensionVerdict],
    ) -> None:
        """One batch line's answer (or error row) and the call's new state, in one
        transaction, so a resumed run never writes it twice."""
        parts, case, verdict = result
        self._check_file()
        with self._db:
            if verdict.error is None:
                self._insert_answer(parts, case, verdict)
            else:
                self._insert_error(parts, case, verdict)
            self._db.execute(
                "UPDATE batch_calls SET state = ? WHERE batch_id = ? AND key = ?",
                (state, batch_id, key),
            )

    @_guarded
    def mark_batch_call(self, batch_id: str, key: str, state: str) -> None:
        """A batch call's new state when nothing is stored for it (e.g. `refused`: the server
        refused its reply format, and it is asked again in another batch)."""
        self._check_file()
        with self._db:
            self._db.execute(
                "UPDATE batch_calls SET state = ? WHERE batch_id = ? AND key = ?",
                (state, batch_id, key),
            )

    @_guarded
    def absorb(self, source: Path, outcome: StoreMerge) -> None:
        """Copy `source`'s rows in one transaction (see `merge_stores`)."""
        self._check_file()
        uri = f"file:{urllib.parse.quote(str(source.absolute()))}?mode=ro"
        self._db.execute("ATTACH DATABASE ? AS src", (uri,))
        try:
            with self._db:
                one = self._db.execute
                outcome.conflicts += one(
                    "SELECT count(*) FROM src.judgments s JOIN judgments m USING (key)"
                    " WHERE s.answers != m.answers"
                ).fetchone()[0]
                before = one("SELECT count(*) FROM judgments").fetchone()[0]
                (offered,) = one("SELECT count(*) FROM src.judgments").fetchone()
                one("INSERT OR IGNORE INTO judgments SELECT * FROM src.judgments")
                added = one("SELECT count(*) FROM judgments").fetchone()[0] - before
                outcome.added += added
                outcome.duplicates += offered - added
                columns = ", ".join(c for c in _ERROR_COLUMNS)
                cursor = one(f"INSERT INTO errors ({columns}) SELECT {columns} FROM src.errors")
                outcome.errors += cursor.rowcount
                one("INSERT OR IGNORE INTO params SELECT * FROM src.params")
                if one(_SOURCE_HAS_BATCHES).fetchone():
                    outcome.batches += self._absorb_batches()
        finally:
            self._db.execute("DETACH DATABASE src")

    def _absorb_batches(self) -> int:
        """Copy the attached source's batches and their calls; the number of new batches. A
        batch both stores hold is kept once, in its later state: closed beats open, and an
        answered call beats a pending one (so no merged store polls a finished batch again)."""
        one = self._db.execute
        (before,) = one("SELECT count(*) FROM batches").fetchone()
        columns = ", ".join(_BATCH_COLUMNS)
        progress = ", ".join(f"{c} = excluded.{c}" for c in _BATCH_PROGRESS)
        one(
            f"INSERT INTO batches ({columns}) SELECT {columns} FROM src.batches WHERE true"
            f" ON CONFLICT (id) DO UPDATE SET {progress} WHERE excluded.closed > batches.closed"
        )
        one(
            "INSERT INTO batch_calls (batch_id, key, call, state)"
            " SELECT batch_id, key, call, state FROM src.batch_calls WHERE true"
            " ON CONFLICT (batch_id, key) DO UPDATE SET state = excluded.state"
            " WHERE batch_calls.state = 'pending'"
        )
        (after,) = one("SELECT count(*) FROM batches").fetchone()
        return int(after - before)


_SOURCE_HAS_BATCHES = "SELECT 1 FROM src.sqlite_master WHERE type = 'table' AND name = 'batches'"
_BATCH_COLUMNS = (
    "id", "provider", "model", "api_base", "input_file_id", "status", "closed", "calls",
    "completed", "failed", "lost", "note", "created_at", "updated_at",
)  # fmt: skip
_BATCH_PROGRESS = ("status", "closed", "completed", "failed", "lost", "note", "updated_at")
_ERROR_COLUMNS = (
    "key", "judge", "model", "prompt_hash", "incident_id", "trial", "dimension_id",
    "error_kind", "error", "attempts", "requests", "attempt_errors", "usage", "created_at",
)  # fmt: skip


def _verdict(answers: str, attempts: int, requests: int, usage: str | None) -> DimensionVerdict:
    return DimensionVerdict(
        answers=[QuestionAnswer.model_validate(a) for a in json.loads(answers)],
        attempts=attempts,
        requests=requests,
        usage=Usage.model_validate_json(usage) if usage else None,
        cached=True,
    )


# ------------------------------------------------------------------ merging stores

_SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite_file(path: str | Path) -> bool:
    """Whether `path` starts with the SQLite header; False if it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


@dataclass
class StoreMerge:
    """What `merge_stores` did: answers copied, answers already there (the same key; the first
    store's answer is kept, and `conflicts` counts those whose answers differ), failed calls."""

    added: int = 0
    duplicates: int = 0
    conflicts: int = 0
    errors: int = 0
    batches: int = 0
    """Provider batches copied (with their calls), each batch once."""


def merge_stores(target: str | Path, sources: Sequence[str | Path]) -> StoreMerge:
    """Copy every answer, failed call, params row and provider batch of `sources` into
    `target` (created if new). Leases are not copied: they belong to the processes that wrote
    the sources."""
    target = Path(target)
    for source in sources:
        if Path(source).resolve() == target.resolve():
            raise InputError(source, "is the --store being written; give another target")
        Store(source, readonly=True).close()  # a clear error for a file that is no store
    outcome = StoreMerge()
    with Store(target) as out:
        for source in sources:
            out.absorb(Path(source), outcome)
    return outcome
