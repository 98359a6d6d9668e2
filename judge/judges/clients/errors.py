"""What kind of failure a provider exception is, from either client.

litellm's exceptions subclass the `openai` SDK's and keep their class names, so one table of
class names classifies both (and neither library need be imported to read it). The kinds:
`rate_limit`, `timeout`, `auth`, `refusal`, `bad_request`, `server`, `connection`, `error`.
"""

from __future__ import annotations

import contextlib

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
