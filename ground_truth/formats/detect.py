"""Auto-detection over the benchmark format adapters, and what they share.

Each adapter module `X` in this package exposes `looks_like_X_specs(path)`,
`looks_like_X_submissions(path)`, `load_X_specs(path)` and `load_X_submissions(path)` (a format
without submissions omits those). This module finds the adapter that claims a path and calls it.
Adapters are imported lazily, so a broken or absent adapter (SRE-Zero's lives in another
engineer's module) never breaks the others; SRE-Zero exposes one `looks_like_srezero(path)` for
both kinds of file.

The native format is not known here: `ground_truth.loaders` checks it before asking us.

Known problems in real benchmark files are reported as `FormatWarning`s (via `warnings`), naming
the file and the field; only what cannot be used at all raises `InputError`.
"""

from __future__ import annotations

import csv
import importlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..errors import FormatWarning as FormatWarning
from ..errors import InputError
from ..errors import warn_format as warn_format
from ..reading import input_files, read_head, read_text
from ..reading import read_data as read_structured

FORMATS = ("itbench", "sregym", "srezero", "aiopslab", "openrca", "forge")
STRUCTURED_SUFFIXES = (".json", ".yaml", ".yml")
# How many files of a directory a `looks_like_*` check opens before giving up.
SNIFF_LIMIT = 20


# ---------------------------------------------------------------- registry and dispatch


def _module(fmt: str) -> Any | None:
    """The adapter module for `fmt`, or None when it is absent or cannot be imported."""
    try:
        return importlib.import_module(f"{__package__}.{fmt}")
    except ImportError:
        return None


def _function(fmt: str, kind: str, verb: str) -> Callable[[Path], Any] | None:
    module = _module(fmt)
    if module is None:
        return None
    names = [f"{verb}_{fmt}_{kind}"]
    if verb == "looks_like":
        names.append(f"looks_like_{fmt}")
    for name in names:
        func = getattr(module, name, None)
        if callable(func):
            return func
    return None


def available_formats(kind: str = "specs") -> list[str]:
    """Formats whose adapter is importable and can load `kind` ("specs" or "submissions")."""
    return [fmt for fmt in FORMATS if _function(fmt, kind, "load") is not None]


def _detect(path: str | Path, kind: str) -> str:
    path = Path(path)
    if not path.exists():
        raise InputError(path, "no such file or directory")
    tried = []
    for fmt in FORMATS:
        looks_like = _function(fmt, kind, "looks_like")
        if looks_like is None or _function(fmt, kind, "load") is None:
            continue
        tried.append(fmt)
        try:
            if looks_like(path):
                return fmt
        except (OSError, ValueError, TypeError, AttributeError, KeyError, IndexError):
            continue  # a check that cannot read the input means "not this format"
    noun = "ground truth" if kind == "specs" else "agent outputs"
    raise InputError(
        path, f"not a recognised {noun} format (tried: native, {', '.join(tried)})", field="format"
    )


def detect_spec_format(path: str | Path) -> str:
    """The name of the format whose adapter claims this ground-truth file or directory."""
    return _detect(path, "specs")


def detect_submission_format(path: str | Path) -> str:
    """The name of the format whose adapter claims this agent-output file or directory."""
    return _detect(path, "submissions")


def _load_as(path: str | Path, fmt: str, kind: str) -> list[Any]:
    path = Path(path)
    if fmt not in FORMATS:
        raise InputError(
            path,
            f"unknown format {fmt!r} (expected one of: native, {', '.join(FORMATS)})",
            field="format",
        )
    loader = _function(fmt, kind, "load")
    if loader is None:
        what = "ground truth" if kind == "specs" else "agent outputs"
        raise InputError(path, f"format {fmt!r} has no {what} adapter here", field="format")
    if not path.exists():
        raise InputError(path, "no such file or directory")
    return loader(path)


def load_specs_as(path: str | Path, fmt: str) -> list[Any]:
    """Load `IncidentSpec`s from `path` with the adapter of format `fmt`."""
    return _load_as(path, fmt, "specs")


def load_submissions_as(path: str | Path, fmt: str) -> list[Any]:
    """Load `Submission`s from `path` with the adapter of format `fmt`."""
    return _load_as(path, fmt, "submissions")


def cross_check(fmt: str, specs: list[Any], submissions: list[Any]) -> None:
    """Lint specs and submissions of one format together (`judge check`): warnings only."""
    module = _module(fmt)
    check = getattr(module, f"cross_check_{fmt}", None) if module else None
    if callable(check):
        check(specs, submissions)


# ---------------------------------------------------------------- file helpers for adapters


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
