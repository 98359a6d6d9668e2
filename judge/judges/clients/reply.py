"""What one provider request gave back, the same from either client (`judge.judges.clients`).

The llm judge reads a reply through this and nothing else: the raw reply text (for parsing,
and for whoever logs replies), the token counts the provider reported, the price, and the
log-probabilities when they were asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    """One generated token's log-probability, and the most likely alternatives when asked."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class Reply:
    """One answered request. `content` is the reply text as the model wrote it (None when the
    provider sent none); `cached_tokens` and `cache_write_tokens` are part of `prompt_tokens`;
    `cost` is None when no price is known (never 0 for unknown)."""

    content: str | None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cache_write_tokens: int | None = None
    cost: float | None = None
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None
    model: str | None = None
    """The model the provider says answered (it may name a dated version)."""


def logprob_params(logprobs: int | None) -> dict[str, Any]:
    """The request params asking for log-probabilities: `logprobs=N` asks for each token's
    log-probability and its N likeliest alternatives (0: none); None asks for nothing."""
    if logprobs is None:
        return {}
    return {"logprobs": True, **({"top_logprobs": logprobs} if logprobs > 0 else {})}


def reply_of(response: Any, cost: float | None) -> Reply:
    """A chat-completion response (openai's or litellm's object, they share the shape) as a
    `Reply`."""
    choice = response.choices[0]
    prompt, completion = tokens(response)
    read, written = cache_tokens(response)
    return Reply(
        content=choice.message.content,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cached_tokens=read,
        cache_write_tokens=written,
        cost=cost,
        finish_reason=getattr(choice, "finish_reason", None),
        logprobs=logprobs_of(getattr(choice, "logprobs", None)),
        model=getattr(response, "model", None),
    )


def tokens(response: Any) -> tuple[int | None, int | None]:
    usage = getattr(response, "usage", None)
    if usage is None:
        return None, None
    return (
        _count(getattr(usage, "prompt_tokens", None)),
        _count(getattr(usage, "completion_tokens", None)),
    )


def cache_tokens(response: Any) -> tuple[int | None, int | None]:
    """Prompt tokens read from and written to the provider's prompt cache: OpenAI's
    `prompt_tokens_details.cached_tokens` (litellm copies Anthropic's `cache_read_input_tokens`
    there too, so it is read once, never added twice) and Anthropic's
    `cache_creation_input_tokens`. Both are already part of `prompt_tokens`."""
    usage = getattr(response, "usage", None)
    if usage is None:
        return None, None
    details = getattr(usage, "prompt_tokens_details", None)
    read = details.get("cached_tokens") if isinstance(details, dict) else None
    if read is None:
        read = getattr(details, "cached_tokens", None)
    if read is None:
        read = getattr(usage, "cache_read_input_tokens", None)
    written = getattr(usage, "cache_creation_input_tokens", None)
    return _count(read), _count(written)


def reasoning_tokens(response: Any) -> int | None:
    details = getattr(getattr(response, "usage", None), "completion_tokens_details", None)
    value = details.get("reasoning_tokens") if isinstance(details, dict) else None
    return _count(value if value is not None else getattr(details, "reasoning_tokens", None))


def logprobs_of(logprobs: Any) -> tuple[TokenLogprob, ...] | None:
    """A choice's `logprobs.content` (objects or dicts) as `TokenLogprob`s; None when the
    reply carries none (not asked for, or not given by the server)."""
    content = _field(logprobs, "content")
    if not content:
        return None
    return tuple(
        TokenLogprob(
            token=str(_field(item, "token")),
            logprob=float(_field(item, "logprob")),
            top=tuple(
                (str(_field(alt, "token")), float(_field(alt, "logprob")))
                for alt in _field(item, "top_logprobs") or ()
            ),
        )
        for item in content
    )


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
