"""Prediction-powered estimates: against the reference implementation ppi_python, coverage by
simulation (clustered data, a deliberately biased judge), differences between agents, and
active labelling with recorded probabilities.

ppi_py is imported inside the tests that use it: importing it sets
`warnings.simplefilter("ignore")` for the whole process, which inside a test is undone by
pytest's per-test warning capture and at collection time would not be.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from agreement import (
    MeanDifference,
    PPIEstimate,
    active_ppi_mean,
    binary_uncertainty,
    labelling_probabilities,
    ppi_mean,
    ppi_mean_difference,
    rank_for_labelling,
    sample_for_labelling,
)

DATASETS = 2000


def labelled_subset(rng: np.random.Generator, y: np.ndarray, n: int) -> np.ndarray:
    """y on a simple random sample of n items (by item), NaN elsewhere."""
    labels = np.full(len(y), np.nan)
    chosen = rng.choice(len(y), n, replace=False)
    labels[chosen] = y[chosen]
    return labels


def clustered_passes(
    rng: np.random.Generator, incidents: int, trials: int, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pass/fail labels with a pass rate per incident ~ Beta(2, 2) (true mean 0.5), and a judge
    biased toward passing: it passes 90% of real passes and 35% of real fails (its mean is
    0.625). Returns judge, labels on n items, incident per item."""
    incident = np.repeat(np.arange(incidents), trials)
    rate = rng.beta(2, 2, incidents)[incident]
    y = (rng.random(len(incident)) < rate).astype(float)
    noise = rng.random(len(y))
    judge = np.where(y == 1, noise < 0.9, noise < 0.35).astype(float)
    return judge, labelled_subset(rng, y, n), incident


def covers(estimate, truth: float) -> bool:
    return estimate.ci_low <= truth <= estimate.ci_high


# --- against ppi_python ----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("lam", [None, 0.0, 0.4, 1.0])
def test_matches_ppi_python_with_clusters_of_one(seed, lam):
    from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

    rng = np.random.default_rng(seed)
    n, n_unlabelled = [(40, 400), (100, 2000), (15, 60)][seed % 3]
    truth = rng.random(n + n_unlabelled)
    binary = seed % 2 == 0
    y = (rng.random(n) < truth[:n]).astype(float) if binary else truth[:n] + rng.normal(0, 0.1, n)
    judge = np.clip(truth + rng.normal(0.1, 0.2, len(truth)), 0, 1)
    labels = np.concatenate([y, np.full(n_unlabelled, np.nan)])
    alpha = [0.05, 0.1][seed % 2]

    ours = ppi_mean(judge, labels, alpha=alpha, lam=lam)
    point = ppi_mean_pointestimate(y, judge[:n], judge[n:], lam=lam)
    low, high = ppi_mean_ci(y, judge[:n], judge[n:], alpha=alpha, lam=lam)
    assert ours.ppi.value == pytest.approx(float(np.squeeze(point)), abs=1e-9)
    assert ours.ppi.ci_low == pytest.approx(float(np.squeeze(low)), abs=1e-9)
    assert ours.ppi.ci_high == pytest.approx(float(np.squeeze(high)), abs=1e-9)
    c_low, c_high = classical_mean_ci(y, alpha=alpha)
    assert (ours.labels_only.ci_low, ours.labels_only.ci_high) == pytest.approx(
        (float(c_low), float(c_high)), abs=1e-9
    )
    if lam is not None:
        assert ours.ppi.lam == lam


def test_cluster_ids_that_are_all_different_change_nothing():
    rng = np.random.default_rng(1)
    judge, labels, _ = clustered_passes(rng, 50, 4, 60)
    alone = ppi_mean(judge, labels)
    named = ppi_mean(judge, labels, [f"item-{i}" for i in range(len(judge))])
    assert alone == named


# --- coverage by simulation ------------------------------------------------------------------


