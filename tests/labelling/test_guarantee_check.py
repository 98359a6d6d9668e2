"""`judge calibrate --check` (issue 39): a cascade run's promise tested on labels of some of its
cases, with exact binomial bounds at the effective sample size the incidents leave, and a
recalibrated file written on request."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from helpers import EXAMPLE, EXAMPLE_GT, EXAMPLE_OUTPUTS

from agreement import clopper_pearson_lower, read_ratings
from ground_truth import load_specs, load_submissions
from judge import (
    CascadeJudge,
    RulesJudge,
    check_guarantee,
    evaluate,
    load_calibration,
    write_result,
)
from judge.cli import main
from judge.judges.selective.fit import (
    choose_thresholds,
    fit_stages,
    reference_labels,
    rubric_of,
    stage_of,
)
from judge.labelling.guarantee import _bounds


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The rules judge calibrated on the example's labels, its cascade run on the example."""
    folder = tmp_path_factory.mktemp("check")
    specs, subs = load_specs(EXAMPLE_GT), load_submissions(EXAMPLE_OUTPUTS)
    rules = evaluate(specs, subs)
    rubric_hash, shape = rubric_of([rules], ["rules"])
    people = read_ratings([EXAMPLE / "labels.csv"])
    labels = reference_labels(people.labels(people.names[0], "question"), {}, shape)
    fitted = fit_stages([stage_of(rules, "rules")], labels, shape, fit_share=0.0)
    calibration = choose_thresholds(fitted, labels, rubric_hash, shape, target=0.8, alpha=0.2)
    cal = folder / "cal.json"
    cal.write_text(calibration.model_dump_json(), encoding="utf-8")
    result = evaluate(specs, subs, judge=CascadeJudge([RulesJudge()], cal))
    path = folder / "cascade.json"
    write_result(result, path)
    write_result(rules, folder / "rules.json")
    return {"cal": cal, "result": path, "rules": folder / "rules.json", "answers": result}


def _labels(
    path: Path, result, cases: int, flip: bool = False, probability: float | None = None
) -> Path:
    """Labels of the first `cases` cases: the cascade's own answers (or their opposites)."""
    keep = {(c.incident_id, c.trial) for c in result.cases[:cases]}
    with path.open("w", newline="", encoding="utf-8") as handle:
        columns = ["incident_id", "trial", "question_id", "answer", "annotator"]
        if probability is not None:
            columns += ["design", "probability"]
        writer = csv.DictWriter(handle, columns)
        writer.writeheader()
        for j in result.judgments:
            if (j.incident_id, j.trial) in keep and j.answer is not None:
                answer = {"Yes": "No", "No": "Yes"}[j.answer] if flip else j.answer
                row = {"incident_id": j.incident_id, "trial": j.trial, "question_id": j.question_id,
                       "answer": answer, "annotator": "x"}  # fmt: skip
                if probability is not None:
                    row.update(design="informative", probability=probability)
                writer.writerow(row)
    return path


