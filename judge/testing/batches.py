"""The fake provider's OpenAI-compatible Files and Batches endpoints.

    POST /v1/files                  upload (multipart: `file`, `purpose`)
    GET  /v1/files/{id}             the file object
    GET  /v1/files/{id}/content     the file's bytes (a batch's output or error JSONL)
    POST /v1/batches                create a batch from an uploaded JSONL file
    GET  /v1/batches                every batch, newest first
    GET  /v1/batches/{id}           the batch, with its status and request counts
    POST /v1/batches/{id}/cancel    cancel it

A batch is `in_progress` for `batch_delay` seconds after it is created (its completed count
grows with the time elapsed), then it ends the way `batch_schedule` says for its index (0 for
the first batch created): `ok` (every line answered), `partial` (a seeded `batch_partial_rate`
share of the lines fails with a 500 line in the error file), `expire` (status `expired`: the
first `batch_expire_done` share of the lines is answered, the rest are `batch_expired` error
lines) or `fail` (status `failed`, no output at all). Each line is answered by the provider's
own chat-completion logic, so its answers, faults, reply-format refusals (`response_formats`,
in the `format_refusal` shape: a refused line carries the live endpoint's status and body) and
call log are those of a live call; a line's call-log `path` is `batch <batch id> <url>`.

`ops` counts every Files/Batches request by operation (`file_create`, `batch_create`, ...),
which is how a test sees that a batch was created once.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any, Literal

from judge.testing import replies

BatchOutcome = Literal["ok", "partial", "expire", "fail"]
BATCH_OUTCOMES: tuple[BatchOutcome, ...] = ("ok", "partial", "expire", "fail")
ROUTE_PREFIXES = ("/v1/files", "/v1/batches", "/files", "/batches")

Answer = tuple[int, str, bytes]
"""An HTTP answer: status, content type, body."""

LineServer = Callable[[str, bytes, str | None], replies.Reply]
"""The provider's chat-completion logic: (path, body, Authorization header) -> reply."""


@dataclass
class _File:
    id: str
    filename: str
    purpose: str
    content: bytes
    created_at: int

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.content),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }


@dataclass
class _Batch:
    id: str
    index: int
    input_file_id: str
    endpoint: str
    lines: list[dict[str, Any]]
    created: float
    outcome: BatchOutcome
    status: str = "in_progress"
    output_file_id: str | None = None
    error_file_id: str | None = None
    completed: int = 0
    failed: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    ended_at: int | None = None
    auth: str | None = None


