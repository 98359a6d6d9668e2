"""A verdict's confidence from its answers' calibrated confidences: checked against brute-force
enumeration of every way the labels could fall."""

from __future__ import annotations

import itertools
import random

import pytest

from judge.judges.selective.verdict import RubricShape, judge_verdict, verdict_confidence

RUBRIC = RubricShape(
    threshold=0.7,
    weights={"D1": 0.33, "D2": 0.33, "D3": 0.34},
    dimensions={"D1": ["a", "b", "c"], "D2": ["d", "e", "f"], "D3": ["g", "h", "i"]},
)


def brute_force(answers: dict, confidence: dict, rubric: RubricShape) -> float:
    """Sum over all 2^n label vectors of P(labels) [labels' verdict == judge's verdict]."""
    mine = judge_verdict(answers, rubric)
    questions = rubric.questions
    total = 0.0
    for labels in itertools.product(("Yes", "No"), repeat=len(questions)):
        p = 1.0
        for q, label in zip(questions, labels, strict=True):
            given, c = answers.get(q), confidence.get(q)
            p_yes = 0.5 if given is None or c is None else (c if given == "Yes" else 1 - c)
            p *= p_yes if label == "Yes" else 1 - p_yes
        theirs = judge_verdict(dict(zip(questions, labels, strict=True)), rubric)
        total += p * (theirs == mine)
    return total


@pytest.mark.parametrize("seed", range(40))
def test_the_exact_convolution_equals_enumeration(seed: int) -> None:
    rng = random.Random(seed)
    answers = {q: rng.choice(["Yes", "No", "Yes", None]) for q in RUBRIC.questions}
    for questions in RUBRIC.dimensions.values():  # every dimension keeps a scored question
        if all(answers[q] is None for q in questions):
            answers[questions[0]] = "Yes"
    confidence = {q: rng.random() for q in RUBRIC.questions if answers[q] is not None}
    assert verdict_confidence(answers, confidence, RUBRIC) == pytest.approx(
        brute_force(answers, confidence, RUBRIC), abs=1e-12
    )


def test_sure_answers_give_a_sure_verdict_and_no_verdict_gives_none() -> None:
    answers = dict.fromkeys(RUBRIC.questions, "Yes")
    assert verdict_confidence(answers, dict.fromkeys(RUBRIC.questions, 1.0), RUBRIC) == 1.0
    half = dict.fromkeys(RUBRIC.questions, 0.5)
    assert 0.0 < verdict_confidence(answers, half, RUBRIC) < 1.0  # type: ignore[operator]
    answers.update(a=None, b=None, c=None)
    assert judge_verdict(answers, RUBRIC) is None
    assert verdict_confidence(answers, half, RUBRIC) is None
