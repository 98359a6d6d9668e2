"""The audit's statistics, checked on their own: paired effects and their two intervals
(`agreement.paired`), and the rank correlations of `judge agreement --rank`
(`agreement.leaderboard`) against `scipy.stats.kendalltau` / `spearmanr`."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from helpers import EXAMPLE
from scipy.stats import kendalltau, spearmanr

from agreement import (
    LabelFileError,
    difference_effect,
    gate_level,
    kendall_tau_b,
    paired_effect,
    rank_stability,
    spearman_rho,
)
from ground_truth import load_specs, load_submissions
from judge import evaluate
from judge.cli import main
from judge.judges import PanelJudge
from judge.report import render_html
from judge.testing import FakeProviderConfig
from judge.testing.answers import grounded_policy
from judge.testing.biases import PlantedBiases
from judge.testing.inprocess import inprocess_judge

RNG = np.random.default_rng(40)


def test_a_paired_effect_is_the_mean_with_a_wider_gate_interval() -> None:
    clusters = [f"i{n % 10}" for n in range(200)]
    values = RNG.normal(0.3, 1.0, 200).tolist()
    effect = paired_effect(values, clusters, gate_level=gate_level(8), seed=1)
    assert effect.value == pytest.approx(np.mean(values))
    assert effect.n == 200 and effect.n_clusters == 10
    assert effect.gate_low < effect.ci_low < effect.value < effect.ci_high < effect.gate_high
    assert gate_level(8) == pytest.approx(1 - 0.05 / 8)


def test_what_excludes_zero_depends_on_the_side_and_the_tolerance() -> None:
    up = paired_effect([0.1] * 50 + [0.2] * 50, [f"i{n % 5}" for n in range(100)])
    down = paired_effect([-0.1] * 50 + [-0.2] * 50, [f"i{n % 5}" for n in range(100)])
    assert up.excludes_zero() and up.excludes_zero(0.05) and not up.excludes_zero(0.2)
    assert down.excludes_zero()
    one_sided = down.model_copy(update={"side": "greater"})
    assert not one_sided.excludes_zero()  # fewer flips than the noise is no bias
    none = paired_effect([0.0] * 40, [f"i{n % 4}" for n in range(40)])
    assert none.value == 0 and not none.excludes_zero()


def test_undefined_effects_say_why() -> None:
    assert paired_effect([], []).undefined == "no item was answered in both forms"
    single = paired_effect([1.0, 0.0], ["i1", "i1"])
    assert single.value == 0.5 and single.ci_low is None and "one incident" in single.undefined
    assert single.text() == "+0.500" and paired_effect([], []).text() == "n/a"


def test_a_difference_of_two_groups_is_the_difference_of_their_means() -> None:
    own = RNG.normal(0.4, 0.5, 60).tolist()
    other = RNG.normal(0.1, 0.5, 90).tolist()
    clusters = [f"i{n % 12}" for n in range(150)]
    effect = difference_effect(own, clusters[:60], other, clusters[60:], seed=2)
    assert effect.value == pytest.approx(np.mean(own) - np.mean(other))
    assert effect.ci_low < effect.value < effect.ci_high and effect.n == 150


def test_the_same_bootstrap_gives_the_same_resamples() -> None:
    from agreement.stats import ClusterBootstrap

    clusters = [f"i{n % 7}" for n in range(70)]
    boot = ClusterBootstrap(sorted(set(clusters)), B=500, seed=3)
    values = RNG.normal(size=70).tolist()
    a = paired_effect(values, clusters, bootstrap=boot)
    b = paired_effect(values, clusters, bootstrap=boot)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)


def test_rank_correlations_match_scipy_with_ties() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on a constant input; both give nan
        for _ in range(300):
            n = int(RNG.integers(2, 15))
            x = RNG.integers(0, 5, n) / 4
            y = RNG.integers(0, 5, n) / 4
            for ours, theirs in ((kendall_tau_b, kendalltau), (spearman_rho, spearmanr)):
                expected = theirs(x, y).statistic
                got = ours(x, y)
                assert (np.isnan(got) and np.isnan(expected)) or got == pytest.approx(expected)


def test_a_missing_score_leaves_that_agent_out_of_the_pair() -> None:
    x = [0.1, 0.5, np.nan, 0.9, 0.4]
    y = [0.2, 0.6, 0.3, np.nan, 0.1]
    assert kendall_tau_b(x, y) == pytest.approx(
        kendalltau([0.1, 0.5, 0.4], [0.2, 0.6, 0.1]).statistic
    )


WEIGHTS = {"D1": 0.5, "D2": 0.5}


def result(judge: str, scores: dict[tuple[str, str], tuple[str, float]], members=None) -> dict:
    """A result file's JSON: cases (incident, trial) -> (agent, composite), threshold 0.5;
    `members`: member -> (incident, trial) -> Yes answers of D1 and D2 (two questions each)."""
    cases = [
        {"incident_id": i, "trial": t, "agent": a, "composite": c, "passed": c >= 0.5}
        for (i, t), (a, c) in scores.items()
    ]
    judgments = []
    for member, answers in (members or {}).items():
        for (i, t), (d1, d2) in answers.items():
            for d, yes in (("D1", d1), ("D2", d2)):
                for q in range(2):
                    answer = "Yes" if q < yes else "No"
                    judgments.append(
                        {"incident_id": i, "trial": t, "dimension_id": d, "question_id": f"{d}-Q{q}",
                         "answer": answer, "judge": member}
                    )  # fmt: skip
    config = {
        "judge": {"name": "panel" if members else judge, "model": judge, "label": judge},
        "rubric": {"weights": WEIGHTS, "threshold": 0.5},
    }
    return {"config": config, "cases": cases, "judgments": judgments}


def dataset(noise: float, seed: int) -> dict[tuple[str, str], tuple[str, float]]:
    """Five agents of rising quality on eight incidents, composites with judge noise."""
    rng = np.random.default_rng(seed)
    return {
        (f"inc-{i}", agent): (agent, float(np.clip(q / 5 + rng.normal(0, noise), 0, 1)))
        for i in range(8)
        for q, agent in enumerate(["a1", "a2", "a3", "a4", "a5"])
    }


def per_agent(scores, metric: str) -> list[float]:
    """Per-agent mean over incidents, computed apart from the module (one case per incident)."""
    agents = sorted({a for a, _ in scores.values()})
    value = (lambda c: float(c >= 0.5)) if metric == "pass_rate" else (lambda c: c)
    return [np.mean([value(c) for a, c in scores.values() if a == agent]) for agent in agents]


def test_rank_stability_matches_scipy_on_the_agents_scores() -> None:
    judges = {name: dataset(noise, seed) for name, noise, seed in
              (("j1", 0.05, 1), ("j2", 0.25, 2), ("j3", 0.6, 3))}  # fmt: skip
    report = rank_stability([result(n, s) for n, s in judges.items()], B=300, seed=0)
    assert report.raters == ["j1", "j2", "j3"] and report.agents == ["a1", "a2", "a3", "a4", "a5"]
    assert len(report.pairs) == 6 and len(report.held_out) == 6
    for pair in report.pairs:
        x, y = (per_agent(judges[j], pair.metric) for j in (pair.a, pair.b))
        assert pair.kendall_tau.value == pytest.approx(kendalltau(x, y).statistic)
        assert pair.spearman_rho.value == pytest.approx(spearmanr(x, y).statistic)
        low, high = pair.kendall_tau.ci_low, pair.kendall_tau.ci_high
        assert low is not None and low <= pair.kendall_tau.value + 1e-9 <= high + 2e-9
    for held in report.held_out:
        others = [per_agent(judges[j], held.metric) for j in judges if j != held.a]
        x, y = per_agent(judges[held.a], held.metric), np.mean(others, axis=0)
        assert held.kendall_tau.value == pytest.approx(kendalltau(x, y).statistic)
    assert report.scores["j1"]["a5"].pass_rate == 1.0 and report.scores["j1"]["a1"].n_cases == 8


def test_a_panels_members_are_judges_scored_from_their_own_answers() -> None:
    cases = {("inc-1", "t1"): ("a", 1.0), ("inc-2", "t1"): ("b", 0.0)}
    members = {
        "m1": {("inc-1", "t1"): (2, 2), ("inc-2", "t1"): (0, 1)},  # 1.0 and 0.25
        "m2": {("inc-1", "t1"): (0, 0), ("inc-2", "t1"): (2, 1)},  # 0.0 and 0.75
    }
    report = rank_stability([result("panel", cases, members)], B=50)
    assert report.raters == ["panel", "m1", "m2"]
    assert report.scores["m1"]["a"].mean_composite == 1.0
    assert (
        report.scores["m2"]["b"].mean_composite == 0.75 and report.scores["m2"]["b"].pass_rate == 1
    )
    m1_m2 = next(p for p in report.pairs if (p.a, p.b) == ("m1", "m2") and p.metric == "pass_rate")
    assert m1_m2.kendall_tau.value == -1.0
    with pytest.raises(LabelFileError, match="two judges or more"):
        rank_stability([result("panel", cases, members)], B=50, members=False)
    apart = result("panel", cases, members)  # members' answers beside the panel's judgments
    apart["member_judgments"], apart["judgments"] = apart["judgments"], []
    assert rank_stability([apart], B=50) == report


def test_bad_inputs_are_refused_with_the_reason(tmp_path: Path, capsys) -> None:
    cases = {("inc-1", "t1"): ("a", 1.0)}
    with pytest.raises(LabelFileError, match="two judges or more"):
        rank_stability([result("j", cases)])
    nameless = result("j", cases)
    for case in nameless["cases"]:
        case["agent"] = None
    with pytest.raises(LabelFileError, match="no case names its agent"):
        rank_stability([nameless, result("k", cases)])
    path = tmp_path / "r.json"
    path.write_text(json.dumps(nameless))
    assert main(["agreement", "--rank", str(path), str(path)]) == 2
    assert "no case names its agent" in capsys.readouterr().err


@pytest.mark.slow
def test_a_panels_html_report_shows_whether_its_members_rank_the_agents_alike() -> None:
    specs = load_specs(EXAMPLE / "ground_truth")
    subs = load_submissions(EXAMPLE / "outputs")
    members = [
        inprocess_judge(FakeProviderConfig(answer_policy=grounded_policy), "openai/a"),
        inprocess_judge(
            FakeProviderConfig(answer_policy=grounded_policy, biases=PlantedBiases(yes_first=3)),
            "openai/b",
        ),
    ]
    panel = evaluate(specs, subs, judge=PanelJudge(members))
    page = render_html(panel)
    section = page[
        page.index('id="ranking"') : page.index("</section>", page.index('id="ranking"'))
    ]
    expected = rank_stability([panel.model_dump(mode="json")])
    assert expected.raters == ["panel", "llm:openai/a", "llm:openai/b"]
    assert len(expected.agents) == 6
    for pair in expected.pairs:
        assert f"<td>{pair.a}</td><td>{pair.b}</td>" in section
        assert f"<td>{pair.kendall_tau.text()}</td>" in section
    alone = evaluate(specs, subs, judge=members[0])
    assert 'id="ranking"' not in render_html(alone)


def test_a_panel_whose_members_answered_nothing_renders_without_a_ranking() -> None:
    specs = load_specs(EXAMPLE / "ground_truth")
    subs = load_submissions(EXAMPLE / "outputs")[:6]
    garbled = FakeProviderConfig(fault_rates={"malformed": 1.0})
    members = [inprocess_judge(garbled, "openai/a"), inprocess_judge(garbled, "openai/b")]
    panel = evaluate(specs, subs, judge=PanelJudge(members))
    assert [j.answer for j in panel.member_judgments if j.answer is not None] == []
    assert 'id="ranking"' not in render_html(panel)  # one judge: nothing to rank against