class BatchService:
    """Files and batches, held in memory for one fake provider (thread-safe)."""

    def __init__(
        self,
        serve_line: LineServer,
        *,
        delay: float = 1.0,
        schedule: list[BatchOutcome] | None = None,
        partial_rate: float = 0.5,
        expire_done: float = 0.5,
        seed: int = 0,
        api_key: str | None = None,
    ) -> None:
        self._serve_line = serve_line
        self.delay = delay
        self.schedule = list(schedule or [])
        self.partial_rate = partial_rate
        self.expire_done = expire_done
        self.seed = seed
        self._api_key = api_key
        self._files: dict[str, _File] = {}
        self._batches: dict[str, _Batch] = {}
        self._lock = threading.RLock()
        self.ops: Counter[str] = Counter()
        self.finish_seconds = 0.0
        """Time spent answering the lines of batches as they ended (inside a status check)."""

    # ------------------------------------------------------------------ routing

    def handle(
        self, method: str, path: str, content_type: str, auth: str | None, body: bytes
    ) -> Answer | None:
        """The answer to a Files/Batches request, or None when `path` is not one of them."""
        if not path.startswith(ROUTE_PREFIXES):
            return None
        if self._api_key is not None and auth != f"Bearer {self._api_key}":
            return _json(401, replies.unauthorized().payload or {})
        parts = path.removeprefix("/v1").strip("/").split("/")
        try:
            return self._route(method, parts, content_type, auth, body)
        except _NotFound as missing:
            return _error(404, f"No such {missing.args[0]}", "invalid_request_error")
        except ValueError as exc:
            return _error(400, str(exc), "invalid_request_error")

    def _route(
        self, method: str, parts: list[str], content_type: str, auth: str | None, body: bytes
    ) -> Answer:
        kind, rest = parts[0], parts[1:]
        if kind == "files" and method == "POST" and not rest:
            return self._create_file(content_type, body)
        if kind == "files" and method == "GET" and len(rest) == 1:
            return self._op("file_retrieve", _json(200, self._file(rest[0]).describe()))
        if kind == "files" and method == "GET" and rest[1:] == ["content"]:
            return self._op("file_content", (200, "application/jsonl", self._file(rest[0]).content))
        if kind == "batches" and method == "POST" and not rest:
            return self._create_batch(_object(body), auth)
        if kind == "batches" and method == "GET" and not rest:
            return self._op("batch_list", _json(200, self._list()))
        if kind == "batches" and method == "GET" and len(rest) == 1:
            return self._op("batch_retrieve", _json(200, self._describe(self._batch(rest[0]))))
        if kind == "batches" and method == "POST" and rest[1:] == ["cancel"]:
            return self._cancel(self._batch(rest[0]))
        return _error(404, f"Unknown {method} /v1/{'/'.join(parts)}", "invalid_request_error")

    def _op(self, name: str, answer: Answer) -> Answer:
        with self._lock:
            self.ops[name] += 1
        return answer

    # ------------------------------------------------------------------ files

    def _create_file(self, content_type: str, body: bytes) -> Answer:
        fields = _multipart(content_type, body)
        if "file" not in fields:
            raise ValueError("the upload has no 'file' part")
        filename, content = fields["file"]
        purpose = fields.get("purpose", ("", b""))[1].decode() or "batch"
        return self._op("file_create", _json(200, self._add_file(filename, purpose, content)))

    def _add_file(self, filename: str, purpose: str, content: bytes) -> dict[str, Any]:
        with self._lock:
            file = _File(f"file-fake{len(self._files):06d}", filename, purpose, content, _now())
            self._files[file.id] = file
        return file.describe()

    def _file(self, file_id: str) -> _File:
        with self._lock:
            if file_id not in self._files:
                raise _NotFound(f"file {file_id}")
            return self._files[file_id]

    # ------------------------------------------------------------------ batches

    def _create_batch(self, request: dict[str, Any], auth: str | None) -> Answer:
        file = self._file(str(request.get("input_file_id")))
        endpoint = str(request.get("endpoint") or "")
        if request.get("completion_window") != "24h":
            raise ValueError("completion_window must be '24h'")
        lines, errors = _read_lines(file.content, endpoint)
        with self._lock:
            index = len(self._batches)
            outcome = self.schedule[index] if index < len(self.schedule) else "ok"
            batch = _Batch(
                f"batch_fake{index:06d}", index, file.id, endpoint, lines, time.time(), outcome
            )
            batch.auth = auth
            if errors:
                batch.status, batch.errors, batch.ended_at = "failed", errors, _now()
            self._batches[batch.id] = batch
        return self._op("batch_create", _json(200, self._describe(batch)))

    def _list(self) -> dict[str, Any]:
        """Every batch, newest first (one page: the fake never holds many)."""
        with self._lock:
            batches = sorted(self._batches.values(), key=lambda b: b.index, reverse=True)
        data = [self._describe(b) for b in batches]
        first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
        return {"object": "list", "data": data, "first_id": first, "last_id": last,
                "has_more": False}  # fmt: skip

    def _batch(self, batch_id: str) -> _Batch:
        with self._lock:
            if batch_id not in self._batches:
                raise _NotFound(f"batch {batch_id}")
            return self._batches[batch_id]

    def _cancel(self, batch: _Batch) -> Answer:
        with self._lock:
            if batch.status == "in_progress":
                self._finish(batch, answered=0, status="cancelled", code="batch_cancelled")
        return self._op("batch_cancel", _json(200, self._describe(batch)))

    def _describe(self, batch: _Batch) -> dict[str, Any]:
        with self._lock:
            self._advance(batch)
            return {
                "id": batch.id,
                "object": "batch",
                "endpoint": batch.endpoint,
                "errors": {"object": "list", "data": batch.errors} if batch.errors else None,
                "input_file_id": batch.input_file_id,
                "completion_window": "24h",
                "status": batch.status,
                "output_file_id": batch.output_file_id,
                "error_file_id": batch.error_file_id,
                "created_at": int(batch.created),
                "in_progress_at": int(batch.created),
                "expires_at": int(batch.created) + 86400,
                "completed_at": batch.ended_at if batch.status == "completed" else None,
                "failed_at": batch.ended_at if batch.status == "failed" else None,
                "expired_at": batch.ended_at if batch.status == "expired" else None,
                "cancelled_at": batch.ended_at if batch.status == "cancelled" else None,
                "request_counts": {
                    "total": len(batch.lines),
                    "completed": batch.completed,
                    "failed": batch.failed,
                },
                "metadata": {},
            }

    def _advance(self, batch: _Batch) -> None:
        """Move an in-progress batch on by the time elapsed; at `delay`, end it."""
        if batch.status != "in_progress":
            return
        elapsed = time.time() - batch.created
        if elapsed < self.delay:
            batch.completed = int(len(batch.lines) * elapsed / self.delay) if self.delay else 0
            return
        if batch.outcome == "fail":
            batch.status, batch.ended_at, batch.completed = "failed", _now(), 0
            batch.errors = [
                {"code": "server_error", "message": "The batch failed (injected).", "line": None}
            ]
        elif batch.outcome == "expire":
            done = int(len(batch.lines) * self.expire_done)
            self._finish(batch, answered=done, status="expired", code="batch_expired")
        else:
            self._finish(batch, answered=len(batch.lines), status="completed", code=None)

    def _finish(self, batch: _Batch, answered: int, status: str, code: str | None) -> None:
        started = time.perf_counter()
        output: list[bytes] = []
        failed: list[bytes] = []
        for number, line in enumerate(batch.lines):
            if number >= answered:
                failed.append(_expired_line(batch, line, str(code)))
                continue
            entry, ok = self._answer(batch, line)
            (output if ok else failed).append(entry)
        if output:
            batch.output_file_id = self._add_file("output.jsonl", "batch_output", b"".join(output))[
                "id"
            ]
        if failed:
            batch.error_file_id = self._add_file("errors.jsonl", "batch_output", b"".join(failed))[
                "id"
            ]
        batch.completed, batch.failed = len(output), len(failed)
        batch.status, batch.ended_at = status, _now()
        self.finish_seconds += time.perf_counter() - started

    def _answer(self, batch: _Batch, line: dict[str, Any]) -> tuple[bytes, bool]:
        custom_id = str(line["custom_id"])
        if batch.outcome == "partial" and self._drawn(custom_id):
            body = replies.error("The server had an error (injected).", "server_error")
            status = 500
        else:
            reply = self._serve_line(
                f"batch {batch.id} {line['url']}", json.dumps(line["body"]).encode(), batch.auth
            )
            status, body = (
                (reply.status, reply.payload)
                if reply.payload is not None
                else (504, replies.error("The request timed out (injected).", "timeout"))
            )
        entry = {
            "id": f"batch_req_{hashlib.sha256(custom_id.encode()).hexdigest()[:12]}",
            "custom_id": custom_id,
            "response": {"status_code": status, "request_id": custom_id[:16], "body": body},
            "error": None,
        }
        return (json.dumps(entry) + "\n").encode(), status == 200

    def _drawn(self, custom_id: str) -> bool:
        digest = hashlib.sha256(f"{self.seed}:{custom_id}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < self.partial_rate


class _NotFound(Exception):
    pass


def _expired_line(batch: _Batch, line: dict[str, Any], code: str) -> bytes:
    message = {
        "batch_expired": "This request could not be executed before the completion window expired.",
        "batch_cancelled": "This request was not executed because the batch was cancelled.",
    }.get(code, code)
    entry = {
        "id": f"batch_req_{batch.id}_{line['custom_id']}"[:40],
        "custom_id": line["custom_id"],
        "response": None,
        "error": {"code": code, "message": message},
    }
    return (json.dumps(entry) + "\n").encode()


def _read_lines(content: bytes, endpoint: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The input file's request lines, and OpenAI-style validation errors (then none run)."""
    lines: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, raw in enumerate(content.decode("utf-8", "replace").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except json.JSONDecodeError as exc:
            errors.append(_line_error("invalid_json_line", f"not JSON: {exc}", number))
            continue
        problem = _line_problem(line, endpoint, seen)
        if problem:
            errors.append(_line_error("invalid_request", problem, number))
            continue
        seen.add(line["custom_id"])
        lines.append(line)
    if not lines and not errors:
        errors.append(_line_error("empty_file", "The input file has no requests.", None))
    return lines, errors


def _line_problem(line: Any, endpoint: str, seen: set[str]) -> str | None:
    if not isinstance(line, dict):
        return "a line must be a JSON object"
    custom_id = line.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id:
        return "custom_id is missing"
    if custom_id in seen:
        return f"custom_id {custom_id!r} is used twice"
    if line.get("method") != "POST" or line.get("url") != endpoint:
        return f"method must be POST and url {endpoint!r}"
    if not isinstance(line.get("body"), dict):
        return "body must be an object"
    return None


def _line_error(code: str, message: str, number: int | None) -> dict[str, Any]:
    return {"code": code, "message": message, "param": None, "line": number}


def _multipart(content_type: str, body: bytes) -> dict[str, tuple[str, bytes]]:
    """A multipart/form-data body's fields: name -> (filename, bytes)."""
    if not content_type.startswith("multipart/form-data"):
        raise ValueError("a file upload must be multipart/form-data")
    header = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(header + body)
    fields: dict[str, tuple[str, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            fields[name] = (part.get_filename() or "", payload)
    return fields


def _object(body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"We could not parse the JSON body of your request: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("The request body must be a JSON object.")
    return data


def _json(status: int, payload: dict[str, Any]) -> Answer:
    return status, "application/json", json.dumps(payload).encode()


def _error(status: int, message: str, type_: str) -> Answer:
    return _json(status, replies.error(message, type_))


def _now() -> int:
    return int(time.time())
