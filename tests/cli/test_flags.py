"""Every flag's value is checked while the arguments are parsed, in one place (judge/cli/flags.py):
nonsense stops the command with exit 2 and a line naming the flag and what it takes, before any
file is read or any judge is called (issue 24, "Every flag checked before anything runs")."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pytest
from helpers import one_incident_args

from ground_truth.reading import DEFAULT_MAX_INPUT_MB, set_max_input_mb
from judge.cli import build_parser, main
from judge.cli.flags import CHECKS, Number, options

NONSENSE = ("0", "-1", "nan", "inf", "1" + "0" * 30, "1e300")


def numeric_options() -> list[tuple[list[str], argparse.Action]]:
    """Every option of every subcommand that takes a number."""
    return [
        (path, action)
        for path, action in options(build_parser())
        if isinstance(action.type, Number)
    ]


def filler(path: list[str]) -> list[str]:
    """The shortest command line the subcommand at `path` parses: every required argument."""
    parser = build_parser()
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    argv = list(path)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        if not action.option_strings:
            argv.append(action.choices[0] if action.choices else "x")
        elif action.required:
            argv += [action.option_strings[-1], "x"]
    return argv


@pytest.fixture(autouse=True)
def _input_limit_restored():
    yield
    set_max_input_mb(DEFAULT_MAX_INPUT_MB)  # --max-input-mb applies itself as it is parsed


def test_every_number_flag_of_every_subcommand_has_a_range() -> None:
    """A new `type=int` / `type=float` option without an entry in CHECKS fails here."""
    unchecked = [
        f"judge {' '.join(path)} {action.option_strings[-1]}"
        for path, action in options(build_parser())
        if action.type in (int, float)
        or (isinstance(action.type, Number) and math.isinf(action.type.high))
    ]
    assert unchecked == []
    assert len(numeric_options()) >= 25


@pytest.mark.slow
@pytest.mark.parametrize("value", NONSENSE)
def test_nonsense_in_any_number_flag_is_refused_naming_the_flag_and_its_range(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = []
    for path, action in numeric_options():
        flag = action.option_strings[-1]
        check = action.type
        argv = [*filler(path), flag, value]
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as stop:
            err = capsys.readouterr().err
            assert stop.code == 2, argv
            assert f"{flag}: expected {check.describe()}, got {value!r}" in err, (argv, err)
            seen.append("refused")
            continue
        accepted = getattr(args, action.dest)
        assert math.isfinite(accepted), argv
        assert check.low <= accepted <= check.high
        assert not (check.above and accepted == check.low)
        assert not (check.below and accepted == check.high)
        seen.append("accepted")
    if value != "0":
        assert set(seen) == {"refused"}


ACCEPTED_ZERO = sorted(
    {a.option_strings[-1] for p, a in numeric_options() if p == ["eval"]}
    - {
        flag
        for flag, check in CHECKS.items()
        if isinstance(check, Number) and (check.low > 0 or check.above)
    }
)


@pytest.mark.slow
@pytest.mark.parametrize("flag", ACCEPTED_ZERO)
def test_an_eval_flag_that_takes_0_runs_with_it(flag: str, tmp_path: Path) -> None:
    assert main(one_incident_args(tmp_path / "r.json", flag, "0", "--no-progress")) == 0


@pytest.mark.parametrize(
    ("argv", "flag", "expected"),
    [
        (["--fail-under", "2"], "--fail-under", "a number from 0 to 1"),
        (["--fail-under", "-1"], "--fail-under", "a number from 0 to 1"),
        (["--dimensions", ""], "--dimensions", "comma-separated dimension ids"),
        (["--dimensions", "D1,,D2"], "--dimensions", "comma-separated dimension ids"),
        (["--max-errors", "nan%"], "--max-errors", "a count (10) or a fraction"),
        (["--max-errors", "-3"], "--max-errors", "a count (10) or a fraction"),
        (["--max-errors", "1.5"], "--max-errors", "a count (10) or a fraction"),
        (["--shard", "3/2"], "--shard", "I/N with 1 <= I <= N"),
        (["--max-input-mb", "nan"], "--max-input-mb", "a number more than 0"),
        (["--max-cost", "-1"], "--max-cost", "a number more than 0"),
        (["--timeout", "nan"], "--timeout", "a number more than 0"),
    ],
)
def test_the_flags_the_issue_found_accepting_nonsense_are_refused_before_the_run(
    argv: list[str], flag: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = tmp_path / "r.json"
    with pytest.raises(SystemExit) as stop:
        main(one_incident_args(result, *argv))
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert f"argument {flag}: expected {expected}" in err
    assert "Traceback" not in err and not result.exists()


def test_calibrate_thresholds_are_numbers_from_0_to_1(capsys) -> None:
    for bad in ("0.5,abc", "0.5,1.2", "nan"):
        with pytest.raises(SystemExit) as stop:
            main(["calibrate", "r.json", "--human", "l.csv", "--thresholds", bad])
        assert stop.value.code == 2
        assert "argument --thresholds: expected comma-separated numbers from 0 to 1" in (
            capsys.readouterr().err
        )
    args = build_parser().parse_args(["calibrate", "r", "--human", "l", "--thresholds", "0.5,0.7"])
    assert args.thresholds == [0.5, 0.7]


def test_help_states_each_number_flag_range(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "[an integer from 1 to 1_000]" in text  # --max-concurrent
    assert "[a number from 0 to 1]" in text  # --fail-under