def test_bounds_are_clopper_pearsons_at_the_effective_n() -> None:
    agreed = np.array([1.0] * 45 + [0.0] * 5)
    one_each = _bounds(agreed, np.ones(50), [str(i) for i in range(50)], 0.1)
    assert one_each.agreement == 0.9 and one_each.effective_n == pytest.approx(49)
    assert one_each.lower == pytest.approx(float(clopper_pearson_lower(0.9 * 49, 49, 0.1)))
    # the five disagreements all in one incident: the incidents, not the items, are the draws
    clustered = _bounds(agreed, np.ones(50), [str(i // 5) for i in range(50)], 0.1)
    assert clustered.effective_n is not None and clustered.effective_n < 20
    assert clustered.lower is not None and one_each.lower is not None
    assert clustered.lower < one_each.lower
    perfect = _bounds(np.ones(30), np.ones(30), [str(i // 3) for i in range(30)], 0.1)
    assert perfect.effective_n == 10, "no spread to measure: one draw per incident"


def test_labels_that_agree_hold_the_promise(run: dict, tmp_path: Path) -> None:
    labels = _labels(tmp_path / "l.csv", run["answers"], 32)
    check = check_guarantee(run["result"], labels, run["cal"])
    assert check.verdict == "holds" and check.agreement == 1.0 and check.more_labels == 0
    assert check.lower_bound is not None and check.lower_bound >= 0.8
    assert check.shift is not None and not check.shift.shifted
    assert check.message.startswith("The promise holds on this run")


def test_labels_that_disagree_fail_it(run: dict, tmp_path: Path) -> None:
    labels = _labels(tmp_path / "l.csv", run["answers"], 32, flip=True)
    check = check_guarantee(run["result"], labels, run["cal"])
    assert check.verdict == "fails" and check.agreement == 0.0
    assert "FAILS" in check.message


def test_a_few_labels_say_how_many_more_would_do(run: dict, tmp_path: Path) -> None:
    labels = _labels(tmp_path / "l.csv", run["answers"], 2)
    check = check_guarantee(run["result"], labels, run["cal"])
    assert check.verdict == "not established" and check.n_answered <= 18
    assert check.more_labels is not None and check.more_labels > 0
    assert f"About {check.more_labels} more labelled questions" in check.message


def test_drawn_labels_are_weighted_by_their_probability(run: dict, tmp_path: Path) -> None:
    labels = _labels(tmp_path / "l.csv", run["answers"], 32, probability=0.5)
    check = check_guarantee(run["result"], labels, run["cal"])
    assert check.design == "drawn with recorded probabilities" and check.verdict == "holds"


def test_the_command_gates_and_recalibrates(run: dict, tmp_path: Path, capsys) -> None:
    good = _labels(tmp_path / "good.csv", run["answers"], 32)
    bad = _labels(tmp_path / "bad.csv", run["answers"], 32, flip=True)
    base = ["calibrate", "--check", str(run["result"]), "--calibration", str(run["cal"])]
    again = tmp_path / "again.json"
    assert (
        main(
            [
                *base,
                "--human",
                str(good),
                "--recalibrate",
                str(again),
                "-o",
                str(tmp_path / "c.json"),
            ]
        )
        == 0
    )
    printed = " ".join(capsys.readouterr().out.split())
    assert "Promise check" in printed and "holds" in printed
    assert json.loads((tmp_path / "c.json").read_text())["verdict"] == "holds"
    recalibrated = load_calibration(again)
    assert recalibrated.labels.files == [str(good)] and recalibrated.profile is not None
    assert len(recalibrated.profile.cases) == 32
    assert recalibrated.stages[0].maps == load_calibration(run["cal"]).stages[0].maps
    assert main([*base, "--human", str(bad)]) == 1


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--annotator", "x"], "--annotator: is read with --check RESULT"),
        (
            ["--check", "{rules}", "--calibration", "{cal}", "--human", "{labels}"],
            "not a cascade run",
        ),
        (["--check", "{result}", "--human", "{labels}"], "--check needs the calibration file"),
    ],
)
def test_bad_check_flags_exit_2(run: dict, tmp_path: Path, capsys, argv, expected) -> None:
    labels = _labels(tmp_path / "l.csv", run["answers"], 4)
    values = {"rules": str(run["rules"]), "cal": str(run["cal"]), "result": str(run["result"]),
              "labels": str(labels)}  # fmt: skip
    filled = [a.format(**values) for a in argv]
    if "--check" not in filled:
        filled = [str(run["rules"]), "--human", str(labels), *filled]
    assert main(["calibrate", *filled]) == 2
    assert expected in capsys.readouterr().err


def test_recalibrating_needs_a_random_sample(run: dict, tmp_path: Path, capsys) -> None:
    drawn = _labels(tmp_path / "l.csv", run["answers"], 32, probability=0.5)
    argv = ["calibrate", "--check", str(run["result"]), "--calibration", str(run["cal"]),
            "--human", str(drawn), "--recalibrate", str(tmp_path / "again.json")]  # fmt: skip
    assert main(argv) == 2
    assert "simple random sample" in capsys.readouterr().err
    assert not (tmp_path / "again.json").exists()
