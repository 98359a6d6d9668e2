"""The `judge` command. Thin: parse arguments, call the library, print, pick the exit code.

Each command group lives in its own module exposing `register(subparsers)`, imported only when
its command runs (`COMMANDS`); handlers import what they need when they run, so `judge --help`
stays fast (it imports the parser alone, never litellm).

Exit codes (`judge eval` records its own in the result file as `exit_code` / `exit_reason`):

- 0: done.
- 1: only `--fail-under` not met, or `judge check --strict` found a problem.
- 2: bad input or usage: an unreadable or invalid file or flag (named with the field), a run
  in which no submission matches a spec (or there is none), an output path that cannot be
  written (checked before the first judge call).
- 3: the judge failed: every call failed, the provider refused our credentials or request,
  more than `--max-unscored` (default 0.5) of the questions are unscored because calls failed
  (provider errors, unparseable or refused replies, wrong question ids, judge exceptions), or
  `--max-errors` / `--max-cost` stopped the run.
- 4: a file the run writes failed (disk full, read-only, corrupted or deleted store).
- 70: an internal error (a bug): one line on stderr naming a file with the full traceback.
- 130: SIGINT or SIGTERM. During or after the run the result and exports are written (marked
  incomplete if calls were left); before the run starts, nothing is written and stderr says so.
- 141: the reader of stdout left (`judge eval ... | head`): the status of a process ended by
  SIGPIPE, with nothing printed; files are written before the summary is printed.

The reason for any exit but 0 is one line on stderr. `EXIT_CODES` is the table `judge --help`
ends with; docs/exit-codes.md explains each code.

A run stopped with 3 or 130 still writes its result, marked incomplete; rerun to continue.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import os
import sys
from collections.abc import Callable, Sequence
from importlib import import_module

from ground_truth.errors import InputError, visible

from ..errors import StorageError
from . import flags
from .common import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_STORAGE,
    input_errors,
    internal_error,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` is not imported by `judge --help`
    from typing import NoReturn

COMMANDS: dict[str, tuple[str, str]] = {
    "eval": ("eval", "score diagnoses against ground truth"),
    "check": ("check", "lint ground truth and outputs without calling any judge"),
    "selftest": (
        "selftest",
        "check a judge on cases derived from the specs (no outputs, no labels)",
    ),
    "audit": (
        "audit",
        "measure a judge's bias and noise on the run's cases (order, verbosity, anchoring, "
        "self-grading, run-to-run)",
    ),
    "report": ("report", "HTML report and CSV/JSONL/JUnit exports of a result file"),
    "agreement": ("agreement", "agreement among judges and people (Cohen's kappa and more)"),
    "calibrate": (
        "agreement",
        "how well judges match people: threshold sweep, confidence calibration, guarantees",
    ),
    "labels": ("agreement", "label sheets for people"),
    "estimate": (
        "estimate",
        "the pass rate and means corrected with labels (prediction-powered inference)",
    ),
    "resolve": ("resolve", "run the resolution checks on trajectories (no judge)"),
    "rubric": ("rubric", "validate, show or list rubrics"),
    "schema": ("schema", "print the JSON Schema of a file format"),
    "store": ("store", "inspect a judgment store (the SQLite cache)"),
    "merge": ("merge", "merge the results (and stores) of `judge eval --shard I/N` runs"),
}
"""Each subcommand: the module under `judge.cli` whose `register(subparsers)` adds it, and
the line `judge --help` shows for it (the same as the module's `help=`, which
`tests/test_cli_help.py` checks). A command's module is imported only when it is the command
run: `judge --help` imports the parser alone (each module pulls in its own: yaml, pydantic,
the loaders)."""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("diagnosis-judge")
    except PackageNotFoundError:
        return "0+unknown"


class _Version(argparse.Action):
    """`--version`, with the installed version read only when asked (reading the package's
    metadata takes ~40 ms, every command's start-up otherwise)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"{parser.prog} {_version()}")
        parser.exit()


EXIT_CODES = """exit codes:
  0    done
  1    --fail-under not met, `check --strict` found something, or
       `calibrate --check` did not find the promise holding
  2    bad input or usage: a file or flag, named with what was expected
  3    the judge failed: provider errors, unusable replies, a budget reached
  4    a file the command writes failed: disk full, read-only, broken store
  70   an internal error (a bug): one line on stderr, the traceback in a file
  130  SIGINT/SIGTERM (a run stopped midway writes its result, incomplete)
  141  the reader of stdout left (`judge eval ... | head`)
The reason is one line on stderr. Each code in full: docs/exit-codes.md."""


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, with the exit-code table every command's help ends with kept as it is
    written (descriptions are still wrapped to the terminal)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(EXIT_CODES):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def _with_exit_codes(parser: argparse.ArgumentParser) -> None:
    """`parser` and each of its subcommands end their help with the exit codes."""
    parser.formatter_class = HelpFormatter
    parser.epilog = EXIT_CODES + (f"\n\n{parser.epilog}" if parser.epilog else "")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _with_exit_codes(sub)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `judge` argument parser. Without `argv` every subcommand is registered in full;
    with it only the one `argv` names is, and the others by their names and help lines."""
    parser = argparse.ArgumentParser(
        prog="judge",
        description="Score SRE agents' incident diagnoses against ground truth with checklist judges.",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    named = None if argv is None else next((a for a in argv if not a.startswith("-")), "")
    for name, (module, line) in COMMANDS.items():
        if name in commands.choices:
            continue
        if named is None or COMMANDS.get(named, ("", ""))[0] == module:
            import_module(f"{__name__}.{module}").register(commands)
        else:
            commands.add_parser(name, help=line)
    flags.apply(parser)
    _with_exit_codes(parser)
    return parser


COMMAND_GC_THRESHOLDS = (50_000, 10, 10)
"""The garbage collector's thresholds for a `judge` command (Python's are 700, 10, 10). Each
reply's JSON is thousands of small objects, freed by reference counting, yet counted towards
a collection: with Python's thresholds collections took ~2 ms of CPU per call (a third of the
process's CPU per call, measured with `benchmarks/anchors.py`'s inputs). Set for the command
only, never by importing the library."""


def run() -> NoReturn:
    """The `judge` command: `main()`, then out of the process without tearing the interpreter
    down. By the time `main` returns every file a command writes is written and closed (the
    run's spill file has no name: the system frees it), and what teardown would add is freeing
    each object one by one: ~0.15 s after a 200-submission run, more after larger ones. Exit
    handlers still run. A thread still going (none of ours is), a profiler (`python -m cProfile
    -m judge`) or a tracer (coverage) gets the usual exit instead."""
    gc.set_threshold(*COMMAND_GC_THRESHOLDS)
    code = main()
    threads = sys.modules.get("threading")  # never imported: no other thread
    if (threads and threads.active_count() > 1) or sys.getprofile() or sys.gettrace():
        raise SystemExit(code)  # a profiler or coverage writes its data at the usual exit
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a reader that left (`| head`) is no failure
            stream.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `judge` CLI on `argv` (default sys.argv[1:]); the exit code, never a raise: 2 for
    bad input or no command, 4 for a storage error, 130 when interrupted, and 70 for any other
    exception (one line on stderr, the traceback written to a file).
    """
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    from ground_truth.reading import recording_reads

    try:
        with recording_reads() as args.files_read:  # what no output may be written over
            return handler(args)
    except input_errors() as exc:
        print(f"error: {visible(str(exc), keep=chr(10))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except StorageError as exc:
        print(f"error: {visible(str(exc), keep=chr(10))}", file=sys.stderr)
        return EXIT_STORAGE
    except BrokenPipeError:  # `judge ... | head`: the reader left; nothing to report
        _stdout_to_devnull()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt as exc:
        print(visible(str(exc)) or "interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug: one line here, the whole traceback in a file
        print(internal_error(exc), file=sys.stderr)
        return EXIT_INTERNAL


def _stdout_to_devnull() -> None:
    """Point stdout at /dev/null, so that what is still buffered for the reader that left is
    dropped at exit instead of failing again (Python's own advice on SIGPIPE)."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


__all__ = ["InputError", "build_parser", "main"]
