"""`audit_judge` and `audit_judge_async`: plan the arms, say what they cost, run them one after
another through the store, and compare them (`judge audit` runs them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from agreement.paired import gate_level
from agreement.stats import ClusterBootstrap
from ground_truth.errors import InputError
from ground_truth.models import IncidentSpec, Submission

from ..api import EvalOptions, run_sync
from ..checklist.prompts import PromptRenderer
from ..checklist.results import EvalResult, RunUsage
from ..checklist.rubric import Rubric, load_rubric
from ..judges import Judge, check_judge, make_judge
from ..judges.panel import PanelJudge
from ..run.cache import leaves
from ..run.granularity import check as check_granularity
from ..selftest.cases import CallPlan, CaseRun, judge_cases_async, plan_calls
from . import PROBES
from .arms import Arm, ArmPlan, AuditCase, audit_cases, plan_arms, sample_cases
from .effects import (
    ArmAnswers,
    Stats,
    member_family_effects,
    near_threshold,
    noise_result,
    question_shifts,
    shift_effects,
)
from .families import family_of, self_grading
from .report import ArmRun, AuditReport, NoiseResult, ProbeResult

DEFAULT_TOLERANCE = 0.02
BOOTSTRAP = 4000
TITLES = {
    "order": "questions and dimensions in another order",
    "verbosity-padded": "diagnosis padded to twice its length with neutral sentences",
    "verbosity-shortened": "diagnosis without its filler",
    "anchoring": "the diagnosis before the ground truth",
    "self": "the author named as a model of the judge's family, not of another",
}


def audit_judge(
    specs: Sequence[IncidentSpec],
    submissions: Sequence[Submission],
    rubric: Rubric | str | Path | None = None,
    judge: Judge | None = None,
    options: EvalOptions | None = None,
    *,
    renderer: PromptRenderer | None = None,
    sample: int | None = None,
    seed: int = 0,
    probes: Sequence[str] = PROBES,
    order_seeds: int = 2,
    tolerance: float = DEFAULT_TOLERANCE,
    bootstrap: int = BOOTSTRAP,
    on_plan: Callable[[CallPlan], None] | None = None,
    on_arm: Callable[[ArmRun], None] | None = None,
) -> AuditReport:
    """Measure a judge's bias and noise (`judge audit`): `audit_judge_async` without `await`.
    Defaults: the `sregym-v3` rubric, the rules judge. Works from a script and inside a
    running event loop (Jupyter), as `evaluate` does."""
    rubric, judge = _resolve(rubric, judge)  # a bad judge fails here, in the caller's thread
    return run_sync(
        audit_judge_async(
            specs,
            submissions,
            rubric,
            judge,
            options,
            renderer=renderer,
            sample=sample,
            seed=seed,
            probes=probes,
            order_seeds=order_seeds,
            tolerance=tolerance,
            bootstrap=bootstrap,
            on_plan=on_plan,
            on_arm=on_arm,
        )
    )


async def audit_judge_async(
    specs: Sequence[IncidentSpec],
    submissions: Sequence[Submission],
    rubric: Rubric | str | Path | None = None,
    judge: Judge | None = None,
    options: EvalOptions | None = None,
    *,
    renderer: PromptRenderer | None = None,
    sample: int | None = None,
    seed: int = 0,
    probes: Sequence[str] = PROBES,
    order_seeds: int = 2,
    tolerance: float = DEFAULT_TOLERANCE,
    bootstrap: int = BOOTSTRAP,
    on_plan: Callable[[CallPlan], None] | None = None,
    on_arm: Callable[[ArmRun], None] | None = None,
) -> AuditReport:
    """Measure, from async code, whether a judge's answers move when nothing that matters
    moves: each probe puts the same cases to the judge in a second form (questions in another
    order, the diagnosis padded or shortened, the diagnosis before the ground truth, the
    author named as a model of the judge's family) and reports the paired change in its Yes
    answers and the answers that changed beyond its noise floor (the same cases asked again
    with another seed), each with 95% intervals resampling incidents. A probe is `biased`
    when an effect's gate interval (Bonferroni over the gated effects, so that an unbiased
    judge raises no alarm in 95% of audits) lies beyond `tolerance`.

    - `specs`, `submissions`: the run's inputs (submissions without a spec are left out);
      `sample`: that many cases, spread over as many incidents as possible.
    - `rubric`, `judge`, `renderer`, `options`: as `evaluate_async` takes them; every arm is
      a run of its own through `options.storage` (a store that ran the base answers it
      again), and `options.limits.max_cost` holds for the arms together.
    - `probes`: any of order, verbosity, anchoring, self, noise; `order_seeds`: how many
      orders; `seed`: the orders, the padding and the sample; `bootstrap`: resamples.
    - `on_plan`: gets the calls to make and their cost before the first; `on_arm`: each arm
      once it ran.

    Provider failures leave answers unscored (left out of the comparisons, counted per arm).
    Raises `InputError` when no submission has a spec or a probe name is unknown.
    """
    options = options or EvalOptions()
    check_granularity(options.granularity)
    rubric, judge = _resolve(rubric, judge)
    unknown = sorted(set(probes) - set(PROBES))
    if unknown:
        raise InputError(
            "--probes", f"unknown probe {', '.join(unknown)}; known: {', '.join(PROBES)}"
        )
    renderer = renderer or PromptRenderer()
    known = {spec.id for spec in specs}
    matched = [s for s in submissions if s.incident_id in known]
    if not matched:
        raise InputError(None, "no submission names an incident with a spec: nothing to audit")
    cases = sample_cases(audit_cases(matched), sample, seed)
    arm_plan = plan_arms(cases, rubric, renderer, judge, probes, seed, order_seeds)
    plans = [
        plan_calls(specs, a.cases, a.rubric, a.judge, a.renderer, options) for a in arm_plan.arms
    ]
    if on_plan is not None:
        on_plan(_total(plans, len(cases)))
    answers, runs, results = await _run_arms(specs, arm_plan.arms, plans, options, on_arm)
    report = compare_arms(arm_plan, answers, rubric, judge, cases, seed, tolerance, bootstrap)
    report.arms, report.plan = runs, _total(plans, len(cases))
    report.sampled = len(cases) < len(matched)
    report.run_calls = plans[0].calls + plans[0].stored
    report.audit_calls = sum(p.calls + p.stored for p in plans[1:])
    report.cost_ratio = report.audit_calls / report.run_calls if report.run_calls else None
    report.self_grading = self_grading(matched, list(arm_plan.families))
    report._results = results
    stopped = report.stopped
    report.complete = stopped is None and len(runs) == len(arm_plan.arms)
    if stopped is not None:
        report.notes.append(f"the audit stopped before its last arm: {stopped.message}")
    elif not report.complete:
        report.notes.append(
            f"the audit stopped after arm {runs[-1].name}: the judge failed on every call of it"
        )
    return report


async def _run_arms(
    specs: Sequence[IncidentSpec],
    arms: list[Arm],
    plans: list[CallPlan],
    options: EvalOptions,
    on_arm: Callable[[ArmRun], None] | None,
) -> tuple[dict[str, ArmAnswers], list[ArmRun], dict[str, EvalResult]]:
    """Each arm in turn, within what is left of `max_cost`; the first arm that stops ends it."""
    answers: dict[str, ArmAnswers] = {}
    runs: list[ArmRun] = []
    results: dict[str, EvalResult] = {}
    spent = 0.0
    for arm, plan in zip(arms, plans, strict=True):
        limits = options.limits
        if limits.max_cost is not None:
            limits = replace(limits, max_cost=max(limits.max_cost - spent, 0.0))
        run = await judge_cases_async(
            specs, arm.cases, arm.rubric, arm.judge, arm.renderer, replace(options, limits=limits)
        )
        spent += (run.result.usage.cost_usd if run.result.usage else None) or 0.0
        answers[arm.name] = arm_answers(arm, run)
        runs.append(_arm_run(arm, plan, run))
        results[arm.name] = run.result
        if on_arm is not None:
            on_arm(runs[-1])
        if run.result.stopped is not None or every_call_failed(run.result):
            break
    return answers, runs, results


def every_call_failed(result: EvalResult) -> bool:
    """Whether the judge failed on every call of an arm: the next arms would fail the same way
    (credentials refused, a server down or hung), each call waiting out its timeout."""
    return bool(result.calls) and all(c.error_kind for c in result.calls)


def arm_answers(arm: Arm, run: CaseRun) -> ArmAnswers:
    """An arm's scored answers, verdicts and its members' (a panel's, a cascade's stages') answers,
    by case."""
    found = ArmAnswers(arm.name, arm.probe)
    for case in run.result.cases:
        key = (case.incident_id, case.trial)
        found.answers[key] = {j.question_id: j.answer == "Yes" for j in case.judgments if j.answer}
        if case.composite is not None and case.passed is not None:
            found.composite[key], found.passed[key] = case.composite, case.passed
    # a panel's members' or a cascade's stages' own answers (a result read from schema 1 has
    # them moved there too)
    for j in run.result.member_judgments:
        if j.judge != arm.judge.name and j.answer is not None:
            member = found.members.setdefault(j.judge, {})
            member.setdefault((j.incident_id, j.trial), {})[j.question_id] = j.answer == "Yes"
    return found


def _arm_run(arm: Arm, plan: CallPlan, run: CaseRun) -> ArmRun:
    usage, overall = run.result.usage or RunUsage(), run.result.overall
    return ArmRun(
        name=arm.name,
        probe=arm.probe,
        cases=len(arm.cases),
        calls_planned=plan.calls,
        calls_made=usage.calls_made,
        cache_hits=usage.cache_hits,
        cost_usd=usage.cost_usd,
        unscored_questions=overall.n_unscored_questions,
        stopped=run.result.stopped,
        note=arm.note,
    )


def compare_arms(
    plan: ArmPlan,
    answers: dict[str, ArmAnswers],
    rubric: Rubric,
    judge: Judge,
    cases: Sequence[AuditCase],
    seed: int = 0,
    tolerance: float = DEFAULT_TOLERANCE,
    bootstrap: int = BOOTSTRAP,
) -> AuditReport:
    """The probes' effects from the answers of the arms that ran (by arm name); the arms' runs
    and costs are the caller's to add."""
    base = answers.get("base") or ArmAnswers("base", "base")
    noise = answers.get("repeat")
    comparisons = _comparisons(plan, answers)
    gated = sum(1 for c in comparisons if c[3]) * 2
    incidents = sorted({c.spec_id for c in cases})
    stats = Stats(ClusterBootstrap(incidents, B=bootstrap, seed=seed), gate_level(gated))
    probes = [_probe(*c, base, noise, stats, tolerance) for c in comparisons]
    probes += [_skipped(name, why) for name, why in plan.skipped.items() if name != "noise"]
    probes += _not_run(plan, answers)
    report = AuditReport(
        judge=judge.name,
        rubric={"name": rubric.name, "hash": rubric.hash},
        seed=seed,
        tolerance=tolerance,
        gate_level=stats.gate_level,
        n_cases=len(cases),
        n_incidents=len(incidents),
        biased=[p.probe for p in probes if p.biased],
        probes=probes,
        noise=_noise(plan, base, noise, rubric, stats),
        arms=[],
        run_calls=0,
        audit_calls=0,
        cost_ratio=None,
    )
    if isinstance(judge, PanelJudge):
        families = {c.key: family_of(c.agent_model) or family_of(c.agent) for c in cases}
        members = {
            leaf.name: f for leaf in leaves(judge) if (f := family_of(getattr(leaf, "model", None)))
        }
        report.members = member_family_effects(base, families, members, stats)
    return report


Comparison = tuple[str, ArmAnswers, list[ArmAnswers], bool]
"""(probe, reference arm, variant arms, gated)."""


def _comparisons(plan: ArmPlan, answers: dict[str, ArmAnswers]) -> list[Comparison]:
    """Which arms each probe compares, among those that ran."""
    found: list[Comparison] = []
    base = answers.get("base")
    if base is None:
        return found
    orders = [a for a in answers.values() if a.probe == "order"]
    if orders:
        found.append(("order", base, orders, True))
    for name, probe in (("padded", "verbosity-padded"), ("shortened", "verbosity-shortened"),
                        ("diagnosis-first", "anchoring")):  # fmt: skip
        if name in answers:
            found.append((probe, base, [answers[name]], True))
    named = {a.name.removeprefix("named-"): a for a in answers.values() if a.probe == "self"}
    families = set(plan.families.values())
    if len(families) == 1 and len(named) == 2:
        (own,) = families
        (other,) = set(named) - families
        found.append(("self", named[other], [named[own]], True))
    return found


def _probe(
    probe: str,
    reference: ArmAnswers,
    variants: list[ArmAnswers],
    gated: bool,
    base: ArmAnswers,
    noise: ArmAnswers | None,
    stats: Stats,
    tolerance: float,
) -> ProbeResult:
    effects = shift_effects(reference, variants, noise, base, stats)
    result = ProbeResult(
        probe=probe,
        title=TITLES[probe],
        reference=reference.name,
        arms=[v.name for v in variants],
        n_cases=len({k for v in variants for k in v.answers}),
        questions=question_shifts(reference, variants),
        gated=gated,
        yes_shift=effects["yes_shift"],
        excess_flips=effects["excess_flips"],
        flip_rate=effects["flip_rate"],
        composite_shift=effects["composite_shift"],
        pass_shift=effects["pass_shift"],
    )
    decisive = (result.yes_shift, result.excess_flips)
    result.biased = gated and any(e is not None and e.excludes_zero(tolerance) for e in decisive)
    return result


def _skipped(probe: str, why: str) -> ProbeResult:
    return ProbeResult(
        probe=probe, title=TITLES.get(probe, probe), reference="base", arms=[], skipped=why
    )


def _not_run(plan: ArmPlan, answers: dict[str, ArmAnswers]) -> list[ProbeResult]:
    """The probes whose arms the audit did not reach (it stopped)."""
    missing = sorted({a.probe for a in plan.arms if a.name not in answers} - {"noise", "base"})
    return [_skipped(p, "not run: the audit stopped before its arms") for p in missing]


def _noise(
    plan: ArmPlan, base: ArmAnswers, noise: ArmAnswers | None, rubric: Rubric, stats: Stats
) -> NoiseResult:
    if noise is not None:
        return noise_result(base, noise, rubric, stats)
    why = plan.skipped.get("noise") or (
        "not run: the audit stopped before it"
        if any(a.probe == "noise" for a in plan.arms)
        else "not asked for (--probes)"
    )
    return NoiseResult(measured=False, skipped=why, near_threshold=near_threshold(base, rubric))


def _total(plans: list[CallPlan], cases: int) -> CallPlan:
    """The arms' plans as one: calls, stored answers, cost (None when a price is unknown)."""
    costs = [p.cost_usd for p in plans]
    return CallPlan(
        cases=cases,
        calls=sum(p.calls for p in plans),
        stored=sum(p.stored for p in plans),
        offline=all(p.offline for p in plans),
        cost_usd=None if any(c is None for c in costs) else sum(c or 0.0 for c in costs),
        unpriced=sorted({m for p in plans for m in p.unpriced}),
    )


def _resolve(rubric: Rubric | str | Path | None, judge: Judge | None) -> tuple[Rubric, Judge]:
    if not isinstance(rubric, Rubric):
        rubric = load_rubric(rubric) if rubric is not None else load_rubric()
    return rubric, check_judge(judge) if judge is not None else make_judge()
