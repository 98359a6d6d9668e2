"""One store, several processes: a unit's call is claimed in the store before it is made.

Two `judge eval` processes on one store would otherwise both ask every call neither has
answered yet. Before a call, a process takes a lease on its store key (`Store.claim`: a row with
owner and expiry, in one `BEGIN IMMEDIATE` transaction with the other claims of the same turn of
the event loop), renews it while the call runs, and releases it when the call ends, answered or
failed. A unit whose lease another live process holds is put back (`Deferred`,
`UnitQueue.later`) and taken up again once the process has run out of other units: by then its
answer is usually in the store and is served from there; otherwise the process waits for the
answer, or for the lease to expire (its holder died) and takes the call over. A holder on the
same machine that is no longer running is not waited for.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import secrets
import socket
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Iterable
from typing import Generic, TypeVar

from ..errors import StorageError
from ..store import Claim, Store

LEASE_SECONDS = 30.0
"""How long a lease lives without renewal: a killed process's units are free again after this.
A live process renews its leases every third of it, however long the call takes."""

POLL_SECONDS = 0.25
"""How often a process waiting for another's unit looks at the store."""

T = TypeVar("T")


class Deferred(Exception):
    """Another live process holds this unit's lease: come back to it later."""


def owner_id() -> str:
    """A lease owner id unique to this process and call: `host:pid:random`."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def owner_gone(owner: str) -> bool:
    """Whether a lease's owner was a process on this machine that no longer runs (killed
    with -9, say): its leases need not be waited out."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    return False


class LeaseBook:
    """One process's leases on one store. `may_defer`: a unit held elsewhere raises `Deferred`
    the first time (the run puts it back); otherwise, and the second time, it is waited for.

    Each lease written alone cost a commit of its own (~10 KB to the store's WAL per call,
    more than the answer's own rows once they were written a batch at a time): the claims
    asked for in one turn of the event loop are taken together (`Store.claim_many`, one
    transaction), and every lease the process holds is renewed together, every third of
    `seconds`, by one task."""

    def __init__(
        self,
        store: Store,
        seconds: float = LEASE_SECONDS,
        may_defer: bool = True,
        poll: float = POLL_SECONDS,
    ):
        self.store = store
        self.seconds = seconds
        self.may_defer = may_defer
        self.poll = poll
        self.owner = owner_id()
        self.taken_over = 0
        self._put_back: set[str] = set()
        self._wanted: list[tuple[str, bool, asyncio.Future[Claim]]] = []
        self._held: Counter[str] = Counter()
        self._renewal: asyncio.Task[None] | None = None

    @contextlib.asynccontextmanager
    async def hold(self, key: str, served: bool = True) -> AsyncIterator[bool]:
        """Yields True when the store holds the answer now (another process gave it), False
        when this process holds the lease and makes the call; releases it afterwards."""
        while True:
            claim = await self._claim(key, served)
            if claim.state == "answered":
                yield True
                return
            if claim.state == "claimed":
                break
            if self.may_defer and key not in self._put_back:
                self._put_back.add(key)
                raise Deferred(key)
            await asyncio.sleep(max(0.01, min(self.poll, claim.expires - time.time())))
        self.taken_over += claim.took_over
        self._held[key] += 1
        if self._renewal is None or self._renewal.done():
            self._renewal = asyncio.create_task(self._renew())
        try:
            yield False
        finally:
            self._drop(key)
            self.store.release(key, self.owner)

    def _claim(self, key: str, served: bool) -> asyncio.Future[Claim]:
        """The claim on `key`, taken with the others asked for in this turn of the loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Claim] = loop.create_future()
        if not self._wanted:
            loop.call_soon(self._claim_wanted)
        self._wanted.append((key, served, future))
        return future

    def _claim_wanted(self) -> None:
        wanted, self._wanted = self._wanted, []
        for served in (True, False):
            asked = [(key, future) for key, s, future in wanted if s is served]
            if not asked:
                continue
            try:
                claims = self.store.claim_many(
                    [key for key, _ in asked], self.owner, self.seconds, served, gone=owner_gone
                )
            except Exception as exc:  # told to each caller: nothing else waits for it
                for _, future in asked:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (key, future), claim in zip(asked, claims, strict=True):
                if not future.done():
                    future.set_result(claim)
                elif claim.state == "claimed":  # its call was cancelled while it waited
                    with contextlib.suppress(StorageError):
                        self.store.release(key, self.owner)

    def _drop(self, key: str) -> None:
        self._held[key] -= 1
        if self._held[key] <= 0:
            del self._held[key]
        if not self._held and self._renewal is not None:
            self._renewal.cancel()
            self._renewal = None

    async def _renew(self) -> None:
        with contextlib.suppress(StorageError):  # the call's own write will report the store
            while self._held:
                await asyncio.sleep(self.seconds / 3)
                self.store.renew_many(list(self._held), self.owner, self.seconds)


@contextlib.asynccontextmanager
async def hold(book: LeaseBook | None, key: str, served: bool = True) -> AsyncIterator[bool]:
    """`book.hold(key)`, or nothing to hold (False) when the run has no store."""
    if book is None:
        yield False
        return
    async with book.hold(key, served) as answered:
        yield answered


def lease_book(store: Store | None, n_leaves: int) -> LeaseBook | None:
    """The run's leases. A panel's members wait rather than defer: a unit is one panel call."""
    return None if store is None else LeaseBook(store, may_defer=n_leaves == 1)


class UnitQueue(Generic[T]):
    """The run's units for its workers, with the ones put back (`later`) after all others.

    Units may keep arriving (`put`) while workers take them (`get`, which waits for the next
    one until the queue is `close`d); units put back come only after the last has arrived.

    Putting a unit back also moves on to a random point of the units left (they wrap around):
    processes sharing a store start with the same units, and without the jump they would keep
    running into each other's leases, unit after unit; after it they work apart. A run alone
    on its store never puts a unit back, so its order is the units' order."""

    def __init__(self, items: Iterable[T] = (), seed: int | None = None, closed: bool = True):
        self._items: deque[T] = deque(items)  # a unit taken is let go of: it holds its submission
        self._later: deque[T] = deque()
        self._random = random.Random(seed)
        self._closed = closed
        self._arrived = asyncio.Event()

    def __iter__(self) -> UnitQueue[T]:
        return self

    def __next__(self) -> T:
        """The next unit there is now (StopIteration when none is, even if more may come)."""
        if self._items:
            return self._items.popleft()
        if self._later and self._closed:
            return self._later.popleft()
        raise StopIteration

    async def get(self) -> T | None:
        """The next unit, waiting for one to arrive; None once the queue is closed and empty."""
        while True:
            with contextlib.suppress(StopIteration):
                return next(self)
            if self._closed:
                return None
            self._arrived.clear()
            await self._arrived.wait()

    def waiting(self) -> int:
        """Units that arrived and no worker took yet (not counting those put back, which wait
        for the last unit to arrive)."""
        return len(self._items)

    def put(self, item: T) -> None:
        self._items.append(item)
        self._arrived.set()

    def close(self) -> None:
        """No more units will arrive."""
        self._closed = True
        self._arrived.set()

    def later(self, item: T) -> None:
        self._later.append(item)
        self._arrived.set()
        if len(self._items) > 1:
            self._items.rotate(-self._random.randrange(len(self._items)))
