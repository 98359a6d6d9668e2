"""A batch's lines read as live replies are: the reply's text, and a failed line's error kind
and reason in the words of a live call's errors."""

from __future__ import annotations

import json
from typing import Any


def reply_text(body: dict[str, Any]) -> Any:
    """The reply's text (KeyError, IndexError or TypeError when the body has none)."""
    return body["choices"][0]["message"]["content"]


class LineFailure(Exception):
    """A failed batch line as the live call's exception would look: its HTTP status and its
    body, for `is_format_refusal`."""

    def __init__(self, response: dict[str, Any]):
        body = response.get("body")
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        self.status_code = response.get("status_code")
        self.body = json.dumps(body) if body is not None else ""
        super().__init__(str(message or self.body))


class BatchRequestFailed(Exception):
    """A Files/Batches request failed for good; `kind` as a live call's error kinds."""

    def __init__(self, kind: str, reason: str):
        super().__init__(reason)
        self.kind = kind


def line_error(line: dict[str, Any], batch_id: str) -> tuple[str, str]:
    """A failed line's error kind and reason."""
    error = line.get("error") or {}
    response = line.get("response") or {}
    status = response.get("status_code")
    body_error = (response.get("body") or {}).get("error") or {}
    code = str(error.get("code") or body_error.get("code") or "")
    message = str(error.get("message") or body_error.get("message") or "")
    kind = code if code in {"batch_expired", "batch_cancelled"} else _status_kind(status)
    words = " ".join(message.split())[:300]
    return kind, f"{kind} in batch {batch_id}" + (f" (HTTP {status})" if status else "") + (
        f": {words}" if words else ""
    )


def _status_kind(status: Any) -> str:
    if status == 429:
        return "rate_limit"
    if status in {408, 504}:
        return "timeout"
    if status in {401, 403}:
        return "auth"
    if isinstance(status, int) and status >= 500:
        return "server"
    if isinstance(status, int) and status >= 400:
        return "bad_request"
    return "batch_failed"


def batch_failure(current: Any) -> str:
    errors = getattr(current, "errors", None)
    data = getattr(errors, "data", None) or []
    words = "; ".join(str(getattr(e, "message", e)) for e in data[:3])
    return f"batch {current.id} {current.status} before answering this call" + (
        f": {words}" if words else ""
    )
