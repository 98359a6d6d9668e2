"""The litellm client: any provider litellm knows, and `--batch`.

litellm is imported when a run knows it will send a request, in a background thread (it takes
seconds; see `judge.judges.clients.loading`), and never for a run the store answers. It is
called with `num_retries=0` and an explicit timeout: retries and rate limits are the judge's.
"""

from __future__ import annotations

import os
from typing import Any

from .loading import Background
from .reply import Reply, logprob_params, reply_of


def import_litellm() -> Any:
    """litellm, imported on first use with its debug banner off and its bundled price map (no
    network fetch) unless LITELLM_LOCAL_MODEL_COST_MAP says otherwise.

    No other setting lowers litellm's CPU per call (`benchmarks/README.md`, "CPU time per
    judgment"): `turn_off_message_logging` adds a deep copy of each reply, the httpx transport
    and a shared `aclient_session` do more work than the default aiohttp one, and the cost and
    logging work has no switch.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


LITELLM: Background[Any] = Background("litellm", import_litellm)


CACHE_MARKED = frozenset({"anthropic"})
"""litellm providers that cache only what a request marks with `cache_control`."""
CLAUDE_HOSTS = frozenset({"bedrock", "vertex_ai", "vertex_ai_beta"})
"""Providers that serve Claude models, which need the marker there too."""


def needs_cache_marker(model: str) -> bool:
    """Whether `model` needs its cacheable prompt start marked (`cache_control`): Anthropic,
    and Claude on Bedrock or Vertex AI. OpenAI, DeepSeek, vLLM and llama.cpp cache a repeated
    prefix without one (litellm's prompt-caching docs), and a marker some other server does
    not know could be refused, so none is sent there."""
    try:
        provider = import_litellm().get_llm_provider(model)[1]
    except Exception:  # a model string litellm cannot place: send plain text
        return False
    return provider in CACHE_MARKED or (provider in CLAUDE_HOSTS and "claude" in model.lower())


class LiteLLMClient:
    """Requests through `litellm.acompletion`."""

    name = "litellm"

    def __init__(self, model: str, endpoint: dict[str, str]):
        self.model = model
        self.endpoint = endpoint
        """litellm's `api_base` and `api_key` (see `LLMJudge.endpoint`)."""

    def prefetch(self) -> None:
        LITELLM.start()

    async def ready(self) -> None:
        await LITELLM.ready()

    def cache_marker(self) -> bool:
        return needs_cache_marker(self.model)

    async def complete(
        self, request: dict[str, Any], timeout: float, logprobs: int | None = None
    ) -> Reply:
        litellm = await LITELLM.ready()
        kwargs = {
            "timeout": timeout,
            "num_retries": 0,
            "drop_params": True,
            **request,
            **self.endpoint,
            **logprob_params(logprobs),
        }
        response = await litellm.acompletion(**kwargs)
        return reply_of(response, _cost(response))

    async def aclose(self) -> None:
        """Nothing to close: litellm keeps its HTTP clients for the process."""


_UNPRICED: set[str] = set()
"""Models litellm could not price once: asking again costs ~1 ms of fallback lookups a call."""


def _cost(response: Any) -> float | None:
    """litellm prices each response as it logs it (`_hidden_params["response_cost"]`, None when
    the model has no price); computing it again would double that work."""
    hidden = getattr(response, "_hidden_params", None) or {}
    if "response_cost" in hidden:
        cost = hidden["response_cost"]
        return None if cost is None else float(cost)
    model = str(getattr(response, "model", None))
    if model in _UNPRICED:
        return None
    try:
        return float(import_litellm().completion_cost(completion_response=response))
    except Exception:  # unknown model price: say unknown, never 0
        _UNPRICED.add(model)
        return None
