"""What every command shares: exit codes, the console, the errors that mean bad input, and
reading a benchmark's ground truth and outputs."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from ground_truth.errors import InputError, visible

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` is not imported by `judge --help`
    from typing import Any

EXIT_OK, EXIT_FAIL_UNDER, EXIT_BAD_INPUT, EXIT_PROVIDER, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_STORAGE = 4  # a file the run writes failed: disk full, read-only, corrupted or deleted store
EXIT_INTERNAL = 70  # a bug: one line on stderr, the traceback written to a file (EX_SOFTWARE)
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader of stdout left (`judge eval ... | head`)


def input_errors() -> tuple[type[Exception], ...]:
    """Errors a person fixes by changing an input file or flag: reported in one line, exit 2."""
    errors: list[type[Exception]] = [InputError]
    try:
        from agreement import LabelFileError

        errors.append(LabelFileError)
    except ImportError:
        pass
    return tuple(errors)


def internal_error(exc: BaseException) -> str:
    """The one line printed for an unexpected exception; the traceback goes to a file."""
    import tempfile
    import traceback

    summary = visible(f"{type(exc).__name__}: {exc}".splitlines()[0][:300])
    text = "".join(traceback.format_exception(exc))
    try:
        fd, path = tempfile.mkstemp(prefix="judge-traceback-", suffix=".txt")
        with open(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError:
        sys.stderr.write(text)
        return f"internal error (a bug in judge; please report it): {summary}"
    return f"internal error (a bug in judge; please report it): {summary}; full traceback in {path}"


PIPED_WIDTH = 140


def console(stderr: bool = False) -> Any:
    """Rich console; when output is piped, wide enough for the tables (unless COLUMNS says).

    `stderr=True` for commands whose stdout is machine-readable (`--json`)."""
    import os
    import sys

    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            """Rich's own exits 1, the `--fail-under` code: `judge.cli.main` ends instead."""
            self.quiet = True
            raise BrokenPipeError

    stream = sys.stderr if stderr else sys.stdout
    piped = not stream.isatty() and "COLUMNS" not in os.environ
    return _Console(stderr=stderr, width=PIPED_WIDTH if piped else None)


class LazyConsole:
    """`console(stderr)`, made when first used. A command's first words are plain lines
    (`line`: the judge, the store resumed from), printed without rich, whose import would
    otherwise come before `judge eval`'s first request (~35 ms); rich arrives with the
    first table or styled line, after the run."""

    def __init__(self, stderr: bool = False):
        self.stderr = stderr
        self._console: Any = None

    def line(self, text: str) -> None:
        """`text` as it is (no markup, no highlighting), wrapped at the console's width."""
        if self._console is not None:
            self._console.print(text, markup=False, highlight=False)
            return
        import textwrap

        stream = sys.stderr if self.stderr else sys.stdout
        lines = textwrap.wrap(text, _width(stream), break_long_words=False) or [""]
        print("\n".join(lines), file=stream)

    @property
    def rich(self) -> Any:
        """The rich console itself (made now if it was not yet)."""
        if self._console is None:
            self._console = console(self.stderr)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rich, name)


def _width(stream: Any) -> int:
    """The width `console()` would print `stream` at: COLUMNS, else the terminal's, else
    `PIPED_WIDTH` when piped."""
    import os
    import shutil

    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return shutil.get_terminal_size().columns if stream.isatty() else PIPED_WIDTH


def add_input_arguments(
    p: argparse.ArgumentParser,
    outputs_required: bool = True,
    outputs_help: str = "outputs directory or submissions JSONL",
) -> None:
    """-g/--ground-truth, -o/--outputs and --format, the same for every command that reads a
    benchmark (ITBench's short names: `judge eval` is a drop-in for its evaluator)."""
    p.add_argument("-g", "--ground-truth", required=True, type=Path, help="spec file or directory")
    p.add_argument("-o", "--outputs", required=outputs_required, type=Path, help=outputs_help)
    add_format_argument(p)
    add_max_input_argument(p)


class FormatChoices:
    """`--format`'s choices: `auto` and every format's name, the shipped ones and those
    packages add (named without importing any adapter). Looked up only when argparse needs
    them (a `--format` given, or the help shown)."""

    def _names(self) -> list[str]:
        from ground_truth.formats.registry import FORMATS

        return ["auto", *FORMATS.names()]

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


