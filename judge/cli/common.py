"""What every command shares: exit codes, the console, the errors that mean bad input."""

from __future__ import annotations

from typing import Any

from ground_truth.errors import InputError

EXIT_OK, EXIT_FAIL_UNDER, EXIT_BAD_INPUT, EXIT_PROVIDER, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def input_errors() -> tuple[type[Exception], ...]:
    """Errors a person fixes by changing an input file or flag: reported in one line, exit 2."""
    errors: list[type[Exception]] = [InputError]
    try:
        from agreement import LabelFileError

        errors.append(LabelFileError)
    except ImportError:
        pass
    return tuple(errors)


PIPED_WIDTH = 140


def console(stderr: bool = False) -> Any:
    """Rich console; when output is piped, wide enough for the tables (unless COLUMNS says).

    `stderr=True` for commands whose stdout is machine-readable (`--json`)."""
    import os
    import sys

    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    piped = not stream.isatty() and "COLUMNS" not in os.environ
    return Console(stderr=stderr, width=PIPED_WIDTH if piped else None)
