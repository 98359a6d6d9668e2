"""The `openai` client: OpenAI and any OpenAI-compatible endpoint through the `openai` SDK's
async client (a dependency of litellm, so nothing more to install).

It does what the litellm client does for these endpoints with a fraction of the import time
and CPU per call (`benchmarks/clients.py`): the same request body (model without its
`openai/` prefix, messages, temperature, seed, reply format, extra params), no retries of its
own (`max_retries=0`: retries are the judge's), the same timeout per request, the same error
classes (litellm's subclass the SDK's), the provider's token counts, cached tokens and
log-probabilities, and litellm's prices read from its bundled map
(`judge.judges.clients.prices`) without importing litellm.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import weakref
from typing import Any

from .errors import MissingKeyError
from .loading import Background
from .prices import PRICES, PriceMap, cost, priced_entry
from .reply import Reply, logprob_params, reasoning_tokens, reply_of


def import_openai() -> Any:
    import openai

    return openai


OPENAI: Background[Any] = Background("openai", import_openai)
NO_KEY = "no-key-given"
"""Sent to a self-hosted endpoint when no key is configured: the SDK refuses to send a request
without one, while most local servers ignore it."""


class OpenAIClient:
    """Requests through the SDK's `AsyncOpenAI`, one per event loop (its connections belong to
    the loop that opened them).

    The request goes out with `client.post("/chat/completions", body=...)`, the SDK's way to
    send a body as it is, not `client.chat.completions.create(...)`: `create` first walks the
    whole body (messages, the reply schema) against its typed parameters to transform it,
    ~1.5 ms of CPU a call here (`benchmarks/cpu_profile.py --client openai`), which changes
    nothing in a body built from plain JSON values. The reply is read as the JSON it is
    (`cast_to=object`), not built into the SDK's typed `ChatCompletion`, which for a reply with
    log-probabilities cost ~10 ms of CPU a call. Sending, errors (the same exception classes,
    status codes, bodies and headers) and timeouts are the SDK's either way."""

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
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )

    def prefetch(self) -> None:
        OPENAI.start()

    async def ready(self) -> None:
        await OPENAI.ready()

    def cache_marker(self) -> bool:
        """OpenAI-compatible servers cache a repeated prompt start without a marker."""
        return False

    async def complete(
        self, request: dict[str, Any], timeout: float, logprobs: int | None = None
    ) -> Reply:
        openai = await OPENAI.ready()
        response = await self._client(openai).post(
            "/chat/completions",
            body={**request, "model": self.wire_model, **logprob_params(logprobs)},
            cast_to=object,  # the reply's JSON as it is: see `reply_of`
            options={"timeout": timeout},
        )
        reply = reply_of(response, None)
        entry = priced_entry([reply.model, self.wire_model], self.prices)
        price = cost(
            entry,
            reply.prompt_tokens,
            reply.completion_tokens,
            reply.cached_tokens,
            reasoning_tokens(response),
        )
        return dataclasses.replace(reply, cost=price)

    async def aclose(self) -> None:
        """Close the connections this loop's SDK client holds."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        client = self._clients.pop(loop, None)
        if client is not None:
            await client.close()

    def _client(self, openai: Any) -> Any:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = openai.AsyncOpenAI(
                api_key=self._key(),
                base_url=self.api_base
                or os.environ.get("OPENAI_BASE_URL")
                or os.environ.get("OPENAI_API_BASE"),
                max_retries=0,
                # the SDK's default client without its wrapper's `__del__`, which schedules
                # its own closing on whatever loop runs when it is collected (for a judge used
                # outside a run, a later loop, where that fails); `aclose` closes it instead
                http_client=openai.DefaultAsyncHttpxClient(),
            )
            self._clients[loop] = client
        return client

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
