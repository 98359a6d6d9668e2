"""The shift check (issue 39): before a calibrated cascade promises agreement on a run, the run
is compared with its calibration set on what both have without labels; a run unlike it keeps
its answers and loses the promise.

Statistical tests are seeded and repeated: a judge whose accuracy drops on a planted subgroup
(longer diagnoses by another agent, where it is less sure) breaks the guarantee on runs made
mostly of that subgroup, and the check withholds it there; on runs drawn like the calibration
set it stays quiet.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import EXAMPLE, EXAMPLE_GT, EXAMPLE_OUTPUTS
from scipy.stats import ks_2samp

from agreement import SelectiveGuarantee, select_threshold, shift_test
from agreement.shift import as_sample, min_p
from ground_truth import load_specs, load_submissions
from judge import CascadeJudge, RulesJudge, evaluate
from judge.cli import main
from judge.judges.selective.fit import (
    choose_thresholds,
    fit_stages,
    reference_labels,
    rubric_of,
    stage_of,
)
from judge.judges.selective.shift import CaseProfile, Profile, compare

QUESTIONS = ["Q1", "Q2", "Q3"]
SEEDS = 100


# --- the statistics --------------------------------------------------------------------------


def test_the_distance_for_numbers_is_kolmogorov_smirnovs() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 1, 60).round(1), rng.normal(0.3, 1, 40).round(1)
    test = shift_test(as_sample(range(60), {"x": a}), as_sample(range(40), {"x": b}))
    assert test.features[0].statistic == pytest.approx(ks_2samp(a, b).statistic, abs=1e-6)


def test_missing_values_are_left_out_and_a_constant_feature_is_not_tested() -> None:
    ref = as_sample(["i1", "i2", "i3"], {"x": [1.0, None, 2.0], "same": [1.0, 1.0, 1.0]})
    new = as_sample(["j1", "j2"], {"x": [None, 3.0], "same": [1.0, 1.0]})
    test = shift_test(ref, new, permutations=50)
    assert [f.feature for f in test.features] == ["x"]
    assert test.features[0].statistic == pytest.approx(1.0)


def test_a_feature_one_side_never_recorded_is_not_tested() -> None:
    """A calibration made from results older than the format field records none: its runs
    are not all a shift for that."""
    ref = as_sample([f"i{k}" for k in range(30)], categories={"format": [None] * 30})
    new = as_sample([f"n{k}" for k in range(30)], categories={"format": ["native"] * 30})
    test = shift_test(ref, new)
    assert not test.shifted and test.untested == ["format: not recorded in the reference"]


def test_min_p_never_adjusts_a_p_value_down() -> None:
    rng = np.random.default_rng(2)
    tests = [(float(rng.random()), rng.random(200)) for _ in range(5)]
    raw, adjusted = min_p(tests)
    assert all(a >= r for r, a in zip(raw, adjusted, strict=True))
    assert all(0 < a <= 1 for a in adjusted)


def test_a_category_the_reference_never_saw_is_named_and_tested() -> None:
    ref = as_sample([f"i{k}" for k in range(40)], categories={"agent": ["a"] * 40})
    few = as_sample(["n1"], categories={"agent": ["b"]})
    test = shift_test(ref, few)
    assert test.unseen == ["agent 'b' (1 of 1 cases) is not in the reference set"]
    assert not test.shifted, "one case of an agent a sample missed is no evidence of a shift"
    many = as_sample([f"n{k}" for k in range(30)], categories={"agent": ["b"] * 30})
    assert shift_test(ref, many).shifted


def test_answers_to_one_incident_count_as_one() -> None:
    """Ten answers to each of four incidents against ten to each of four others: as many
    clusters as cases would call a small difference a shift."""
    rng = np.random.default_rng(3)
    values = rng.normal(0, 1, 8).repeat(10)  # one value per incident
    ref = as_sample([f"i{k // 10}" for k in range(40)], {"x": values[:40]})
    new = as_sample([f"j{k // 10}" for k in range(40)], {"x": values[40:]})
    assert shift_test(ref, new).features[0].p_value > 0.01
    flat = shift_test(
        as_sample(range(40), {"x": values[:40]}), as_sample(range(40), {"x": values[40:]})
    )
    assert flat.features[0].p_value < shift_test(ref, new).features[0].p_value


# --- a judge whose accuracy drops on a planted subgroup ---------------------------------------


def _draw(
    rng: np.random.Generator, n: int, subgroup: float
) -> tuple[list[CaseProfile], list[bool]]:
    """`n` cases, a share `subgroup` of them by agent B: long diagnoses on which the judge is
    right 60% of the time (95% elsewhere) and as sure of its wrong answers as of its right
    ones (elsewhere its wrong answers are less sure). Returns the cases and, per (case,
    question), whether the judge's answer agrees with the label."""
    planted = rng.random(n) < subgroup
    right = rng.random((n, len(QUESTIONS))) < np.where(planted, 0.6, 0.95)[:, None]
    mean = np.where(planted[:, None], 0.8, np.where(right, 0.88, 0.7))
    confidence = np.clip(rng.normal(mean, 0.06), 0, 1).round(2)
    yes = rng.random((n, len(QUESTIONS))) < np.where(planted, 0.5, 0.3)[:, None]
    chars = rng.lognormal(np.where(planted, 7.3, 6.3), 0.4).astype(int)
    cases = [
        CaseProfile(
            incident_id=f"inc-{i // 2}",
            agent="B" if planted[i] else "A",
            format="sregym",
            diagnosis_chars=int(chars[i]),
            answers={q: "Yes" if yes[i, k] else "No" for k, q in enumerate(QUESTIONS)},
            confidence={q: float(confidence[i, k]) for k, q in enumerate(QUESTIONS)},
        )
        for i in range(n)
    ]
    return cases, [bool(r) for r in right.ravel()]


