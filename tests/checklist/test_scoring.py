"""Scoring arithmetic under sregym-v3 (weights .33/.33/.34, threshold .70), pass@k, pass^k, CIs."""

from __future__ import annotations

import random
from math import comb

import pytest

from judge import CaseResult, Judgment, Rubric, load_rubric, pass_at_k, pass_hat_k
from judge.checklist.scoring import (
    bootstrap_mean,
    score_case,
    summarize_incidents,
    summarize_overall,
)


def judgments(
    rubric: Rubric, no: set[str] = frozenset(), unscored: set[str] = frozenset(), trial: str = "1"
) -> list[Judgment]:
    """Yes to every question but those in `no` (No) and `unscored` (no answer)."""
    out = []
    for dim in rubric.dimensions:
        for q in dim.questions:
            answer = None if q.id in unscored else ("No" if q.id in no else "Yes")
            out.append(
                Judgment(
                    incident_id="inc",
                    trial=trial,
                    dimension_id=dim.id,
                    question_id=q.id,
                    answer=answer,
                    unscored_reason="provider error" if answer is None else None,
                    judge="test",
                    prompt_hash="h",
                )
            )
    return out


def case(rubric: Rubric, **kwargs) -> CaseResult:
    return score_case("inc", kwargs.get("trial", "1"), judgments(rubric, **kwargs), rubric)


# No answers placed: none; D1 only; D1 and D2; one in each of D1, D2, D3.
@pytest.mark.parametrize(
    ("no", "low", "high", "passed"),
    [
        (set(), 1.00, 1.00, True),
        ({"D1-Q2"}, 0.89, 0.89, True),
        ({"D1-Q1", "D2-Q3"}, 0.77, 0.78, True),
        ({"D1-Q1", "D2-Q2", "D3-Q3"}, 0.66, 0.67, False),
    ],
    ids=["0-no", "1-no-D1", "2-no-D1-D2", "3-no-D1-D2-D3"],
)
def test_composites_and_verdicts(rubric: Rubric, no: set[str], low, high, passed) -> None:
    result = case(rubric, no=no)
    assert result.complete
    assert low - 1e-9 <= result.composite <= high + 1e-9
    assert result.passed is passed


# The same counts of No placed elsewhere stay in the documented ranges.
@pytest.mark.parametrize(
    ("no", "low", "high", "passed"),
    [
        ({"D3-Q1"}, 0.88, 0.89, True),  # D3 weighs .34: 1 - .34/3
        ({"D1-Q1", "D1-Q2"}, 0.77, 0.78, True),  # both in D1
        ({"D1-Q3", "D3-Q2"}, 0.77, 0.78, True),  # D1 and D3: .7767
        ({"D2-Q1", "D2-Q2", "D2-Q3"}, 0.67, 0.67, False),  # all of D2
    ],
)
def test_placement_variants(rubric: Rubric, no: set[str], low, high, passed) -> None:
    result = case(rubric, no=no)
    assert round(result.composite, 2) >= low and round(result.composite, 2) <= high
    assert result.passed is passed


def test_exact_composite_for_one_no_in_d1(rubric: Rubric) -> None:
    result = case(rubric, no={"D1-Q1"})
    assert result.composite == pytest.approx(0.33 * 2 / 3 + 0.33 + 0.34)
    scores = {d.dimension_id: d.score for d in result.dimensions}
    assert scores == {"D1": pytest.approx(2 / 3), "D2": 1.0, "D3": 1.0}


def test_threshold_is_inclusive() -> None:
    rubric = load_rubric("sregym-v3")
    at = rubric.model_copy(
        update={"scoring": rubric.scoring.model_copy(update={"threshold": 0.89})}
    )
    assert case(at, no={"D1-Q1"}).passed is True


def test_unscored_never_counts_as_no(rubric: Rubric) -> None:
    result = case(rubric, unscored={"D1-Q1", "D2-Q1", "D3-Q1"})
    assert result.complete
    assert result.composite == pytest.approx(1.0)
    d1 = next(d for d in result.dimensions if d.dimension_id == "D1")
    assert (d1.n_scored, d1.n_unscored, d1.score) == (2, 1, 1.0)


def test_unscored_next_to_a_no(rubric: Rubric) -> None:
    result = case(rubric, no={"D2-Q2"}, unscored={"D2-Q1"})
    d2 = next(d for d in result.dimensions if d.dimension_id == "D2")
    assert d2.score == pytest.approx(0.5)
    assert result.composite == pytest.approx(0.33 + 0.33 * 0.5 + 0.34)


def test_dimension_without_scored_question_makes_case_incomplete(rubric: Rubric) -> None:
    result = case(rubric, unscored={"D3-Q1", "D3-Q2", "D3-Q3"})
    assert not result.complete
    assert result.composite is None
    assert result.passed is None
    d3 = next(d for d in result.dimensions if d.dimension_id == "D3")
    assert (d3.score, d3.n_scored, d3.n_unscored) == (None, 0, 3)


def test_missing_judgments_make_the_case_incomplete(rubric: Rubric) -> None:
    partial = [j for j in judgments(rubric) if j.dimension_id != "D2"]
    assert not score_case("inc", "1", partial, rubric).complete


