"""Provider batches: each submitted batch and the calls it holds, so a killed `--batch` run
resumes by batch id instead of submitting again."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..checklist.judgment import DimensionVerdict
from .answers import insert
from .failures import guarded
from .file import StoreFile, now, rows_in
from .keys import CaseRef, KeyParts
from .migrations import has_table

BATCH_COLUMNS = (
    "id", "provider", "model", "api_base", "input_file_id", "status", "closed", "calls",
    "completed", "failed", "lost", "note", "created_at", "updated_at",
)  # fmt: skip
BATCH_PROGRESS = ("status", "closed", "completed", "failed", "lost", "note", "updated_at")
"""The columns that change as a batch runs (the rest are fixed when it is submitted)."""


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


class Batches(StoreFile):
    """Recording provider batches, their calls' states and the answers they bring."""

    @guarded
    def add_batch(self, batch: StoredBatch, calls: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Record a submitted provider batch and the calls it holds (key, what to store its
        answer under), in one transaction: from here a killed run resumes it by id."""
        self._check_file()
        time = now()
        with self._transaction():
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
                    time,
                    time,
                ),
            )
            self._db.executemany(
                "INSERT INTO batch_calls (batch_id, key, call) VALUES (?, ?, ?)",
                [(batch.id, key, json.dumps(call, sort_keys=True)) for key, call in calls],
            )

    @guarded
    def rename_batch(self, old_id: str, new_id: str, status: str) -> None:
        """Give a batch recorded before the provider named it its real id, in one transaction."""
        self._check_file()
        with self._transaction():
            self._db.execute(
                "UPDATE batches SET id = ?, status = ?, updated_at = ? WHERE id = ?",
                (new_id, status, now(), old_id),
            )
            self._db.execute(
                "UPDATE batch_calls SET batch_id = ? WHERE batch_id = ?", (new_id, old_id)
            )

    @guarded
    def open_batches(self, keys: Iterable[str]) -> list[StoredBatch]:
        """The batches not yet closed that hold any of `keys`, oldest first."""
        if not has_table(self._db, "batches"):
            return []
        sql = (
            "SELECT DISTINCT c.batch_id FROM batch_calls c JOIN batches b"
            " ON b.id = c.batch_id WHERE b.closed = 0 AND c.key IN ({marks})"
        )
        found = {row[0] for row in rows_in(self._db, sql, keys)}
        return [b for b in self.batches() if b.id in found]

    @guarded
    def batches(self) -> list[StoredBatch]:
        """Every batch the store knows, oldest first (none in a version 1 store opened
        read-only that never batched: it has no batch tables)."""
        if not has_table(self._db, "batches"):
            return []
        rows = self._db.execute(
            "SELECT id, provider, model, api_base, input_file_id, status, closed, calls,"
            " completed, failed, lost, note, created_at FROM batches ORDER BY created_at, id"
        )
        names = [d[0] for d in rows.description]
        found = [dict(zip(names, row, strict=True)) for row in rows]
        return [StoredBatch(**{**batch, "closed": bool(batch["closed"])}) for batch in found]

    def batch_stats(self) -> list[dict[str, Any]]:
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

    @guarded
    def batch_calls(self, batch_id: str) -> list[tuple[str, dict[str, Any], str]]:
        """A batch's calls: (key, what its answer is stored under, state)."""
        rows = self._db.execute(
            "SELECT key, call, state FROM batch_calls WHERE batch_id = ? ORDER BY rowid",
            (batch_id,),
        )
        return [(key, json.loads(call), state) for key, call, state in rows]

    @guarded
    def update_batch(
        self, batch_id: str, status: str, completed: int, failed: int, **closing: Any
    ) -> None:
        """The provider's latest status and counts; `closed=True, lost=N, note=...` once its
        results are all in the store."""
        self._check_file()
        with self._transaction():
            self._db.execute(
                "UPDATE batches SET status = ?, completed = ?, failed = ?, updated_at = ?,"
                " closed = coalesce(?, closed), lost = coalesce(?, lost),"
                " note = coalesce(?, note) WHERE id = ?",
                (
                    status,
                    completed,
                    failed,
                    now(),
                    closing.get("closed"),
                    closing.get("lost"),
                    closing.get("note"),
                    batch_id,
                ),
            )

    @guarded
    def put_batch_result(
        self,
        batch_id: str,
        key: str,
        state: str,
        result: tuple[KeyParts, CaseRef, DimensionVerdict],
    ) -> None:
        """One batch line's answer (or error row) and the call's new state, in one
        transaction, so a resumed run never writes it twice."""
        self._check_file()
        with self._transaction():
            insert(self._db, *result)
            self._set_call_state(batch_id, key, state)

    @guarded
    def mark_batch_call(self, batch_id: str, key: str, state: str) -> None:
        """A batch call's new state when nothing is stored for it (e.g. `refused`: the server
        refused its reply format, and it is asked again in another batch)."""
        self._check_file()
        with self._transaction():
            self._set_call_state(batch_id, key, state)

    def _set_call_state(self, batch_id: str, key: str, state: str) -> None:
        self._db.execute(
            "UPDATE batch_calls SET state = ? WHERE batch_id = ? AND key = ?",
            (state, batch_id, key),
        )
