"""Every provider request of every call, kept to read back later (`judge store logs`), as
simonw/llm's logs keep them: the prompt as sent, the reply text exactly as it arrived (before
any repair), and the request's latency, tokens and cost; a failed request's error kind and
words instead of a reply.

One `replies` row per request (a call's retries and re-asks are requests 2, 3, ...), under
the call's store key, judge, prompt hash and case. The prompt is not repeated in each row: each
message is kept as the hashes of its pieces (the system text; the case every prompt of a
submission starts with; the questions; a re-ask's own words), and each piece once, in
`reply_texts`. The system text and the questions are then kept once for the whole store, and a
submission's case once for its calls. A piece is zlib-compressed and kept in parts of at most
`PIECE_PART` bytes (rows of 2 KB, a long diagnosis's case, left half of each 4 KB page empty);
the reply is compressed when that makes it smaller (a BLOB; else plain TEXT). So `judge store
logs` is the way to read them rather than the sqlite3 shell. With `log_text` off
(`--no-log-text`) the rows keep the latency, tokens, cost and error and no prompt or reply
text.

The API key is in none of it: prompts are what the templates render, errors are masked by the
judge (`judge.judges.mask`), and a reply that echoes the key (no model should know it) has it
masked the same way by the judge before it gets here.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..judges.clients.exchanges import Exchange
from .failures import guarded
from .file import StoreFile, now
from .keys import CaseRef, KeyParts
from .migrations import has_table, same_hash

REPLY_COLUMNS = (
    "key", "judge", "prompt_hash", "incident_id", "trial", "dimension_id", "questions",
    "request", "prompt", "reply", "finish_reason", "error_kind", "error", "latency_s",
    "prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd", "created_at",
)  # fmt: skip
"""Named wherever rows are written or copied (not `id`: a merge numbers them anew)."""
_INSERT_REPLY = (
    f"INSERT INTO replies ({', '.join(REPLY_COLUMNS)})"
    f" VALUES ({','.join('?' * len(REPLY_COLUMNS))})"
)
_ENCODING = ("utf-8", "surrogatepass")
"""A reply is a Python string as the client decoded it, lone surrogates (a `\\ud800` escape
in the JSON) included; SQLite's TEXT cannot hold those, so they go through as bytes."""
_SAVING = 0.9
"""A text is kept compressed only when that takes at most this share of its bytes."""
PIECE_HASH_LENGTH = 16
PIECE_PART = 900
"""Bytes of a compressed piece per `reply_texts` row (four fill a page; a store before
`m007_appended_writes` kept the table without rowid, whose rows stay in their page up to
about 1,000 bytes)."""


@dataclass
class CallLog:
    """What `Store.put` logs for one call: its requests, the question ids it asked, and where
    the shared start of its prompt ends (`shared_start`: a message text and the length of the
    start every prompt of the submission shares; see `judge.checklist.prompts.Prompt`)."""

    exchanges: list[Exchange]
    question_ids: list[str]
    shared_start: tuple[str, int] | None = None
    text: bool = True
    """Keep the prompt and reply texts (`--no-log-text`: False)."""


class LoggedReply(BaseModel):
    """One logged request, read back: which call, what was sent, what came back."""

    id: int
    key: str = Field(description="The call's store key (judgments.key or errors.key).")
    judge: str
    prompt_hash: str = Field(description="The call's prompt hash (the result's calls[]).")
    incident_id: str
    trial: str
    dimension_id: str
    questions: list[str]
    request: int = Field(description="1 for a call's first request; retries and re-asks count on.")
    messages: list[dict[str, str]] | None = Field(
        None, description="The prompt as sent (role and text); None when not logged."
    )
    reply: str | None = Field(None, description="The reply text exactly as it arrived.")
    finish_reason: str | None = None
    error_kind: str | None = None
    error: str | None = None
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    created_at: str


@dataclass
class LogFilter:
    """Which logged requests `Store.logs` gives: of one incident, of calls that asked one
    question, failed ones only (no reply, or a reply that could not be used)."""

    incident_id: str | None = None
    question_id: str | None = None
    failed: bool = False


