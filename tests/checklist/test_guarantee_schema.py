"""Result schema version 2 (issue 39): `judgments` hold one answer per (case, question), the
one the run stands behind (a cascade's names its stage and marks an abstention); a panel's
members' and a cascade's stages' own answers are in `member_judgments`. Version 1 results,
which held both in `judgments`, are read into the same shape by every command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import EXAMPLE, EXAMPLE_GT, EXAMPLE_OUTPUTS

from agreement import read_result
from ground_truth import InputError, load_specs, load_submissions
from judge import CascadeJudge, RulesJudge, evaluate, load_result, write_result
from judge.checklist.results import SCHEMA_VERSION
from judge.cli import main
from judge.judges.panel import PanelJudge
from judge.judges.selective.fit import (
    choose_thresholds,
    fit_stages,
    reference_labels,
    rubric_of,
    stage_of,
)

LABELS = EXAMPLE / "labels.csv"


@pytest.fixture(scope="module")
def cascade_result(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cascade of the rules judge on the example, calibrated so that it abstains on its
    least sure answers, written as a version 2 result."""
    from agreement import read_ratings

    specs, subs = load_specs(EXAMPLE_GT), load_submissions(EXAMPLE_OUTPUTS)
    rules = evaluate(specs, subs)
    rubric_hash, shape = rubric_of([rules], ["rules"])
    people = read_ratings([LABELS])
    labels = reference_labels(people.labels(people.names[0], "question"), {}, shape)
    fitted = fit_stages([stage_of(rules, "rules")], labels, shape, fit_share=0.0)
    calibration = choose_thresholds(fitted, labels, rubric_hash, shape, target=0.8, alpha=0.2)
    stage = calibration.stages[0]
    assert stage.threshold is not None
    # a stricter threshold than chosen, so that some answers abstain (on the rules judge's
    # confidence as refitted for issue 39, 0.9 drops 54 of the 288 answers and leaves 8 cases
    # whole)
    strict = stage.model_copy(
        update={"selection": stage.selection.model_copy(update={"threshold": 0.9})}
    )
    calibration = calibration.model_copy(update={"stages": [strict]})
    result = evaluate(specs, subs, judge=CascadeJudge([RulesJudge()], calibration))
    path = tmp_path_factory.mktemp("schema") / "cascade.json"
    write_result(result, path)
    return path


def _as_version_1(path: Path, target: Path) -> Path:
    """The file as version 1 wrote it: the members' answers after the run's own in
    `judgments`, no stage, no abstained, no case format or length."""
    data = json.loads(path.read_text(encoding="utf-8"))
    strip = ("stage", "abstained")
    judgments = [
        {k: v for k, v in j.items() if k not in strip}
        for j in data["judgments"] + data.pop("member_judgments")
    ]
    for case in data["cases"]:
        case.pop("format"), case.pop("diagnosis_chars")
    data.update(schema_version="1", judgments=judgments)
    for key in ("shift", "guarantee_established", "guarantee_note"):
        data["cascade"].pop(key)
    target.write_text(json.dumps(data), encoding="utf-8")
    return target


def test_one_answer_per_question_and_the_stages_apart(cascade_result: Path) -> None:
    data = json.loads(cascade_result.read_text(encoding="utf-8"))
    assert data["schema_version"] == SCHEMA_VERSION == "2"
    keys = [(j["incident_id"], j["trial"], j["question_id"]) for j in data["judgments"]]
    assert len(keys) == len(set(keys)) == 32 * 9
    assert {j["judge"] for j in data["judgments"]} == {"cascade:rules"}
    assert {j["judge"] for j in data["member_judgments"]} == {"rules"}
    kept = [j for j in data["judgments"] if j["answer"] is not None]
    dropped = [j for j in data["judgments"] if j["abstained"]]
    assert kept and dropped, "the strict threshold keeps some answers and abstains on others"
    assert all(j["stage"] == "rules" and not j["abstained"] for j in kept)
    assert all(
        j["stage"] is None and j["unscored_reason"].startswith("below_guarantee") for j in dropped
    )
    assert data["cascade"]["abstained"] == len(dropped)
    case = data["cases"][0]
    assert case["format"] == "native" and case["diagnosis_chars"] > 0


def test_version_1_is_read_into_version_2s_shape(cascade_result: Path, tmp_path: Path) -> None:
    new = load_result(cascade_result)
    old = load_result(_as_version_1(cascade_result, tmp_path / "v1.json"))
    assert old.schema_version == "1"
    assert [(j.key, j.answer, j.abstained) for j in old.judgments] == [
        (j.key, j.answer, j.abstained) for j in new.judgments
    ]
    assert [j.key for j in old.member_judgments] == [j.key for j in new.member_judgments]
    assert all(j.stage is None for j in old.judgments), "version 1 did not record the stage"


@pytest.mark.slow  # six commands, seconds
def test_every_reader_takes_both_versions(cascade_result: Path, tmp_path: Path, capsys) -> None:
    old = _as_version_1(cascade_result, tmp_path / "v1.json")
    for path in (cascade_result, old):
        table = read_result(str(path), by_judge=True)
        assert len(table.labels("rules", "question")) == 32 * 9, "the stage's own answers"
        assert len(read_result(str(path)).labels("cascade", "question")) == 32 * 9
        assert main(["report", str(path), "--html", str(tmp_path / f"{path.stem}.html")]) == 0
        assert main(["agreement", str(path), str(LABELS), "--bootstrap", "20"]) == 0
        assert main(["estimate", "--result", str(path), "--labels", str(LABELS), "--json"]) == 0
    printed = capsys.readouterr().out
    estimates = [json.loads(part) for part in _json_documents(printed)]
    assert len(estimates) == 2 and estimates[0]["pass_rate"] == estimates[1]["pass_rate"]


def _json_documents(text: str) -> list[str]:
    """The JSON objects `judge estimate --json` printed, among the other commands' lines."""
    found, depth, start = [], 0, None
    for i, char in enumerate(text):
        if char == "{" and text[i - 1 : i] in ("", "\n") and depth == 0:
            start = i
        if start is not None:
            depth += {"{": 1, "}": -1}.get(char, 0)
            if depth == 0:
                found.append(text[start : i + 1])
                start = None
    return found


def test_a_question_answered_twice_is_refused(cascade_result: Path, tmp_path: Path) -> None:
    data = json.loads(cascade_result.read_text(encoding="utf-8"))
    data["judgments"].append(dict(data["judgments"][0], answer="No"))
    path = tmp_path / "twice.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match="answered twice") as caught:
        load_result(path)
    assert caught.value.field == f"judgments.{len(data['judgments']) - 1}"


def test_an_unknown_version_names_the_readable_ones(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"schema_version": "3"}', encoding="utf-8")
    with pytest.raises(InputError, match="expected schema_version '1' or '2', got '3'"):
        load_result(path)


def test_a_panels_members_are_apart_too() -> None:
    specs, subs = load_specs(EXAMPLE_GT), load_submissions(EXAMPLE_OUTPUTS)[:2]
    panel = PanelJudge([RulesJudge("a"), RulesJudge("b"), RulesJudge("c")])
    result = evaluate(specs, subs, judge=panel)
    assert {j.judge for j in result.judgments} == {panel.name}
    assert len(result.judgments) == 2 * 9 and len(result.member_judgments) == 3 * 2 * 9
