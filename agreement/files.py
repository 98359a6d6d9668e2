"""Reading label, result and benchmark files: regular files only, under a size limit.

`agreement` imports neither `judge` nor `ground_truth`, so this mirrors the part of
`ground_truth.reading` it needs; `judge`'s `--max-input-mb` sets both limits.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import yaml

from agreement.errors import LabelFileError

DEFAULT_MAX_INPUT_MB = 64
_limit = {"bytes": DEFAULT_MAX_INPUT_MB * 1024 * 1024}


def set_max_input_mb(megabytes: float) -> None:
    """Refuse input files larger than this many megabytes from now on (process-wide)."""
    _limit["bytes"] = int(megabytes * 1024 * 1024)


def read_text(path: str | Path, encoding: str = "utf-8", hint: str = "") -> str:
    """A regular file's text; a FIFO, a device, a file over the limit or bad UTF-8 is refused."""
    limit = _limit["bytes"]
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise LabelFileError(path, "not a regular file; only regular files are read")
            data = handle.read(limit + 1)
    except OSError as exc:
        raise LabelFileError(path, f"cannot read the file: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise LabelFileError(
            path,
            f"larger than the {limit / 1024 / 1024:g} MB limit per input file (--max-input-mb)",
        )
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        raise LabelFileError(path, f"not UTF-8 text{hint}") from None


def parse_json(text: str, path: str | Path) -> Any:
    """`text` parsed as JSON; LabelFileError naming `path` if it nests too deeply to parse
    (other JSON errors propagate as ValueError).
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise LabelFileError(path, "nested too deeply; refused") from None


def parse_yaml(text: str, path: str | Path) -> Any:
    """Safe YAML without aliases: a label file has no use for them, and an alias bomb (a few
    hundred bytes expanding to a billion nodes) must never reach the code that walks the data."""
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                mark = event.start_mark
                where = f" at line {mark.line + 1}" if mark else ""
                raise LabelFileError(
                    path, f"YAML alias *{event.anchor}{where}: aliases are refused"
                )
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise LabelFileError(path, f"not valid YAML: {exc}") from None
    except RecursionError:
        raise LabelFileError(path, "nested too deeply; refused") from None