def pack(text: str) -> str | bytes:
    """`text` as stored: zlib-compressed UTF-8 (BLOB) when that is smaller or the text holds
    what TEXT cannot, else the text itself."""
    raw = text.encode(*_ENCODING)
    packed = zlib.compress(raw, 6)
    if len(packed) <= _SAVING * len(raw):
        return packed
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return packed
    return text


def unpack(value: str | bytes) -> str:
    """A stored text as it was given to `pack`."""
    if isinstance(value, bytes):
        return zlib.decompress(value).decode(*_ENCODING)
    return value


def piece_hash(text: str) -> str:
    return hashlib.sha256(text.encode(*_ENCODING)).hexdigest()[:PIECE_HASH_LENGTH]


def pieces(
    messages: Sequence[dict[str, Any]], shared_start: tuple[str, int] | None
) -> list[tuple[str, list[str]]]:
    """Each message as (role, its pieces of text): a message in content blocks (a prompt
    marked for a provider's cache) block by block; the message that starts with the shared
    start cut where it ends; any other whole."""
    out = []
    for message in messages:
        role = str(message.get("role") or "")
        content = message.get("content")
        if isinstance(content, list):
            texts = [str(block.get("text") or "") for block in content if isinstance(block, dict)]
        else:
            text = "" if content is None else str(content)
            texts = [text]
            if shared_start is not None and 0 < shared_start[1] < len(text):
                start, cut = shared_start
                if text == start:
                    texts = [text[:cut], text[cut:]]
        out.append((role, texts))
    return out


class Replies(StoreFile):
    """Writing and reading the reply log."""

    def __init__(self, path: str | Path, readonly: bool = False):
        super().__init__(path, readonly)
        self._known_texts: set[str] = set()
        """Pieces this connection has committed or found: not written again."""

    def _insert_log(
        self, parts: KeyParts, case: CaseRef, log: CallLog, written: set[str] | None = None
    ) -> set[str]:
        """Write a call's requests inside the caller's transaction; the pieces written in it
        (added to `written`), which the caller adds to `_known_texts` once it is committed."""
        written = set() if written is None else written
        if not log.exchanges or not has_table(self._db, "replies"):
            return written
        questions = " ".join(log.question_ids)
        rows = []
        for number, exchange in enumerate(log.exchanges, 1):
            prompt = reply = None
            if log.text:
                prompt = self._prompt_json(exchange.messages, log.shared_start, written)
                reply = None if exchange.reply is None else pack(exchange.reply)
            rows.append(
                (
                    parts.key,
                    parts.judge,
                    parts.prompt,
                    case.incident_id,
                    case.trial,
                    case.dimension_id,
                    questions,
                    number,
                    prompt,
                    reply,
                    exchange.finish_reason,
                    exchange.error_kind,
                    exchange.error,
                    exchange.latency_s,
                    exchange.prompt_tokens,
                    exchange.completion_tokens,
                    exchange.cached_tokens,
                    exchange.cost_usd,
                    now(),
                )
            )
        self._db.executemany(_INSERT_REPLY, rows)
        return written

    def _prompt_json(
        self,
        messages: Sequence[dict[str, Any]],
        shared_start: tuple[str, int] | None,
        written: set[str],
    ) -> str:
        """The prompt as [[role, [piece hash, ...]], ...], each piece written once."""
        out = []
        for role, texts in pieces(messages, shared_start):
            out.append([role, [self._keep_text(text, written) for text in texts]])
        return json.dumps(out, separators=(",", ":"))

    def _keep_text(self, text: str, written: set[str]) -> str:
        digest = piece_hash(text)
        if digest not in self._known_texts and digest not in written:
            packed = zlib.compress(text.encode(*_ENCODING), 6)
            parts = range(0, max(1, len(packed)), PIECE_PART)
            self._db.executemany(
                "INSERT INTO reply_texts (hash, part, text) SELECT ?1, ?2, ?3 WHERE NOT EXISTS"
                f" (SELECT 1 FROM reply_texts WHERE {same_hash('hash')} AND part = ?2)",
                ((digest, n, packed[at : at + PIECE_PART]) for n, at in enumerate(parts)),
            )
            written.add(digest)
        return digest

    @guarded
    def log_replies(self, parts: KeyParts, case: CaseRef, log: CallLog) -> None:
        """Log the requests of a call that ended without an answer or error row to go with
        them (the run stopped it)."""
        if not log.exchanges:
            return
        self._check_file()
        with self._transaction():
            written = self._insert_log(parts, case, log)
        self._known_texts |= written

    @guarded
    def logs(self, where: LogFilter | None = None) -> Iterator[LoggedReply]:
        """The logged requests, oldest first, as `where` selects them."""
        if not has_table(self._db, "replies"):
            return
        where = where or LogFilter()
        sql = "SELECT id, " + ", ".join(REPLY_COLUMNS) + " FROM replies"
        clauses: list[str] = []
        args: list[Any] = []
        if where.incident_id is not None:
            clauses.append("incident_id = ?")
            args.append(where.incident_id)
        if where.failed:
            clauses.append("error_kind IS NOT NULL")
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        texts = _TextCache(self._db)
        asked = 1 + REPLY_COLUMNS.index("questions")
        for row in self._db.execute(sql + " ORDER BY id", args):
            if where.question_id is None or where.question_id in str(row[asked]).split():
                yield _logged(row, texts)

    @guarded
    def replies_for(self, judge: str, prompt_hash: str, limit: int = 20) -> list[LoggedReply]:
        """The requests behind a result's call (its judge and prompt hash): those under the
        key most recently asked, the last `limit` of them, oldest first."""
        if not prompt_hash or not has_table(self._db, "replies"):
            return []
        row = self._db.execute(
            f"SELECT key FROM replies WHERE {same_hash('prompt_hash')} AND judge = ?2"
            " ORDER BY id DESC LIMIT 1",
            (prompt_hash, judge),
        ).fetchone()
        if row is None:
            return []
        columns = "id, " + ", ".join(REPLY_COLUMNS)
        rows = self._db.execute(
            f"SELECT {columns} FROM replies WHERE {same_hash('prompt_hash')} AND key = ?2"
            " ORDER BY id DESC LIMIT ?3",
            (prompt_hash, row[0], limit),
        ).fetchall()
        texts = _TextCache(self._db)
        return [_logged(r, texts) for r in reversed(rows)]

    @guarded
    def reply_stats(self) -> dict[str, Any]:
        """Requests logged, those with their texts, and the distinct prompt pieces kept."""
        if not has_table(self._db, "replies"):
            return {"requests": 0, "with_text": 0, "texts": 0}
        one = self._db.execute
        requests, with_text = one(
            "SELECT count(*), coalesce(sum(prompt IS NOT NULL), 0) FROM replies"
        ).fetchone()
        (texts,) = one("SELECT count(*) FROM reply_texts WHERE part = 0").fetchone()
        return {"requests": requests, "with_text": with_text, "texts": texts}


