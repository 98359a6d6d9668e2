"""The `openai` client's connections: one pool for every request a run's event loop sends,
holding no more connections than there are requests in flight at once, each connection an
asyncio protocol that speaks just enough HTTP/1.1 for a chat completion.

A chat completion is one POST whose reply is read whole. Through httpx, each cost a request and
a response object in httpx and again in httpcore, h11's event objects and state machine for the
request head, its body, the response head, each body part and the end of the message, anyio's
socket stream around each read and write, and httpcore's connection locks: about a third of a
call's CPU at 50 in flight (`benchmarks/cpu_profile.py --in-flight 50 --profile`). Here a
request is the bytes the client prepared, sent in one write, and the reply is parsed off the
connection's buffer as it arrives: the status line, the headers, a body framed by
`Content-Length`, chunks or the end of the connection, gzip or deflate undone.

The pool keeps its idle connections per origin in a list: a request takes the one given back
last (a connection the server has closed, or one idle longer than the keep-alive, is closed
and passed over) or opens a new one, and gives it back once its reply has been read whole,
unless the reply said to close it. So the pool grows to the largest number of requests in
flight at once, which the run's gate holds to `--max-concurrent`.

Failures are raised as httpx raises them (the client turns httpx's exceptions into the SDK's):
`ConnectError`/`ConnectTimeout` opening a connection, `PoolTimeout` waiting for a slot,
`ReadTimeout` when no byte of the reply arrives for a timeout, `ReadError` when the connection
breaks, `RemoteProtocolError` when the server closes it before the reply is whole or sends
what is not HTTP/1.1. A request cancelled or failed closes its connection.
"""

from __future__ import annotations

import asyncio
import weakref
import zlib
from typing import Any, NamedTuple

from .sent import REQUEST_SENT

MAX_CONNECTIONS = 1000
"""The most connections open at once (the `openai` SDK's limit): reached only outside a run,
whose gate holds the requests in flight to `--max-concurrent`."""
KEEPALIVE_SECONDS = 5.0
"""How long an idle connection is kept (httpx's default)."""
ACCEPT_ENCODING = "gzip, deflate"
"""The codings the pool undoes (httpx's own, without the optional brotli and zstd)."""
NO_BODY = frozenset({204, 304})
REDIRECTS = frozenset({301, 302, 303, 307, 308})


class Origin(NamedTuple):
    scheme: str
    host: str
    port: int


