"""Errors the CLI turns into documented exit codes (see `judge.cli`)."""

from __future__ import annotations

import errno
from pathlib import Path


class StorageError(Exception):
    """A file this run writes (the store, the result, an export) could not be written or read
    back: disk full, read-only, corrupted, deleted under us. Answers already committed are kept;
    the message names the file and the reason."""

    def __init__(self, path: str | Path, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


_OS_REASONS = {
    errno.ENOSPC: "disk full (no space left on device)",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "read-only: permission denied",
    errno.EPERM: "read-only: operation not permitted",
    errno.EIO: "I/O error",
}


def os_reason(exc: OSError) -> str:
    """What went wrong writing a file, in words a user acts on (the errno's own text otherwise)."""
    known = _OS_REASONS.get(exc.errno or 0)
    if known is not None:
        return known
    return exc.strerror or str(exc)
