"""A slow import done once per process, in a background thread once a run knows it needs it.

litellm takes seconds to import and the `openai` SDK about half a second: a run that will
send requests starts the import (`start`) while it loads inputs and renders prompts, and the
first request awaits it (`ready`) without holding the event loop. A run the store answers in
full never starts it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Background(Generic[T]):
    """`load()` (idempotent, like an import) run at most once in a background thread."""

    def __init__(self, name: str, load: Callable[[], T]):
        self.name = name
        self.load = load
        self._future: concurrent.futures.Future[T] | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start loading in a background thread, once."""
        with self._lock:
            if self._future is not None:
                return
            future: concurrent.futures.Future[T] = concurrent.futures.Future()
            self._future = future

        def work() -> None:
            try:
                future.set_result(self.load())
            except BaseException as exc:  # the first use raises it again, as its own error
                future.set_exception(exc)

        threading.Thread(target=work, name=f"import-{self.name}", daemon=True).start()

    async def ready(self) -> T:
        """The loaded value, waiting without holding the event loop for a load under way."""
        future = self._future
        if future is not None and not future.done():
            await asyncio.wrap_future(future)
        return self.load()
