"""The lean `openai` client's exceptions are the `openai` SDK's: for every status and body
shape, the same class name, message, status code and body as the SDK's own mapping gives for
the same response, and connection failures and timeouts classified as before."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from judge.judges.clients import error_kind
from judge.judges.clients.errors import retry_after_seconds
from judge.judges.clients.http_errors import (
    APIConnectionError,
    APITimeoutError,
    connection_error,
    status_error,
)

URL = "http://127.0.0.1:9/v1/chat/completions"
BODIES: dict[str, Any] = {
    "openai error": {"error": {"message": "Rate limit reached", "type": "requests", "code": "x"}},
    "no message": {"error": {"type": "server_error"}},
    "flat object": {"detail": "Not Found"},
    "plain text": "upstream connect error",
    "empty": "",
}


def ours(status: int, body: Any, headers: dict[str, str] | None = None) -> Any:
    content = body if isinstance(body, str) else json.dumps(body)
    request = httpx.Request("POST", URL)
    return status_error(httpx.Response(status, text=content, headers=headers, request=request))


def sdks(status: int, body: Any) -> Any:
    import openai

    http = _sdk_http(openai)
    content = body if isinstance(body, str) else json.dumps(body)
    request = http.Request("POST", URL)
    client = openai.OpenAI(api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    return client._make_status_error_from_response(
        http.Response(status, text=content, request=request)
    )


def _sdk_http(openai: Any) -> Any:
    """The HTTP library the SDK builds its responses with (`httpx`, or the `httpx2` fork
    newer SDKs use)."""
    module = openai._base_client
    return getattr(module, "httpx2", None) or module.httpx


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422, 429, 500, 502, 503, 418])
@pytest.mark.parametrize("shape", list(BODIES))
def test_a_status_error_is_the_sdks(status: int, shape: str) -> None:
    mine, theirs = ours(status, BODIES[shape]), sdks(status, BODIES[shape])
    assert type(mine).__name__ == type(theirs).__name__
    assert [c.__name__ for c in type(mine).__mro__[:-2]] == [
        c.__name__ for c in type(theirs).__mro__[:-2]
    ]
    assert str(mine) == str(theirs) and mine.message == theirs.message
    assert mine.status_code == theirs.status_code and mine.body == theirs.body
    assert (mine.code, mine.param, mine.type) == (theirs.code, theirs.param, theirs.type)
    assert error_kind(mine) == error_kind(theirs)


def test_retry_after_is_read_from_the_errors_response() -> None:
    limited = ours(429, BODIES["openai error"], {"retry-after-ms": "1500"})
    assert error_kind(limited) == "rate_limit"
    assert retry_after_seconds(limited) == pytest.approx(1.5)


@pytest.mark.parametrize(
    ("failure", "kind", "raised"),
    [
        (httpx.ConnectError("refused"), "connection", APIConnectionError),
        (httpx.RemoteProtocolError("dropped"), "connection", APIConnectionError),
        (httpx.ReadTimeout("slow"), "timeout", APITimeoutError),
        (httpx.PoolTimeout("busy"), "timeout", APITimeoutError),
    ],
)
def test_transport_failures_keep_their_cause(failure: Exception, kind: str, raised: type) -> None:
    try:
        raise connection_error(failure) from failure
    except APIConnectionError as exc:
        assert type(exc) is raised and error_kind(exc) == kind
        assert exc.__cause__ is failure
