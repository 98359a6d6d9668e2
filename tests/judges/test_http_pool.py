"""The `openai` client's connection pool (`judge.judges.clients.pool`): as many connections as
requests in flight, reused, never one the server closed, its slot back whatever happens, and
every framing of a reply read as httpx reads it."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import ssl
import zlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from judge.judges.clients.pool import Answer, Origin, Pool, shared_pool

OK = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{"ok": true}'


class Server:
    """A minimal HTTP/1.1 server on 127.0.0.1: answers every request with `reply` after
    `delay` seconds, counts connections and requests, and with `drop_idle` closes each
    connection right after answering (without saying so, as a server whose keep-alive ran out
    does)."""

    def __init__(self, reply: bytes = OK, delay: float = 0.0, drop_idle: bool = False):
        self.reply = reply
        self.delay = delay
        self.drop_idle = drop_idle
        self.connections = 0
        self.requests: list[bytes] = []
        self.origin = Origin("http", "127.0.0.1", 0)

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
                self.requests.append(head + await reader.readexactly(length))
                await asyncio.sleep(self.delay)
                writer.write(self.reply)
                await writer.drain()
                if self.drop_idle:
                    break
        writer.close()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Server]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.origin = Origin("http", "127.0.0.1", server.sockets[0].getsockname()[1])
        async with server:
            yield self


def request(body: bytes = b'{"n":1}') -> bytes:
    return b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (
        len(body),
        body,
    )


def head_of(sent: bytes) -> tuple[str, dict[str, str]]:
    """A request's first line and its headers (names lower-cased)."""
    request_line, *lines = sent.partition(b"\r\n\r\n")[0].decode().split("\r\n")
    return request_line, {n.lower(): v.strip() for n, _, v in (h.partition(":") for h in lines)}


def idle(pool: Pool) -> int:
    return sum(len(connections) for connections in pool._idle.values())


def test_one_connection_serves_requests_one_after_another() -> None:
    async def scenario() -> tuple[int, int, Answer]:
        async with Server().running() as server:
            pool = Pool(None)
            for n in range(20):
                answer = await pool.send(server.origin, request(b'{"n":%d}' % n), 5)
            assert server.requests[-1].endswith(b'{"n":19}')
            return server.connections, idle(pool), answer

    connections, kept, answer = asyncio.run(scenario())
    assert (connections, kept) == (1, 1)
    assert answer == Answer(
        200, [("content-type", "application/json"), ("content-length", "12")], b'{"ok": true}'
    )


def test_the_pool_holds_as_many_connections_as_requests_were_in_flight() -> None:
    async def scenario() -> tuple[int, int, int]:
        async with Server(delay=0.05).running() as server:
            pool = Pool(None)
            for _ in range(3):  # three rounds of eight at once: eight connections, reused
                answers = await asyncio.gather(
                    *(pool.send(server.origin, request(), 5) for _ in range(8))
                )
                assert all(a.status == 200 for a in answers)
            return server.connections, len(server.requests), idle(pool)

    assert asyncio.run(scenario()) == (8, 24, 8)


def test_a_connection_the_server_closed_is_not_used_again() -> None:
    async def scenario() -> tuple[int, int]:
        async with Server(drop_idle=True).running() as server:
            pool = Pool(None)
            for _ in range(5):
                assert (await pool.send(server.origin, request(), 5)).status == 200
                await asyncio.sleep(0.05)  # the server's close reaches us
            return server.connections, len(server.requests)

    assert asyncio.run(scenario()) == (5, 5)


def test_a_reply_that_says_close_leaves_its_connection_closed() -> None:
    reply = OK.replace(b"Content-Length", b"Connection: close\r\nContent-Length")

    async def scenario() -> tuple[int, int]:
        async with Server(reply=reply).running() as server:
            pool = Pool(None)
            for _ in range(3):
                assert (await pool.send(server.origin, request(), 5)).body == b'{"ok": true}'
            return server.connections, idle(pool)

    assert asyncio.run(scenario()) == (3, 0)


def test_a_cancelled_or_failed_request_gives_its_slot_back() -> None:
    async def scenario() -> list[int]:
        async with Server(delay=5).running() as server:
            pool = Pool(None)
            free = pool._slots._value
            sent = asyncio.create_task(pool.send(server.origin, request(), 10))
            await asyncio.sleep(0.1)
            sent.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sent
            after_cancel = pool._slots._value
            with pytest.raises(httpx.ReadTimeout):
                await pool.send(server.origin, request(), 0.1)
            with pytest.raises(httpx.ConnectError):
                await pool.send(Origin("http", "127.0.0.1", 9), request(), 5)
            return [free, after_cancel, pool._slots._value, idle(pool)]

    free, after_cancel, after_errors, kept = asyncio.run(scenario())
    assert after_cancel == after_errors == free and kept == 0


