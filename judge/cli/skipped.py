"""The data files under an input folder that nothing was read from: what a format's reader
did not recognise and passed over, said rather than skipped without a word (`judge eval`
prints how many; `judge check --json` lists them)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

DATA_SUFFIXES = frozenset({".json", ".jsonl", ".yaml", ".yml", ".csv", ".txt"})


def skipped_files(
    folder: Path, items: Iterable[Any], refused: Iterable[str] = (), said: Iterable[str] = ()
) -> list[str]:
    """The data files (JSON, YAML, CSV, text) under `folder` that no loaded item came from
    (its source's `file`, `loaded_from` or `context`), that are not `refused` (the files the
    warnings and errors met while loading name) and that no message `said` names; [] when
    `folder` is a file."""
    if not folder.is_dir():
        return []
    used = {os.path.realpath(path) for path in refused}
    for item in items:
        source = item.source
        for path in [source.get("file"), source.get("loaded_from"), *(source.get("context") or [])]:
            if isinstance(path, str):
                used.add(os.path.realpath(path))
    said = list(said)
    return sorted(
        str(path)
        for path in folder.rglob("*")
        if path.suffix.lower() in DATA_SUFFIXES
        and path.is_file()
        and os.path.realpath(path) not in used
        and not any(str(path) in message for message in said)
    )


def skipped_note(folder: Path, skipped: list[str], what: str) -> str | None:
    """One line saying how many data files under `folder` were not read as `what`."""
    if not skipped:
        return None
    n = len(skipped)
    return (
        f"{n} data file{'s' if n != 1 else ''} under {folder} were not read as {what} (a "
        "format's reader did not recognise them); `judge check --json` lists them"
    )
