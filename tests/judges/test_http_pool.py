"""The `openai` client's connection pool (`judge.judges.clients.pool`): as many connections as
requests in flight, reused, never one the server closed, and its slot back whatever happens."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpcore
import httpx
import pytest

from judge.judges.clients.pool import SlotPool, shared_transport


class Server:
    """A minimal HTTP/1.1 server on 127.0.0.1: answers every request after `delay` seconds,
    counts connections, and with `drop_idle` closes each connection right after answering
    (without saying so, as a server whose keep-alive ran out does)."""

    def __init__(self, delay: float = 0.0, drop_idle: bool = False):
        self.delay = delay
        self.drop_idle = drop_idle
        self.connections = 0
        self.requests = 0
        self.url = ""

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.decode().split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                await reader.readexactly(length)
                self.requests += 1
                await asyncio.sleep(self.delay)
                body = b'{"ok": true}'
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
                if self.drop_idle:
                    break
        writer.close()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Server]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/"
        async with server:
            yield self


def _client() -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=shared_transport(httpx))


def _pool(client: httpx.AsyncClient) -> SlotPool:
    pool = client._transport._pool  # type: ignore[attr-defined]
    assert isinstance(pool, SlotPool)
    return pool


def test_one_connection_serves_requests_one_after_another() -> None:
    async def scenario() -> tuple[int, int]:
        async with Server().running() as server, _client() as client:
            for _ in range(20):
                assert (await client.post(server.url, json={"n": 1})).json() == {"ok": True}
            return server.connections, len(_pool(client)._idle)

    assert asyncio.run(scenario()) == (1, 1)


def test_the_pool_holds_as_many_connections_as_requests_were_in_flight() -> None:
    async def scenario() -> tuple[int, int, int]:
        async with Server(delay=0.05).running() as server, _client() as client:
            for _ in range(3):  # three rounds of eight at once: eight connections, reused
                replies = await asyncio.gather(*(client.post(server.url) for _ in range(8)))
                assert all(r.status_code == 200 for r in replies)
            return server.connections, server.requests, len(_pool(client)._idle)

    assert asyncio.run(scenario()) == (8, 24, 8)


def test_a_connection_the_server_closed_is_not_used_again() -> None:
    async def scenario() -> tuple[int, int]:
        async with Server(drop_idle=True).running() as server, _client() as client:
            for _ in range(5):
                assert (await client.get(server.url)).status_code == 200
                await asyncio.sleep(0.05)  # the server's close reaches us
            return server.connections, server.requests

    assert asyncio.run(scenario()) == (5, 5)


def test_a_cancelled_or_failed_request_gives_its_slot_back() -> None:
    async def scenario() -> list[int]:
        async with Server(delay=5).running() as server, _client() as client:
            pool = _pool(client)
            free = pool._slots._value
            request = asyncio.create_task(client.get(server.url))
            await asyncio.sleep(0.1)
            request.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await request
            after_cancel = pool._slots._value
            with pytest.raises(httpx.ReadTimeout):
                await client.get(server.url, timeout=0.1)
            with pytest.raises(httpx.ConnectError):
                await client.get("http://127.0.0.1:9/")
            return [free, after_cancel, pool._slots._value, len(pool._idle)]

    free, after_cancel, after_errors, idle = asyncio.run(scenario())
    assert after_cancel == after_errors == free and idle == 0


def test_a_full_pool_waits_for_a_slot_until_the_pool_timeout() -> None:
    async def scenario() -> None:
        async with Server(delay=0.5).running() as server:
            transport = httpx.AsyncHTTPTransport()
            transport._pool = SlotPool(httpcore, None, limit=1)  # type: ignore[attr-defined]
            async with httpx.AsyncClient(transport=transport) as client:
                first = asyncio.create_task(client.get(server.url))
                await asyncio.sleep(0.05)
                timeout = httpx.Timeout(5, pool=0.05)
                with pytest.raises(httpx.PoolTimeout):
                    await client.get(server.url, timeout=timeout)
                assert (await first).status_code == 200
                assert (await client.get(server.url)).status_code == 200  # its slot is back

    asyncio.run(scenario())


def test_every_client_on_a_loop_shares_one_pool_and_another_loop_has_its_own() -> None:
    async def pools() -> tuple[object, object]:
        return shared_transport(httpx), shared_transport(httpx)

    first, second = asyncio.run(pools())
    other, _ = asyncio.run(pools())
    assert first is second and other is not first


def test_an_unsupported_scheme_is_refused_as_httpcore_refuses_it() -> None:
    async def scenario() -> None:
        pool = SlotPool(httpcore, None)
        request = httpcore.Request("GET", "ftp://example.invalid/")
        with pytest.raises(httpcore.UnsupportedProtocol):
            await pool.handle_async_request(request)
        assert pool._slots._value == 1000

    asyncio.run(scenario())


def test_a_request_goes_to_the_socket_in_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    from httpcore._backends.anyio import AnyIOStream

    writes: list[bytes] = []
    write = AnyIOStream.write

    async def counted(self: AnyIOStream, buffer: bytes, timeout: float | None = None) -> None:
        writes.append(buffer)
        await write(self, buffer, timeout)

    monkeypatch.setattr(AnyIOStream, "write", counted)

    async def scenario() -> int:
        async with Server().running() as server, _client() as client:
            for n in range(3):
                assert (await client.post(server.url, json={"n": n})).json() == {"ok": True}
            return server.requests

    assert asyncio.run(scenario()) == 3
    assert len(writes) == 3
    assert all(w.startswith(b"POST ") and w.endswith(b'{"n":%d}' % n) for n, w in enumerate(writes))


def test_a_failed_send_still_reads_what_the_server_answered() -> None:
    """As httpcore does: a server may answer and close before the request is all sent."""
    from judge.judges.clients.pool import _WriteBehind

    class Stream:
        def __init__(self) -> None:
            self.reads = 0

        async def write(self, buffer: bytes, timeout: float | None = None) -> None:
            raise httpcore.WriteError("connection reset")

        async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            self.reads += 1
            return b"HTTP/1.1 413 Payload Too Large\r\n\r\n"

    async def scenario() -> tuple[bytes, int]:
        inner = Stream()
        stream = _WriteBehind(inner, httpcore.WriteError)
        await stream.write(b"POST / HTTP/1.1\r\n\r\n")
        await stream.write(b"body")
        return await stream.read(100), inner.reads

    assert asyncio.run(scenario()) == (b"HTTP/1.1 413 Payload Too Large\r\n\r\n", 1)
