"""One name, one meaning (issue 36): ITBench's -g/-o/-r wherever --ground-truth, --outputs and
--result-file exist, -O for every --output, and the -o that meant --output before still
working with a note on stderr, so no script breaks silently."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import EXAMPLE

from judge.cli import build_parser, main
from judge.cli.flags import OldOutputName, options


def names_by_command() -> dict[str, dict[str, list[str]]]:
    found: dict[str, dict[str, list[str]]] = {}
    for path, action in options(build_parser()):
        for name in action.option_strings:
            found.setdefault(" ".join(path), {})[name] = list(action.option_strings)
    return found


def test_every_long_name_has_its_short_name_on_every_command():
    commands = names_by_command()
    for command, names in commands.items():
        for long, short in (("--ground-truth", "-g"), ("--result-file", "-r"), ("--output", "-O")):
            if long in names:
                assert short in names[long], (command, long)
        if "--outputs" in names:
            assert "-o" in names["--outputs"] or "--output" in names.get("-o", []), command
    assert "-o" in commands["check"]["--outputs"] and "-r" in commands["resolve"]["--result-file"]
    assert "-g" in commands["labels serve"]["--ground-truth"]


def test_an_old_o_for_output_is_the_last_name_and_marked_deprecated():
    seen = 0
    for _, action in options(build_parser()):
        if "--output" in action.option_strings and "-o" in action.option_strings:
            assert action.option_strings[-1] == "-o" and isinstance(action, OldOutputName)
            assert "deprecated" in (action.help or "")
            seen += 1
    assert seen >= 8  # report, agreement, calibrate, labels x3, store x2, merge


@pytest.fixture(scope="module")
def result(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("names") / "results.json"
    args = ["eval", "-g", str(EXAMPLE / "ground_truth"), "-o", str(EXAMPLE / "outputs")]
    assert main([*args, "-r", str(path), "--no-progress"]) == 0
    return path


@pytest.mark.parametrize("flag", ["-O", "--output", "-o"])
def test_every_name_of_output_writes_the_file_and_only_o_says_it_is_deprecated(
    flag, result, tmp_path, capsys
):
    target = tmp_path / "agreement.json"
    capsys.readouterr()
    assert main(["agreement", str(result), str(EXAMPLE / "labels.csv"), flag, str(target)]) == 0
    assert target.is_file()
    noted = "`judge agreement -o` is deprecated: use -O/--output" in capsys.readouterr().err
    assert noted == (flag == "-o")


def test_report_keeps_o_as_its_output_file_with_the_note(result, tmp_path, capsys):
    page = tmp_path / "report.html"
    assert main(["report", str(result), "-o", str(page), "-g", str(EXAMPLE / "ground_truth")]) == 0
    assert page.is_file() and "deprecated" in capsys.readouterr().err


def test_check_and_resolve_take_itbench_short_names(tmp_path, capsys):
    gt, out = str(EXAMPLE / "ground_truth"), str(EXAMPLE / "outputs")
    assert main(["check", "-g", gt, "-o", out]) in (0, 1)
    assert "deprecated" not in capsys.readouterr().err
    # resolve has nothing to check in the example (no trajectories): exit 2 naming that, not
    # an unknown flag
    assert main(["resolve", "-g", gt, "-o", out, "-r", str(tmp_path / "r.json")]) == 2
    assert "trajector" in capsys.readouterr().err
