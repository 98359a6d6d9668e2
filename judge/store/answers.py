"""Answers and failed calls: one row per (case, dimension) answer under its key, failed calls
in their own table (kept for the record, never served), and the params each key names; each
written with the requests behind it (`replies`), in one transaction."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..checklist.judgment import DimensionVerdict, JudgeIdentity, QuestionAnswer, Usage
from ..errors import StorageError
from ..judges.mask import scrub_params
from . import grouped
from .failures import guarded, sqlite_reason
from .file import now
from .grouped import Pending, Put
from .keys import BY_KEY, CaseRef, KeyParts, keys_in
from .leases import drop_leases
from .migrations import IDENTITY_COLUMNS, has_columns, same_hash
from .prompt_keys import PromptKeys, insert_prompt_keys
from .replies import CallLog, Replies

JUDGMENT_COLUMNS = (
    "key", "judge", "model", "params_hash", "prompt_hash", "schema_hash", "rubric_hash",
    "incident_id", "trial", "dimension_id", "answers", "attempts", "requests", "usage",
    "created_at",
)  # fmt: skip
"""Named wherever rows are written or copied, so a column a migration adds breaks neither;
the judge's identity (`IDENTITY_COLUMNS`, from version 3) is named apart: an older store
opened read-only has none."""
_WRITTEN = (*JUDGMENT_COLUMNS, *IDENTITY_COLUMNS)
_INSERT_ANSWER = (
    f"INSERT INTO judgments ({', '.join(_WRITTEN)}) VALUES ({','.join('?' * len(_WRITTEN))})"
)
ERROR_COLUMNS = (
    "key", "judge", "model", "prompt_hash", "incident_id", "trial", "dimension_id",
    "error_kind", "error", "attempts", "requests", "attempt_errors", "usage", "created_at",
)  # fmt: skip


class Answers(Replies, PromptKeys):
    """Reading and writing answers, failed calls and params."""

    def __init__(self, path: str | Path, readonly: bool = False):
        super().__init__(path, readonly)
        self._known_params: set[str] = set()
        identity = has_columns(self._db, "judgments", IDENTITY_COLUMNS)
        self._answer_columns = "answers, attempts, requests, usage, " + (
            ", ".join(IDENTITY_COLUMNS) if identity else "NULL, NULL, NULL"
        )
        """What `_verdict` reads of a row: an older store opened read-only has no identity."""
        self._pending: Pending | None = None

    def group_commits(
        self,
        seconds: float | None = None,
        answers: int | None = None,
        on_failure: Callable[[StorageError], None] | None = None,
    ) -> None:
        """From now on write answers a batch at a time (`judge.store.grouped`): committed once
        the oldest has waited `seconds` (on the running event loop; default `GROUP_SECONDS`)
        or `answers` are waiting (default `GROUP_ANSWERS`).
        Without an event loop each answer is committed at once, as before. `on_failure` is
        told of a batch whose commit failed while no `put` was there to raise it."""
        if self._pending is None:
            self._pending = Pending(
                self.flush,
                grouped.GROUP_SECONDS if seconds is None else seconds,
                grouped.GROUP_ANSWERS if answers is None else answers,
                on_failure=on_failure,
            )

    def end_group(self) -> None:
        """Commit the waiting batch and write each answer at once again; raise the error of a
        batch whose commit failed on its timer."""
        try:
            self.flush()
        finally:
            pending, self._pending = self._pending, None
        if pending is not None and pending.failed is not None:
            raise pending.failed

    @guarded
    def flush(self) -> None:
        """Commit the answers waiting for their batch, with the leases they release. A batch
        whose commit fails is lost (the error is raised; the run stops on it)."""
        if self._pending is None or not (self._pending.puts or self._pending.releases):
            return
        self._commit(*self._pending.take())

    def _commit(self, puts: list[Put], releases: list[tuple[str, str]]) -> None:
        self._check_file()
        written: set[str] = set()
        with self._transaction():
            for put in puts:
                self._insert(put, written)
            if releases:
                drop_leases(self._db, releases)
        self._known_texts |= written

    def _release_later(self, key: str, owner: str) -> bool:
        return self._pending is not None and self._pending.release_later(key, owner)

    def close(self) -> None:
        """Commit a waiting batch, then close (a failed commit is raised, the file closed)."""
        try:
            if self._pending is not None:
                self.end_group()
        finally:
            super().close()

    @guarded
    def get(self, parts: KeyParts) -> DimensionVerdict | None:
        """The stored answer for exactly these parts, or None."""
        waiting = self._pending.answer(parts.key) if self._pending is not None else None
        if waiting is not None:
            return _verdict(*waiting[10:14], *waiting[15:18])
        row = self._db.execute(
            f"SELECT {self._answer_columns} FROM judgments WHERE {BY_KEY}", (parts.key,)
        ).fetchone()
        return None if row is None else _verdict(*row)

    @guarded
    def keys_present(self, keys: Iterable[str]) -> set[str]:
        wanted = list(keys)
        found = keys_in(self._db, wanted)
        if self._pending is not None:
            found |= {k for k in wanted if self._pending.answer(k) is not None}
        return found

    @guarded
    def miss_reason(self, parts: KeyParts, case: CaseRef) -> str | None:
        """Why the store's answers for this case and dimension do not fit `parts`: the parts in
        which the closest stored answer differs (None when there is none)."""
        if self._pending is not None and self._pending.holds_case(case):
            self.flush()
        rows = self._db.execute(
            "SELECT judge, model, params_hash, prompt_hash, schema_hash, rubric_hash"
            " FROM judgments WHERE incident_id = ? AND trial = ? AND dimension_id = ?"
            " ORDER BY created_at DESC LIMIT 50",
            (case.incident_id, case.trial, case.dimension_id),
        ).fetchall()
        if not rows:
            return None
        changed = min((parts.differences(KeyParts(*row)), row) for row in rows)
        components, row = changed
        if components == ["params"] and (diff := self._params_diff(row[2], parts.params)):
            return f"params changed: {diff}"
        return (", ".join(components) + " changed") if components else None

    def _params_diff(self, old_hash: str, new_hash: str) -> str:
        old, new = self.params(old_hash) or {}, self.params(new_hash) or {}
        keys = sorted(set(old) | set(new))
        diffs = [f"{k} {old.get(k)!r} -> {new.get(k)!r}" for k in keys if old.get(k) != new.get(k)]
        return ", ".join(diffs)

    @guarded
    def params(self, params_hash: str) -> dict[str, Any] | None:
        row = self._db.execute(
            "SELECT params FROM params WHERE params_hash = ?", (params_hash,)
        ).fetchone()
        return json.loads(row[0]) if row else None

    @guarded
    def find(
        self, prompt_hash: str, rubric_hash: str, judge: str | None = None
    ) -> list[tuple[str, DimensionVerdict]]:
        """Stored answers to this prompt under this rubric dimension: (judge name, verdict)."""
        sql = (
            f"SELECT judge, {self._answer_columns} FROM judgments"
            f" WHERE {same_hash('prompt_hash')} AND rubric_hash = ?2"
        )
        args: list[Any] = [prompt_hash, rubric_hash]
        if judge is not None:
            sql += " AND judge = ?3"
            args.append(judge)
        return [(r[0], _verdict(*r[1:])) for r in self._db.execute(sql + " ORDER BY judge", args)]

    @guarded
    def judges(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT DISTINCT judge FROM judgments ORDER BY 1")]

    @guarded
    def answer_stats(self) -> dict[str, Any]:
        """Answers by judge and model, failed calls by kind, tokens and cost."""
        one = self._db.execute
        by_judge = one("SELECT judge, model, count(*) FROM judgments GROUP BY 1, 2 ORDER BY 1")
        errors = one("SELECT error_kind, count(*) FROM errors GROUP BY 1 ORDER BY 1")
        usage = one(
            "SELECT sum(json_extract(usage, '$.prompt_tokens')),"
            " sum(json_extract(usage, '$.completion_tokens')),"
            " sum(json_extract(usage, '$.cost_usd')),"
            " sum(usage IS NOT NULL AND json_extract(usage, '$.cost_usd') IS NULL)"
            " FROM judgments"
        ).fetchone()
        return {
            "path": str(self.path),
            "judgments": one("SELECT count(*) FROM judgments").fetchone()[0],
            "cases": one(
                "SELECT count(DISTINCT incident_id || '/' || trial) FROM judgments"
            ).fetchone()[0],
            "by_judge": [{"judge": j, "model": m, "judgments": n} for j, m, n in by_judge],
            "errors": {k or "error": n for k, n in errors},
            "prompt_tokens": usage[0] or 0,
            "completion_tokens": usage[1] or 0,
            "cost_usd": usage[2] if not usage[3] else None,
        }

    def rows(self, table: str = "judgments") -> Iterator[dict[str, Any]]:
        if table not in {"judgments", "errors"}:
            raise ValueError(f"unknown table {table!r}")
        try:
            cursor = self._db.execute(f"SELECT * FROM {table} ORDER BY rowid")
            names = [d[0] for d in cursor.description]
            json_columns = {"answers", "usage", "attempt_errors"}
            for row in cursor:
                record = dict(zip(names, row, strict=True))
                for column in json_columns & set(record):
                    if record[column] is not None:
                        record[column] = json.loads(record[column])
                yield record
        except sqlite3.DatabaseError as exc:
            raise StorageError(self.path, sqlite_reason(exc, self.path)) from exc

    @guarded
    def remember_params(self, params_hash: str, params: dict[str, Any]) -> None:
        if params_hash in self._known_params:
            return
        text = json.dumps(scrub_params(params), sort_keys=True, default=str)
        self._check_file()
        with self._transaction():
            self._db.execute(
                "INSERT OR IGNORE INTO params (params_hash, params) VALUES (?, ?)",
                (params_hash, text),
            )
        self._known_params.add(params_hash)

    @guarded
    def put(
        self,
        parts: KeyParts,
        case: CaseRef,
        verdict: DimensionVerdict,
        log: CallLog | None = None,
        prompt_inputs: str | None = None,
    ) -> None:
        """Record a finished call: an answer (replacing an older one) or an error row, the
        requests it made (`log`, see `judge.store.replies`) and the inputs its prompt was
        rendered from (`prompt_inputs`, see `judge.store.prompt_keys`). Committed at once, or
        with its batch after `group_commits`."""
        row = answer_row(parts, case, verdict) if verdict.error is None else None
        put = Put(parts, case, verdict, log, prompt_inputs, row)
        if self._pending is not None:
            if self._pending.add(put):
                self.flush()
            return
        self._commit([put], [])

    def _insert(self, put: Put, written: set[str]) -> None:
        """One put's rows, inside the caller's transaction."""
        if put.row is not None:
            _replace(self._db, put.row)
        else:
            _insert_error(self._db, put.parts, put.case, put.verdict)
        if put.prompt_inputs is not None:
            insert_prompt_keys(self._db, [(put.prompt_inputs, put.parts.prompt)])
        if put.log is not None:
            self._insert_log(put.parts, put.case, put.log, written)


def insert(
    db: sqlite3.Connection, parts: KeyParts, case: CaseRef, verdict: DimensionVerdict
) -> None:
    """Write a finished call's answer (replacing an older one) or error row, inside the
    caller's transaction."""
    if verdict.error is None:
        _replace(db, answer_row(parts, case, verdict))
    else:
        _insert_error(db, parts, case, verdict)


