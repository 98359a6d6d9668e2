"""The fake provider's answers without HTTP: an LLM judge whose requests the fake serves in the
same process, for tests and benchmarks about statistics (thousands of calls), where sockets
would only add time. Everything after the reply (parsing, repair, validation, the store) is
the llm judge's own; end-to-end tests still talk HTTP to a started `FakeProvider`.

    judge = inprocess_judge(FakeProviderConfig(biases=PlantedBiases(flip_rate=0.1)))
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from judge.judges.clients.http_errors import status_error
from judge.judges.clients.reply import Reply, logprob_params, reply_of
from judge.judges.llm import LLMJudge
from judge.testing.config import FakeProviderConfig
from judge.testing.fake_provider import FakeProvider

COMPLETIONS = "/v1/chat/completions"


@dataclass
class _Response:
    """What `status_error` reads of an error reply."""

    status_code: int
    text: str
    headers: dict[str, str] = field(default_factory=dict)
    request: Any = None


class InProcessClient:
    """An llm judge's client (`judge.judges.clients.Client`) that hands each request body to
    `FakeProvider.serve_completion`: no server, no socket, the provider's latency ignored."""

    name = "openai"

    def __init__(self, provider: FakeProvider):
        self.provider = provider

    def prefetch(self) -> None:
        pass

    async def ready(self) -> None:
        pass

    def cache_marker(self) -> bool:
        return False

    async def complete(
        self, request: dict[str, Any], timeout: float, logprobs: int | None = None
    ) -> Reply:
        body = {**request, "model": str(request["model"]).removeprefix("openai/")}
        raw = json.dumps({**body, **logprob_params(logprobs)}).encode("utf-8")
        reply = self.provider.serve_completion(COMPLETIONS, raw, None)
        text = json.dumps(reply.payload)
        if reply.status != 200 or reply.payload is None:
            raise status_error(_Response(reply.status, text, dict(reply.headers)))
        return reply_of(reply.payload, None)

    async def aclose(self) -> None:
        pass


def inprocess_judge(
    config: FakeProviderConfig | None = None, model: str = "openai/fake-judge", **options: Any
) -> LLMJudge:
    """An `LLMJudge` for `model` answered by a fake provider with `config`, in this process;
    `options` as `LLMJudge` takes them (`seed`, `temperature`, `name`, ...)."""
    judge = LLMJudge(model, **options)
    judge.client = InProcessClient(FakeProvider(config))
    return judge
