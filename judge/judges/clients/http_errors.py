"""The `openai` SDK's exceptions, as the `openai` client raises them without importing it.

Same class names and hierarchy (`error_kind` classifies by name, as it does litellm's, which
subclass the SDK's), same status codes to classes, same message (`Error code: 429 - <the
body's error message>`), and the same attributes a caller reads: `status_code`, `body` (the
body's `error` object when it has one), `response` (its headers carry `Retry-After`),
`request`, `message`. A connection failure or a timeout is raised from httpx's own exception,
so its cause tells a refused port from a dropped connection.
"""

from __future__ import annotations

import json
from typing import Any


class OpenAIError(Exception):
    pass


class APIError(OpenAIError):
    def __init__(self, message: str, request: Any, *, body: object | None) -> None:
        super().__init__(message)
        self.request = request
        self.message = message
        self.body = body
        fields = body if isinstance(body, dict) else {}
        code = fields.get("code")
        self.code = str(code) if code is not None else None
        self.param = fields.get("param")
        self.type = fields.get("type")


class APIStatusError(APIError):
    """A reply with an error status."""

    def __init__(self, message: str, *, response: Any, body: object | None) -> None:
        super().__init__(message, response.request, body=body)
        self.response = response
        self.status_code: int = response.status_code
        self.request_id = response.headers.get("x-request-id")


class BadRequestError(APIStatusError):
    pass


class AuthenticationError(APIStatusError):
    pass


class PermissionDeniedError(APIStatusError):
    pass


class NotFoundError(APIStatusError):
    pass


class ConflictError(APIStatusError):
    pass


class UnprocessableEntityError(APIStatusError):
    pass


class RateLimitError(APIStatusError):
    pass


class InternalServerError(APIStatusError):
    pass


class APIConnectionError(APIError):
    def __init__(self, *, message: str = "Connection error.", request: Any) -> None:
        super().__init__(message, request, body=None)


class APITimeoutError(APIConnectionError):
    def __init__(self, request: Any) -> None:
        super().__init__(message="Request timed out.", request=request)


_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}


def status_error(response: Any) -> APIStatusError:
    """The exception the SDK raises for an httpx response with an error status (read in
    full: the client does not stream)."""
    status = response.status_code
    text = response.text.strip()
    try:
        body: object = json.loads(text)
    except ValueError:
        body = text
    data = body.get("error", body) if isinstance(body, dict) else body
    words = data.get("message") if isinstance(data, dict) else None
    message = f"Error code: {status}" + (f" - {words}" if isinstance(words, str) and words else "")
    kind = _BY_STATUS.get(status, InternalServerError if status >= 500 else APIStatusError)
    return kind(message, response=response, body=data)


def connection_error(exc: Any) -> APIConnectionError:
    """The exception the SDK raises for an httpx transport failure (raise it `from exc`)."""
    request = getattr(exc, "_request", None)
    if any(cls.__name__ == "TimeoutException" for cls in type(exc).__mro__):
        return APITimeoutError(request)
    return APIConnectionError(request=request)
