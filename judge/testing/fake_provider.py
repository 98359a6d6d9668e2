"""A fake OpenAI-compatible chat-completions server for tests, benchmarks and offline pipelines.

    with FakeProvider(FakeProviderConfig(fault_rates={"500": 0.1}, seed=7)) as server:
        litellm.completion(model="openai/fake-judge", api_base=server.url, api_key="sk-x", ...)
        server.injected_counts()   # exactly which faults it injected

Or as a command: `python -m judge.testing.fake_provider --port 8765 --fault-rate 500=0.1`.
Standard library only (http.server in a background thread); it binds 127.0.0.1 by default.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import threading
import time
from collections import Counter
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from judge.testing import replies
from judge.testing.answers import (
    REFUSAL_TEXT,
    answers_json,
    build_answers,
    count_tokens,
    hash_policy,
    last_user_text,
    malformed,
    message_text,
    question_ids,
    truncated,
)
from judge.testing.batches import BatchService
from judge.testing.biases import apply_biases
from judge.testing.call_log import (
    FORMAT_REFUSED,
    INVALID_REQUEST,
    OK,
    POLICY_ERROR,
    RATE_LIMITED,
    UNAUTHORIZED,
    CallLog,
    CallRecord,
)
from judge.testing.config import FakeProviderConfig
from judge.testing.faults import FaultKind, FaultPlan
from judge.testing.formats import refusal, request_format, schema_ignored
from judge.testing.limiter import SlidingWindowLimiter
from judge.testing.logprobs import hash_confidence, logprobs_for
from judge.testing.prefix_cache import PrefixCache
from judge.testing.replies import Reply

_FAULT_VALUES = frozenset(kind.value for kind in FaultKind)
COMPLETION_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
MODELS_PATHS = frozenset({"/v1/models", "/models"})
_HTTP_FAULTS = frozenset(
    {
        FaultKind.RATE_LIMIT,
        FaultKind.SERVER_ERROR,
        FaultKind.UNAVAILABLE,
        FaultKind.UNAUTHORIZED,
        FaultKind.BAD_REQUEST,
    }
)


class _Request:
    """The parts of one chat-completion request the provider looks at."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.model = str(body.get("model") or "")
        self.messages: list[dict[str, Any]] = body["messages"]
        self.body = body
        self.stream = bool(body.get("stream"))
        self.logprobs = body.get("logprobs") is True
        top = body.get("top_logprobs")
        self.top_logprobs = top if isinstance(top, int) and not isinstance(top, bool) else 0
        response_format = body.get("response_format")
        self.response_format = (
            str(response_format.get("type")) if isinstance(response_format, dict) else None
        )
        self.format = request_format(response_format)
        schema = response_format.get("schema") if isinstance(response_format, dict) else None
        answers = (schema or {}).get("properties", {}).get("answers", {})
        self.pinned = self.format == "json_object+schema" and "prefixItems" in answers
        canonical = json.dumps(self.messages, sort_keys=True)
        self.messages_hash = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        self.question_ids = question_ids(last_user_text(self.messages))
        self.logprobs = body.get("logprobs") is True
        top = body.get("top_logprobs")
        self.top_logprobs = top if isinstance(top, int) and not isinstance(top, bool) else 0
        self.prompt_tokens = count_tokens("".join(message_text(m) for m in self.messages))
        cap = body.get("max_completion_tokens", body.get("max_tokens"))
        self.max_tokens = cap if isinstance(cap, int) and not isinstance(cap, bool) else None


def _parse(raw: bytes) -> _Request | str:
    """The request, or the reason it cannot be served."""
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return f"We could not parse the JSON body of your request: {exc}"
    if not isinstance(body, dict):
        return "The request body must be a JSON object."
    messages = body.get("messages")
    if (
        not isinstance(messages, list)
        or not messages
        or not all(isinstance(m, dict) for m in messages)
    ):
        return "'messages' must be a non-empty array of message objects."
    return _Request(body)


