"""Every file a command will write is checked before the first judge call, so an unwritable
one stops the command instead of a run already paid for, and one that is an input of the
command (named by a flag, or read while loading, through links or not) is refused before it
can be written over. An output inside an input folder is a warning: the next run may read it
as input.

A path that cannot be a file (a folder, a path under a file, an input, two flags on one file)
is bad usage, exit 2; one whose file or folder cannot be written (read-only, a mount, a full
disk) is the storage failing, exit 4, as it is when found during the run."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ground_truth.errors import InputError, located

from ..errors import StorageError


def unwritable_reason(path: Path) -> tuple[str, bool] | None:
    """Why `path` cannot be written (created or replaced atomically beside itself), and
    whether the storage refuses it (read-only, full) rather than the path being no file; None
    when it can be."""
    if path.is_dir():
        return "is a directory, not a file", False
    if path.exists():
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            return "exists and is not a regular file", False
        if not mode & 0o222 or not os.access(path, os.W_OK):
            return "is a read-only file", True
    folder = _nearest_existing(path.parent)
    if not folder.is_dir():
        return f"{folder} is not a directory", False
    probed = _probe(folder)
    return None if probed is None else (probed, True)


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


class Inputs:
    """What a command reads: the files and folders its flags name, and every file it read
    (as `ground_truth.reading.recording_reads` collects them), each known by its identity
    (device, inode), so a symbolic or hard link to one is that file too."""

    def __init__(
        self,
        given: Iterable[tuple[str, Path | None]],
        read: Iterable[tuple[int, int]] = (),
    ):
        self.files: dict[tuple[int, int], str] = dict.fromkeys(
            read, "a file this command read as input"
        )
        self.folders: list[tuple[str, Path]] = []
        for flag, path in given:
            info = _stat(path)
            if path is None or info is None:
                continue
            if stat.S_ISDIR(info.st_mode):
                self.folders.append((flag, path.resolve()))
            else:
                self.files[(info.st_dev, info.st_ino)] = f"the input given as {flag}"

    def overwritten(self, path: Path) -> str | None:
        """Which input writing `path` would replace, or None."""
        info = _stat(path)
        return None if info is None else self.files.get((info.st_dev, info.st_ino))

    def folder_holding(self, path: Path) -> tuple[str, Path] | None:
        """The input folder (flag, folder) `path` would be written inside, if any."""
        resolved = path.resolve()
        return next(((f, d) for f, d in self.folders if resolved.is_relative_to(d)), None)


def _stat(path: Path | None) -> os.stat_result | None:
    try:
        return os.stat(path) if path is not None else None
    except (OSError, ValueError):
        return None


def check_writable(
    targets: Iterable[tuple[str, Path | None]], inputs: Inputs | None = None
) -> None:
    """Raise `InputError` naming the flag, the path and why, for the first target that cannot
    be a file written, that is one of `inputs`, or for two flags pointing at one file, and
    `StorageError` for one the storage refuses (see the module docstring); warn (on stderr)
    about a target inside an input folder."""
    seen: dict[Path, str] = {}
    for flag, path in targets:
        if path is None:
            continue
        resolved = path.resolve()
        if resolved in seen:
            raise InputError(path, f"also given as {seen[resolved]}", field=flag)
        seen[resolved] = flag
        if inputs is not None:
            check_not_inputs([(flag, path)], inputs)
        found = unwritable_reason(path)
        if found is not None:
            reason, storage = found
            if storage:
                raise StorageError(path, f"{flag}: cannot be written: {reason}")
            raise InputError(path, f"cannot be written: {reason}", field=flag)


def check_not_inputs(targets: Iterable[tuple[str, Path | None]], inputs: Inputs) -> None:
    """Raise `InputError` for the first target that is one of `inputs`; warn (on stderr)
    about each target inside an input folder."""
    for flag, path in targets:
        if path is None:
            continue
        replaced = inputs.overwritten(path)
        if replaced is not None:
            raise InputError(path, f"is {replaced}; refusing to write over it", field=flag)
        holder = inputs.folder_holding(path)
        if holder is not None:
            warning = located(
                path,
                f"is inside {holder[1]} (given as {holder[0]}): a later run may read it as input",
                flag,
            )
            print(f"warning: {warning}", file=sys.stderr)


def inputs_of(args: Any, *names: str) -> Inputs:
    """The `Inputs` of a command: the paths in `args` under `names` (a flag's or a
    positional argument's, one path or a list), and the files `judge.cli.main` saw it read."""
    given: list[tuple[str, Path | None]] = []
    for name in names:
        value = getattr(args, name, None)
        label = name.upper() if name in POSITIONAL else "--" + name.replace("_", "-")
        values = value if isinstance(value, list) else [value]
        given += [(label, Path(v)) for v in values if v is not None]
    return Inputs(given, getattr(args, "files_read", ()))


POSITIONAL = {"result", "results", "files", "sources", "bench"}
