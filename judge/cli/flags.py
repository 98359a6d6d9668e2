"""The values every `judge` flag accepts, checked in one place while the arguments are parsed.

`apply(parser)` runs once every subcommand is registered (`judge.cli.build_parser`): each
option named in `CHECKS` gets its check as the argparse `type`, and its allowed values at the
end of its help when it is a number. A bad value then stops the command before any file is read or any judge is
called, with exit 2 and one line naming the flag and what it takes::

    judge eval: error: argument --k: expected an integer from 1 to 10000, got '0'

Numbers must be finite (`nan`, `inf` are refused) and inside their range; the ranges are wide
enough for any real run and narrow enough that nothing downstream overflows or allocates
without bound (`--max-concurrent` starts that many workers per judge). One option name means
the same thing in every subcommand (`--seed`, `--max-input-mb`). An option declared with
`type=int` or `type=float` and no entry here still gets a finite-number check;
`tests/cli/test_flags.py` fails until it has its range.

Paths (`PathFlag`): none may be empty (`Path("")` is the working directory: `-r ""` wrote
"results" over it); a file to write or read is named by its option in `CHECKS` and must have a
name and not be a folder (`-r .`, `-r /`); a folder must not be a file. A command whose option
means a folder declares it (`type=flags.FOLDER`); any other `type=Path` argument, positional
ones too, is checked to be non-empty. `--api-base` must be an http(s) URL with a host (the
same check applies to JUDGE_BASE_URL and JUDGE_API_BASE, `judge.cli.settings`).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` is not imported by `judge --help`
    from typing import Any, Literal

    PathRole = Literal["file", "folder", "any"]


class Number:
    """An integer or a finite number within [low, high] (above low when `above` is set, below
    high when `below` is). The checks are plain classes: `dataclasses` imports `inspect` (and
    `ast`, `dis`), and `typing` is more again of what `judge --help` would import."""

    __slots__ = ("above", "below", "high", "kind", "low")

    def __init__(
        self,
        kind: type[int] | type[float],
        low: float,
        high: float,
        above: bool = False,
        below: bool = False,
    ) -> None:
        self.kind, self.low, self.high, self.above, self.below = kind, low, high, above, below

    def describe(self) -> str:
        what = "an integer" if self.kind is int else "a number"
        if math.isinf(self.low) and math.isinf(self.high):
            return f"{what} (finite)"
        low, high = _show(self.low), _show(self.high)
        if self.above and self.below:
            return f"{what} between {low} and {high} (both excluded)"
        if self.above:
            return f"{what} more than {low} and at most {high}"
        return f"{what} from {low} to {high}"

    def __call__(self, text: str) -> int | float:
        try:
            value = self.kind(text.strip())
        except ValueError:
            raise _refused(self.describe(), text) from None
        if not math.isfinite(value) or not self._inside(value):
            raise _refused(self.describe(), text)
        return value

    def _inside(self, value: float) -> bool:
        low_ok = value > self.low if self.above else value >= self.low
        high_ok = value < self.high if self.below else value <= self.high
        return low_ok and high_ok


class Parsed:
    """A flag whose text becomes a value through `parse` (a `ValueError` refuses it)."""

    __slots__ = ("expected", "parse")

    def __init__(self, parse: Callable[[str], Any], expected: str) -> None:
        self.parse, self.expected = parse, expected

    def describe(self) -> str:
        return self.expected

    def __call__(self, text: str) -> Any:
        try:
            return self.parse(text)
        except ValueError:
            raise _refused(self.expected, text) from None


_ROLE_WORDS: dict[str, str] = {
    "file": "a file (a name, not a folder)",
    "folder": "a folder",
    "any": "a path (a file or folder)",
}


class PathFlag:
    """A path flag: never empty (which would mean the working directory); a `file` has a name
    and is not an existing folder, a `folder` is not an existing file. Whether an input exists
    is its reader's to say, with what it expected there."""

    __slots__ = ("role",)

    def __init__(self, role: PathRole = "any") -> None:
        self.role = role

    def describe(self) -> str:
        return _ROLE_WORDS[self.role]

    def __call__(self, text: str) -> Path:
        path = Path(text)
        if not text or "\0" in text or not self._fits(text, path):
            raise _refused(self.describe(), text)
        return path

    def _fits(self, text: str, path: Path) -> bool:
        if self.role == "file":
            named = path.name not in ("", ".", "..") and not text.endswith("/")
            return named and not path.is_dir()
        if self.role == "folder":
            return not path.exists() or path.is_dir()
        return True


