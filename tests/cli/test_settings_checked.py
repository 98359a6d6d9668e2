"""Every bad setting is found before the first call, as bad input (exit 2) naming it (issue 35):
an endpoint that is no http(s) URL with a host and a valid port (flag or variable), a path
flag that is empty or the wrong kind of thing, a result path that is a folder, and a prompt
template that fails however it fails, named by its file and line. None of them is exit 70,
and none waits for a provider that was never there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import EXAMPLE, REPO, eval_args, one_incident_args

from judge.cli import main

BAD_BASES = [
    "http://[::1",  # an IPv6 host never closed
    "localhost:8000/v1",  # no scheme
    "ftp://example.com/v1",
    "http://",
    "http:///v1",
    "http://example.com:99999/v1",
    "http://example.com:port/v1",
    "http://exa mple.com/v1",
    "",
]


def _exit_2(argv: list[str], capsys) -> str:
    """The command's stderr, once it has stopped while parsing with exit 2."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("base", BAD_BASES)
def test_a_bad_api_base_is_refused_while_parsing(base: str, tmp_path: Path, capsys) -> None:
    argv = one_incident_args(tmp_path / "r.json", "--judge-model", "openai/m", "--api-base", base)
    err = _exit_2(argv, capsys)
    assert "argument --api-base: expected an http:// or https:// URL with a host" in err
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("base", ["http://localhost:8000/v1", "https://[::1]:443/v1", "http://gw"])
def test_a_good_api_base_parses(base: str) -> None:
    from judge.cli import build_parser

    args = build_parser().parse_args(["eval", "-g", "x", "-o", "y", "--api-base", base])
    assert args.api_base == base


@pytest.mark.parametrize("name", ["JUDGE_BASE_URL", "JUDGE_API_BASE"])
def test_a_bad_endpoint_variable_is_exit_2_naming_it(
    name: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv(name, "localhost:8000/v1")
    argv = one_incident_args(tmp_path / "r.json", "--judge-model", "openai/m", "--no-progress")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert name in err and "expected an http:// or https:// URL with a host" in err
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("given", ["", ".", "/", "..", "sub/"])
def test_a_result_path_that_is_no_file_name_is_refused(
    given: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    argv = eval_args(EXAMPLE / "ground_truth", EXAMPLE / "outputs", Path("x"), "--no-progress")
    argv[argv.index("--result-file") + 1] = given
    err = _exit_2(argv, capsys)
    assert "argument -r/--result-file: expected a file" in err and "internal error" not in err


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("--html", "", "a file"),
        ("--csv", ".", "a file"),
        ("--jsonl", "/", "a file"),
        ("--junit", "{tmp}", "a file"),
        ("--store", "", "a file"),
        ("--prompts-file", "{tmp}", "a file"),
        ("--pause-file", "", "a file"),
        ("--pause-file", "{tmp}", "a file"),
        ("--env-file", "{tmp}", "a file"),
        ("--replay-store", "", "a file"),
        ("--calibration", "{tmp}", "a file"),
        ("--prompt-template", "", "a folder"),
        ("--prompt-template", "{file}", "a folder"),
        ("--ground-truth", "", "a path"),
        ("--outputs", "", "a path"),
    ],
)
def test_a_path_flag_of_the_wrong_kind_is_refused_naming_it(
    flag: str, value: str, expected: str, tmp_path: Path, capsys
) -> None:
    file = tmp_path / "f.txt"
    file.write_text("x")
    value = value.format(tmp=tmp_path, file=file)
    argv = one_incident_args(tmp_path / "r.json", "--no-progress", flag, value)
    err = _exit_2(argv, capsys)
    assert f"{flag}: expected {expected}" in err, err


@pytest.mark.parametrize(
    "argv",
    [
        ["store", "stats", ""],
        ["store", "export", "x.sqlite", "-o", "."],
        ["report", "r.json", "--csv", "/"],
        ["agreement", "r.json", "-o", ""],
        ["calibrate", "r.json", "--human", "", "--bootstrap", "10"],
        ["merge", "a.json", "-o", "."],
        ["labels", "import-sregym-bench", "b.yaml", "-o", "{file}"],
    ],
)
def test_path_flags_of_other_commands_are_checked_too(argv: list[str], tmp_path, capsys) -> None:
    file = tmp_path / "f.txt"
    file.write_text("x")
    err = _exit_2([a.format(file=file) for a in argv], capsys)
    assert "expected a" in err


def _template(tmp_path: Path, line: str, name: str = "system.j2") -> Path:
    folder = tmp_path / "templates"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(f"first line\n{line}\n")
    return folder / name


@pytest.mark.parametrize(
    "line",
    [
        "{{ 1 / 0 }}",  # ZeroDivisionError
        '{{ "x" + 1 }}',  # TypeError
        "{{ not_a_name(1) }}",  # jinja2's UndefinedError, which carries no line itself
        "{{ spec.id.nothing_here }}",
        "{% for x in %}",  # a syntax error
    ],
)
def test_a_template_that_fails_is_exit_2_naming_its_file_and_line(
    line: str, tmp_path: Path, capsys
) -> None:
    template = _template(tmp_path, line)
    argv = one_incident_args(
        tmp_path / "r.json", "--no-progress", "--prompt-template", str(template.parent)
    )
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{template}: line 2: template error" in err, err
    assert "internal error" not in err and not (tmp_path / "r.json").exists()


def test_a_template_that_fails_for_one_submission_only_is_exit_2_too(
    tmp_path: Path, capsys
) -> None:
    """The first prompt renders; another case's fails in the middle of the run."""
    shipped = REPO / "judge" / "templates" / "case.j2"
    text = shipped.read_text()
    template = tmp_path / "templates" / "case.j2"
    template.parent.mkdir()
    template.write_text(
        '{% if submission.trial == "3" %}{{ 1 / 0 }}{% endif %}\n' + text
    )  # fmt: skip
    argv = one_incident_args(
        tmp_path / "r.json", "--no-progress", "--prompt-template", str(template.parent),
        "--judge-model", "openai/m", "--api-base", "http://127.0.0.1:9/v1", "--dry-run",
    )  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{template}: line 1: template error" in err, err


def test_the_dry_run_prompts_keep_their_trials(tmp_path: Path) -> None:
    """The control for the test above: the shipped templates render all three trials."""
    argv = one_incident_args(tmp_path / "r.json", "--dry-run")
    assert main(argv) == 0
    lines = (tmp_path / "r.prompts.jsonl").read_text().splitlines()
    assert {json.loads(line)["trial"] for line in lines} == {"1", "2", "3"}


@pytest.mark.parametrize("given", ["", "  "])
def test_an_explicit_empty_judge_model_is_refused(given: str, tmp_path: Path, capsys) -> None:
    """Already so before issue 35 (the issue's report predates it): kept by this test."""
    assert main(one_incident_args(tmp_path / "r.json", "--judge-model", given)) == 2
    err = capsys.readouterr().err
    assert "--judge-model" in err and "is empty" in err and not (tmp_path / "r.json").exists()