def test_incomplete_case_is_left_out_of_incident_stats(rubric: Rubric) -> None:
    cases = [
        case(rubric, trial="1"),
        case(rubric, trial="2", no={"D1-Q1", "D2-Q1", "D3-Q1"}),
        case(rubric, trial="3", unscored={"D2-Q1", "D2-Q2", "D2-Q3"}),
    ]
    [incident], k = summarize_incidents(cases, rubric)
    assert k == 2
    assert (incident.n_trials, incident.n_complete) == (3, 2)
    assert incident.mean_composite == pytest.approx((1.0 + 2 / 3) / 2)
    assert incident.pass_at_1 == pytest.approx(0.5)
    overall = summarize_overall(cases, [incident], rubric, k)
    assert overall.n_incomplete_cases == 1
    assert overall.n_unscored_questions == 3
    assert overall.n_scored_questions == 24


# ------------------------------------------------------------------ pass@k, pass^k


def test_pass_at_k_hand_computed() -> None:
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2) = 0.7
    assert pass_hat_k(5, 2, 2) == pytest.approx(1 / 10)  # C(2,2)/C(5,2) = 0.1
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_hat_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(4, 1, 3) == pytest.approx(1 - 1 / 4)  # 1 - C(3,3)/C(4,3)
    assert pass_hat_k(4, 3, 3) == pytest.approx(1 / 4)  # C(3,3)/C(4,3)
    assert pass_at_k(3, 0, 2) == 0.0
    assert pass_hat_k(3, 3, 2) == 1.0
    assert pass_at_k(3, 2, 2) == 1.0  # n - c < k: every draw of 2 holds a pass
    assert pass_hat_k(3, 1, 2) == 0.0


@pytest.mark.parametrize(("n", "c", "k"), [(1, 0, 2), (1, 1, 2), (2, 2, 3), (3, 1, 0)])
def test_pass_at_k_undefined(n: int, c: int, k: int) -> None:
    assert pass_at_k(n, c, k) is None
    assert pass_hat_k(n, c, k) is None


def test_pass_at_k_matches_enumeration() -> None:
    """Against brute force: the share of k-subsets with at least one (every) pass."""
    from itertools import combinations

    for n in range(1, 7):
        for c in range(n + 1):
            trials = [True] * c + [False] * (n - c)
            for k in range(1, n + 1):
                subsets = list(combinations(trials, k))
                assert pass_at_k(n, c, k) == pytest.approx(
                    sum(any(s) for s in subsets) / comb(n, k)
                )
                assert pass_hat_k(n, c, k) == pytest.approx(
                    sum(all(s) for s in subsets) / comb(n, k)
                )


def test_incident_pass_at_k_from_cases(rubric: Rubric) -> None:
    fail = {"D1-Q1", "D2-Q1", "D3-Q1"}
    cases = [case(rubric, trial=str(t), no=set() if t <= 2 else fail) for t in range(1, 6)]
    [incident], k = summarize_incidents(cases, rubric, k=2)
    assert k == 2
    assert incident.pass_at_1 == pytest.approx(0.4)
    assert incident.pass_at_k == pytest.approx(0.7)
    assert incident.pass_hat_k == pytest.approx(0.1)


def test_default_k_is_the_fewest_complete_trials(rubric: Rubric) -> None:
    cases = [case(rubric, trial=str(t)) for t in range(1, 4)]
    other = [c.model_copy(update={"incident_id": "other"}) for c in cases[:2]]
    incidents, k = summarize_incidents(cases + other, rubric)
    assert k == 2
    assert {i.incident_id: i.k for i in incidents} == {"inc": 2, "other": 2}


def test_k_larger_than_trials_gives_none(rubric: Rubric) -> None:
    [incident], _ = summarize_incidents([case(rubric)], rubric, k=3)
    assert incident.pass_at_k is None
    assert incident.pass_hat_k is None
    assert incident.pass_at_1 == 1.0


# ------------------------------------------------------------------ bootstrap


def test_bootstrap_is_seeded_and_contains_the_mean() -> None:
    rng = random.Random(7)
    values = [rng.random() for _ in range(20)]
    first = bootstrap_mean(values, seed=11)
    again = bootstrap_mean(values, seed=11)
    other = bootstrap_mean(values, seed=12)
    assert first == again
    assert first.ci != other.ci
    assert first.value == pytest.approx(sum(values) / len(values))
    assert first.ci.low <= first.value <= first.ci.high
    assert first.ci.low < first.ci.high
    assert min(values) <= first.ci.low and first.ci.high <= max(values)
    assert first.n == 20 and first.ci.level == 0.95


def test_bootstrap_degenerate_inputs() -> None:
    empty = bootstrap_mean([])
    assert (empty.value, empty.ci, empty.n) == (None, None, 0)
    one = bootstrap_mean([0.4])
    assert (one.value, one.ci, one.n) == (0.4, None, 1)
    constant = bootstrap_mean([0.5] * 5)
    assert constant.ci.low == constant.ci.high == 0.5


def test_overall_resamples_incidents_with_the_seed(rubric: Rubric) -> None:
    nos = [set(), {"D1-Q1"}, {"D1-Q1", "D2-Q1"}, {"D1-Q1", "D2-Q1", "D3-Q1"}]
    cases = [
        case(rubric, no=no).model_copy(update={"incident_id": f"i{n}"}) for n, no in enumerate(nos)
    ]
    incidents, k = summarize_incidents(cases, rubric)
    a = summarize_overall(cases, incidents, rubric, k, seed=3)
    b = summarize_overall(cases, incidents, rubric, k, seed=3)
    assert a == b
    assert a.mean_composite.n == 4
    assert a.mean_composite.ci.low <= a.mean_composite.value <= a.mean_composite.ci.high
    assert a.pass_rate.value == pytest.approx(3 / 4)