def add_format_argument(p: argparse.ArgumentParser) -> None:
    """`--format`, with the known formats as its choices."""
    p.add_argument(
        "--format",
        default="auto",
        choices=FormatChoices(),
        metavar="FORMAT",
        help="input format, one of: %(choices)s (default: auto, detected from the files)",
    )


class _MaxInputMB(argparse.Action):
    """Applies the limit as it is parsed (its range is checked first: `flags.CHECKS`), so every
    reader of input files obeys it."""

    def __call__(self, parser: Any, namespace: Any, value: Any, option: Any = None) -> None:
        from agreement.files import set_max_input_mb as set_for_labels
        from ground_truth.reading import set_max_input_mb

        set_max_input_mb(value)
        set_for_labels(value)
        setattr(namespace, self.dest, value)


def add_max_input_argument(p: argparse.ArgumentParser) -> None:
    """Add `--max-input-mb`, which sets the input size limit as soon as it is parsed."""
    from ground_truth.reading import DEFAULT_MAX_INPUT_MB

    p.add_argument(
        "--max-input-mb",
        type=float,
        default=DEFAULT_MAX_INPUT_MB,
        action=_MaxInputMB,
        metavar="MB",
        help=f"refuse any input file larger than this (default: {DEFAULT_MAX_INPUT_MB})",
    )


def collect_warnings(fn: Callable[..., Any], *args: Any) -> tuple[Any, list[str]]:
    """Call `fn`; return its value and the warnings (adapters' FormatWarnings) it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn(*args)
    return value, [str(w.message) for w in caught]


def load_inputs(
    ground_truth: Path, outputs: Path | None, fmt: str, stream: bool = False
) -> tuple[list[Any], Any, list[str]]:
    """Specs, submissions (None without outputs) and the data problems found while reading them.
    `stream`: the submissions as a `SubmissionStream`, read as a run asks for them (their
    problems are added to the list, and printed, as they are met)."""
    from ground_truth import load_specs, load_submissions

    specs, found = collect_warnings(load_specs, ground_truth, fmt)
    submissions: Any = None
    if outputs is not None and stream:
        submissions = SubmissionStream(outputs, fmt, found)
    elif outputs is not None:
        submissions, more = collect_warnings(load_submissions, outputs, fmt)
        found += more
    return specs, submissions, found


class SubmissionStream:
    """`--outputs` read one submission at a time (`ground_truth.iter_submissions`), so that a
    run starts on the first while the others are still being read. Each problem met is
    printed as a warning at once and added to `warnings`; a submission read is kept in `read`
    (the exports need them all after the run) unless `keep` is false, when one iteration lets
    go of each as it is given. Iterating yields every submission, those read ahead by `find`
    first."""

    def __init__(self, path: Path, fmt: str, warnings: list[str]):
        from ground_truth import iter_submissions

        self._items = iter_submissions(path, fmt)
        self.read: list[Any] = []
        self.warnings = warnings
        self.keep = True

    def _warn(self, warning: Warning) -> None:
        self.warnings.append(str(warning))
        print_warnings([str(warning)])

    def _next(self) -> Any | None:
        """The next submission from disk (its warnings handed to `_warn`, not to `warnings`,
        whose filters are global to all threads); None when there is none left."""
        from ground_truth.errors import format_warnings_to

        with format_warnings_to(self._warn):
            sub = next(self._items, None)
        if sub is not None:
            self.read.append(sub)
        return sub

    def find(self, wanted: Callable[[Any], bool]) -> Any | None:
        """The first submission `wanted` says yes to, reading on until one is found (None
        when none is, every submission read)."""
        found = next((sub for sub in self.read if wanted(sub)), None)
        while found is None and (sub := self._next()) is not None:
            found = sub if wanted(sub) else None
        return found

    def __iter__(self) -> Iterator[Any]:
        if not self.keep:
            ahead, self.read = self.read, []
            yield from ahead
            while (sub := self._next()) is not None:
                self.read.clear()
                yield sub
            return
        given = 0
        while given < len(self.read) or self._next() is not None:
            yield self.read[given]
            given += 1


def print_warnings(messages: list[str]) -> None:
    """Print each message to stderr as `warning: ...`."""
    for message in messages:
        print(f"warning: {message}", file=sys.stderr)
