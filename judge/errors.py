"""Errors the CLI turns into documented exit codes (see `judge.cli`)."""

from __future__ import annotations

from pathlib import Path


class StorageError(Exception):
    """A file this run writes (the store, the result, an export) could not be written or read
    back: disk full, read-only, corrupted, deleted under us. Answers already committed are kept;
    the message names the file and the reason."""

    def __init__(self, path: str | Path, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")
