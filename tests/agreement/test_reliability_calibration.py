"""Confidence calibration: isotonic maps against scikit-learn, the fallback rule, the JSON round
trip, and ECE / reliability-diagram data against scikit-learn's calibration_curve."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.isotonic import IsotonicRegression

from agreement import (
    ConfidenceCalibration,
    choose_map_kind,
    expected_calibration_error,
    fit_confidence_calibration,
    fit_isotonic,
    reliability_diagram,
)


def overconfident(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A judge whose answers agree with the labels with probability c**2 at confidence c."""
    rng = np.random.default_rng(seed)
    c = rng.random(n)
    return c, rng.random(n) < c**2


def test_map_predicts_what_sklearn_predicts_including_outside_the_fitted_range():
    rng = np.random.default_rng(0)
    c = 0.2 + 0.6 * rng.random(400)
    agreed = rng.random(400) < c
    fitted = fit_isotonic(c, agreed)
    reference = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(c, agreed)
    grid = np.linspace(0, 1, 501)
    np.testing.assert_allclose(fitted.predict(grid), reference.predict(grid), atol=1e-12)
    assert fitted.predict([0.0])[0] == fitted.values[0]  # clipped below the first threshold
    assert np.all(np.diff(fitted.values) >= 0)
    assert (fitted.n, fitted.n_agreed) == (400, int(agreed.sum()))


def test_a_single_confidence_value_maps_to_the_agreement_rate():
    fitted = fit_isotonic([0.7] * 4, [True, True, True, False])
    np.testing.assert_allclose(fitted.predict([0.0, 0.7, 1.0]), [0.75, 0.75, 0.75])


def test_calibrating_on_one_half_removes_most_of_the_error_on_the_other():
    c, agreed = overconfident(4000, seed=1)
    fitted = fit_isotonic(c[:2000], agreed[:2000])
    raw = expected_calibration_error(c[2000:], agreed[2000:])
    calibrated = expected_calibration_error(fitted.predict(c[2000:]), agreed[2000:])
    assert raw > 0.15  # c vs c**2: the mean gap over [0, 1] is 1/6
    assert calibrated < 0.04


def test_fallback_rule_question_then_judge_then_pooled():
    rng = np.random.default_rng(2)
    rows = [("big", "q1")] * 40 + [("big", "q2")] * 10 + [("small", "q1")] * 12
    judges = [j for j, _ in rows]
    questions = [q for _, q in rows]
    c = rng.random(len(rows))
    agreed = rng.random(len(rows)) < c
    cal = fit_confidence_calibration(c, agreed, judges, questions, min_count=30)
    assert cal.map_for("big", "q1")[1] == "question"
    assert cal.map_for("big", "q2")[1] == "judge"  # 10 answers < 30; the judge has 50
    assert cal.map_for("small", "q1")[1] == "pooled"  # the judge has only 12
    assert cal.map_for("never seen", "q9")[1] == "pooled"
    assert cal.judges["big"].n == 50 and cal.pooled.n == len(rows)
    own = fit_isotonic(c[:40], agreed[:40])
    np.testing.assert_allclose(cal.map_for("big", "q1")[0].predict(c), own.predict(c))
    mixed = cal.predict(c, judges, questions)
    np.testing.assert_allclose(mixed[:40], own.predict(c[:40]))
    np.testing.assert_allclose(mixed[40:50], cal.judges["big"].predict(c[40:50]))
    np.testing.assert_allclose(mixed[50:], cal.pooled.predict(c[50:]))


def test_calibration_survives_a_json_round_trip():
    c, agreed = overconfident(300, seed=3)
    judges = ["rules"] * 150 + ["llm"] * 150
    questions = (["q1"] * 75 + ["q2"] * 75) * 2
    cal = fit_confidence_calibration(c, agreed, judges, questions, min_count=50)
    again = ConfidenceCalibration.model_validate_json(cal.model_dump_json())
    assert again == cal
    np.testing.assert_array_equal(
        again.predict(c, judges, questions), cal.predict(c, judges, questions)
    )


def test_reliability_bins_match_sklearn_calibration_curve():
    c, agreed = overconfident(1000, seed=4)
    c[:3] = [0.0, 1.0, 0.5]  # the edges: 0.0 falls in the first bin, 0.5 closes bin 5
    diagram = reliability_diagram(c, agreed, n_bins=10)
    prob_true, prob_pred = calibration_curve(agreed, c, n_bins=10, strategy="uniform")
    filled = [b for b in diagram.bins if b.count]
    np.testing.assert_allclose([b.observed_agreement for b in filled], prob_true, atol=1e-12)
    np.testing.assert_allclose([b.mean_confidence for b in filled], prob_pred, atol=1e-12)
    assert sum(b.count for b in diagram.bins) == 1000
    assert diagram.bins[-1].upper == 1.0 and diagram.bins[0].lower == 0.0
    counts = np.array([b.count for b in filled])
    gaps = np.abs(prob_true - prob_pred)
    assert diagram.ece == pytest.approx(float(counts @ gaps) / 1000, abs=1e-12)


