"""What the `judge` command does with its streams and the files it creates (issue 35): the
reason for a non-zero exit goes to stderr, a reader that leaves (`judge eval ... | head`) ends
the command quietly with the status a process killed by SIGPIPE has, the files that hold
diagnoses and replies (stores, label sheets, the labelling store) are private to their owner,
and `judge --help` says where the exit codes are explained."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import EXAMPLE, REPO, eval_args, one_incident_args

from judge.cli import main
from judge.testing import FakeProvider, FakeProviderConfig

EXIT_SIGPIPE = 128 + signal.SIGPIPE


def test_the_reason_for_an_exit_goes_to_stderr(tmp_path: Path, capsys) -> None:
    args = one_incident_args(tmp_path / "r.json", "--no-progress", "--fail-under", "1")
    assert main(args) == 1
    captured = capsys.readouterr()
    assert "exit 1: pass rate" in captured.err
    assert "exit 1" not in captured.out and "Wrote" in captured.out


def test_the_reason_of_a_failed_provider_goes_to_stderr(tmp_path: Path, capsys) -> None:
    with FakeProvider(FakeProviderConfig(fault_rates={"401": 1.0})) as provider:
        args = one_incident_args(
            tmp_path / "r.json", "--judge-model", "openai/fake-judge", "--api-base",
            provider.url, "--no-progress", "--no-store",
        )  # fmt: skip
        assert main(args) == 3
    captured = capsys.readouterr()
    assert "exit 3:" in captured.err and "exit 3" not in captured.out


def _closed_reader(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`command` with its stdout a pipe whose reader is gone before it writes a byte (the
    moment `| head` has read enough, made certain)."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            command, stdout=write, stderr=subprocess.PIPE, text=True, cwd=cwd, timeout=300
        )
    finally:
        os.close(write)
    return done


def test_a_reader_that_leaves_ends_eval_quietly_with_the_sigpipe_status(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "judge", *eval_args(
        EXAMPLE / "ground_truth", EXAMPLE / "outputs", tmp_path / "r.json", "--no-progress"
    )]  # fmt: skip
    done = _closed_reader(command, tmp_path)
    assert done.returncode == EXIT_SIGPIPE, done.stderr
    assert done.stderr == ""  # it stopped at its first line ("Judge: rules ..."), as SIGPIPE would


def test_a_reader_that_leaves_ends_a_plain_print_quietly(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "judge", "schema", "result"]
    done = _closed_reader(command, tmp_path)
    assert done.returncode == EXIT_SIGPIPE and done.stderr == ""


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_store_and_its_journal_files_are_private(tmp_path: Path) -> None:
    from judge.store import Store

    path = tmp_path / "s.sqlite"
    with Store(path):
        for name in ("s.sqlite", "s.sqlite-wal", "s.sqlite-shm"):
            found = tmp_path / name
            if found.exists():
                assert _mode(found) == 0o600, name
    assert _mode(path) == 0o600


def test_an_eval_store_is_private(tmp_path: Path) -> None:
    with FakeProvider() as provider:
        args = one_incident_args(
            tmp_path / "r.json", "--judge-model", "openai/fake-judge", "--api-base",
            provider.url, "--no-progress",
        )  # fmt: skip
        assert main(args) == 0
    assert _mode(tmp_path / "r.sqlite") == 0o600


def test_label_sheets_and_the_labelling_store_are_private(tmp_path: Path) -> None:
    from judge.labelling.store import LabelStore

    result = tmp_path / "r.json"
    assert main(one_incident_args(result, "--no-progress")) == 0
    sheet = tmp_path / "labels.csv"
    assert main(["labels", "template", str(result), "-o", str(sheet),
                 "--outputs", str(EXAMPLE / "outputs")]) == 0  # fmt: skip
    assert _mode(sheet) == 0o600
    with LabelStore(tmp_path / "me.labels.jsonl", "me"):
        pass
    assert _mode(tmp_path / "me.labels.jsonl") == 0o600


def test_help_points_to_the_exit_codes(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "exit codes" in out.lower() and "docs/exit-codes.md" in out
    assert (REPO / "docs" / "exit-codes.md").is_file()