def _replace(db: sqlite3.Connection, row: tuple[Any, ...]) -> None:
    """Write an answer's row in place of the key's older one: the key has no unique index
    to do it (`m009_short_indexes`)."""
    db.execute(f"DELETE FROM judgments WHERE {BY_KEY}", (row[0],))
    db.execute(_INSERT_ANSWER, row)


def answer_row(parts: KeyParts, case: CaseRef, verdict: DimensionVerdict) -> tuple[Any, ...]:
    """An answer's `judgments` row, its columns in `_WRITTEN`'s order (the judge's identity
    last)."""
    answers = json.dumps(
        [a.model_dump(exclude_none=True) for a in verdict.answers], separators=(",", ":")
    )
    return (
        parts.key,
        parts.judge,
        parts.model,
        parts.params,
        parts.prompt,
        parts.schema,
        parts.rubric,
        case.incident_id,
        case.trial,
        case.dimension_id,
        answers,
        verdict.attempts,
        verdict.requests,
        _dump(verdict.usage),
        now(),
        *_identity_row(verdict.identity),
    )


def _identity_row(identity: JudgeIdentity | None) -> tuple[str | None, str | None, int | None]:
    if identity is None:
        return None, None, None
    return identity.model_version, identity.system_fingerprint, identity.seed


