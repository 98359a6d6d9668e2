"""Telling a call that waits on a request the moment that request has reached the server.

The reply-format probe (`judge.judges.structured.Negotiation`) holds a run's other calls back
until the server has had the time to refuse the format, which a server does while it reads the
request, long before a model would have written a reply. To know when that time starts, the
probe's task sets `REQUEST_SENT` to a callback, which the `openai` client calls once the request
is written, with the seconds its connection took to open (a round trip or two, to scale the wait
by) or None when the connection was open already: its pool (`judge.judges.clients.pool`) after
its write, and a request sent through httpx (a proxy, a redirect) through httpcore's `trace`
extension (`SentTrace`). A client that cannot tell (litellm's) never calls it, and the probe
falls back to waiting for its reply or its window.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

OnSent = Callable[[float | None], None]

REQUEST_SENT: ContextVar[OnSent | None] = ContextVar("judge_request_sent", default=None)


class SentTrace:
    """httpcore's `trace` extension for one request: times the TCP connect, and calls
    `on_sent` when the response starts to be read (the request is wholly written by then)."""

    def __init__(self, on_sent: OnSent):
        self.on_sent = on_sent
        self._connecting: float | None = None
        self._connect_seconds: float | None = None

    async def __call__(self, event: str, info: dict[str, Any]) -> None:
        if event == "connection.connect_tcp.started":
            self._connecting = time.monotonic()
        elif event == "connection.connect_tcp.complete" and self._connecting is not None:
            self._connect_seconds = time.monotonic() - self._connecting
        elif event == "http11.receive_response_headers.started":
            self.on_sent(self._connect_seconds)