def test_a_full_pool_waits_for_a_slot_until_the_pool_timeout() -> None:
    async def scenario() -> None:
        async with Server(delay=0.5).running() as server:
            pool = Pool(None, limit=1)
            first = asyncio.create_task(pool.send(server.origin, request(), 5))
            await asyncio.sleep(0.05)
            with pytest.raises(httpx.PoolTimeout):
                await pool.send(server.origin, request(), 0.05)
            assert (await first).status == 200
            assert (await pool.send(server.origin, request(), 5)).status == 200  # slot back

    asyncio.run(scenario())


def test_every_client_on_a_loop_shares_one_pool_and_another_loop_has_its_own() -> None:
    async def pools() -> tuple[object, object]:
        return shared_pool(httpx), shared_pool(httpx)

    first, second = asyncio.run(pools())
    other, _ = asyncio.run(pools())
    assert first is second and other is not first


def _answer(reply: bytes) -> Answer | BaseException:
    async def scenario() -> Answer:
        async with Server(reply=reply, drop_idle=True).running() as server:
            return await Pool(None).send(server.origin, request(), 5)

    try:
        return asyncio.run(scenario())
    except httpx.HTTPError as exc:
        return exc


@pytest.mark.parametrize(
    "reply",
    [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world",
        b"HTTP/1.0 200 OK\r\n\r\nhello world",
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s"
        % (len(gzip.compress(b"hello world")), gzip.compress(b"hello world")),
        b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Length: %d\r\n\r\n%s"
        % (len(zlib.compress(b"hello world")), zlib.compress(b"hello world")),
    ],
    ids=["chunked", "100-continue", "until-close", "gzip", "deflate"],
)
def test_every_framing_of_a_body_is_read_whole(reply: bytes) -> None:
    answer = _answer(reply)
    assert isinstance(answer, Answer) and (answer.status, answer.body) == (200, b"hello world")


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (b"", httpx.RemoteProtocolError),  # closed without a reply
        (b"HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\nshort", httpx.RemoteProtocolError),
        (b"SSH-2.0-OpenSSH\r\n\r\n", httpx.RemoteProtocolError),
        (b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", httpx.RemoteProtocolError),
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\nnot gzip", httpx.DecodingError),
    ],
    ids=["nothing", "cut-off", "not-http", "bad-length", "bad-gzip"],
)
def test_a_broken_reply_is_the_error_httpx_raises(reply: bytes, error: type) -> None:
    assert type(_answer(reply)) is error


def test_a_reply_sent_before_the_request_was_read_is_still_read() -> None:
    """A server may answer (an error status) and close before reading the whole request."""

    async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    async def scenario() -> int:
        server = await asyncio.start_server(refuse, "127.0.0.1", 0)
        origin = Origin("http", "127.0.0.1", server.sockets[0].getsockname()[1])
        async with server:
            return (await Pool(None).send(origin, request(b"x" * 100_000), 5)).status

    assert asyncio.run(scenario()) == 413


