"""Merging stores: every answer, failed call, params row, logged request and provider batch of
other stores copied into one (shards of a run brought together)."""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ground_truth.errors import InputError

from .answers import ERROR_COLUMNS, JUDGMENT_COLUMNS
from .batches import BATCH_COLUMNS, BATCH_PROGRESS
from .failures import guarded
from .file import StoreFile
from .migrations import IDENTITY_COLUMNS, has_columns, has_table, short
from .replies import REPLY_COLUMNS

_SQLITE_MAGIC = b"SQLite format 3\x00"
_SAME_KEY = f"{short('m.key')} = {short('s.key')} AND m.key = s.key"
"""An answer `m` of this store under the key of an answer `s` of the source."""


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
    replies: int = 0
    """Logged requests copied (`judge.store.replies`), with the prompt pieces they name."""


class Merging(StoreFile):
    """Copying another store's rows into this one."""

    @guarded
    def absorb(self, source: Path, outcome: StoreMerge) -> None:
        """Copy `source`'s rows in one transaction (see `merge_stores`)."""
        self._check_file()
        uri = f"file:{urllib.parse.quote(str(source.absolute()))}?mode=ro"
        self._db.execute("ATTACH DATABASE ? AS src", (uri,))
        try:
            with self._transaction():
                one = self._db.execute
                outcome.conflicts += one(
                    f"SELECT count(*) FROM src.judgments s JOIN judgments m ON {_SAME_KEY}"
                    " WHERE json(s.answers) != json(m.answers)"  # older stores' JSON had spaces
                ).fetchone()[0]
                before = one("SELECT count(*) FROM judgments").fetchone()[0]
                (offered,) = one("SELECT count(*) FROM src.judgments").fetchone()
                copied: tuple[str, ...] = JUDGMENT_COLUMNS
                if has_columns(self._db, "judgments", IDENTITY_COLUMNS, schema="src"):
                    copied += IDENTITY_COLUMNS
                answers = ", ".join(copied)
                one(
                    f"INSERT INTO judgments ({answers}) SELECT {answers} FROM src.judgments s"
                    f" WHERE NOT EXISTS (SELECT 1 FROM judgments m WHERE {_SAME_KEY})"
                )
                added = one("SELECT count(*) FROM judgments").fetchone()[0] - before
                outcome.added += added
                outcome.duplicates += offered - added
                columns = ", ".join(ERROR_COLUMNS)
                cursor = one(f"INSERT INTO errors ({columns}) SELECT {columns} FROM src.errors")
                outcome.errors += cursor.rowcount
                one(
                    "INSERT OR IGNORE INTO params (params_hash, params)"
                    " SELECT params_hash, params FROM src.params"
                )
                if has_table(self._db, "batches", schema="src"):
                    outcome.batches += self._absorb_batches()
                if has_table(self._db, "replies", schema="src"):
                    outcome.replies += self._absorb_replies()
        finally:
            self._db.execute("DETACH DATABASE src")

    def _absorb_replies(self) -> int:
        """Copy the attached source's logged requests (numbered anew, after this store's) and
        the prompt pieces this store lacks."""
        columns = ", ".join(REPLY_COLUMNS)
        cursor = self._db.execute(
            f"INSERT INTO replies ({columns}) SELECT {columns} FROM src.replies ORDER BY id"
        )
        self._db.execute(
            "INSERT INTO reply_texts (hash, part, text) SELECT hash, part, text"
            " FROM src.reply_texts s WHERE NOT EXISTS (SELECT 1 FROM reply_texts m WHERE"
            f" {short('m.hash')} = {short('s.hash')} AND m.hash = s.hash AND m.part = s.part)"
        )
        return int(cursor.rowcount)

    def _absorb_batches(self) -> int:
        """Copy the attached source's batches and their calls; the number of new batches. A
        batch both stores hold is kept once, in its later state: closed beats open, and an
        answered call beats a pending one (so no merged store polls a finished batch again)."""
        one = self._db.execute
        (before,) = one("SELECT count(*) FROM batches").fetchone()
        columns = ", ".join(BATCH_COLUMNS)
        progress = ", ".join(f"{c} = excluded.{c}" for c in BATCH_PROGRESS)
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


def merge_stores(target: str | Path, sources: Sequence[str | Path]) -> StoreMerge:
    """Copy every answer, failed call, params row, logged request and provider batch of
    `sources` into `target` (created if new). Leases are not copied: they belong to the processes that wrote
    the sources."""
    target = Path(target)
    for source in sources:
        if Path(source).resolve() == target.resolve():
            raise InputError(source, "is the --store being written; give another target")
        StoreFile(source, readonly=True).close()  # a clear error for a file that is no store
    outcome = StoreMerge()
    with Merging(target) as out:
        for source in sources:
            out.absorb(Path(source), outcome)
    return outcome
