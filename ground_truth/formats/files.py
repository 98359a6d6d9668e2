"""What the format adapters share: reading and sniffing files, and `FormatWarning`.

Known problems in real benchmark files are reported as `FormatWarning`s (via `warnings`), naming
the file and the field; only what cannot be used at all raises `InputError`.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..errors import FormatWarning as FormatWarning
from ..errors import InputError
from ..errors import warn_format as warn_format
from ..reading import input_files, read_head, read_text
from ..reading import read_data as read_structured

STRUCTURED_SUFFIXES = (".json", ".yaml", ".yml")
# How many files of a directory a `looks_like_*` check opens before giving up.
SNIFF_LIMIT = 20


def text_or_none(value: Any) -> str | None:
    """A free-text field as text: a string as is, anything else an agent wrote there (a list, an
    object) as JSON rather than lost."""
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)


def read_csv_rows(path: Path) -> list[dict[str, str]]:
    """Rows of a CSV file with a header line, as dicts of strings."""
    text = read_text(path)
    try:
        return list(csv.DictReader(text.splitlines(keepends=True)))
    except csv.Error as exc:
        raise InputError(path, f"invalid CSV: {exc}") from None


def csv_header(path: Path) -> list[str]:
    """The header of a CSV file, or [] when it cannot be read (for `looks_like_*`)."""
    try:
        return next(csv.reader(read_head(path).splitlines()), [])
    except (InputError, csv.Error):
        return []


def sniff_structured(path: Path) -> Any:
    """Parsed content of a JSON/YAML file, or None when it cannot be parsed (for `looks_like_*`)."""
    if path.suffix.lower() not in STRUCTURED_SUFFIXES:
        return None
    try:
        return read_structured(path)
    except InputError:
        return None


def files_with_suffix(path: Path, suffixes: Iterable[str]) -> list[Path]:
    """`path` itself if it is such a file, else those files directly inside the directory."""
    suffixes = tuple(suffixes)
    if path.is_dir():
        return input_files(path, lambda p: p.suffix.lower() in suffixes, recursive=False)
    return [path] if path.suffix.lower() in suffixes else []


def any_file(path: Path, suffixes: Iterable[str], test: Callable[[Path], bool]) -> bool:
    """True when `path`, or one of the first files of the directory, passes `test`."""
    return any(test(f) for f in files_with_suffix(path, suffixes)[:SNIFF_LIMIT])


def first_readable(files: Iterable[Path], parse: Callable[[Path], Any]) -> Any:
    """What `parse` makes of the first of `files` it can read, None when it can read none.

    `parse` returns None for a file it cannot read (`sniff_structured` does): such a file is
    passed over, never taken as a sign of another format, so that a broken file does not
    decide a folder's format by sorting first. At most `SNIFF_LIMIT` readable files and five
    times as many files in all are opened.
    """
    for opened, file in enumerate(files):
        if opened >= SNIFF_LIMIT * 5:
            break
        data = parse(file)
        if data is not None:
            return data
    return None


def child_folders(path: Path, holds: Callable[[Path], bool]) -> list[Path]:
    """The folders directly inside `path` for which `holds` is true: one level of parent folder
    above the data, as the anchors' own trees have it (ITBench's `roles/scenarios/` above
    `files/`, SRE-Zero's `srezero/` above `task_configs/`)."""
    if not path.is_dir():
        return []
    return [child for child in sorted(path.iterdir()) if child.is_dir() and holds(child)]


def matching_files(
    path: Path, suffixes: Iterable[str], test: Callable[[Path], bool], what: str
) -> list[Path]:
    """The files `test` accepts: `path` itself, or those directly inside the directory."""
    files = [f for f in files_with_suffix(path, suffixes) if test(f)]
    if not files:
        raise InputError(path, f"holds no {what}")
    return files
