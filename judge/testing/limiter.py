"""The fake provider's own rate limit: at most N accepted requests in any sliding window."""

from __future__ import annotations

import threading
import time
from collections import deque


class SlidingWindowLimiter:
    """At most `limit` requests in any `window` seconds; thread-safe."""

    def __init__(self, limit: int, window: float, clock=time.monotonic) -> None:
        self._limit = limit
        self._window = window
        self._clock = clock
        self._accepted: deque[float] = deque()
        self._lock = threading.Lock()

    def acquire(self) -> float | None:
        """Count the request and return None, or return the seconds until a slot frees up."""
        with self._lock:
            now = self._clock()
            while self._accepted and self._accepted[0] <= now - self._window:
                self._accepted.popleft()
            if len(self._accepted) < self._limit:
                self._accepted.append(now)
                return None
            return self._accepted[0] + self._window - now
