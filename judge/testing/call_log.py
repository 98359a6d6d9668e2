"""The fake provider's thread-safe record of every chat-completion request it served."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

OK = "ok"
RATE_LIMITED = "rate_limited"
UNAUTHORIZED = "unauthorized"
INVALID_REQUEST = "invalid_request"
POLICY_ERROR = "policy_error"
FORMAT_REFUSED = "format_refused"


class CallRecord(BaseModel):
    """One request. `outcome` is `ok`, a `FaultKind` value (then `injected` is true), or one of
    `rate_limited` (the server's own limiter), `unauthorized` (wrong key when one is required),
    `invalid_request` (a body the server cannot serve), `format_refused` (a `response_format` the
    server is configured not to accept), `policy_error` (the configured answer
    policy raised; answered 500). The API key itself is never recorded.

    `messages_hash` is sha256 of `json.dumps(messages, sort_keys=True)`, the same recipe as the
    judge's `prompt_hash`, so a record can be matched to the judgment that asked for it."""

    index: int
    timestamp: float
    path: str
    model: str | None
    messages_hash: str | None
    question_ids: list[str]
    outcome: str
    injected: bool
    status: int | None
    auth_present: bool
    response_format: str | None = None
    latency: float
    answers: dict[str, str] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    """Prompt tokens reported as served from the prompt cache (`judge.testing.prefix_cache`)."""
    max_tokens: int | None = None
    """The reply's cap the request sent (`max_tokens`, or `max_completion_tokens`)."""


class CallLog:
    """Records in memory and, when given a path, appends each one to a JSONL file as it happens."""

    def __init__(self, path: Path | None = None) -> None:
        self._lock = threading.Lock()
        self._records: list[CallRecord] = []
        self._path = path

    def append(self, record: CallRecord) -> None:
        line = record.model_dump_json() + "\n"
        with self._lock:
            self._records.append(record)
            if self._path is not None:
                with self._path.open("a", encoding="utf-8") as handle:
                    handle.write(line)

    def records(self) -> list[CallRecord]:
        with self._lock:
            return sorted(self._records, key=lambda r: r.index)

    def outcome_counts(self) -> Counter[str]:
        with self._lock:
            return Counter(r.outcome for r in self._records)

    def injected_counts(self) -> Counter[str]:
        with self._lock:
            return Counter(r.outcome for r in self._records if r.injected)


def read_call_log(path: str | Path) -> list[CallRecord]:
    """The records a server (possibly in another process) appended to `path`, by call index."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    records = [CallRecord.model_validate_json(line) for line in lines if line.strip()]
    return sorted(records, key=lambda r: r.index)
