"""The `openai` client's connections: one pool for every request a run's event loop sends,
holding no more connections than there are requests in flight at once.

httpx's default pool (httpcore's `AsyncConnectionPool`) looks at every connection it holds
each time a request starts or ends, and asks each idle one whether its socket has become
readable (a system call through anyio's socket attributes) and counts the idle ones once per
idle connection. At 50 requests in flight that was a third of the run's CPU
(`benchmarks/cpu_profile.py --in-flight`), growing with the number of connections. `SlotPool`
keeps its idle connections in a list: a request takes the last one that was given back (after
checking that one alone), or opens a new one when none is idle, and gives it back when its
response is closed. So the pool grows to the largest number of requests in flight at once,
which the run's gate holds to `--max-concurrent`, and each request costs the same however many
there are. Everything else (proxies from the environment, TLS, HTTP/1.1, timeouts, httpx's
exceptions) is httpx's and httpcore's own: `PooledTransport` is httpx's transport with this
pool in place of its own.

httpcore writes a request's head and its body to the socket separately: two system calls, each
a loopback or network send of its own, which were ~16% of a call's CPU at 50 in flight. The
pool's connections hold a request's writes and send them as one (`_WriteBehind`).
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator
from typing import Any

MAX_CONNECTIONS = 1000
"""The most connections open at once (the `openai` SDK's limit): reached only outside a run,
whose gate holds the requests in flight to `--max-concurrent`."""
KEEPALIVE_SECONDS = 5.0
"""How long an idle connection is kept (httpx's default)."""


class SlotPool:
    """httpcore's pool interface (`handle_async_request`, `aclose`) over a list of idle
    HTTP/1.1 connections. Use from one event loop."""

    def __init__(self, httpcore: Any, ssl_context: Any, limit: int = MAX_CONNECTIONS):
        self._httpcore = httpcore
        self._ssl_context = ssl_context
        self._idle: list[Any] = []
        self._slots = asyncio.Semaphore(limit)
        self._backend = _Backend(httpcore)

    async def handle_async_request(self, request: Any) -> Any:
        httpcore = self._httpcore
        if request.url.scheme not in (b"http", b"https"):
            raise httpcore.UnsupportedProtocol(
                f"Request URL has an unsupported protocol '{request.url.scheme.decode()}://'."
            )
        await self._take_slot(request.extensions.get("timeout", {}).get("pool"))
        try:
            while True:
                connection = await self._connection_for(request.url.origin)
                try:
                    response = await connection.handle_async_request(request)
                except httpcore.ConnectionNotAvailable:
                    continue  # it closed or became busy since it was given back: another one
                except BaseException:
                    self._give_back(connection)
                    raise
                break
        except BaseException:
            self._slots.release()
            raise
        return httpcore.Response(
            status=response.status,
            headers=response.headers,
            content=_GivenBack(response.stream, connection, self),
            extensions=response.extensions,
        )

    async def _take_slot(self, timeout: float | None) -> None:
        if not self._slots.locked():
            await self._slots.acquire()
            return
        try:
            await asyncio.wait_for(self._slots.acquire(), timeout)
        except TimeoutError:
            raise self._httpcore.PoolTimeout("no connection was free in time") from None

    async def _connection_for(self, origin: Any) -> Any:
        """The idle connection given back last that can take a request to `origin` (those
        found expired on the way are closed), else a new one."""
        idle = self._idle
        for index in range(len(idle) - 1, -1, -1):
            connection = idle[index]
            if not connection.can_handle_request(origin):
                continue
            del idle[index]
            if connection.has_expired() or not connection.is_available():
                await connection.aclose()
                continue
            return connection
        return self._httpcore.AsyncHTTPConnection(
            origin,
            ssl_context=self._ssl_context,
            keepalive_expiry=KEEPALIVE_SECONDS,
            network_backend=self._backend,
        )

    def _give_back(self, connection: Any) -> None:
        """A connection whose request is over: kept when it can take another (a failed or
        cut-off request leaves it closed, and it is dropped)."""
        if connection.is_idle() and not connection.is_closed():
            self._idle.append(connection)

    def _finished(self, connection: Any) -> None:
        self._slots.release()
        self._give_back(connection)

    async def aclose(self) -> None:
        """Close the idle connections; a request still in flight keeps its own, which is closed
        or given back when its response is."""
        idle, self._idle = self._idle, []
        for connection in idle:
            await connection.aclose()

    async def __aenter__(self) -> SlotPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _GivenBack:
    """A response's body: its connection goes back to the pool once the body is closed."""

    def __init__(self, stream: Any, connection: Any, pool: SlotPool):
        self._stream = stream
        self._connection = connection
        self._pool = pool
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for part in self._stream:
                yield part
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        import anyio  # httpcore's own dependency, loaded with it

        try:
            with anyio.CancelScope(shield=True):  # a cancelled read still ends its response
                await self._stream.aclose()
        finally:
            self._pool._finished(self._connection)


class _Backend:
    """httpcore's asyncio network backend whose streams are `_WriteBehind`."""

    def __init__(self, httpcore: Any):
        self._backend = httpcore.AnyIOBackend()
        self._write_error = httpcore.WriteError

    async def connect_tcp(self, *args: Any, **kwargs: Any) -> _WriteBehind:
        stream = await self._backend.connect_tcp(*args, **kwargs)
        return _WriteBehind(stream, self._write_error)

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> _WriteBehind:
        stream = await self._backend.connect_unix_socket(*args, **kwargs)
        return _WriteBehind(stream, self._write_error)

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


class _WriteBehind:
    """A connection's stream whose writes are held until it is next read, then sent as one
    (HTTP/1.1 reads nothing before the whole request is sent). A send that fails with a write
    error is passed over and the read goes on, as httpcore does with a request it could not
    finish sending: a server may have answered (an error status) and closed early, and
    otherwise the read fails as the connection's failure."""

    def __init__(self, stream: Any, write_error: type[Exception]):
        self._stream = stream
        self._write_error = write_error
        self._held: list[bytes] = []
        self._timeout: float | None = None

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            self._held.append(buffer)
            self._timeout = timeout

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._held:
            held, self._held = self._held, []
            with contextlib.suppress(self._write_error):
                await self._stream.write(b"".join(held), self._timeout)
        return await self._stream.read(max_bytes, timeout)

    async def aclose(self) -> None:
        self._held = []
        await self._stream.aclose()

    async def start_tls(self, *args: Any, **kwargs: Any) -> _WriteBehind:
        return _WriteBehind(await self._stream.start_tls(*args, **kwargs), self._write_error)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


_TRANSPORTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()


def shared_transport(httpx: Any) -> Any:
    """The running event loop's one transport (connections belong to the loop that opened
    them): httpx's own, TLS set up from the environment as httpx does, with a `SlotPool` in
    place of its pool. Every `openai` client on the loop sends through it."""
    loop = asyncio.get_running_loop()
    transport = _TRANSPORTS.get(loop)
    if transport is None:
        import httpcore

        tls = httpx.create_ssl_context()  # one for both: each loads the CA bundle (~25 ms)
        transport = httpx.AsyncHTTPTransport(verify=tls)
        transport._pool = SlotPool(httpcore, tls)
        _TRANSPORTS[loop] = transport
    return transport
