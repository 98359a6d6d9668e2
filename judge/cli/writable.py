"""Every file a command will write is checked before the first judge call, so an unwritable
one costs a usage error (exit 2) instead of a run already paid for."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ground_truth.errors import InputError


def unwritable_reason(path: Path) -> str | None:
    """Why `path` cannot be written (created or replaced atomically beside itself), or None."""
    if path.is_dir():
        return "is a directory, not a file"
    if path.exists():
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            return "exists and is not a regular file"
        if not mode & 0o222 or not os.access(path, os.W_OK):
            return "is a read-only file"
    folder = _nearest_existing(path.parent)
    if not folder.is_dir():
        return f"{folder} is not a directory"
    return _probe(folder)


def _nearest_existing(folder: Path) -> Path:
    """The folder itself, or the closest ancestor that exists (the writers create the rest)."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def _probe(folder: Path) -> str | None:
    """Create and remove a file: the only test that also sees read-only mounts and quotas."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".judge-probe-", dir=folder)
    except OSError as exc:
        return f"cannot create a file in {folder}: {exc.strerror or exc}"
    os.close(fd)
    Path(probe).unlink(missing_ok=True)
    return None


def check_writable(targets: Iterable[tuple[str, Path | None]]) -> None:
    """Raise `InputError` naming the flag, the path and why, for the first target that cannot
    be written, or for two flags pointing at one file."""
    seen: dict[Path, str] = {}
    for flag, path in targets:
        if path is None:
            continue
        resolved = path.resolve()
        if resolved in seen:
            raise InputError(path, f"also given as {seen[resolved]}", field=flag)
        seen[resolved] = flag
        reason = unwritable_reason(path)
        if reason is not None:
            raise InputError(path, f"cannot be written: {reason}", field=flag)