def _confidences(cases: list[CaseProfile]) -> list[float]:
    return [c.confidence[q] or 0.0 for c in cases for q in QUESTIONS]


def _simulate(rng: np.random.Generator, run_subgroup: float) -> tuple[bool, bool]:
    """Calibrate on cases with 10% of the subgroup, apply to a run with `run_subgroup`:
    whether the guarantee failed on the run, and whether the check flagged it."""
    guarantee = None
    while not isinstance(guarantee, SelectiveGuarantee):  # about 1 draw in 100 is refused
        calibration, agreed = _draw(rng, 150, 0.1)
        guarantee = select_threshold(_confidences(calibration), agreed, target=0.85, alpha=0.1)
    run, run_agreed = _draw(rng, 100, run_subgroup)
    kept = np.array(_confidences(run)) >= guarantee.threshold
    failed = bool(np.array(run_agreed)[kept].mean() < 0.85)
    profile = Profile(judge="sim", questions=QUESTIONS, cases=calibration)
    return failed, compare(profile, run, seed=int(rng.integers(2**31))).shifted


@pytest.mark.slow  # seconds: 100 seeded runs, or judge runs of the example
def test_a_run_made_mostly_of_the_planted_subgroup_is_flagged() -> None:
    rng = np.random.default_rng(39)
    outcomes = [_simulate(rng, 0.7) for _ in range(SEEDS)]
    assert sum(failed for failed, _ in outcomes) >= 95, "the shift really breaks the guarantee"
    assert sum(flagged for _, flagged in outcomes) >= 95  # seen 100, and 100 failures


@pytest.mark.slow  # seconds: 100 seeded runs, or judge runs of the example
def test_a_run_drawn_like_the_calibration_set_is_not_flagged() -> None:
    rng = np.random.default_rng(40)
    outcomes = [_simulate(rng, 0.1) for _ in range(SEEDS)]
    assert sum(flagged for _, flagged in outcomes) <= 5  # level 0.01: seen 2
    assert sum(failed for failed, _ in outcomes) <= 10, "and there the guarantee holds"


# --- end to end: a cascade calibrated on the example, run on it and on a shifted copy ---------


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The rules judge calibrated on the example's labels (a cascade of one)."""
    from agreement import read_ratings

    folder = tmp_path_factory.mktemp("calibrated")
    result = evaluate(load_specs(EXAMPLE_GT), load_submissions(EXAMPLE_OUTPUTS))
    stage = stage_of(result, "rules")
    rubric_hash, shape = rubric_of([result], ["rules"])
    people = read_ratings([EXAMPLE / "labels.csv"])
    name = people.names[0]
    labels = reference_labels(people.labels(name, "question"), {}, shape)
    fitted = fit_stages([stage], labels, shape, fit_share=0.0)
    calibration = choose_thresholds(fitted, labels, rubric_hash, shape, target=0.8, alpha=0.2)
    assert calibration.profile is not None and calibration.profile.judge == "rules"
    path = folder / "cal.json"
    path.write_text(calibration.model_dump_json(), encoding="utf-8")
    return path


