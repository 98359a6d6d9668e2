"""Leases: which process is asking for which key, so processes sharing a store split the calls
instead of asking the same one twice."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from .failures import guarded
from .file import StoreFile


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
            return [self._claim(key, owner, now + seconds, now, served, gone) for key in keys]

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
        one(
            "INSERT OR REPLACE INTO leases (key, owner, expires) VALUES (?, ?, ?)",
            (key, owner, until),
        )
        return Claim("claimed", owner, until, took_over=row is not None and row[0] != owner)

    @guarded
    def renew(self, key: str, owner: str, seconds: float) -> bool:
        """Extend our lease; False when it is no longer ours (it expired and was taken over)."""
        return key in self.renew_many([key], owner, seconds)

    @guarded
    def renew_many(self, keys: Iterable[str], owner: str, seconds: float) -> set[str]:
        """Extend our leases on `keys` in one transaction; the keys whose lease is still ours."""
        until = time.time() + seconds
        renewed = set()
        with self._transaction():
            for key in keys:
                cursor = self._db.execute(
                    "UPDATE leases SET expires = ? WHERE key = ? AND owner = ?", (until, key, owner)
                )
                if cursor.rowcount == 1:
                    renewed.add(key)
        return renewed

    @guarded
    def release(self, key: str, owner: str) -> None:
        """Drop our lease, or have it dropped with the batch that commits the key's answer."""
        if self._release_later(key, owner):
            return
        with self._transaction():
            self._db.execute("DELETE FROM leases WHERE key = ? AND owner = ?", (key, owner))
