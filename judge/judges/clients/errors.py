"""What kind of failure a provider exception is, from either client, and how long it asks to wait.

litellm's exceptions subclass the `openai` SDK's and keep their class names, so one table of
class names classifies both (and neither library need be imported to read it). The kinds:
`rate_limit`, `timeout`, `auth`, `refusal`, `bad_request`, `server`, `connection`, `error`.
"""

from __future__ import annotations

import contextlib
import email.utils
import time
from typing import Any

_STATUS_KINDS = (
    ("rate_limit", {"RateLimitError"}),
    ("timeout", {"Timeout", "APITimeoutError", "TimeoutError"}),
    ("auth", {"AuthenticationError", "PermissionDeniedError", "MissingKeyError"}),
    ("refusal", {"ContentPolicyViolationError"}),
    ("bad_request", {"BadRequestError", "NotFoundError", "UnprocessableEntityError"}),
)
_CONNECTION = {
    "APIConnectionError",
    "ConnectError",
    "ReadError",
    "RemoteProtocolError",
    "ServerDisconnectedError",
    "ClientConnectorError",
    "ConnectionError",
}
_TIMEOUTS = {"APITimeoutError", "TimeoutException", "TimeoutError", "ReadTimeout"}
_SERVER = {"InternalServerError", "ServiceUnavailableError", "BadGatewayError"}
_POLICY_WORDS = (
    "content_policy_violation",
    "violating our usage policy",
    "request was rejected as a result of the safety system",
)
"""How OpenAI words a refusal on content policy in a 400 (litellm's own test for raising
`ContentPolicyViolationError` from it); the openai SDK raises a plain `BadRequestError`."""

TRANSIENT = frozenset({"rate_limit", "timeout", "server", "connection"})
"""The kinds a call retries."""

CONNECTION_LEVEL = frozenset({"connection", "timeout"})
"""Failures in which no answer came back at all: a refused connection, a name that does not
resolve, a dropped connection, a request that timed out."""

MAX_RETRY_AFTER = 600.0
"""Longest Retry-After honoured (seconds); a provider asking for more is waited on this long."""


class MissingKeyError(Exception):
    """No API key for a provider that needs one (none given, none in its environment
    variable): an `auth` failure, found before any request is sent."""


_KIND_ATTRIBUTE = "_diagnosis_judge_error_kind"


def error_kind(exc: BaseException) -> str:
    """Classify a provider exception by its class names.

    A refused port or a dropped connection comes as litellm's `InternalServerError` (HTTP
    500, "Connection error.") or the SDK's `APIConnectionError`; the exceptions it was raised
    from tell the two apart. The kind is worked out the first time (where the request failed)
    and kept on the exception: raised again after the last retry, it gets a new
    `__context__`, which loses the connection error it came from (a refused port was
    `connection` in `attempt_errors` and `server` in `errors`)."""
    known = getattr(exc, _KIND_ATTRIBUTE, None)
    if isinstance(known, str):
        return known
    kind = _classify(exc)
    with contextlib.suppress(AttributeError, TypeError):
        setattr(exc, _KIND_ATTRIBUTE, kind)
    return kind


def _classify(exc: BaseException) -> str:
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "BadRequestError" in names and _policy_refusal(exc):
        return "refusal"
    for kind, markers in _STATUS_KINDS:
        if names & markers:
            return kind
    causes = _cause_names(exc)
    if causes & _TIMEOUTS:
        return "timeout"
    if causes & _CONNECTION:
        return "connection"
    if names & _SERVER:
        return "server"
    return "error"


def _policy_refusal(exc: BaseException) -> bool:
    text = f"{exc} {getattr(exc, 'body', '')}".lower()
    return any(words in text for words in _POLICY_WORDS)


def _cause_names(exc: BaseException) -> set[str]:
    names: set[str] = set()
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        names.update(cls.__name__ for cls in type(current).__mro__)
        current = current.__cause__ or current.__context__
    return names


def retry_after_seconds(exc: BaseException) -> float | None:
    """The delay a provider asked for in a failed response's headers, if any.

    litellm keeps the provider's response headers on its exceptions as
    `litellm_response_headers` (and on `exc.response.headers` for HTTP errors). OpenAI's
    `retry-after-ms` is read first (finer), then `Retry-After` as seconds or an HTTP date.
    """
    headers = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
    if headers is None or not hasattr(headers, "get"):
        return None
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return max(0.0, millis / 1000.0)
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return max(0.0, seconds)
    parsed = email.utils.parsedate_tz(str(value))
    if parsed is None:
        return None
    return max(0.0, email.utils.mktime_tz(parsed) - time.time())


def _number(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