def _shifted_outputs(target: Path) -> Path:
    """The example's outputs by another agent that prefixes each diagnosis with its long
    transcript of commands."""
    shutil.copytree(EXAMPLE_OUTPUTS, target)
    transcript = "".join(
        f"$ kubectl get pods -n app-{k} -o wide\n(no resources found)\n" for k in range(40)
    )
    for path in target.rglob("agent_output.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["agent"] = "transcript-agent"
        data["diagnosis"] = transcript + data["diagnosis"]
        path.write_text(json.dumps(data), encoding="utf-8")
    return target


def test_the_calibration_set_itself_keeps_its_guarantee(calibrated: Path) -> None:
    judge = CascadeJudge([RulesJudge()], calibrated)
    result = evaluate(load_specs(EXAMPLE_GT), load_submissions(EXAMPLE_OUTPUTS), judge=judge)
    summary = result.cascade
    assert summary is not None and summary.shift is not None
    assert not summary.shift_test().shifted and summary.guarantee_established
    assert summary.guarantee_note is None and not result.warnings


@pytest.mark.slow  # seconds: 100 seeded runs, or judge runs of the example
def test_a_shifted_run_keeps_its_answers_and_loses_the_promise(
    calibrated: Path, tmp_path: Path
) -> None:
    outputs = _shifted_outputs(tmp_path / "outputs")
    specs = load_specs(EXAMPLE_GT)
    result = evaluate(
        specs, load_submissions(outputs), judge=CascadeJudge([RulesJudge()], calibrated)
    )
    summary = result.cascade
    shift = summary.shift_test() if summary is not None else None
    assert summary is not None and shift is not None and shift.shifted
    assert not summary.guarantee_established
    differing = " ".join(shift.differing)
    assert "agent" in differing and "diagnosis length" in differing
    assert summary.guarantee_note and summary.guarantee_note.startswith("shift: ")
    assert summary.guarantee_note in result.warnings
    assert all(j.answer is not None or j.abstained for j in result.judgments), "answers stay"
    allowed = CascadeJudge([RulesJudge()], calibrated, allow_shift=True)
    kept = evaluate(specs, load_submissions(outputs), judge=allowed).cascade
    assert kept is not None and kept.guarantee_established and kept.shift is not None
    assert kept.guarantee_note and "--allow-shift" in kept.guarantee_note


@pytest.mark.slow  # seconds: 100 seeded runs, or judge runs of the example
def test_the_command_says_shift_and_the_report_withholds_the_guarantee(
    calibrated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = _shifted_outputs(tmp_path / "outputs")
    argv = ["eval", "--ground-truth", str(EXAMPLE_GT), "--outputs", str(outputs),
            "--judge-model", "cascade:rules", "--calibration", str(calibrated), "--no-progress"]  # fmt: skip
    result_file, html = tmp_path / "r.json", tmp_path / "r.html"
    assert main([*argv, "--result-file", str(result_file), "--html", str(html)]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "is NOT established for this run" in printed and "Shift check" in printed
    assert json.loads(result_file.read_text())["cascade"]["guarantee_established"] is False
    page = html.read_text(encoding="utf-8")
    assert 'id="guarantee-withheld"' in page and "shift" in page
    allowed = tmp_path / "allowed.json"
    assert main([*argv, "--allow-shift", "--result-file", str(allowed)]) == 0
    assert "--allow-shift" in capsys.readouterr().out
    assert json.loads(allowed.read_text())["cascade"]["guarantee_established"] is True


def test_allow_shift_is_a_cascade_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eval", "--ground-truth", str(EXAMPLE_GT), "--outputs",
            str(EXAMPLE_OUTPUTS), "--allow-shift", "--result-file", str(tmp_path / "r.json")]  # fmt: skip
    assert main(argv) == 2
    assert "--allow-shift" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()