def _insert_error(
    db: sqlite3.Connection, parts: KeyParts, case: CaseRef, verdict: DimensionVerdict
) -> None:
    db.execute(
        "INSERT INTO errors (key, judge, model, prompt_hash, incident_id, trial,"
        " dimension_id, error_kind, error, attempts, requests, attempt_errors, usage,"
        " created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            parts.key,
            parts.judge,
            parts.model,
            parts.prompt,
            case.incident_id,
            case.trial,
            case.dimension_id,
            verdict.error_kind,
            verdict.error,
            verdict.attempts,
            verdict.requests,
            json.dumps(verdict.attempt_errors, sort_keys=True),
            _dump(verdict.usage),
            now(),
        ),
    )


def _dump(model: Any) -> str | None:
    return None if model is None else model.model_dump_json(exclude_none=True)


def _verdict(
    answers: str,
    attempts: int,
    requests: int,
    usage: str | None,
    model_version: str | None = None,
    fingerprint: str | None = None,
    seed: int | None = None,
) -> DimensionVerdict:
    return DimensionVerdict(
        answers=[QuestionAnswer.model_validate(a) for a in json.loads(answers)],
        attempts=attempts,
        requests=requests,
        usage=Usage.model_validate_json(usage) if usage else None,
        cached=True,
        identity=JudgeIdentity.of(model_version, fingerprint, seed),
    )