FILE, FOLDER = PathFlag("file"), PathFlag("folder")


def endpoint(text: str) -> str:
    """An http(s) URL with a host and, if it names one, a port from 1 to 65535."""
    from urllib.parse import urlsplit

    parts = urlsplit(text)  # ValueError: a bracketed IPv6 host never closed
    port = parts.port  # ValueError: not a number, or out of range
    if parts.scheme not in ("http", "https") or not parts.hostname or port == 0:
        raise ValueError(text)
    if any(c.isspace() for c in text):
        raise ValueError(text)
    return text


ENDPOINT = "an http:// or https:// URL with a host (e.g. http://localhost:8000/v1)"


def _show(value: float) -> str:
    return f"{value:,.0f}".replace(",", "_") if value == int(value) else f"{value:g}"


def _refused(expected: str, text: str) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")


def _error_budget(text: str) -> Any:
    from ..run.limits import ErrorBudget

    budget = ErrorBudget.parse(text)
    if not math.isfinite(budget.limit):
        raise ValueError(text)
    return budget


def _shard(text: str) -> Any:
    from ..run.shard import Shard

    return Shard.parse(text)


def _names(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",")]
    if not all(names):
        raise ValueError(text)
    return names


def _fractions(text: str) -> list[float]:
    fraction = Number(float, 0, 1)
    try:
        return [float(fraction(part)) for part in text.split(",")]
    except argparse.ArgumentTypeError:
        raise ValueError(text) from None


SECONDS_A_DAY = 86_400.0

CHECKS: dict[str, Number | Parsed | PathFlag] = {
    # reading inputs (every command that reads files)
    "--max-input-mb": Number(float, 0, 1_048_576, above=True),
    "--env-file": FILE,
    "--prompt-template": FOLDER,
    "--replay-store": FILE,
    "--human": FILE,
    "--labels": FILE,
    "--compare": FILE,
    "--result": FILE,
    "--check": FILE,
    # files written (an output that is a folder is declared so by its command: `FOLDER`)
    "--result-file": FILE,
    "--store": FILE,
    "--output": FILE,
    "--html": FILE,
    "--csv": FILE,
    "--jsonl": FILE,
    "--junit": FILE,
    "--prompts-file": FILE,
    "--calibration": FILE,
    "--recalibrate": FILE,
    "--pause-file": FILE,
    # where the judge's calls go
    "--api-base": Parsed(endpoint, ENDPOINT),
    # judge eval: what is scored
    "--dimensions": Parsed(_names, "comma-separated dimension ids (e.g. D1,D3)"),
    "--k": Number(int, 1, 10_000),
    "--repeat": Number(int, 1, 100),
    "--samples": Number(int, 1, 100),
    "--shard": Parsed(_shard, "I/N with 1 <= I <= N (e.g. 2/4)"),
    "--fail-under": Number(float, 0, 1),
    # judge eval: how calls are made
    "--max-concurrent": Number(int, 1, 1_000),
    "--timeout": Number(float, 0, SECONDS_A_DAY, above=True),
    "--max-tokens": Number(int, 0, 10_000_000),
    "--rpm": Number(float, 0, 1e9, above=True),
    "--tpm": Number(float, 0, 1e12, above=True),
    "--max-retries": Number(int, 0, 100),
    "--cooldown-after": Number(int, 0, 100_000),
    "--cooldown": Number(float, 0, SECONDS_A_DAY),
    "--max-errors": Parsed(
        _error_budget, "a count (10) or a fraction from 0 to 1 (0.2 or 20%) of the calls"
    ),
    "--max-unscored": Number(float, 0, 1),
    "--max-cost": Number(float, 0, 1e9, above=True),
    "--grace": Number(float, 0, 3_600),
    "--batch-poll": Number(float, 0, 3_600, above=True),
    # judge agreement / calibrate / estimate / labels
    "--bootstrap": Number(int, 1, 1_000_000),
    "--seed": Number(int, 0, 2**32 - 1),
    "--alpha": Number(float, 0, 1, above=True, below=True),
    "--target-agreement": Number(float, 0, 1, above=True, below=True),
    "--fit-share": Number(float, 0, 1, below=True),
    "--thresholds": Parsed(_fractions, "comma-separated numbers from 0 to 1 (e.g. 0.5,0.7)"),
    "--sample": Number(int, 1, 10_000_000),
    # judge audit
    "--probes": Parsed(_names, "comma-separated probes (e.g. order,noise)"),
    "--order-seeds": Number(int, 1, 20),
    "--tolerance": Number(float, 0, 1, below=True),
    "--port": Number(int, 0, 65_535),
}
"""Every checked option by name, with the values it accepts."""

