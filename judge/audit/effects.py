"""From the arms' answers to the probes' effects: every comparison is paired (the same case and
question in two arms) and its interval resamples incidents (`agreement.paired`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from agreement.paired import PairedEffect, Side, difference_effect, paired_effect
from agreement.stats import ClusterBootstrap, Estimate, pair_formulas

from ..checklist.rubric import Rubric
from .report import MemberFamilyEffect, NoiseResult, QuestionShift

Key = tuple[str, str]
"""(incident id, case id)."""
YES = "Yes"


@dataclass
class ArmAnswers:
    """One arm's scored answers by case, its verdicts, and a panel's members' answers."""

    name: str
    probe: str
    answers: dict[Key, dict[str, bool]] = field(default_factory=dict)
    """Per case, each scored question: True for Yes (an unscored question is left out)."""
    composite: dict[Key, float] = field(default_factory=dict)
    passed: dict[Key, bool] = field(default_factory=dict)
    members: dict[str, dict[Key, dict[str, bool]]] = field(default_factory=dict)


@dataclass
class Stats:
    """What every effect of one audit shares: the incidents' resamples and the gate's level."""

    bootstrap: ClusterBootstrap
    gate_level: float

    def effect(self, rows: Sequence[tuple[str, float]], side: Side = "two-sided") -> PairedEffect:
        """The mean of `rows` ((incident, value) pairs) with its intervals."""
        return paired_effect(
            [v for _, v in rows],
            [c for c, _ in rows],
            side=side,
            gate_level=self.gate_level,
            bootstrap=self.bootstrap,
        )


def score(answers: dict[str, bool], rubric: Rubric) -> tuple[float, bool] | None:
    """A case's composite and verdict from its scored answers, as `judge.checklist.scoring`
    scores them; None when a dimension has no scored answer."""
    composite = 0.0
    for dimension in rubric.dimensions:
        given = [answers[q.id] for q in dimension.questions if q.id in answers]
        if not given:
            return None
        composite += rubric.scoring.weights[dimension.id] * sum(given) / len(given)
    composite = round(composite, 10)
    return composite, composite >= rubric.scoring.threshold - 1e-9


def pairs(reference: ArmAnswers, variant: ArmAnswers) -> Iterable[tuple[Key, str, bool, bool]]:
    """(case, question, reference answer, variant answer) for every item both arms scored."""
    for key, given in variant.answers.items():
        had = reference.answers.get(key)
        if had is None:
            continue
        for question, answer in given.items():
            if question in had:
                yield key, question, had[question], answer


def shift_effects(
    reference: ArmAnswers,
    variants: Sequence[ArmAnswers],
    noise: ArmAnswers | None,
    base: ArmAnswers,
    stats: Stats,
) -> dict[str, PairedEffect]:
    """A probe's effects: Yes shift, flips, flips beyond the noise floor, composite and pass
    shifts (variants pooled: each item once per variant)."""
    yes, flips, excess, composite, passed = [], [], [], [], []
    for variant in variants:
        for (incident, case), question, had, given in pairs(reference, variant):
            yes.append((incident, float(given) - float(had)))
            flips.append((incident, float(given != had)))
            floor = _noise_flip(base, noise, (incident, case), question)
            if floor is not None:
                excess.append((incident, float(given != had) - floor))
        for key, value in variant.composite.items():
            if key in reference.composite:
                composite.append((key[0], value - reference.composite[key]))
        for key, value in variant.passed.items():
            if key in reference.passed:
                passed.append((key[0], float(value) - float(reference.passed[key])))
    return {
        "yes_shift": stats.effect(yes),
        "flip_rate": stats.effect(flips, "greater"),
        "excess_flips": stats.effect(excess, "greater"),
        "composite_shift": stats.effect(composite),
        "pass_shift": stats.effect(passed),
    }


def _noise_flip(
    base: ArmAnswers, noise: ArmAnswers | None, key: Key, question: str
) -> float | None:
    """Whether the base answer changed when asked again (0 without a repeat arm: a judge that
    cannot be reseeded is taken as deterministic); None when the repeat left it unscored."""
    if noise is None:
        return 0.0
    had = base.answers.get(key, {}).get(question)
    again = noise.answers.get(key, {}).get(question)
    if had is None or again is None:
        return None
    return float(had != again)


def question_shifts(reference: ArmAnswers, variants: Sequence[ArmAnswers]) -> list[QuestionShift]:
    """Per question: items paired, share flipped and Yes-rate change (pooled over variants)."""
    found: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for variant in variants:
        for _, question, had, given in pairs(reference, variant):
            found[question].append((had, given))
    return [
        QuestionShift(
            question_id=q,
            n=len(items),
            flip_rate=sum(h != g for h, g in items) / len(items),
            yes_shift=sum(float(g) - float(h) for h, g in items) / len(items),
        )
        for q, items in sorted(found.items())
    ]


