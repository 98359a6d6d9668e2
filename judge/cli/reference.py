"""The CLI reference page, written from the argparse parsers themselves so it cannot drift
from them: every subcommand, its usage and every argument with its values, default and range.

The documentation site builds it at build time (`docs/hooks.py`); `python -m
judge.cli.reference` prints it. `tests/project/test_docs_site.py` checks it names every flag."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from .flags import Parsed, PathFlag, check_for

USAGE_WIDTH = 78


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = (), help_text: str = ""
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser, str]]:
    """Each parser with its subcommand path and its one-line help, the top one first."""
    yield path, parser, help_text
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield from commands(sub, (*path, name), helps.get(name, ""))


def _formatter(parser: argparse.ArgumentParser) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(parser.prog, width=USAGE_WIDTH)


def _values(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.choices is not None and not action.metavar:
        return "{" + ",".join(str(c) for c in action.choices) + "}"
    if action.metavar:
        return str(action.metavar)
    return action.dest.upper() if action.option_strings else action.dest


def _accepts(action: argparse.Action) -> str:
    """What the value must be, as the flag's check says it (numbers' ranges are already in
    their help text: `flags.apply`)."""
    check = check_for(action)
    if isinstance(check, Parsed | PathFlag):
        return check.describe()
    if action.choices is not None and action.metavar and "one of" not in (action.help or ""):
        return "one of " + ", ".join(f"`{c}`" for c in action.choices)
    return ""


def _default(action: argparse.Action, help_text: str) -> str:
    """`default X`, unless the help already says it."""
    default = action.default
    if action.nargs == 0 or default in (None, argparse.SUPPRESS, [], ""):
        return ""
    said = (f"default {default}", f"default: {default}", f"default `{default}`")
    return "" if any(s in help_text for s in said) else f"default `{default}`"


def _escape(text: str) -> str:
    """Help text as Markdown: angle brackets shown, not read as HTML."""
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _item(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    names = ", ".join(f"`{name}`" for name in action.option_strings) or f"`{action.dest}`"
    values = _values(action) if action.option_strings or action.metavar else ""
    head = f"{names} `{values}`" if values else names
    help_text = _formatter(parser)._expand_help(action) if action.help else ""
    accepts = _accepts(action)
    notes = [
        n for n in (accepts if accepts not in help_text else "", _default(action, help_text)) if n
    ]
    if action.required:
        notes.insert(0, "required")
    tail = f" ({'; '.join(notes)})" if notes else ""
    body = _escape(help_text.replace("%%", "%"))
    return f"- {head}{tail}: {body}" if body else f"- {head}{tail}"


def _arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a
        for a in parser._actions
        if not isinstance(a, argparse._SubParsersAction | argparse._HelpAction)
        and a.help != argparse.SUPPRESS
    ]


def _section(path: tuple[str, ...], parser: argparse.ArgumentParser, help_text: str) -> str:
    title = " ".join(("judge", *path))
    usage = _formatter(parser)
    usage.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    lines = [f"## `{title}`", ""]
    if parser.description or help_text:
        lines += [_escape(parser.description or help_text), ""]
    lines += ["```text", usage.format_help().strip(), "```", ""]
    lines += [_item(parser, a) for a in _arguments(parser)]
    return "\n".join(lines) + "\n"


def reference(parser: argparse.ArgumentParser | None = None) -> str:
    """The whole CLI reference page in Markdown."""
    if parser is None:
        from . import build_parser

        parser = build_parser()
    intro = (
        "# CLI reference\n\n"
        "Every `judge` command and every flag, written from the command's own argument "
        "parsers when this site is built (`python -m judge.cli.reference` prints the same "
        "page). Numbers are checked as they are parsed: a value outside its range, `nan` or "
        "`inf` is refused with exit 2, naming the flag and the range shown here. "
        "[Exit codes](exit-codes.md) are the same for every command.\n"
    )
    sections = [_section(*found) for found in commands(parser) if found[0]]
    return "\n".join([intro, *sections])


__all__ = ["commands", "reference"]

if __name__ == "__main__":
    print(reference(), end="")