@pytest.mark.slow
def test_ppi_covers_the_truth_where_the_biased_judge_alone_does_not():
    """2,000 datasets: 300 incidents x 5 trials, 150 items labelled, true pass rate 0.5."""
    rng = np.random.default_rng(23)
    hits = {"ppi": 0, "labels": 0, "judge": 0}
    ratio = []
    for _ in range(DATASETS):
        result = ppi_mean(*clustered_passes(rng, 300, 5, 150))
        hits["ppi"] += covers(result.ppi, 0.5)
        hits["labels"] += covers(result.labels_only, 0.5)
        hits["judge"] += covers(result.judge_only, 0.5)
        ratio.append(result.effective_labels / 150)
    coverage = {k: v / DATASETS for k, v in hits.items()}
    # Seen: PPI 0.944, labels only 0.9445, judge only 0.000 (its mean is 0.625); effective
    # labels 1.38 x 150; mean interval width 0.141 against 0.165 from the labels alone.
    assert 0.93 <= coverage["ppi"] <= 0.97
    assert 0.93 <= coverage["labels"] <= 0.97
    assert coverage["judge"] < 0.05
    assert np.mean(ratio) > 1.1  # the judge was worth more than the labels alone


@pytest.mark.slow
def test_ignoring_the_incidents_makes_intervals_too_narrow():
    """100 incidents x 20 trials, 300 labels: trials of one incident share its pass rate."""
    rng = np.random.default_rng(24)
    robust = naive = 0
    for _ in range(1000):
        judge, labels, incident = clustered_passes(rng, 100, 20, 300)
        robust += covers(ppi_mean(judge, labels, incident).ppi, 0.5)
        naive += covers(ppi_mean(judge, labels).ppi, 0.5)
    # Seen: cluster-robust 0.941, every item its own cluster 0.837.
    assert 0.93 <= robust / 1000 <= 0.97
    assert naive / 1000 < 0.90


# --- edge cases ------------------------------------------------------------------------------


def test_fewer_than_two_labels_leave_ppi_undefined_with_the_reason():
    result = ppi_mean([0.2, 0.4, 0.6], [1.0, None, None])
    assert result.ppi.value is None and "at least 2 labels" in (result.ppi.note or "")
    assert result.labels_only.value == 1.0 and result.labels_only.se is None
    assert result.judge_only.value == pytest.approx(0.4) and result.judge_only.se is not None
    assert result.effective_labels is None
    assert "undefined" in result.ppi.text()


def test_every_item_labelled_is_the_labels_only_estimate():
    y = [1.0, 0.0, 1.0, 1.0]
    result = ppi_mean([0.9, 0.1, 0.4, 0.8], y)
    assert result.ppi.lam == 0.0
    assert result.ppi.value == result.labels_only.value == 0.75
    assert result.ppi.se == pytest.approx(result.labels_only.se)


def test_one_incident_gives_a_value_but_no_interval():
    result = ppi_mean([1, 0, 1, 1], [1, 0, None, None], ["inc"] * 4)
    assert result.ppi.value is not None and result.ppi.se is None
    assert "2 clusters" in (result.ppi.note or "")


