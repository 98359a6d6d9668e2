"""The labels store: an append-only JSONL file per labeller, one fsync'd line per answer.

Every answer is a line written and fsync'd before the page is told it is saved, so a closed tab,
a killed server or a power cut loses at most the answer being typed. A later line for the same
(case, question) supersedes an earlier one; nothing is ever rewritten. A line torn by a crash
mid-write (no newline at the end of the file) is dropped when the store is next opened for
writing. One writer: the file is held under an exclusive `flock` while a server has it open.
"""

from __future__ import annotations

import fcntl
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from ground_truth.errors import InputError

from ..errors import StorageError, os_reason

HumanAnswer = Literal["Yes", "No", "Unsure"]


def now() -> str:
    """The current UTC time in ISO 8601, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class AnswerRecord(BaseModel):
    """One human answer as a store line; a later record for the same key replaces it."""

    kind: Literal["answer"] = "answer"
    labeller: str
    incident_id: str
    trial: str
    question_id: str
    dimension_id: str = ""
    question_text: str = ""
    answer: HumanAnswer | None = Field(description="None: the person cleared the answer.")
    rationale: str = ""
    judge_seen: bool = Field(description="Whether the judge's answers were on screen.")
    at: str = Field(default_factory=now)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.incident_id, self.trial, self.question_id)


class SessionRecord(BaseModel):
    """What one `judge labels serve` showed: mode, order, sample and filters, and its cases."""

    kind: Literal["session"] = "session"
    labeller: str
    result: str
    rubric: dict[str, Any] = Field(default_factory=dict)
    judge: str | None = None
    mode: Literal["blind", "show-judge"]
    order: str
    seed: int
    sample: dict[str, Any] | None = None
    filters: dict[str, Any] = Field(default_factory=dict)
    cases: list[str] = Field(description="`incident_id/trial` in the order shown.")
    design: dict[str, Any] | None = Field(
        None, description="`--order informative`: the draw (`judge.labelling.active`)."
    )
    at: str = Field(default_factory=now)


class StoreContents(BaseModel):
    """A label store read back: sessions, and the latest answer per (incident, trial, question)."""

    sessions: list[SessionRecord] = Field(default_factory=list)
    answers: dict[tuple[str, str, str], AnswerRecord] = Field(default_factory=dict)

    @property
    def labeller(self) -> str | None:
        first = self.sessions[0] if self.sessions else next(iter(self.answers.values()), None)
        return first.labeller if first else None


def read_store(path: Path) -> StoreContents:
    """Every record of a store; the latest answer per (case, question). Bad lines name the line."""
    contents = StoreContents()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return contents
    except OSError as exc:
        raise StorageError(path, os_reason(exc)) from exc
    lines = data.split(b"\n")
    if lines and lines[-1]:
        lines[-1] = b""  # torn by a crash mid-write: the answer being typed, never confirmed
    for number, line in enumerate(lines, start=1):
        if line.strip():
            _add(contents, _parse(path, number, line))
    return contents


def _parse(path: Path, number: int, line: bytes) -> AnswerRecord | SessionRecord:
    try:
        data = json.loads(line)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        model = SessionRecord if data.get("kind") == "session" else AnswerRecord
        return model.model_validate(data)
    except (ValueError, ValidationError) as exc:
        reason = str(exc).splitlines()[0] if not isinstance(exc, ValidationError) else _first(exc)
        raise InputError(
            path,
            f"not a labels-store record ({reason}); expected one JSON object per line",
            field=f"line {number}",
        ) from None


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}"


def _add(contents: StoreContents, record: AnswerRecord | SessionRecord) -> None:
    if isinstance(record, SessionRecord):
        contents.sessions.append(record)
    else:
        contents.answers[record.key] = record


class LabelStore:
    """The one writer of a labeller's store. Use as a context manager."""

    def __init__(self, path: Path, labeller: str):
        self.path = path
        self.labeller = labeller
        self.contents = StoreContents()
        self._fd: int | None = None

    def __enter__(self) -> LabelStore:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        except OSError as exc:
            raise StorageError(self.path, os_reason(exc)) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StorageError(
                self.path, "another `judge labels serve` is writing this store; stop it first"
            ) from None
        self._fd = fd
        _fsync_dir(self.path.parent)  # a store created just now survives a power cut too
        self._drop_torn_tail()
        self.contents = read_store(self.path)
        owner = self.contents.labeller
        if owner is not None and owner != self.labeller:
            self.close()
            raise InputError(
                self.path,
                f"this store holds labels by {owner!r}, not by {self.labeller!r}; "
                "give each labeller their own --labels file",
                field="labeller",
            )

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _drop_torn_tail(self) -> None:
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if not size:
            return
        with open(self.path, "rb") as handle:
            data = handle.read()
        if data.endswith(b"\n"):
            return
        keep = data.rfind(b"\n") + 1
        os.ftruncate(self._fd, keep)
        os.fsync(self._fd)

    def append(self, record: AnswerRecord | SessionRecord) -> None:
        """Write one line and fsync it; only then is the record part of `contents`."""
        if self._fd is None:
            raise RuntimeError("the store is not open")
        line = record.model_dump_json().encode("utf-8") + b"\n"
        try:
            os.write(self._fd, line)
            os.fsync(self._fd)
        except OSError as exc:
            raise StorageError(self.path, f"{os_reason(exc)}; earlier answers are kept") from exc
        _add(self.contents, record)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