def test_ece_by_hand_and_empty_bins():
    # bin (0.8, 0.9]: 0.85, 0.9 -> mean 0.875, agreed 1/2; bin (0.9, 1]: 1.0 -> agreed 1
    diagram = reliability_diagram([0.85, 0.9, 1.0], [True, False, True], n_bins=10)
    assert diagram.ece == pytest.approx(2 / 3 * 0.375 + 1 / 3 * 0.0)
    assert [b.count for b in diagram.bins[-2:]] == [2, 1]
    empty = diagram.bins[0]
    assert (empty.count, empty.mean_confidence, empty.observed_agreement) == (0, None, None)


@pytest.mark.parametrize(
    ("confidence", "agreed", "message"),
    [
        ([], [], "at least one"),
        ([0.5, 1.2], [True, True], r"confidence: expected numbers in \[0, 1\], got 1.2"),
        ([0.5, float("nan")], [True, True], "confidence: expected finite numbers"),
        ([0.5, None], [True, True], "confidence: expected finite numbers"),
        ([0.5, 0.6], [True], "agreed: expected 2 values"),
        ([0.5, 0.6], [True, 2], "agreed: expected booleans"),
    ],
)
def test_bad_input_names_the_argument(confidence, agreed, message):
    with pytest.raises(ValueError, match=message):
        fit_isotonic(confidence, agreed)


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="n_bins"):
        reliability_diagram([0.5], [True], n_bins=0)
    with pytest.raises(ValueError, match="min_count"):
        fit_confidence_calibration([0.5], [True], ["j"], ["q"], min_count=0)
    with pytest.raises(ValueError, match="questions: expected 1"):
        fit_confidence_calibration([0.5], [True], ["j"], ["q", "r"])


# ------------------------------------------------------------------ which kind of maps


def _answers_world(n_incidents: int, seed: int, yes_worse: bool):
    """Four answers per incident at random raw confidence; with `yes_worse` a Yes agrees a
    third as often as a No at the same confidence (the raw confidence cannot tell them apart),
    else agreement rises with the raw confidence alone."""
    rng = np.random.default_rng(seed)
    n = 4 * n_incidents
    c = rng.random(n)
    answers = rng.choice(["Yes", "No"], n).tolist()
    p = np.where(np.array(answers) == "Yes", 0.3, 0.95) if yes_worse else 0.2 + 0.75 * c
    agreed = rng.random(n) < p
    questions = rng.choice(["Q1", "Q2"], n).tolist()
    incidents = [f"i{i // 4}" for i in range(n)]
    return c, agreed, ["rules"] * n, questions, answers, incidents


def test_maps_per_answer_are_chosen_when_yes_and_no_differ_at_the_same_confidence():
    choice = choose_map_kind(*_answers_world(150, 0, yes_worse=True))
    assert choice.kind in ("question-answer",) and choice.folds == 5
    assert choice.auroc["question-answer"] > choice.auroc["judge"] + 0.1  # type: ignore[operator]


def test_one_map_per_judge_is_kept_when_finer_maps_add_nothing():
    choice = choose_map_kind(*_answers_world(150, 1, yes_worse=False))
    assert choice.kind == "judge"
    assert "held-out incidents" in choice.reason


def test_nothing_to_rank_keeps_one_map_per_judge():
    c, _, judges, questions, answers, incidents = _answers_world(20, 2, yes_worse=False)
    choice = choose_map_kind(c, [True] * len(c), judges, questions, answers, incidents)
    assert (choice.kind, choice.folds) == ("judge", 0)
    assert set(choice.auroc.values()) == {None}


def test_the_kind_bounds_the_maps_fitted():
    c, agreed, judges, questions, answers, _ = _answers_world(100, 3, yes_worse=True)
    coarse = fit_confidence_calibration(c, agreed, judges, questions, answers=answers, kind="judge")
    assert coarse.questions == [] and coarse.answers == [] and "rules" in coarse.judges
    by_question = fit_confidence_calibration(
        c, agreed, judges, questions, answers=answers, kind="question"
    )
    assert {q.answer for q in by_question.questions} == {None} and by_question.answers == []
    with pytest.raises(ValueError, match="need the answers"):
        fit_confidence_calibration(c, agreed, judges, questions, kind="question-answer")
