"""Planted biases are found and an unbiased judge raises no alarm: measured on the bundled
example, not assumed (issue 40).

- Through the real run (an llm judge answered in-process by the fake provider, the store,
  the gate): each planted bias is found by its own probe with its interval excluding zero,
  and no other probe raises an alarm; random flips show as the noise floor, not as a bias.
- The fast path (`judge.testing.arms`: the fake's answers without the run) gives the same
  effects as the run, so the many-seed checks use it: an unbiased judge with noise raises no
  alarm in at least 95 of 100 seeds, and each planted bias is found in every seed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import EXAMPLE

from ground_truth import load_specs, load_submissions
from judge import EvalOptions, PromptRenderer, Storage, load_rubric
from judge.audit import check as check_module
from judge.audit.arms import audit_cases, plan_arms
from judge.audit.check import audit_judge, compare_arms
from judge.judges import PanelJudge
from judge.testing import FakeProviderConfig
from judge.testing.answers import grounded_policy
from judge.testing.arms import answer_arms
from judge.testing.biases import PlantedBiases
from judge.testing.inprocess import inprocess_judge

SPECS = load_specs(EXAMPLE / "ground_truth")
SUBMISSIONS = load_submissions(EXAMPLE / "outputs")
RUBRIC = load_rubric()
MODEL = "openai/gpt-4o-mini"  # a family (openai) the self probe can name
PLANTED = {
    "order": PlantedBiases(yes_first=3),
    "verbosity-padded": PlantedBiases(yes_min_chars=500),
    "anchoring": PlantedBiases(no_diagnosis_first=True),
    "self": PlantedBiases(yes_family="gpt"),
}
NOISE = PlantedBiases(flip_rate=0.1)


def config(biases: PlantedBiases, seed: int = 0) -> FakeProviderConfig:
    return FakeProviderConfig(
        seed=seed, answer_policy=grounded_policy, biases=biases, logprobs=False
    )


def audit(biases: PlantedBiases, tmp_path: Path | None = None, seed: int = 0):
    judge = inprocess_judge(config(biases, seed), MODEL, logprobs=False)
    store = Storage(store=tmp_path / "audit.sqlite") if tmp_path else Storage()
    return audit_judge(SPECS, SUBMISSIONS, RUBRIC, judge, EvalOptions(storage=store), seed=seed)


@pytest.mark.parametrize("probe", sorted(PLANTED))
def test_each_planted_bias_is_found_by_its_probe_alone(probe: str) -> None:
    report = audit(PLANTED[probe])
    found = next(p for p in report.probes if p.probe == probe)
    assert report.biased == [probe]
    decisive = [e for e in (found.yes_shift, found.excess_flips) if e.excludes_zero(0.02)]
    assert decisive and all(e.ci_low > 0 or e.ci_high < 0 for e in decisive)
    assert report.noise.measured and report.noise.flip_rate.value == 0  # no flips planted


def test_random_flips_are_the_noise_floor_not_a_bias(tmp_path: Path) -> None:
    report = audit(NOISE, tmp_path)
    assert report.biased == []
    flips = report.noise.flip_rate
    assert flips.ci_low > 0 and 0.1 < flips.value < 0.3  # two draws at 0.1: 2p(1-p) = 0.18
    assert report.noise.kappa.value < 0.8 and report.noise.cases_changed > 0
    again = audit(NOISE, tmp_path)  # the store answers every arm: nothing asked again
    assert sum(a.calls_made for a in again.arms) == 0
    assert again.plan.stored == report.plan.calls == 256 and again.plan.calls == 0
    assert again.model_dump(exclude={"arms", "plan"}) == report.model_dump(exclude={"arms", "plan"})


def test_an_unbiased_judge_without_noise_moves_nothing() -> None:
    report = audit(PlantedBiases())
    assert report.biased == [] and report.noise.flip_rate.value == 0
    for probe in report.probes:
        if not probe.skipped:
            assert probe.yes_shift.value == 0 and probe.flip_rate.value == 0
    assert report.cost_ratio == pytest.approx(7.0)  # repeat, 2 orders, padded, anchored, 2 named


def fast(biases: PlantedBiases, seed: int):
    judge = inprocess_judge(model=MODEL)
    cases = audit_cases(SUBMISSIONS)
    plan = plan_arms(cases, RUBRIC, PromptRenderer(), judge, seed=seed)
    answers = answer_arms(plan, SPECS, config(biases, seed))
    return compare_arms(plan, answers, RUBRIC, judge, cases, seed)


def test_the_fast_path_gives_the_runs_effects() -> None:
    for biases in (NOISE, PLANTED["order"]):
        ran, quick = audit(biases, seed=3), fast(biases, seed=3)
        assert quick.probes == ran.probes and quick.noise == ran.noise


@pytest.mark.slow
def test_an_unbiased_judge_raises_no_alarm_in_95_of_100_seeds() -> None:
    alarms = [fast(NOISE, seed).biased for seed in range(100)]
    assert sum(bool(a) for a in alarms) <= 5, alarms


@pytest.mark.slow
@pytest.mark.parametrize("probe", sorted(PLANTED))
def test_each_planted_bias_is_found_in_every_seed(probe: str) -> None:
    planted = PLANTED[probe].model_copy(update={"flip_rate": NOISE.flip_rate})
    missed = [seed for seed in range(20) if probe not in fast(planted, seed).biased]
    assert missed == []


def own_family_panel(biased: bool) -> PanelJudge:
    """Two members: one of the openai family that says Yes to what its family wrote (when
    `biased`: the word `gpt` stands in for its family's style), one of anthropic's."""
    own = PlantedBiases(yes_family="gpt") if biased else PlantedBiases()
    return PanelJudge(
        [
            inprocess_judge(config(own), MODEL, logprobs=False),
            inprocess_judge(config(PlantedBiases()), "anthropic/claude-3-5-haiku", logprobs=False),
        ]
    )


def test_a_panel_member_that_favours_its_family_leads_the_others_on_its_familys_cases() -> None:
    incidents = sorted({s.incident_id for s in SUBMISSIONS})[::2]
    subs = [
        s.model_copy(update={"agent_model": "gpt-4o", "diagnosis": f"{s.diagnosis} (gpt)"})
        if s.incident_id in incidents
        else s
        for s in SUBMISSIONS
    ]
    leads = {}
    for biased in (True, False):
        report = audit_judge(SPECS, subs, RUBRIC, own_family_panel(biased), probes=["noise"])
        leads[biased] = {m.member: m for m in report.members}
    (lead,) = leads[True].values()  # anthropic's member has no submission of its family
    assert lead.member == f"llm:{MODEL}" and lead.family == "openai"
    assert lead.n_own > 0 and lead.n_other > 0
    assert lead.effect.excludes_zero() and lead.effect.value is not None and lead.effect.value > 0
    (fair,) = leads[False].values()
    assert fair.effect.value == 0.0 and not fair.effect.excludes_zero()


def test_a_panels_audit_reads_its_members_from_result_schema_2(monkeypatch) -> None:
    """Each arm's result holds one judgment per (case, question), the panel's, and the
    members' own answers, each with the model's identity, apart in `member_judgments`: the
    audit's members' answers are exactly those, and the own-family lead is measured on them."""
    seen: list[tuple] = []
    real = check_module.arm_answers

    def spy(arm, run):
        found = real(arm, run)
        seen.append((arm, run.result, found))
        return found

    monkeypatch.setattr(check_module, "arm_answers", spy)
    incidents = sorted({s.incident_id for s in SUBMISSIONS})[::2]
    subs = [
        s.model_copy(update={"agent_model": "gpt-4o", "diagnosis": f"{s.diagnosis} (gpt)"})
        if s.incident_id in incidents
        else s
        for s in SUBMISSIONS
    ]
    report = audit_judge(SPECS, subs, RUBRIC, own_family_panel(True), probes=["noise"])
    assert report.complete and [m.member for m in report.members] == [f"llm:{MODEL}"]
    assert len(seen) == 2  # the run's cases and the reseeded repeat
    for arm, result, found in seen:
        assert result.schema_version == "2"
        own = [j.key for j in result.judgments]
        assert len(own) == len(set(own)) > 0 and {j.judge for j in result.judgments} == {
            arm.judge.name
        }
        assert {j.judge for j in result.member_judgments} == {m.name for m in arm.judge.judges()}
        assert all(j.identity is not None for j in result.member_judgments)
        expected: dict[str, dict] = {}
        for j in result.member_judgments:
            if j.answer is not None:
                cases = expected.setdefault(j.judge, {})
                cases.setdefault((j.incident_id, j.trial), {})[j.question_id] = j.answer == "Yes"
        assert found.members == expected
