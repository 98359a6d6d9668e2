"""An id made only of whitespace or invisible characters names nothing a person can read: a
spec's `id`, a submission's `incident_id` or `trial` like that is refused while loading (exit
2 naming the file and the field), never printed as an empty column (issue 35)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import EXAMPLE, eval_args
from pydantic import ValidationError

from ground_truth import IncidentSpec, Submission
from judge.cli import main

BLANK = ["   ", "\t\n", "\u200b", "\u00a0\u2060"]


@pytest.mark.parametrize("blank", BLANK)
def test_the_models_refuse_a_blank_id(blank: str) -> None:
    with pytest.raises(ValidationError, match="only whitespace or invisible"):
        IncidentSpec(id=blank, ground_truth="x")
    with pytest.raises(ValidationError, match="only whitespace or invisible"):
        Submission(incident_id=blank, diagnosis="x")
    with pytest.raises(ValidationError, match="only whitespace or invisible"):
        Submission(incident_id="a", trial=blank, diagnosis="x")


def test_an_id_with_visible_text_and_spaces_is_kept() -> None:
    assert Submission(incident_id=" a b ", diagnosis="x").incident_id == " a b "


def test_a_spec_with_a_blank_id_is_exit_2_naming_file_and_field(tmp_path: Path, capsys) -> None:
    gt = tmp_path / "gt"
    gt.mkdir()
    text = (EXAMPLE / "ground_truth" / "incorrect_image.yaml").read_text()
    spec = gt / "blank.yaml"
    spec.write_text(text.replace("id: incorrect_image", 'id: "   "', 1))
    code = main(eval_args(gt, EXAMPLE / "outputs", tmp_path / "r.json", "--no-progress"))
    err = capsys.readouterr().err
    assert code == 2 and str(spec) in err and "id" in err and "whitespace" in err
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("field", ["incident_id", "trial"])
def test_a_submission_with_a_blank_id_is_exit_2_naming_file_and_field(
    tmp_path: Path, capsys, field: str
) -> None:
    row = {"incident_id": "incorrect_image", "trial": "1", "diagnosis": "x", field: " \t "}
    outputs = tmp_path / "subs.jsonl"
    outputs.write_text(json.dumps(row) + "\n")
    code = main(eval_args(EXAMPLE / "ground_truth", outputs, tmp_path / "r.json", "--no-progress"))
    err = capsys.readouterr().err
    assert code == 2 and str(outputs) in err and field in err, err