NUMERIC = (int, float)


def check_for(action: argparse.Action) -> Number | Parsed | PathFlag | None:
    """The check an argument gets: the `PathFlag` it was declared with, else its entry in
    `CHECKS`, else a finite-number check for one declared `type=int` / `type=float`, a
    non-empty path for one declared `type=Path` (positional ones too), else None."""
    if isinstance(action.type, PathFlag):
        return action.type
    for name in action.option_strings:
        if name in CHECKS:
            return CHECKS[name]
    if action.type in NUMERIC:
        return Number(action.type, -math.inf, math.inf)
    if action.type is Path:
        return PathFlag()
    return None


def options(parser: argparse.ArgumentParser) -> list[tuple[list[str], argparse.Action]]:
    """Every option of `parser` and its subcommands, with the subcommand path it belongs to."""
    found: list[tuple[list[str], argparse.Action]] = []

    def walk(p: argparse.ArgumentParser, path: list[str]) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*path, name])
            elif action.option_strings:
                found.append((path, action))

    walk(parser, [])
    return found


def arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """Every argument of `parser` and its subcommands, options and positional ones."""
    found: list[argparse.Action] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += arguments(sub)
        elif action.dest != "help":
            found.append(action)
    return found


SHORT = {"--ground-truth": "-g", "--outputs": "-o", "--result-file": "-r", "--output": "-O"}
"""The short name each of these long options has wherever it exists (ITBench's -g/-o/-r), unless
the command already gives the short name another meaning."""

DEPRECATED = "-o"
"""What `--output` was also called before `-O`: still accepted, with a note (`OldOutputName`)."""


class OldOutputName(argparse._StoreAction):
    """`--output` given as `-o`, its name before `-O`: it still works (no script breaks), with a
    note on stderr, since `-o` means the outputs folder in `judge eval`, `check` and the rest."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        if option == DEPRECATED:
            import sys

            print(
                f"note: `{parser.prog} -o` is deprecated: use -O/--output (-o is --outputs, "
                "the agents' outputs, in `judge eval` and the rest)",
                file=sys.stderr,
            )
        super().__call__(parser, namespace, values, option)


def parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """`parser` and every subcommand's parser under it."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += parsers(sub)
    return found


def give_short_names(parser: argparse.ArgumentParser) -> None:
    """`SHORT` on every command; an `-o` that meant `--output` kept last, as `OldOutputName`."""
    for p in parsers(parser):
        for action in p._actions:
            names = list(action.option_strings)
            for long, short in SHORT.items():
                if long in names and short not in p._option_string_actions:
                    names.insert(0, short)
                    p._option_string_actions[short] = action
            old_name = "--output" in names and DEPRECATED in names
            if old_name:
                names.remove(DEPRECATED)
                names.append(DEPRECATED)
            action.option_strings = names
            if old_name and type(action) is argparse._StoreAction:
                action.__class__ = OldOutputName  # the same action, with the note when -o
                action.help = f"{action.help or ''} (-o: its old name, deprecated)".lstrip()


def apply(parser: argparse.ArgumentParser) -> None:
    """Give every argument of `parser` (and of its subcommands) its short names (`SHORT`) and
    its check (see the module doc)."""
    give_short_names(parser)
    for action in arguments(parser):
        check = check_for(action)
        if check is None or action.type is check:
            continue
        action.type = check
        if isinstance(check, Number) and action.help and action.help != argparse.SUPPRESS:
            action.help = f"{action.help} [{check.describe().replace('%', '%%')}]"