class Answer(NamedTuple):
    """A reply read whole: its status, headers (names lower-cased, in order) and decoded
    body."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((value for key, value in self.headers if key == name), None)

    @property
    def is_redirect(self) -> bool:
        return self.status in REDIRECTS and self.header("location") is not None


def _errors() -> Any:
    import httpx  # loaded with the client before its first request

    return httpx


class Pool:
    """Connections to any number of origins, from one event loop."""

    def __init__(self, ssl_context: Any, limit: int = MAX_CONNECTIONS):
        self.ssl_context = ssl_context
        self._idle: dict[Origin, list[_Connection]] = {}
        self._slots = asyncio.Semaphore(limit)

    async def send(self, origin: Origin, request: bytes, timeout: float) -> Answer:
        """The answer to `request` (a whole HTTP/1.1 request's bytes) from `origin`; no byte
        of it may take longer than `timeout` seconds to come, nor a connection to open."""
        await self._take_slot(timeout)
        try:
            connection = self._idle_connection(origin) or await self._open(origin, timeout)
            try:
                answer = await connection.exchange(request, timeout)
            except BaseException:
                connection.close()
                raise
            if connection.reusable:
                self._idle.setdefault(origin, []).append(connection)
            else:
                connection.close()
            return answer
        finally:
            self._slots.release()

    async def _take_slot(self, timeout: float) -> None:
        if not self._slots.locked():
            await self._slots.acquire()
            return
        try:
            await asyncio.wait_for(self._slots.acquire(), timeout)
        except TimeoutError:
            raise _errors().PoolTimeout("no connection was free in time") from None

    def _idle_connection(self, origin: Origin) -> _Connection | None:
        idle = self._idle.get(origin)
        while idle:
            connection = idle.pop()
            if connection.reusable and not connection.expired():
                return connection
            connection.close()
        return None

    async def _open(self, origin: Origin, timeout: float) -> _Connection:
        httpx = _errors()
        loop = asyncio.get_running_loop()
        connection = _Connection(loop)
        tls = origin.scheme == "https"
        started = loop.time()
        try:
            await asyncio.wait_for(
                loop.create_connection(
                    lambda: connection,
                    origin.host,
                    origin.port,
                    ssl=self.ssl_context if tls else None,
                    server_hostname=origin.host if tls else None,
                ),
                timeout,
            )
        except TimeoutError:
            raise httpx.ConnectTimeout("timed out opening a connection") from None
        except OSError as exc:
            raise httpx.ConnectError(str(exc)) from exc
        connection.opened_in = loop.time() - started
        return connection

    async def aclose(self) -> None:
        """Close the idle connections; a request in flight closes or gives back its own."""
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                connection.close()


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: what arrives is kept in a buffer, and a request in flight
    waits until the buffer holds what it needs next, the connection ends, or no byte has come
    for its timeout."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self._loop = loop
        self._transport: Any = None
        self._buffer = bytearray()
        self._waiter: asyncio.Future[None] | None = None
        self._ended = False
        self._lost: BaseException | None = None
        self._last_data = 0.0
        self._idle_since = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self.reusable = False
        self.opened_in: float | None = None
        """Seconds the connection took to open, until its first request is sent."""

    def connection_made(self, transport: Any) -> None:
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        self._last_data = self._loop.time()
        self._wake()

    def eof_received(self) -> bool:
        self._ended = True
        self.reusable = False
        self._wake()
        return False

    def connection_lost(self, exc: BaseException | None) -> None:
        self._ended = True
        self._lost = exc
        self.reusable = False
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def expired(self) -> bool:
        return self._loop.time() - self._idle_since > KEEPALIVE_SECONDS or bool(self._buffer)

    def close(self) -> None:
        self.reusable = False
        if self._transport is not None:
            self._transport.close()

    async def exchange(self, request: bytes, timeout: float) -> Answer:
        self.reusable = False
        self._last_data = self._loop.time()
        self._transport.write(request)
        on_sent = REQUEST_SENT.get()
        if on_sent is not None:
            on_sent(self.opened_in)
        self.opened_in = None
        self._timer = self._loop.call_later(timeout, self._time_out, timeout)
        try:
            answer, keep_alive = await self._answer()
        finally:
            self._timer.cancel()
            self._timer = None
        if keep_alive and not self._ended and not self._buffer:
            self.reusable = True
            self._idle_since = self._loop.time()
        return answer

    def _time_out(self, timeout: float) -> None:
        """No byte for `timeout` seconds: the waiting request fails; else wait the rest."""
        quiet = self._loop.time() - self._last_data
        waiter = self._waiter
        if quiet < timeout:
            self._timer = self._loop.call_later(timeout - quiet, self._time_out, timeout)
        elif waiter is not None and not waiter.done():
            waiter.set_exception(_errors().ReadTimeout("timed out reading the reply"))

    async def _more(self) -> None:
        """Wait for more bytes (or the connection's end, raised as httpx raises it)."""
        if self._ended:
            httpx = _errors()
            if self._lost is not None:
                raise httpx.ReadError(str(self._lost) or "the connection broke")
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a response."
                if not self._buffer
                else "peer closed connection without sending complete message body"
            )
        self._waiter = self._loop.create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    async def _answer(self) -> tuple[Answer, bool]:
        while True:
            end = self._buffer.find(b"\r\n\r\n")
            while end < 0:
                await self._more()
                end = self._buffer.find(b"\r\n\r\n")
            head = bytes(self._buffer[:end]).decode("latin-1")
            del self._buffer[: end + 4]
            version, status, headers = _head(head)
            if not 100 <= status < 200:
                break
        fields = dict(headers)  # the last of a repeated header (a repeated length is refused)
        close = "close" in fields.get("connection", "").lower() or version != "HTTP/1.1"
        if status in NO_BODY:
            body = b""
        elif "chunked" in fields.get("transfer-encoding", "").lower():
            body = await self._chunked()
        elif "content-length" in fields:
            body = await self._exactly(_length(headers))
        else:
            body, close = await self._until_end(), True
        coding = fields.get("content-encoding")
        if coding:
            body = _decoded(body, coding)
        return Answer(status, headers, body), not close

    async def _exactly(self, length: int) -> bytes:
        while len(self._buffer) < length:
            await self._more()
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        return body

    async def _line(self) -> bytes:
        end = self._buffer.find(b"\r\n")
        while end < 0:
            await self._more()
            end = self._buffer.find(b"\r\n")
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 2]
        return line

    async def _chunked(self) -> bytes:
        parts: list[bytes] = []
        while True:
            size_line = await self._line()
            try:
                size = int(size_line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise _errors().RemoteProtocolError(f"bad chunk size {size_line!r}") from None
            if size == 0:
                while await self._line():  # trailers, up to the empty line
                    pass
                return b"".join(parts)
            parts.append(await self._exactly(size))
            if await self._line():
                raise _errors().RemoteProtocolError("a chunk longer than its size")

    async def _until_end(self) -> bytes:
        while not self._ended:
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        if self._lost is not None:
            raise _errors().ReadError(str(self._lost) or "the connection broke")
        body = bytes(self._buffer)
        self._buffer.clear()
        return body


def _head(head: str) -> tuple[str, int, list[tuple[str, str]]]:
    """A response head's HTTP version, status and headers."""
    status_line, *lines = head.split("\r\n")
    version, _, rest = status_line.partition(" ")
    code = rest[:3]
    if not version.startswith("HTTP/1.") or not code.isdigit():
        raise _errors().RemoteProtocolError(f"not an HTTP/1.1 status line: {status_line!r}")
    headers = []
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise _errors().RemoteProtocolError(f"not a header line: {line!r}")
        headers.append((name.lower(), value.strip(" \t")))
    return version, int(code), headers


def _length(headers: list[tuple[str, str]]) -> int:
    values = {value for name, value in headers if name == "content-length"}
    if len(values) != 1 or not (value := values.pop()).isdigit():
        raise _errors().RemoteProtocolError("a reply with no single valid Content-Length")
    return int(value)


def _decoded(body: bytes, coding: str) -> bytes:
    """`body` with its content codings undone, last applied first (an unknown one is left,
    as httpx leaves it)."""
    for name in reversed([c.strip().lower() for c in coding.split(",")]):
        try:
            if name == "gzip":
                body = zlib.decompress(body, zlib.MAX_WBITS | 16)
            elif name == "deflate":
                try:
                    body = zlib.decompress(body)
                except zlib.error:
                    body = zlib.decompress(body, -zlib.MAX_WBITS)
        except zlib.error as exc:
            raise _errors().DecodingError(str(exc)) from exc
    return body


_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Pool] = weakref.WeakKeyDictionary()


def shared_pool(httpx: Any) -> Pool:
    """The running event loop's one pool (connections belong to the loop that opened them),
    TLS set up from the environment as httpx does. Every `openai` client on the loop sends
    through it."""
    loop = asyncio.get_running_loop()
    pool = _POOLS.get(loop)
    if pool is None:
        pool = _POOLS[loop] = Pool(httpx.create_ssl_context())
    return pool
