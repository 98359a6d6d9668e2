"""HTTP replies shaped like OpenAI's: chat completions and error bodies."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any

from judge.testing.faults import FaultKind


@dataclass(frozen=True)
class Reply:
    """What to send. `payload=None` means: wait `delay` seconds, then close without answering."""

    status: int
    payload: dict[str, Any] | None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def completion(
    index: int,
    model: str,
    content: str,
    finish_reason: str,
    prompt_tokens: int,
    completion_tokens: int,
    cached_tokens: int = 0,
    fingerprint: str | None = "fp_fake",
) -> dict[str, Any]:
    """An OpenAI chat-completion body with one choice and usage counts; `cached_tokens` of
    the prompt tokens came from the prompt cache (`usage.prompt_tokens_details`, as OpenAI
    reports it; they are part of `prompt_tokens`); `fingerprint` None sends no
    `system_fingerprint`."""
    return {
        "id": f"chatcmpl-fake{index:06d}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        **({"system_fingerprint": fingerprint} if fingerprint is not None else {}),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        },
    }


def error(message: str, type_: str, code: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error body."""
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def retry_after_headers(seconds: float) -> dict[str, str]:
    """`Retry-After` in whole seconds (HTTP) plus OpenAI's finer `retry-after-ms`."""
    return {
        "Retry-After": str(math.ceil(max(seconds, 0.0))),
        "retry-after-ms": str(math.ceil(max(seconds, 0.0) * 1000)),
    }


def rate_limited(model: str, retry_after: float, limit: int | None = None) -> Reply:
    """A 429 reply with OpenAI's wording and Retry-After headers."""
    what = f"Limit {limit}" if limit is not None else "injected fault"
    body = error(
        f"Rate limit reached for {model} on requests per min (RPM): {what}. "
        f"Please try again in {retry_after:.3f}s.",
        "requests",
        "rate_limit_exceeded",
    )
    return Reply(429, body, retry_after_headers(retry_after))


def unauthorized() -> Reply:
    """Never echoes the key it was given, not even a masked part of it."""
    return Reply(
        401,
        error(
            "Incorrect API key provided. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            "invalid_request_error",
            "invalid_api_key",
        ),
    )


def bad_request(message: str) -> Reply:
    """A 400 invalid_request_error reply."""
    return Reply(400, error(message, "invalid_request_error"))


def injected_error(kind: FaultKind, model: str, retry_after: float, delay: float) -> Reply:
    """The HTTP-level faults; content-level faults are completions and built elsewhere."""
    if kind is FaultKind.RATE_LIMIT:
        return replace(rate_limited(model, retry_after), delay=delay)
    bodies = {
        FaultKind.SERVER_ERROR: (
            500,
            error(
                "The server had an error while processing your request. Sorry about that!",
                "server_error",
            ),
        ),
        FaultKind.UNAVAILABLE: (
            503,
            error("The engine is currently overloaded, please try again later.", "server_error"),
        ),
        FaultKind.UNAUTHORIZED: (401, unauthorized().payload),
        FaultKind.BAD_REQUEST: (
            400,
            error(
                "Invalid request (injected fault): 'messages' could not be processed.",
                "invalid_request_error",
            ),
        ),
    }
    status, body = bodies[kind]
    return Reply(status, body, delay=delay)