class FakeProvider:
    """The server. `start()` binds and serves in a daemon thread; `stop()` ends it promptly,
    even with requests still hanging or connections kept alive."""

    def __init__(self, config: FakeProviderConfig | None = None) -> None:
        self.config = config or FakeProviderConfig()
        self._plan = FaultPlan(
            self.config.seed,
            dict(self.config.fault_rates),
            list(self.config.fault_schedule),
            self.config.latency_range(),
        )
        self._limiter = (
            SlidingWindowLimiter(self.config.rpm, self.config.rate_window)
            if self.config.rpm
            else None
        )
        self._policy = self.config.answer_policy or hash_policy
        self._log = CallLog(self.config.log_path)
        self._prompt_cache = PrefixCache()
        """Reports `prompt_tokens_details.cached_tokens` for a prompt start seen before."""
        self._next_index = 0
        self._index_lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        key = self.config.api_key
        self.batches = BatchService(
            self.serve_completion,
            delay=self.config.batch_delay,
            schedule=list(self.config.batch_schedule),
            partial_rate=self.config.batch_partial_rate,
            expire_done=self.config.batch_expire_done,
            seed=self.config.seed,
            api_key=key.get_secret_value() if key else None,
        )
        """The Files and Batches endpoints (`judge.testing.batches`)."""

    def start(self) -> FakeProvider:
        if self._httpd is not None:
            raise RuntimeError("FakeProvider already started")
        self._httpd = _Server((self.config.host, self.config.port), _Handler, self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-provider",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        with self._connections_lock:
            for conn in list(self._connections):
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
        self._httpd = None

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeProvider is not running")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """The OpenAI base URL, e.g. `http://127.0.0.1:PORT/v1` (give it as `api_base`)."""
        return f"http://{self.config.host}:{self.port}/v1"

    @property
    def calls(self) -> list[CallRecord]:
        return self._log.records()

    def outcome_counts(self) -> Counter[str]:
        return self._log.outcome_counts()

    def injected_counts(self) -> Counter[str]:
        """Injected faults by kind value (`"500"`, `"hang"`, ...); excludes the limiter's 429s."""
        return self._log.injected_counts()

    def serve_completion(self, path: str, raw: bytes, auth_header: str | None) -> Reply:
        """Decide the reply to one chat-completion request and record it in the call log."""
        with self._index_lock:
            index = self._next_index
            self._next_index += 1
        arrived = time.time()
        request = _parse(raw)
        record: dict[str, Any] = {
            "index": index,
            "timestamp": arrived,
            "path": path,
            "model": None,
            "messages_hash": None,
            "question_ids": [],
            "auth_present": bool(auth_header),
            "response_format": None,
        }
        if isinstance(request, str):
            extra: dict[str, Any] = {}
            reply, outcome = replies.bad_request(request), INVALID_REQUEST
        else:
            record.update(
                model=request.model,
                messages_hash=request.messages_hash,
                question_ids=request.question_ids,
                response_format=request.response_format,
                max_tokens=request.max_tokens,
            )
            reply, outcome, extra = self._decide(index, request, auth_header)
        self._log.append(
            CallRecord(
                **record,
                outcome=outcome,
                injected=outcome in _FAULT_VALUES,
                status=reply.status if reply.payload is not None else None,
                latency=reply.delay,
                **extra,
            )
        )
        return reply

    def _decide(
        self, index: int, request: _Request, auth_header: str | None
    ) -> tuple[Reply, str, dict[str, Any]]:
        if request.stream:
            return replies.bad_request("This fake provider does not stream."), INVALID_REQUEST, {}
        expected = self.config.api_key
        if expected is not None and auth_header != f"Bearer {expected.get_secret_value()}":
            return self._unauthorized(auth_header), UNAUTHORIZED, {}
        if request.format not in self.config.response_formats:
            shape = self.config.format_refusal
            raw_type = request.response_format or "text"
            return refusal(shape, request.format, raw_type), FORMAT_REFUSED, {}
        if self._limiter is not None:
            wait = self._limiter.acquire()
            if wait is not None:
                return replies.rate_limited(request.model, wait, self.config.rpm), RATE_LIMITED, {}
        fault = self._plan.fault_for(index)
        delay = self._plan.latency_for(index)
        if fault is FaultKind.RATE_LIMIT and self.config.fast_429:
            delay = 0.0
        if fault is FaultKind.HANG:
            return Reply(200, None, delay=self.config.hang_seconds), fault.value, {}
        if fault in _HTTP_FAULTS:
            return (
                replies.injected_error(fault, request.model, self.config.retry_after, delay),
                fault.value,
                {},
            )
        return self._completion(index, request, fault, delay)

    def _unauthorized(self, auth_header: str | None) -> Reply:
        padding = self.config.echo_key_padding
        if padding is None:
            return replies.unauthorized()
        sent = (auth_header or "").removeprefix("Bearer ")
        message = f"Incorrect API key provided: {'.' * padding}{sent}. Check your key."
        return Reply(401, replies.error(message, "invalid_request_error", "invalid_api_key"))

    def _completion(
        self, index: int, request: _Request, fault: FaultKind | None, delay: float
    ) -> tuple[Reply, str, dict[str, Any]]:
        answers = None
        finish = "stop"
        if request.question_ids:
            try:
                policy = self.config.model_policies.get(request.model, self._policy)
                answers = build_answers(request.messages, request.question_ids, policy)
                answers = apply_biases(
                    answers, request.messages, self.config.biases, self.config.seed, request.body
                )
            except Exception as exc:
                message = f"fake provider: the answer policy failed: {exc!r}"
                return Reply(500, replies.error(message, "server_error")), POLICY_ERROR, {}
            stop = self.config.stop_after_answers
            if stop is not None and not request.pinned:
                answers = answers[:stop]
            content = answers_json(answers)
        else:
            content = self.config.plain_reply
        if self.config.ignore_schema and request.format == "json_object+schema" and answers:
            content = schema_ignored(content)
        if fault is FaultKind.MALFORMED:
            content = malformed(content)
        elif fault is FaultKind.TRUNCATED:
            content, finish = truncated(content), "length"
        elif fault is FaultKind.REFUSAL:
            content = REFUSAL_TEXT
        completion_tokens = count_tokens(content)
        cached = self._prompt_cache.cached_tokens(request.messages, request.prompt_tokens)
        payload = replies.completion(
            index,
            self.config.model_version or request.model,
            content,
            finish,
            request.prompt_tokens,
            completion_tokens,
            cached,
            self.config.system_fingerprint,
        )
        if request.logprobs and self.config.logprobs:
            payload["choices"][0]["logprobs"] = logprobs_for(
                content,
                request.model,
                request.messages,
                self.config.confidence_policy or hash_confidence,
                request.top_logprobs,
            )
        extra = {
            "answers": {a["id"]: a["answer"] for a in answers} if answers and not fault else None,
            "prompt_tokens": request.prompt_tokens,
            "completion_tokens": completion_tokens,
            "cached_tokens": cached,
        }
        return Reply(200, payload, delay=delay), fault.value if fault else OK, extra

    def models_payload(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {"id": name, "object": "model", "created": 0, "owned_by": "fake-provider"}
                for name in self.config.models
            ],
        }

    def wait(self, seconds: float) -> None:
        """Sleep, but wake at once when the server stops."""
        if seconds > 0:
            self._stopping.wait(seconds)

    def track(self, conn: socket.socket, open_: bool) -> None:
        with self._connections_lock:
            if open_:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, address: tuple[str, int], handler: type, provider: FakeProvider) -> None:
        self.provider = provider
        super().__init__(address, handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "FakeOpenAI/1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.provider.track(self.connection, True)

    def finish(self) -> None:
        self.server.provider.track(self.connection, False)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        raw = self._read_body()
        if self._batch_route("POST", path, raw):
            return
        if path not in COMPLETION_PATHS:
            self._send(Reply(404, replies.error(f"Unknown path {path}", "invalid_request_error")))
            return
        arrived = time.monotonic()
        reply = self.server.provider.serve_completion(path, raw, self.headers.get("Authorization"))
        body = _body(reply)  # building the reply's bytes is part of the provider's latency
        self.server.provider.wait(reply.delay - (time.monotonic() - arrived))
        if body is None:
            self.close_connection = True
            return
        self._send(reply, body)

    def do_GET(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        if self._batch_route("GET", path, b""):
            return
        if path in MODELS_PATHS:
            self._send(Reply(200, self.server.provider.models_payload()))
        else:
            self._send(Reply(404, replies.error(f"Unknown path {path}", "invalid_request_error")))

    def _batch_route(self, method: str, path: str, raw: bytes) -> bool:
        """Serve a Files/Batches request (`judge.testing.batches`); False for any other path."""
        answer = self.server.provider.batches.handle(
            method,
            path,
            self.headers.get("Content-Type") or "",
            self.headers.get("Authorization"),
            raw,
        )
        if answer is None:
            return False
        status, content_type, body = answer
        with contextlib.suppress(OSError):
            self.send_response(status, HTTPStatus(status).phrase)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        return True

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send(self, reply: Reply, body: bytes | None = None) -> None:
        if body is None:
            body = _body(reply) or b""
        try:
            self.send_response(reply.status, HTTPStatus(reply.status).phrase)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            self.close_connection = True


def _body(reply: Reply) -> bytes | None:
    """A reply's JSON body (None for a reply that sends nothing: a hang)."""
    return None if reply.payload is None else json.dumps(reply.payload).encode("utf-8")


if __name__ == "__main__":
    from judge.testing.cli import main

    raise SystemExit(main())
