"""Detection and loading by format name, for callers that hold a path and a name (see
`ground_truth.formats.registry` for the adapters and how detection chooses)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import FormatWarning as FormatWarning
from ..errors import InputError
from ..registry import PluginError
from .registry import FORMATS, Kind, detect, get_adapter, read


def available_formats(kind: str = "specs") -> list[str]:
    """The names of every format (native, built-in, third-party), without importing any."""
    return FORMATS.names()


def detect_spec_format(path: str | Path) -> str:
    """The name of the format whose adapter claims this ground-truth file or directory."""
    return detect(Path(path), "specs").name


def detect_submission_format(path: str | Path) -> str:
    """The name of the format whose adapter claims this agent-output file or directory."""
    return detect(Path(path), "submissions").name


def load_specs_as(path: str | Path, fmt: str) -> list[Any]:
    """Load `IncidentSpec`s from `path` with the adapter of format `fmt`."""
    return _load(Path(path), fmt, "specs")


def load_submissions_as(path: str | Path, fmt: str) -> list[Any]:
    """Load `Submission`s from `path` with the adapter of format `fmt`."""
    return _load(Path(path), fmt, "submissions")


def _load(path: Path, fmt: str, kind: Kind) -> list[Any]:
    adapter = get_adapter(fmt, path)
    if not path.exists():
        raise InputError(path, "no such file or directory")
    return read(adapter, path, kind)


def cross_check(fmt: str, specs: list[Any], submissions: list[Any]) -> None:
    """Lint specs and submissions of one format together (`judge check`): warnings only."""
    try:
        adapter = FORMATS.find(fmt)  # items may name a format not installed here
    except PluginError:
        return
    check = getattr(adapter, "cross_check", None)
    if callable(check):
        check(specs, submissions)
