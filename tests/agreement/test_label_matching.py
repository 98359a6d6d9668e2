"""A label sheet none of whose labels is about a case of the results compared with it is bad
input (issue 35): `judge agreement` and `judge calibrate` exit 2 naming the sheet, the first
ids it labels and the first ids the results hold, instead of printing tables of `undefined`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import one_incident_args, write_label_sheet

from agreement import LabelFileError, agreement_report, calibrate
from judge.cli import main

QUESTIONS = ("D1-Q1", "D1-Q2", "verdict")


@pytest.fixture(scope="module")
def one_incident_result_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("run") / "r.json"
    assert main(one_incident_args(path, "--no-progress")) == 0
    return path


def sheet(path: Path, incident: str, trials: tuple[str, ...] = ("1", "2", "3")) -> Path:
    answers = {(incident, t, q): "Yes" for t in trials for q in QUESTIONS}
    write_label_sheet(path, answers, "ann")
    return path


def test_a_sheet_about_other_incidents_is_refused_by_the_library(
    one_incident_result_file, tmp_path
) -> None:
    labels = sheet(tmp_path / "other.csv", "zz-other")
    with pytest.raises(LabelFileError, match="no label matches a case") as caught:
        agreement_report([one_incident_result_file, labels], B=10)
    assert "zz-other/1" in str(caught.value) and "incorrect_image/1" in str(caught.value)
    with pytest.raises(LabelFileError, match="no label matches a case"):
        calibrate([one_incident_result_file], labels, B=10)


@pytest.mark.parametrize("command", ["agreement", "calibrate"])
def test_the_commands_exit_2_naming_the_sheet_and_the_ids(
    command: str, one_incident_result_file: Path, tmp_path: Path, capsys
) -> None:
    labels = sheet(tmp_path / "other.csv", "zz-other")
    argv = (
        ["agreement", str(one_incident_result_file), str(labels)]
        if command == "agreement"
        else ["calibrate", str(one_incident_result_file), "--human", str(labels)]
    )
    assert main([*argv, "--bootstrap", "10"]) == 2
    captured = capsys.readouterr()
    err = " ".join(captured.err.split())
    assert str(labels) in err and "no label matches a case" in err
    assert re.search(r"labels zz-other/1, zz-other/2, zz-other/3", err)
    assert "incorrect_image/1" in err and "undefined" not in captured.out


def test_the_right_incident_with_other_trials_matches_nothing_either(
    one_incident_result_file, tmp_path
) -> None:
    labels = sheet(tmp_path / "trials.csv", "incorrect_image", trials=("7",))
    with pytest.raises(LabelFileError, match="no label matches a case"):
        agreement_report([one_incident_result_file, labels], B=10)


def test_a_sheet_that_matches_one_case_is_compared(one_incident_result_file, tmp_path) -> None:
    labels = sheet(tmp_path / "one.csv", "incorrect_image", trials=("2", "9"))
    report = agreement_report([one_incident_result_file, labels], B=10)
    assert report.level("question").pairwise[0].n > 0


def test_people_compared_with_each_other_alone_need_no_results(tmp_path) -> None:
    a = sheet(tmp_path / "a.csv", "x")
    b = tmp_path / "b.csv"
    write_label_sheet(b, {("x", "1", "D1-Q1"): "No"}, "other")
    agreement_report([a, b], B=10)
