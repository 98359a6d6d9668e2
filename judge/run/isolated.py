"""The rules judge run in a child process, so that a stop never waits for it.

The rules judge is plain Python and regular expressions on the event loop's thread: while
one call runs (minutes on a diagnosis of several megabytes) the loop cannot see a signal,
and a thread would not help (a regular expression holds the GIL, and a thread cannot be
killed). In a child process the loop stays free, and when the run stops the calls in flight
are abandoned at once: the child is killed and they come back not judged. Nothing is lost by
that: the rules judge is offline and deterministic, so a rerun asks again.

The calls in flight queue up in the child, which answers them in order, so it works while
the parent keeps its accounts. Each spec and dimension crosses the pipe once; the child
keeps them, so its judge's per-spec and per-submission caches work as in the parent; a
submission is sent once for its dimensions in a row.
The calls asked in one turn of the event loop go in one message (a message per call cost the
parent a thread woken, a pickle and a write each), and the child's answers come back a few to
a message (`rules_child.REPLY_EVERY`).
Tasks are written by a thread of their own: a write the child is too busy to read (a
diagnosis of megabytes) must not hold up the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import queue
import subprocess
import sys
import threading
from collections import deque
from typing import TYPE_CHECKING, Any

from ground_truth.models import Submission

from ..checklist.judgment import DimensionVerdict
from ..judges import is_rules_judge
from ..judges.base import JudgeTask, RunStopped
from .control import Gate

if TYPE_CHECKING:
    from ..judges.rules import RulesJudge

FOREVER = 365 * 24 * 3600.0
BOOT = (
    "import sys; from multiprocessing.connection import Connection; c = Connection({fd}); "
    "sys.path[:] = c.recv(); from judge.run.rules_child import serve; serve(c)"
)


def isolable(judge: object) -> bool:
    """Whether the run should ask this judge in a child process: the rules judge does its
    work in the calling thread, where nothing can interrupt it. Not a subclass, which may
    answer otherwise than `answer()`; POSIX only (the child inherits its pipe's descriptor)."""
    return is_rules_judge(judge, exactly=True) and os.name == "posix" and bool(sys.executable)


class IsolatedJudge:
    """A rules judge whose calls run in a child process, abandoned as soon as the run's
    `gate` stops (see the module docstring). `close()` ends the child."""

    def __init__(self, inner: RulesJudge, gate: Gate):
        self.inner = inner
        self.name = inner.name
        self.gate = gate
        self._child: _Child | None = None
        self._watcher: asyncio.Task[None] | None = None

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        if self.gate.stopped is not None:
            raise RunStopped(self.gate.stopped.message)
        if self._child is None or self._child.ended:
            self._child = _Child(self.inner, asyncio.get_running_loop())
        if self._watcher is None:
            self._watcher = asyncio.create_task(self._abandon_on_stop())
        return await self._child.ask(task)

    async def _abandon_on_stop(self) -> None:
        await self.gate.sleep(FOREVER)
        if self.gate.stopped is not None and self._child is not None:
            self._child.end(RunStopped(self.gate.stopped.message))

    def close(self) -> None:
        """Kill the child, if there is one (calls in flight are abandoned)."""
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None
        if self._child is not None:
            self._child.end(RunStopped("the run ended"))
            self._child = None


class _Child:
    """The child process and the parent's side of its pipe: tasks go out in batches through a
    writer thread, replies come back in order and settle the oldest calls waiting.

    A fresh interpreter (`python -c`), not multiprocessing's spawn, which would import the
    parent's `__main__` again: a harness script without a `__name__` guard would run twice."""

    def __init__(self, judge: RulesJudge, loop: asyncio.AbstractEventLoop):
        self._conn, theirs = multiprocessing.Pipe()
        fd = theirs.fileno()
        self._process = subprocess.Popen(
            [sys.executable, "-c", BOOT.format(fd=fd)],
            pass_fds=(fd,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        theirs.close()
        self._loop = loop
        self._waiting: deque[asyncio.Future[DimensionVerdict]] = deque()
        self._outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._outbox.put(sys.path)
        self._outbox.put(judge)
        self._writer = threading.Thread(target=self._write, name="judge-rules-writer", daemon=True)
        self._writer.start()
        self._fd = self._conn.fileno()
        loop.add_reader(self._fd, self._read)
        self._sent: dict[int, tuple[int, Any]] = {}
        self._last_submission: Submission | None = None
        self._batch: list[Any] = []
        """The tasks asked in this turn of the loop, handed to the writer at its end."""
        self.ended = False

    def _ref(self, item: Any) -> tuple[int, Any]:
        """A number for `item`, and the item itself the first time it is sent (else None)."""
        known = self._sent.get(id(item))
        if known is not None and known[1] is item:
            return known[0], None
        number = len(self._sent)
        self._sent[id(item)] = (number, item)
        return number, item

    async def ask(self, task: JudgeTask) -> DimensionVerdict:
        reply: asyncio.Future[DimensionVerdict] = self._loop.create_future()
        self._waiting.append(reply)
        submission = None if task.submission is self._last_submission else task.submission
        self._last_submission = task.submission
        if not self._batch:
            self._loop.call_soon(self._flush)
        self._batch.append((self._ref(task.spec), self._ref(task.dimension), submission))
        return await reply

    def _flush(self) -> None:
        batch, self._batch = self._batch, []
        if not self.ended:
            self._outbox.put(batch)

    def unsent(self) -> bool:
        """Whether some task asked has not yet been taken by the writer thread."""
        return bool(self._batch) or not self._outbox.empty()

    def _write(self) -> None:
        """The writer thread, until `end()` (which closes the pipe once this has stopped)."""
        try:
            while (item := self._outbox.get()) is not None:
                self._conn.send(item)
        except Exception as exc:  # the child is gone, or a task cannot be pickled
            error = RuntimeError(f"cannot send a task to the rules judge's process: {exc}")
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                self._loop.call_soon_threadsafe(self.end, error)

    def _read(self) -> None:
        try:
            while self._waiting and self._conn.poll(0):
                for ok, value in self._conn.recv():
                    self._settle(self._waiting.popleft(), ok, value)
        except (EOFError, OSError):
            self.end(RuntimeError("the rules judge's process ended during the call"))
        except Exception as exc:  # a reply that cannot be read: no later one can be trusted
            self.end(RuntimeError(f"the rules judge's process sent an unreadable reply: {exc}"))

    @staticmethod
    def _settle(reply: asyncio.Future[DimensionVerdict], ok: bool, value: Any) -> None:
        if reply.done():  # cancelled while it waited
            return
        if ok:
            reply.set_result(value)
        else:  # raised again under the child's exception's name, for the record
            name, message = value
            reply.set_exception(type(name, (Exception,), {})(message))

    def end(self, error: Exception) -> None:
        """Kill the child; every call still waiting raises `error`."""
        if self.ended:
            return
        self.ended = True
        self._loop.remove_reader(self._fd)
        self._process.kill()
        self._process.wait(5)
        self._outbox.put(None)
        self._writer.join(5)  # a write to the dead child fails at once
        self._conn.close()
        while self._waiting:
            reply = self._waiting.popleft()
            if not reply.done():
                reply.set_exception(error)
