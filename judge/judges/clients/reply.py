"""What one provider request gave back, the same from either client (`judge.judges.clients`).

The llm judge reads a reply through this and nothing else: the raw reply text (for parsing,
and for whoever logs replies), the token counts the provider reported, the price, and the
log-probabilities when they were asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, overload


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
    logprobs: TokenLogprobs | None = None
    model: str | None = None
    """The model the provider says answered (it may name a dated version)."""
    system_fingerprint: str | None = None
    """The provider's backend configuration, where it sends one (OpenAI's `system_fingerprint`)."""


def logprob_params(logprobs: int | None) -> dict[str, Any]:
    """The request params asking for log-probabilities: `logprobs=N` asks for each token's
    log-probability and its N likeliest alternatives (0: none); None asks for nothing."""
    if logprobs is None:
        return {}
    return {"logprobs": True, **({"top_logprobs": logprobs} if logprobs > 0 else {})}


def reply_of(response: Any, cost: float | None) -> Reply:
    """A chat-completion response as a `Reply`: litellm's object, or the reply's JSON as a
    dict (the openai client reads it so: building the SDK's typed objects for a reply with
    log-probabilities cost ~10 ms of CPU a call). Raises `ValueError` for a body that is not a
    chat completion (no `choices`)."""
    choices = _field(response, "choices")
    if not isinstance(choices, list | tuple) or not choices:
        raise not_a_completion(response)
    choice = choices[0]
    prompt, completion = tokens(response)
    read, written = cache_tokens(response)
    content = _field(_field(choice, "message"), "content")
    return Reply(
        content=content if isinstance(content, str) else None,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cached_tokens=read,
        cache_write_tokens=written,
        cost=cost,
        finish_reason=_field(choice, "finish_reason"),
        logprobs=logprobs_of(_field(choice, "logprobs")),
        model=_text_or_none(_field(response, "model")),
        system_fingerprint=_text_or_none(_field(response, "system_fingerprint")),
    )


def tokens(response: Any) -> tuple[int | None, int | None]:
    usage = _field(response, "usage")
    if usage is None:
        return None, None
    return _count(_field(usage, "prompt_tokens")), _count(_field(usage, "completion_tokens"))


def cache_tokens(response: Any) -> tuple[int | None, int | None]:
    """Prompt tokens read from and written to the provider's prompt cache: OpenAI's
    `prompt_tokens_details.cached_tokens` (litellm copies Anthropic's `cache_read_input_tokens`
    there too, so it is read once, never added twice) and Anthropic's
    `cache_creation_input_tokens`. Both are already part of `prompt_tokens`."""
    usage = _field(response, "usage")
    if usage is None:
        return None, None
    read = _field(_field(usage, "prompt_tokens_details"), "cached_tokens")
    if read is None:
        read = _field(usage, "cache_read_input_tokens")
    written = _field(usage, "cache_creation_input_tokens")
    return _count(read), _count(written)


def reasoning_tokens(response: Any) -> int | None:
    details = _field(_field(response, "usage"), "completion_tokens_details")
    return _count(_field(details, "reasoning_tokens"))


def logprobs_of(logprobs: Any) -> TokenLogprobs | None:
    """A choice's `logprobs.content` (objects or dicts) as `TokenLogprobs`; None when the
    reply carries none (not asked for, or not given by the server)."""
    content = _field(logprobs, "content")
    if not content:
        return None
    return TokenLogprobs(content)


class TokenLogprobs(Sequence[TokenLogprob]):
    """A reply's generated tokens, each read into a `TokenLogprob` only when looked at: a reply
    holds hundreds of tokens with their alternatives (~2.5 ms of CPU to read them all), while a
    confidence score reads the handful where the answers are. `texts` are every token's text.
    Reading a token whose log-probability is not a number raises `ValueError`."""

    __slots__ = ("_items", "texts")

    def __init__(self, items: Sequence[Any]):
        self._items = items
        if items and type(items[0]) is dict:  # a reply's JSON (dicts throughout): no lookups
            self.texts = [str(item.get("token")) for item in items]
        else:
            self.texts = [str(_field(item, "token")) for item in items]

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> TokenLogprob: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[TokenLogprob, ...]: ...

    def __getitem__(self, index: int | slice) -> TokenLogprob | tuple[TokenLogprob, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        return _token(self._items[index])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"TokenLogprobs({len(self)} tokens)"


def _token(item: Any) -> TokenLogprob:
    try:
        return TokenLogprob(
            token=str(_field(item, "token")),
            logprob=float(_field(item, "logprob")),
            top=tuple(
                (str(_field(alt, "token")), float(_field(alt, "logprob")))
                for alt in _field(item, "top_logprobs") or ()
            ),
        )
    except TypeError as exc:  # a missing log-probability
        raise ValueError(f"a token's log-probability is not a number: {exc}") from None


def not_a_completion(body: Any, most: int = 200) -> ValueError:
    """The error for a successful reply whose body is not a chat completion."""
    text = body if isinstance(body, str) else repr(body)
    shown = text if len(text) <= most else text[:most] + "..."
    return ValueError(f"the reply is not a chat completion (no choices): {shown}")


def _field(obj: Any, name: str) -> Any:
    """A field of a provider's object or of a JSON dict; None when it has none."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
