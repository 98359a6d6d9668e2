"""Leases: which process is asking for which key, so processes sharing a store split the calls
instead of asking the same one twice."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from .failures import guarded
from .file import StoreFile, execute_in, rows_in
from .keys import keys_in


@dataclass(frozen=True)
class Claim:
    """What `Store.claim` found: `answered` (the store holds the answer now), `claimed` (the
    caller holds the lease until `expires`; `took_over` when it had expired in another's hands)
    or `held` (another owner holds it until `expires`)."""

    state: Literal["answered", "claimed", "held"]
    owner: str | None = None
    expires: float = 0.0
    took_over: bool = False


class Leases(StoreFile):
    """Claiming, renewing and releasing the lease on a key."""

    @guarded
    def claim(
        self,
        key: str,
        owner: str,
        seconds: float,
        served: bool = True,
        now: float | None = None,
        gone: Callable[[str], bool] | None = None,
    ) -> Claim:
        """Take the lease on `key` for `seconds` unless another owner's lease is still live
        (`claim_many` of one key)."""
        return self.claim_many([key], owner, seconds, served, now, gone)[0]

    @guarded
    def claim_many(
        self,
        keys: Sequence[str],
        owner: str,
        seconds: float,
        served: bool = True,
        now: float | None = None,
        gone: Callable[[str], bool] | None = None,
    ) -> list[Claim]:
        """What `claim` finds for each of `keys`, all in one `BEGIN IMMEDIATE` transaction (so
        two processes cannot both take a lease, and the claims of a run's loop tick cost one
        commit, not one each). With `served` an answer already stored wins over any lease
        (`answered`). A lease whose owner `gone` says has died is taken over at once."""
        self._check_file()
        now = time.time() if now is None else now
        with self._transaction():
            answered = keys_in(self._db, keys) if served else set()
            found = {
                row[0]: row[1:]
                for row in rows_in(
                    self._db,
                    "SELECT key, rowid, owner, expires FROM leases WHERE key IN ({marks})",
                    {k for k in keys if k not in answered},
                )
            }
            return [
                Claim("answered")
                if key in answered
                else self._claim(key, found, owner, now + seconds, now, gone)
                for key in keys
            ]

    def _claim(
        self,
        key: str,
        found: dict[str, tuple[int, str, float]],
        owner: str,
        until: float,
        now: float,
        gone: Callable[[str], bool] | None,
    ) -> Claim:
        """One key's claim; `found` is the leases rows of the keys asked for, kept current."""
        row = found.get(key)
        if row is None:
            cursor = self._db.execute(
                "INSERT INTO leases (key, owner, expires) VALUES (?, ?, ?)", (key, owner, until)
            )
            found[key] = (cursor.lastrowid or 0, owner, until)
            return Claim("claimed", owner, until)
        rowid, holder, expires = row
        if holder != owner and expires > now and not (gone and gone(holder)):
            return Claim("held", holder, expires)
        self._db.execute(
            "UPDATE leases SET owner = ?, expires = ? WHERE rowid = ?", (owner, until, rowid)
        )
        found[key] = (rowid, owner, until)
        return Claim("claimed", owner, until, took_over=holder != owner)

    @guarded
    def renew(self, key: str, owner: str, seconds: float) -> bool:
        """Extend our lease; False when it is no longer ours (it expired and was taken over)."""
        return key in self.renew_many([key], owner, seconds)

    @guarded
    def renew_many(self, keys: Iterable[str], owner: str, seconds: float) -> set[str]:
        """Extend our leases on `keys` in one transaction; the keys whose lease is still ours."""
        until = time.time() + seconds
        wanted = set(keys)
        with self._transaction():
            sql = "UPDATE leases SET expires = ? WHERE owner = ? AND key IN ({marks})"
            execute_in(self._db, sql, wanted, (until, owner))
            sql = "SELECT key FROM leases WHERE owner = ? AND key IN ({marks})"
            return {key for (key,) in rows_in(self._db, sql, wanted, (owner,))}

    @guarded
    def release(self, key: str, owner: str) -> None:
        """Drop our lease, or have it dropped with the batch that commits the key's answer."""
        if self._release_later(key, owner):
            return
        with self._transaction():
            drop_leases(self._db, [(key, owner)])


def drop_leases(db: sqlite3.Connection, leases: Iterable[tuple[str, str]]) -> None:
    """Delete these (key, owner) leases, inside the caller's transaction: one pass over the
    table for each owner's keys (it has no index, see `m008_leases_appended`)."""
    by_owner: dict[str, set[str]] = {}
    for key, owner in leases:
        by_owner.setdefault(owner, set()).add(key)
    for owner, keys in by_owner.items():
        execute_in(db, "DELETE FROM leases WHERE owner = ? AND key IN ({marks})", keys, (owner,))
