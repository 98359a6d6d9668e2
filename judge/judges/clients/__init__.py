"""How the llm judge reaches its model: two clients behind one small protocol (`Client`).

- `openai` (`OpenAIClient`): what the `openai` SDK sends and raises, spoken over httpx, for
  `openai/...` models and any OpenAI-compatible endpoint given as `api_base` (vLLM, llama.cpp,
  Ollama's `/v1`, LM Studio, a litellm proxy, ...). It imports in a small fraction of litellm's
  time and costs a fraction of its CPU per call (`benchmarks/clients.py`), which is what lets
  the first request leave within a second and a run keep up with many requests in flight.
- `litellm` (`LiteLLMClient`): every other provider litellm knows (Anthropic, Bedrock,
  Vertex AI, Azure, ...), litellm-only parameters (`mock_response`), and `--batch`.

`choose` picks one (`auto`), or takes the caller's choice (`--client litellm|openai`). Both
give the judge the same `Reply` and raise exceptions `error_kind` reads the same way, so the
judge's reply-format negotiation, retries, limits, token and cost accounting do not depend
on the client; `tests/judges/test_llm_clients.py` runs the same behaviour tests through both.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Literal, Protocol

from .errors import TRANSIENT, MissingKeyError, error_kind
from .prices import litellm_data_file
from .reply import Reply, TokenLogprob, TokenLogprobs

ClientName = Literal["litellm", "openai"]
CLIENTS: tuple[str, ...] = ("auto", "litellm", "openai")
"""What `--client` accepts: `auto` chooses by model and endpoint (`choose`)."""

LITELLM_ONLY_PARAMS = frozenset({"mock_response", "mock_timeout", "custom_llm_provider"})
"""Extra params only litellm understands: a judge given one goes through litellm."""


class Client(Protocol):
    """What the llm judge needs from a client."""

    name: str

    def prefetch(self) -> None:
        """Start importing the client's library in the background (a run will send requests)."""
        ...

    async def ready(self) -> None:
        """Wait until the library is imported."""
        ...

    def cache_marker(self) -> bool:
        """Whether prompts must mark their cacheable start (`cache_control`); after `ready`."""
        ...

    async def complete(
        self, request: dict[str, Any], timeout: float, logprobs: int | None = None
    ) -> Reply:
        """One request (`LLMJudge.request`'s body) answered, or the provider's exception.
        `logprobs=N` asks for each token's log-probability and N alternatives (0: none)."""
        ...

    async def aclose(self) -> None:
        """Let go of connections opened on the running event loop."""
        ...


def choose(
    model: str,
    api_base: str | None = None,
    requested: str = "auto",
    params: dict[str, Any] | None = None,
) -> ClientName:
    """The client for `model` at `api_base`: `requested` unless it is `auto`; else `openai`
    for `openai/...` models and for an `api_base` endpoint whose model names no other
    provider litellm knows (`my-model`, `meta-llama/Llama-3.1-8B`, `GCP/gemini-2.5-pro` at a
    gateway), and `litellm` for everything else or when a param only litellm understands is
    given."""
    if requested not in CLIENTS:
        raise ValueError(f"client {requested!r}: expected one of {', '.join(CLIENTS)}")
    if requested != "auto":
        return "openai" if requested == "openai" else "litellm"
    if params and LITELLM_ONLY_PARAMS & set(params):
        return "litellm"
    prefix, slash, _ = model.partition("/")
    if slash and prefix == "openai":
        return "openai"
    if api_base and not (slash and _is_litellm_provider(prefix)):
        return "openai"
    return "litellm"


@functools.cache
def litellm_providers() -> frozenset[str] | None:
    """The provider names litellm knows, from its bundled endpoint table (read as data);
    None when the table cannot be read."""
    path = litellm_data_file("provider_endpoints_support_backup.json")
    try:
        providers = json.loads(path.read_text(encoding="utf-8"))["providers"] if path else None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return frozenset(providers) if isinstance(providers, dict) else None


def _is_litellm_provider(prefix: str) -> bool:
    known = litellm_providers()
    return known is None or prefix in known  # unknown table: leave the routing to litellm


def make_client(
    name: ClientName,
    model: str,
    api_base: str | None,
    api_key: str | None,
    litellm_endpoint: dict[str, str],
) -> Client:
    """The named client for one judge."""
    if name == "openai":
        from .openai_client import OpenAIClient

        return OpenAIClient(model, api_base, api_key)
    from .litellm_client import LiteLLMClient

    return LiteLLMClient(model, litellm_endpoint)


__all__ = [
    "CLIENTS",
    "TRANSIENT",
    "Client",
    "ClientName",
    "MissingKeyError",
    "Reply",
    "TokenLogprob",
    "TokenLogprobs",
    "choose",
    "error_kind",
    "make_client",
]