def test_the_openai_clients_request_is_the_one_httpx_would_send(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Headers (httpx's defaults, the key, organisation and project, content type and length)
    and body as httpx's client builds them for the same chat completion."""
    from judge.judges.clients.openai_client import OpenAIClient

    monkeypatch.setenv("OPENAI_ORG_ID", "org-1")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-1")
    body = {"messages": [{"role": "user", "content": "é \u2028"}], "max_tokens": 9}

    async def scenario() -> tuple[bytes, httpx.Request]:
        async with Server().running() as server:
            base = f"http://127.0.0.1:{server.origin.port}/v1"
            client = OpenAIClient("openai/m", api_base=base, api_key="sk-x")
            with contextlib.suppress(Exception):  # the reply is no completion
                await client.complete(body, 5)
            sender = client._clients[asyncio.get_running_loop()]
            built = sender.client.build_request(
                "POST", "chat/completions", json={**body, "model": "m"}
            )
            await client.aclose()
            return server.requests[0], built

    sent, built = asyncio.run(scenario())
    request_line, headers = head_of(sent)
    content = sent.partition(b"\r\n\r\n")[2]
    assert request_line == f"POST {built.url.raw_path.decode()} HTTP/1.1"
    assert headers == {k.lower(): v for k, v in built.headers.items()} | {
        "accept-encoding": "gzip, deflate"
    }
    assert content == built.content


TLS = Path(__file__).parents[1] / "fixtures" / "tls"


def test_a_request_over_tls_is_answered_and_a_certificate_for_another_name_refused() -> None:
    """The pool's TLS: the server's certificate checked against the context's authorities
    and the origin's host name (the fixture's certificate names localhost and 127.0.0.1)."""
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(TLS / "localhost.pem", TLS / "localhost.key")
    trusting = ssl.create_default_context(cafile=str(TLS / "localhost.pem"))

    async def scenario() -> tuple[int, int]:
        plain = Server()
        server = await asyncio.start_server(plain._serve, "127.0.0.1", 0, ssl=served)
        other = await asyncio.start_server(plain._serve, "127.0.0.2", 0, ssl=served)
        port, other_port = (s.sockets[0].getsockname()[1] for s in (server, other))
        async with server, other:
            pool = Pool(trusting)
            for _ in range(2):
                answer = await pool.send(Origin("https", "localhost", port), request(), 5)
                assert answer.body == b'{"ok": true}'
            with pytest.raises(httpx.ConnectError, match=r"CERTIFICATE_VERIFY_FAILED.*match"):
                await pool.send(Origin("https", "127.0.0.2", other_port), request(), 5)
            with pytest.raises(httpx.ConnectError, match=r"CERTIFICATE_VERIFY_FAILED.*self.signed"):
                await Pool(ssl.create_default_context()).send(
                    Origin("https", "localhost", port), request(), 5
                )
            await pool.aclose()
            return plain.connections, len(plain.requests)

    assert asyncio.run(scenario()) == (1, 2)


def test_what_the_pool_does_not_take_goes_through_httpx_as_before() -> None:
    """Credentials in the URL (httpx turns them into basic authentication) and a scheme that
    is not HTTP (httpx refuses it: a connection error, as before the pool)."""
    from judge.judges.clients.http_errors import APIConnectionError
    from judge.judges.clients.openai_client import OpenAIClient

    async def scenario() -> tuple[bytes, BaseException]:
        async with Server().running() as server:
            base = f"http://user:pw@127.0.0.1:{server.origin.port}/v1"
            client = OpenAIClient("openai/m", api_base=base, api_key="sk-x")
            with contextlib.suppress(Exception):  # the reply is no completion
                await client.complete({"messages": []}, 5)
            ftp = OpenAIClient("openai/m", api_base="ftp://127.0.0.1:9/v1", api_key="sk-x")
            with pytest.raises(APIConnectionError) as refused:
                await ftp.complete({"messages": []}, 5)
            await client.aclose()
            return server.requests[0], refused.value.__cause__

    sent, cause = asyncio.run(scenario())
    assert head_of(sent)[1]["authorization"] == "Basic dXNlcjpwdw=="  # user:pw
    assert isinstance(cause, httpx.UnsupportedProtocol)


def test_a_redirect_is_followed_by_httpx_sending_the_request_again() -> None:
    """An endpoint may answer with a redirect (say http to https): the request goes again to
    where it points, through httpx's client, and its answer is the reply."""
    from judge.judges.clients.http_errors import BadRequestError
    from judge.judges.clients.openai_client import OpenAIClient

    class Redirecting(Server):
        """Redirects what is posted to /v1 to /moved, which answers 400."""

        async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head_of(head)[1].get("content-length", "0"))
            self.requests.append(head + await reader.readexactly(length))
            if head.startswith(b"POST /v1/"):
                location = f"http://127.0.0.1:{self.origin.port}/moved/chat/completions"
                writer.write(
                    b"HTTP/1.1 307 Temporary Redirect\r\nContent-Length: 0\r\n"
                    + f"Location: {location}\r\n\r\n".encode()
                )
            else:
                body = b'{"error": {"message": "moved"}}'
                writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: %d\r\n\r\n" % len(body))
                writer.write(body)
            await writer.drain()
            writer.close()

    async def scenario() -> tuple[list[str], int]:
        async with Redirecting().running() as server:
            base = f"http://127.0.0.1:{server.origin.port}/v1"
            client = OpenAIClient("openai/m", api_base=base, api_key="sk-x")
            with pytest.raises(BadRequestError) as refused:  # the moved endpoint's 400
                await client.complete({"messages": []}, 5)
            await client.aclose()
            status = refused.value.status_code
            return [head_of(r)[0] for r in server.requests], status

    lines, status = asyncio.run(scenario())
    assert lines == [  # the pool's, then httpx's to the same URL and where it points
        "POST /v1/chat/completions HTTP/1.1",
        "POST /v1/chat/completions HTTP/1.1",
        "POST /moved/chat/completions HTTP/1.1",
    ]
    assert status == 400