@dataclass
class _TextCache:
    """Prompt pieces read back, the last few hundred kept (the system text and the questions
    come again in every row)."""

    db: sqlite3.Connection
    found: dict[str, str] = field(default_factory=dict)
    LIMIT = 512

    def text(self, digest: str) -> str:
        hit = self.found.get(digest)
        if hit is not None:
            return hit
        text = read_piece(self.db, digest)
        if text is None:
            text = f"[piece {digest} is not in the store]"
        if len(self.found) >= self.LIMIT:
            self.found.clear()
        self.found[digest] = text
        return text


def read_piece(db: sqlite3.Connection, digest: str) -> str | None:
    """A prompt piece as it was sent, from its parts (None when the store lacks it)."""
    parts = db.execute(
        f"SELECT text FROM reply_texts WHERE {same_hash('hash')} ORDER BY part", (digest,)
    ).fetchall()
    if not parts:
        return None
    return zlib.decompress(b"".join(part for (part,) in parts)).decode(*_ENCODING)


def _logged(row: Sequence[Any], texts: _TextCache) -> LoggedReply:
    record = dict(zip(("id", *REPLY_COLUMNS), row, strict=True))
    prompt = record.pop("prompt")
    messages = None
    if prompt is not None:
        messages = [
            {"role": role, "content": "".join(texts.text(d) for d in digests)}
            for role, digests in json.loads(prompt)
        ]
    reply = record.pop("reply")
    questions = str(record.pop("questions")).split()
    return LoggedReply(
        **record,
        questions=questions,
        messages=messages,
        reply=None if reply is None else unpack(reply),
    )
