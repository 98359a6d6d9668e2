"""What the format adapters share: detection and loading by format name (over
`ground_truth.formats.registry`, which lists the adapters), `FormatWarning`, and file helpers.

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


# ---------------------------------------------------------------- dispatch (see registry)


def available_formats(kind: str = "specs") -> list[str]:
    """The names of every format adapter (the native one, built-in ones, third-party ones)."""
    from .registry import adapters

    return [adapter.name for adapter in adapters()]


def detect_spec_format(path: str | Path) -> str:
    """The name of the format whose adapter claims this ground-truth file or directory."""
    from .registry import detect

    return detect(Path(path), "specs").name


def detect_submission_format(path: str | Path) -> str:
    """The name of the format whose adapter claims this agent-output file or directory."""
    from .registry import detect

    return detect(Path(path), "submissions").name


def load_specs_as(path: str | Path, fmt: str) -> list[Any]:
    """Load `IncidentSpec`s from `path` with the adapter of format `fmt`."""
    return _adapter(path, fmt).load_specs(Path(path))


def load_submissions_as(path: str | Path, fmt: str) -> list[Any]:
    """Load `Submission`s from `path` with the adapter of format `fmt`."""
    return _adapter(path, fmt).load_submissions(Path(path))


def _adapter(path: str | Path, fmt: str) -> Any:
    from .registry import get_adapter

    adapter = get_adapter(fmt, Path(path))
    if not Path(path).exists():
        raise InputError(path, "no such file or directory")
    return adapter


def cross_check(fmt: str, specs: list[Any], submissions: list[Any]) -> None:
    """Lint specs and submissions of one format together (`judge check`): warnings only."""
    from .registry import adapters

    adapter = next((a for a in adapters() if a.name == fmt), None)
    check = getattr(adapter, "cross_check", None)  # items may name a format not installed here
    if callable(check):
        check(specs, submissions)


# ---------------------------------------------------------------- file helpers for adapters


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


def matching_files(
    path: Path, suffixes: Iterable[str], test: Callable[[Path], bool], what: str
) -> list[Path]:
    """The files `test` accepts: `path` itself, or those directly inside the directory."""
    files = [f for f in files_with_suffix(path, suffixes) if test(f)]
    if not files:
        raise InputError(path, f"holds no {what}")
    return files
