"""Every file `judge eval` writes is checked before the first judge call, naming the flag, the
path and the reason, and the provider is never asked: a path that cannot be a file is exit 2
(a folder already while parsing), one the storage refuses (read-only) exit 4 (issue 35: as
when the storage fails during the run)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import one_incident_args

from judge.cli import main
from judge.testing import FakeProvider, FakeProviderConfig

FLAGS = ["--result-file", "--store", "--html", "--csv", "--jsonl", "--junit"]


def run_with(tmp_path: Path, flag: str, target: Path) -> tuple[int, int]:
    """`judge eval` with an LLM judge and every output in tmp_path but `flag`'s."""
    result = target if flag == "--result-file" else tmp_path / "r.json"
    outputs = [] if flag == "--result-file" else [flag, str(target)]
    with FakeProvider(FakeProviderConfig()) as provider:
        code = main(
            one_incident_args(
                result, "--judge-model", "openai/fake-judge", "--api-base", provider.url,
                "--no-progress", *outputs,
            )
        )  # fmt: skip
        return code, len(provider.calls)


def blocked(tmp_path: Path, how: str) -> Path:
    if how == "directory":
        target = tmp_path / "out"
        target.mkdir()
        return target
    if how == "under a file":
        (tmp_path / "plain").write_text("")
        return tmp_path / "plain" / "out"
    target = tmp_path / "out"
    target.write_text("")
    target.chmod(0o444)
    return target


@pytest.mark.parametrize("flag", FLAGS)
@pytest.mark.parametrize(
    "how, reason, code",
    [
        ("under a file", "is not a directory", 2),
        ("read-only", "is a read-only file", 4),
    ],
)
def test_an_unwritable_output_stops_before_any_call(
    tmp_path: Path, capsys, flag: str, how: str, reason: str, code: int
) -> None:
    target = blocked(tmp_path, how)
    found, n_calls = run_with(tmp_path, flag, target)
    err = capsys.readouterr().err
    assert found == code and n_calls == 0
    assert str(target) in err and flag in err and reason in err
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("flag", FLAGS)
def test_an_output_that_is_a_folder_is_refused_while_parsing(
    tmp_path: Path, capsys, flag: str
) -> None:
    with pytest.raises(SystemExit) as stop:
        run_with(tmp_path, flag, blocked(tmp_path, "directory"))
    assert stop.value.code == 2 and f"{flag}: expected a file" in capsys.readouterr().err


def test_a_read_only_result_directory_is_found_before_any_call(
    tmp_path: Path, capsys, read_only_dir
) -> None:
    """Root writes through mode bits, so as root the folder is a read-only bind mount."""
    folder = tmp_path / "results"
    folder.mkdir()
    if os.geteuid() == 0:
        read_only_dir(folder)
        code, n_calls = run_with(tmp_path, "--result-file", folder / "r.json")
    else:
        folder.chmod(0o555)
        try:
            code, n_calls = run_with(tmp_path, "--result-file", folder / "r.json")
        finally:
            folder.chmod(0o755)
    assert code == 4 and n_calls == 0
    assert "cannot create a file" in capsys.readouterr().err


def test_two_outputs_on_one_file_are_refused(tmp_path: Path, capsys) -> None:
    code, n_calls = run_with(tmp_path, "--csv", tmp_path / "r.json")
    assert code == 2 and n_calls == 0
    assert "also given as --result-file" in capsys.readouterr().err


def test_missing_folders_are_still_created(tmp_path: Path) -> None:
    code, _ = run_with(tmp_path, "--csv", tmp_path / "new" / "deeper" / "cases.csv")
    assert code == 0 and (tmp_path / "new" / "deeper" / "cases.csv").is_file()


@pytest.mark.parametrize("how, expected", [("under a file", 2), ("read-only", 4)])
def test_the_dry_run_prompts_file_is_checked_first(
    tmp_path: Path, capsys, how: str, expected: int
) -> None:
    target = blocked(tmp_path, how)
    code = main(one_incident_args(tmp_path / "r.json", "--dry-run", "--prompts-file", str(target)))
    err = capsys.readouterr().err
    assert code == expected and "--prompts-file" in err and str(target) in err