def noise_result(base: ArmAnswers, repeat: ArmAnswers, rubric: Rubric, stats: Stats) -> NoiseResult:
    """How often the judge's answers and verdicts change when it is asked again."""
    flips = [(k[0], float(had != given)) for k, _, had, given in pairs(base, repeat)]
    changed = [k for k, v in repeat.passed.items() if k in base.passed and base.passed[k] != v]
    both = [k for k in repeat.passed if k in base.passed]
    return NoiseResult(
        measured=True,
        flip_rate=stats.effect(flips, "greater"),
        kappa=kappa(base, repeat, stats.bootstrap),
        questions=question_shifts(base, [repeat]),
        n_cases=len(both),
        cases_changed=len(changed),
        n_incidents=len({k[0] for k in both}),
        incidents_changed=len({k[0] for k in changed}),
        near_threshold=near_threshold(base, rubric),
    )


def kappa(base: ArmAnswers, repeat: ArmAnswers, bootstrap: ClusterBootstrap) -> Estimate:
    """Cohen's kappa of the first run against the repeat over every paired answer, with a 95%
    interval resampling incidents."""
    rows = list(pairs(base, repeat))
    if not rows:
        return Estimate(undefined="no answer scored in both runs")
    cells = np.array([_cell(had, given) for _, _, had, given in rows], dtype=float)
    point = pair_formulas(cells.sum(axis=0))["kappa"]
    if not np.isfinite(point):
        return Estimate(undefined="every answer is the same in both runs (kappa is 0/0)")
    replicates = pair_formulas(bootstrap.replicate([k[0] for k, *_ in rows], cells))["kappa"]
    finite = replicates[np.isfinite(replicates)]
    low, high = np.quantile(finite, [0.025, 0.975]) if finite.size > 1 else (None, None)
    return Estimate(
        value=float(point),
        ci_low=None if low is None else float(low),
        ci_high=None if high is None else float(high),
    )


def _cell(had: bool, given: bool) -> list[float]:
    """The item's one-hot cell of the 2x2 table (yes_yes, yes_no, no_yes, no_no)."""
    return [
        float(had and given),
        float(had and not given),
        float(not had and given),
        float(not had and not given),
    ]


def near_threshold(arm: ArmAnswers, rubric: Rubric) -> int:
    """Cases whose verdict one scored answer, changed, would change."""
    dimension_of = {q.id: d.id for d in rubric.dimensions for q in d.questions}
    weights, threshold = rubric.scoring.weights, rubric.scoring.threshold
    count = 0
    for key, answers in arm.answers.items():
        if key not in arm.passed:
            continue
        scored: dict[str, list[bool]] = defaultdict(list)
        for question, yes in answers.items():
            scored[dimension_of[question]].append(yes)
        composite = arm.composite[key]
        for dimension, given in scored.items():
            step = weights[dimension] / len(given)
            up = composite + step if not all(given) else None
            down = composite - step if any(given) else None
            if any(
                v is not None and (v >= threshold - 1e-9) != arm.passed[key] for v in (up, down)
            ):
                count += 1
                break
    return count


def member_family_effects(
    arm: ArmAnswers,
    families: dict[Key, str | None],
    member_families: dict[str, str],
    stats: Stats,
) -> list[MemberFamilyEffect]:
    """For each panel member of a known family: (its Yes minus the other members' mean Yes)
    on its family's submissions, minus the same on the others' (`families`: each case's agent
    family)."""
    found = []
    for member, family in member_families.items():
        own_cases = {key for key, f in families.items() if f == family}
        own, other = _member_rows(arm, member, own_cases.__contains__)
        if not own or not other:
            continue
        effect = difference_effect(
            [v for _, v in own],
            [c for c, _ in own],
            [v for _, v in other],
            [c for c, _ in other],
            gate_level=stats.gate_level,
            bootstrap=stats.bootstrap,
        )
        found.append(
            MemberFamilyEffect(
                member=member, family=family, n_own=len(own), n_other=len(other), effect=effect
            )
        )
    return found


def _member_rows(
    arm: ArmAnswers, member: str, is_own: Callable[[Key], bool]
) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """(incident, member's Yes minus the others' mean Yes) per item, split by own family."""
    own: list[tuple[str, float]] = []
    other: list[tuple[str, float]] = []
    for key, answers in arm.members.get(member, {}).items():
        for question, yes in answers.items():
            others = [
                a[key][question]
                for name, a in arm.members.items()
                if name != member and question in a.get(key, {})
            ]
            if others:
                row = (key[0], float(yes) - float(np.mean(others)))
                (own if is_own(key) else other).append(row)
    return own, other
