"""The `openai` client: OpenAI and any OpenAI-compatible endpoint, spoken to over HTTP/1.1 by
`judge.judges.clients.pool` (or by `httpx`, a dependency of litellm, where the pool cannot:
a proxy, credentials in the URL, a redirect).

It sends what the `openai` SDK sends for a chat completion and raises what it raises, with
none of its import time: `import openai` builds hundreds of typed models (~0.7 s on an idle
machine, more than the rest of `judge eval` before its first request), and building its typed
reply object for a reply with log-probabilities cost ~10 ms of CPU a call. `httpx` imports in
~0.15 s. What is kept from the SDK (`tests/judges/test_llm_clients.py` runs the same behaviour
tests through this client and litellm's, on the fake provider, every fault shape):
- the request: `POST {base}/chat/completions` with the body as given (model without its
  `openai/` prefix), `Authorization: Bearer KEY`, OpenAI's organisation and project headers
  from `OPENAI_ORG_ID` / `OPENAI_PROJECT_ID`, the base URL from `api_base`, `OPENAI_BASE_URL`
  or `OPENAI_API_BASE` (default `https://api.openai.com/v1`), the SDK's limit of 1,000
  connections, no retries (retries are the judge's), one timeout per request; the connections
  are pooled per event loop for every judge on it (`judge.judges.clients.pool`);
- the failures (`judge.judges.clients.http_errors`): the SDK's exception classes by name and
  status code, their message, status, body and response headers (`Retry-After`), and
  connection failures and timeouts raised from httpx's own exception;
- the reply: its JSON read into a `Reply` (tokens, cached tokens, log-probabilities), priced
  from litellm's bundled map (`judge.judges.clients.prices`) without importing litellm. The
  JSON is parsed with pydantic-core's parser, 1.6x the standard library's speed on a reply
  with log-probabilities (~100 KB for nine answers).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
import weakref
from typing import Any
from urllib.parse import urlsplit

from pydantic_core import from_json

from .errors import MissingKeyError
from .http_errors import connection_error, status_error
from .loading import Background
from .pool import ACCEPT_ENCODING, MAX_CONNECTIONS, Answer, Origin, Pool, shared_pool
from .prices import PRICES, PriceMap, cost, priced_entry
from .reply import Reply, logprob_params, not_a_completion, reasoning_tokens, reply_of
from .sent import REQUEST_SENT, SentTrace


def import_httpx() -> Any:
    """httpx without its command-line client. `httpx/__init__` imports `httpx._main` (click,
    rich and pygments: ~0.08 s, half of httpx's own import) whenever those are installed, as
    litellm installs them. While httpx loads, `httpx._main` is marked unimportable (None in
    `sys.modules`, Python's own way to refuse an import) so httpx keeps its stub `main`; the
    mark goes afterwards, so `import httpx._main` still works later. Nothing changes when
    either was imported first (safe from several threads: a second import waits for the
    first)."""
    blocked = "httpx" not in sys.modules and "httpx._main" not in sys.modules
    if blocked:
        sys.modules["httpx._main"] = None  # type: ignore[assignment]
    try:
        import httpx
    finally:
        if blocked and sys.modules.get("httpx._main", False) is None:
            del sys.modules["httpx._main"]
    return httpx


HTTPX: Background[Any] = Background("httpx", import_httpx)
OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENAI_HOST = "api.openai.com"
DEFAULT_PORTS = {"http": 80, "https": 443}
NO_KEY = "no-key-given"
"""Sent to a self-hosted endpoint when no key is configured, as the SDK would have to: most
local servers ignore it."""


def _parse(body: bytes) -> Any:
    """A reply's JSON: pydantic-core's parser, or the standard library's for what it refuses
    and the standard library accepts (a lone surrogate escape, `\\ud800`, which a model's text
    can hold)."""
    try:
        return from_json(body)
    except ValueError:
        return json.loads(body)


def cap_field(base_url: str) -> str:
    """The request field of the reply's cap: `max_completion_tokens` for OpenAI's own API,
    whose reasoning models refuse `max_tokens`; `max_tokens`, which OpenAI-compatible servers
    read, for every other endpoint."""
    return "max_completion_tokens" if urlsplit(base_url).hostname == OPENAI_HOST else "max_tokens"


class OpenAIClient:
    """Requests straight through the event loop's shared pool (`shared_pool`), or through one
    `httpx.AsyncClient` per event loop when the pool cannot take them (`_Sender`)."""

    name = "openai"

    def __init__(
        self,
        model: str,
        api_base: str | None = None,
        api_key: str | None = None,
        prices: PriceMap = PRICES,
    ):
        self.model = model
        self.wire_model = model.removeprefix("openai/")
        self.api_base = api_base
        self._api_key = api_key
        self.prices = prices
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Sender] = (
            weakref.WeakKeyDictionary()
        )

    def prefetch(self) -> None:
        HTTPX.start()

    async def ready(self) -> None:
        await HTTPX.ready()

    def cache_marker(self) -> bool:
        """OpenAI-compatible servers cache a repeated prompt start without a marker."""
        return False

    async def complete(
        self, request: dict[str, Any], timeout: float, logprobs: int | None = None
    ) -> Reply:
        httpx = await HTTPX.ready()
        sender = self._sender(httpx)
        body = {**request, "model": self.wire_model, **logprob_params(logprobs)}
        if sender.cap_field != "max_tokens" and "max_tokens" in body:
            body[sender.cap_field] = body.pop("max_tokens")
        try:
            answer = await sender.post(body, timeout)
        except httpx.TransportError as exc:
            raise connection_error(exc) from exc
        if answer.status >= 400:
            raise status_error(sender.response(answer))
        try:
            data = _parse(answer.body)
        except ValueError as exc:  # a success whose body is not JSON
            raise not_a_completion(sender.response(answer).text) from exc
        reply = reply_of(data, None)
        entry = priced_entry([reply.model, self.wire_model], self.prices)
        price = cost(
            entry,
            reply.prompt_tokens,
            reply.completion_tokens,
            reply.cached_tokens,
            reasoning_tokens(data),
        )
        return dataclasses.replace(reply, cost=price)

    async def aclose(self) -> None:
        """Close the connections this loop's client holds."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        sender = self._clients.pop(loop, None)
        if sender is not None:
            await sender.client.aclose()
            await sender.pool.aclose()

    def _sender(self, httpx: Any) -> _Sender:
        loop = asyncio.get_running_loop()
        sender = self._clients.get(loop)
        if sender is None:
            pool = shared_pool(httpx)
            client = httpx.AsyncClient(
                base_url=self._base_url().rstrip("/") + "/",
                headers=self._headers(),
                verify=pool.ssl_context,  # one context: each loads the CA bundle (~25 ms)
                limits=httpx.Limits(max_connections=MAX_CONNECTIONS),
                follow_redirects=True,
            )
            sender = self._clients[loop] = _Sender(httpx, client, pool)
        return sender

    def _base_url(self) -> str:
        return (
            self.api_base
            or os.environ.get("OPENAI_BASE_URL")
            or os.environ.get("OPENAI_API_BASE")
            or OPENAI_BASE_URL
        )

    def _headers(self) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self._key()}", "Accept": "application/json"}
        if organization := os.environ.get("OPENAI_ORG_ID"):
            headers["OpenAI-Organization"] = organization
        if project := os.environ.get("OPENAI_PROJECT_ID"):
            headers["OpenAI-Project"] = project
        return headers

    def _key(self) -> str:
        key = self._api_key or os.environ.get("OPENAI_API_KEY")
        if key:
            return key
        if self.api_base:
            return NO_KEY
        raise MissingKeyError(
            f"no API key for {self.model}: set JUDGE_API_KEY (or name another variable with "
            "--api-key-env), or OPENAI_API_KEY"
        )


class _Sender:
    """One event loop's way to post a chat completion. Straight through the loop's pool
    (`judge.judges.clients.pool`): the request's head is the bytes httpx would send, made once
    (the URL's path, `Host`, the client's headers: httpx's defaults, the key, the organisation
    and project, the JSON content type), and the reply is read whole without httpx's objects.
    Through the httpx client instead, which does what the pool does not: a URL with a user name
    or password (the client turns them into credentials), a proxy the environment names for
    the URL, and a redirect (which an endpoint may answer with, say http to https), followed by
    sending the request again."""

    def __init__(self, httpx: Any, client: Any, pool: Pool):
        self.httpx = httpx
        self.client = client
        self.pool = pool
        url = client.base_url.join("chat/completions")
        self.url = url
        self.cap_field = cap_field(str(client.base_url))
        self.direct = (
            not url.userinfo
            and url.scheme in ("http", "https")
            and client._transport_for_url(url) is client._transport
        )
        self.origin = Origin(url.scheme, url.host, url.port or DEFAULT_PORTS.get(url.scheme, 0))
        headers = {**client.headers, "Accept-Encoding": ACCEPT_ENCODING}
        headers["Content-Type"] = "application/json"
        lines = [f"{name}: {value}\r\n" for name, value in headers.items()]
        self.head = (
            b"POST " + url.raw_path + b" HTTP/1.1\r\nHost: " + url.netloc + b"\r\n"
            + "".join(lines).encode("utf-8") + b"Content-Length: "
        )  # fmt: skip

    async def post(self, body: dict[str, Any], timeout: float) -> Answer:
        """The reply to `body`, read whole (httpx's exceptions as httpx raises them)."""
        if not self.direct:
            return await self._through_client(body, timeout)
        content = json.dumps(
            body, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        ).encode("utf-8")
        request = b"%s%d\r\n\r\n%s" % (self.head, len(content), content)
        answer = await self.pool.send(self.origin, request, timeout)
        if answer.is_redirect:
            return await self._through_client(body, timeout)
        return answer

    async def _through_client(self, body: dict[str, Any], timeout: float) -> Answer:
        on_sent = REQUEST_SENT.get()
        extensions = None if on_sent is None else {"trace": SentTrace(on_sent)}
        response = await self.client.post(
            "chat/completions", json=body, timeout=timeout, extensions=extensions
        )
        headers = [(k.lower(), v) for k, v in response.headers.multi_items()]
        return Answer(response.status_code, headers, response.content)

    def response(self, answer: Answer) -> Any:
        """An httpx response holding `answer`, its body already decoded: the SDK's exceptions
        hold one, and its text is httpx's."""
        headers = [(k, v) for k, v in answer.headers if k != "content-encoding"]
        request = self.httpx.Request("POST", self.url, headers=self.client.headers)
        return self.httpx.Response(
            answer.status, headers=headers, content=answer.body, request=request
        )
