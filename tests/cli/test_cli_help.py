"""Every flag says what it is for (issue 27): `--result-file` has help and its default, and
`--format` lists the formats it takes, those other packages add included, and refuses any
other name before anything is read."""

from __future__ import annotations

import pytest

import ground_truth.formats.registry as registry
from judge.cli import main


def help_of(capsys, *command: str) -> str:
    with pytest.raises(SystemExit) as done:
        main([*command, "--help"])
    assert done.value.code == 0
    return " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(
    "command, expected",
    [
        ("eval", "--result-file FILE the result JSON to write (default: results.json)"),
        ("resolve", "--result-file FILE the resolution checks' JSON to write (default: "
         "resolution.json)"),
    ],
)  # fmt: skip
def test_result_file_has_help_and_its_default(capsys, command: str, expected: str) -> None:
    assert expected in help_of(capsys, command)


@pytest.mark.parametrize("command", ["eval", "check", "resolve", "report"])
def test_format_lists_its_choices(capsys, command: str) -> None:
    registry.register_format("mybench", "mybench_judge:ADAPTER")  # never imported here
    try:
        text = help_of(capsys, command)
    finally:
        registry.FORMATS.unregister("mybench")
    shipped = "native, itbench, sregym, srezero, aiopslab, openrca, forge, cloud-opsbench, rcaeval"
    assert f"--format FORMAT input format, one of: auto, {shipped}, mybench" in text


def test_an_unknown_format_is_refused_before_reading(capsys, tmp_path) -> None:
    missing = tmp_path / "not-there"
    with pytest.raises(SystemExit) as done:
        main(["check", "--ground-truth", str(missing), "--format", "itbnech"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "--format: invalid choice: 'itbnech'" in err and "'itbench'" in err