def test_effective_labels_definition():
    rng = np.random.default_rng(3)
    result = ppi_mean(*clustered_passes(rng, 200, 3, 80))
    expected = 80 * result.labels_only.se**2 / result.ppi.se**2
    assert result.effective_labels == pytest.approx(expected)
    assert PPIEstimate.model_validate_json(result.model_dump_json()) == result


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([0.5, 0.5], [1.0]), {}, "labels: expected 2 values"),
        (([0.5, float("nan")], [1.0, 0.0]), {}, "judge: expected finite numbers"),
        (([0.5, 0.5, 0.5], [1.0, 0.0, None]), {"lam": 1.5}, r"lam: expected a number in \[0, 1\]"),
        (([0.5, 0.5], [1.0, 0.0]), {"alpha": 1.0}, "alpha"),
        (([0.5, 0.5], [1.0, 0.0], ["a"]), {}, "clusters: expected 2 cluster ids"),
        (([0.5, 0.5], ["yes", 0.0]), {}, "labels: expected numbers"),
    ],
)
def test_bad_input_is_named(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        ppi_mean(*args, **kwargs)


# --- A versus B ------------------------------------------------------------------------------


def two_agents(
    rng: np.random.Generator, shift_a: float, incidents: int = 150, trials: int = 4, n: int = 120
) -> tuple[np.ndarray, ...]:
    """Two agents on the same incidents (a hard incident is hard for both). B's pass logit is
    the incident's; A's is shifted by `shift_a`. The judge passes B's real fails twice as often
    as A's (it likes B's style)."""
    incident = np.repeat(np.arange(incidents), trials)
    hardness = rng.normal(0, 1.5, incidents)[incident]
    y_a = (rng.random(len(incident)) < expit(hardness + shift_a)).astype(float)
    y_b = (rng.random(len(incident)) < expit(hardness)).astype(float)
    judge_a = np.where(y_a == 1, rng.random(len(y_a)) < 0.9, rng.random(len(y_a)) < 0.2)
    judge_b = np.where(y_b == 1, rng.random(len(y_b)) < 0.9, rng.random(len(y_b)) < 0.4)
    return (
        judge_a.astype(float),
        labelled_subset(rng, y_a, n),
        judge_b.astype(float),
        labelled_subset(rng, y_b, n),
        incident,
    )


def difference(data: tuple[np.ndarray, ...], **kwargs) -> MeanDifference:
    judge_a, labels_a, judge_b, labels_b, incident = data
    return ppi_mean_difference(
        judge_a, labels_a, judge_b, labels_b, clusters_a=incident, clusters_b=incident, **kwargs
    )


def test_equal_agents_cannot_be_told_apart_where_the_judge_alone_would_pick_b():
    rng = np.random.default_rng(30)
    verdicts = {"A better": 0, "B better": 0, "cannot tell apart": 0}
    judge_says_b = 0
    for _ in range(1000):
        result = difference(two_agents(rng, shift_a=0.0))
        verdicts[result.verdict] += 1
        judge_says_b += result.judge_only.ci_high < 0
    # Seen: cannot tell apart 945 of 1,000 (24 A better, 31 B better); the judge alone calls
    # B better in 965.
    assert 930 <= verdicts["cannot tell apart"] <= 970
    assert judge_says_b > 900


def test_a_clearly_better_agent_is_named():
    rng = np.random.default_rng(31)
    results = [difference(two_agents(rng, shift_a=1.5), names=("gpt", "rules")) for _ in range(50)]
    assert sum(r.verdict == "A better" for r in results) >= 45
    better = next(r for r in results if r.verdict == "A better")
    assert better.summary.startswith("gpt better: 0.")  # seen: 50 of 50, e.g. 0.263 [0.169, 0.357]
    assert MeanDifference.model_validate_json(better.model_dump_json()) == better


def test_shared_incidents_narrow_the_difference():
    rng = np.random.default_rng(32)
    judge_a, labels_a, judge_b, labels_b, incident = two_agents(rng, 0.0, 100, 6, 300)
    shared = difference((judge_a, labels_a, judge_b, labels_b, incident))
    apart = ppi_mean_difference(
        judge_a, labels_a, judge_b, labels_b, clusters_a=incident, clusters_b=incident + 10_000
    )
    assert shared.ppi.value == pytest.approx(apart.ppi.value)
    assert shared.ppi.se < apart.ppi.se
    one_side = ppi_mean(judge_a, labels_a, incident).ppi.value
    other = ppi_mean(judge_b, labels_b, incident).ppi.value
    assert shared.ppi.value == pytest.approx(one_side - other)


# --- active labelling ------------------------------------------------------------------------


def test_probabilities_are_proportional_floored_capped_and_sum_to_the_budget():
    u = np.array([0.0, 0.01, 0.1, 0.2, 0.4, 5.0])
    pi = labelling_probabilities(u, budget=3, floor=0.1)
    assert pi.sum() == pytest.approx(3)
    assert (pi > 0).all() and pi[-1] == 1.0  # capped at 1
    floor = 0.1 * u.mean()
    scale = pi[3] / 0.2
    np.testing.assert_allclose(pi[:5], scale * np.maximum(u[:5], floor))
    np.testing.assert_allclose(labelling_probabilities(np.zeros(4), 2), [0.5] * 4)
    with pytest.raises(ValueError, match="budget"):
        labelling_probabilities(u, budget=7)
    with pytest.raises(ValueError, match="uncertainty: expected numbers >= 0"):
        labelling_probabilities([-1.0, 1.0], budget=1)


def logistic_items(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """300 incidents x 5 trials; the pass logit is incident + item noise (symmetric: the true
    pass rate is exactly 0.5); the judge's P(pass) is shifted by +1 on the logit scale."""
    incident = np.repeat(np.arange(300), 5)
    logit = rng.normal(0, 1.5, 300)[incident] + rng.normal(0, 1.5, len(incident))
    y = (rng.random(len(logit)) < expit(logit)).astype(float)
    return expit(logit + 1.0), y, incident


@pytest.mark.slow
def test_active_labelling_covers_and_beats_uniform_labelling_at_the_same_budget():
    rng = np.random.default_rng(40)
    hits_active = hits_uniform = 0
    se_active, se_uniform, fixed = [], [], []
    for _ in range(DATASETS):
        judge, y, incident = logistic_items(rng)
        pi = labelling_probabilities(binary_uncertainty(judge), budget=150)
        drawn = sample_for_labelling(pi, rng)
        labels = np.where(drawn, y, np.nan)
        active = active_ppi_mean(judge, labels, pi, incident).ppi
        uniform = ppi_mean(judge, labelled_subset(rng, y, 150), incident).ppi
        hits_active += covers(active, 0.5)
        hits_uniform += covers(uniform, 0.5)
        se_active.append(active.se)
        se_uniform.append(uniform.se)
        fixed.append(active_ppi_mean(judge, labels, pi, incident, lam=1.0).ppi.value)
    # Seen: active 0.9365, uniform 0.944; active standard errors 0.92 x uniform; with λ = 1
    # the mean estimate 0.4998 (standard error of that mean 0.0008).
    assert 0.93 <= hits_active / DATASETS <= 0.97
    assert 0.93 <= hits_uniform / DATASETS <= 0.97
    assert np.mean(se_active) < 0.97 * np.mean(se_uniform)
    # With λ fixed the estimator is exactly unbiased: the mean of 2,000 lies within 4 standard
    # errors of the truth.
    assert abs(np.mean(fixed) - 0.5) < 4 * np.std(fixed) / np.sqrt(DATASETS)


def test_active_labels_only_is_horvitz_thompson():
    judge = np.array([0.9, 0.2, 0.6, 0.5])
    labels = np.array([1.0, np.nan, 0.0, 1.0])
    pi = np.array([0.5, 0.25, 0.8, 1.0])
    result = active_ppi_mean(judge, labels, pi)
    assert result.labels_only.value == pytest.approx((1 / 0.5 + 0 + 1 / 1.0) / 4)
    assert result.labels_only.lam == 0.0
    with pytest.raises(ValueError, match=r"probabilities: expected numbers in \(0, 1\]"):
        active_ppi_mean(judge, labels, [0.5, 0.0, 0.8, 1.0])


def test_sampling_is_reproducible_from_a_seed():
    pi = labelling_probabilities(np.linspace(0, 1, 50), budget=10)
    np.testing.assert_array_equal(sample_for_labelling(pi, 7), sample_for_labelling(pi, 7))


def test_ranking_puts_the_items_the_judge_is_unsure_of_first():
    rng = np.random.default_rng(50)
    judge, y, _ = logistic_items(rng)
    labels = labelled_subset(rng, y, 100)
    ranked = rank_for_labelling(judge, labels)
    assert len(ranked) == len(judge) - 100
    assert {c.index for c in ranked} == set(np.flatnonzero(np.isnan(labels)))
    shrinks = [c.shrink for c in ranked]
    assert shrinks == sorted(shrinks, reverse=True) and min(shrinks) > 0
    top, bottom = ranked[:50], ranked[-50:]
    assert np.mean([binary_uncertainty([judge[c.index]])[0] for c in top]) > 0.45
    assert np.mean([binary_uncertainty([judge[c.index]])[0] for c in bottom]) < 0.2
    assert rank_for_labelling([0.5, 0.5], [1.0, 0.0]) == []


def test_ranking_by_hand_before_any_label():
    # No labels: λ = 1, s² = mean σ², σ_j² = p(1-p) with p = judge.
    ranked = rank_for_labelling([0.5, 0.9, 1.0], [None, None, None])
    sigma2 = np.array([0.25, 0.09, 0.0])
    z = 1.959963984540054
    now = sigma2.sum() / 9 + sigma2.mean()
    after = (sigma2.sum() - sigma2) / 9 + (2 / 3) ** 2 * sigma2.mean()
    assert [c.index for c in ranked] == [0, 1, 2]
    np.testing.assert_allclose([c.expected_sq_error for c in ranked], sigma2)
    np.testing.assert_allclose([c.half_width_after for c in ranked], z * np.sqrt(after))
    np.testing.assert_allclose([c.shrink for c in ranked], z * np.sqrt(now) - z * np.sqrt(after))
