"""The result's `cascade` block: what each judge of a cascade answered and what it cost.

Coverage is the share of the run's items (questions, or cases with the verdict guarantee) some
judge answered; the rest are unscored `below_guarantee`. Costs are litellm's prices of the
calls each judge made for these answers (a call the store served counts at what it cost when
it was asked; `usage` in the result is what this run spent). Against them stands the cost of
asking the strongest (last) judge every call the run made: its mean cost per call, dimension
by dimension where it was asked, times the calls; or, when it was never asked, the other
judges' mean tokens per call at its price.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...checklist.results import CallRecord, CascadeSummary, StageSummary

if TYPE_CHECKING:
    from .file import CalibrationFile


def cascade_summary(
    calibration: CalibrationFile,
    stage_names: Sequence[str],
    answered: dict[tuple[str, str, str], int | None],
    calls: Sequence[CallRecord],
    strongest_model: str | None,
) -> CascadeSummary:
    """The block for a run's cascade: `answered` is the cascade's record (item -> stage index
    or None), `calls` the run's call records."""
    n = len(answered)
    by_stage: dict[str, list[CallRecord]] = defaultdict(list)
    for call in calls:
        by_stage[call.judge].append(call)
    counts = [sum(1 for s in answered.values() if s == j) for j in range(len(stage_names))]
    stages = [
        _stage(name, stage.threshold, by_stage[name], count, n)
        for name, stage, count in zip(stage_names, calibration.stages, counts, strict=True)
    ]
    costs = [s.cost_usd for s in stages]
    total = None if None in costs else sum(c for c in costs if c is not None)
    # Every call reaches the first stage asked (a stage with no threshold is skipped).
    units = {(c.incident_id, c.trial, c.dimension_id) for n in stage_names for c in by_stage[n]}
    strongest, how = _strongest_cost(stage_names[-1], strongest_model, by_stage, stage_names, units)
    saved = None if strongest is None or total is None else strongest - total
    return CascadeSummary(
        guarantee=calibration.guarantee,
        target=calibration.target,
        alpha=calibration.alpha,
        label_set=calibration.labels.hash,
        calibration_coverage=calibration.coverage,
        n_items=n,
        answered=sum(counts),
        abstained=n - sum(counts),
        coverage=sum(counts) / n if n else None,
        stages=stages,
        cost_usd=total,
        strongest=stage_names[-1],
        strongest_cost_usd=strongest,
        strongest_estimate=how,
        saved_usd=saved,
        saved_share=saved / strongest if saved is not None and strongest else None,
    )


def _stage(
    name: str, threshold: float | None, calls: list[CallRecord], answered: int, n: int
) -> StageSummary:
    usages = [c.usage for c in calls if c.usage is not None]
    priced = [u.cost_usd for u in usages]
    return StageSummary(
        judge=name,
        threshold=threshold,
        calls=len(calls),
        calls_from_store=sum(1 for c in calls if c.cached),
        answered=answered,
        share=answered / n if n else 0.0,
        prompt_tokens=sum(u.prompt_tokens or 0 for u in usages),
        completion_tokens=sum(u.completion_tokens or 0 for u in usages),
        cost_usd=None if None in priced else round(sum(c for c in priced if c is not None), 8),
    )


def _strongest_cost(
    name: str,
    model: str | None,
    by_stage: dict[str, list[CallRecord]],
    stage_names: Sequence[str],
    units: set[tuple[str, str, str]],
) -> tuple[float | None, str]:
    n_units = len(units)
    own = [
        (c.dimension_id, c.usage.cost_usd)
        for c in by_stage[name]
        if c.usage is not None and c.usage.cost_usd is not None
    ]
    if own:
        per_dimension: dict[str, list[float]] = defaultdict(list)
        for dimension, cost in own:
            per_dimension[dimension].append(cost)
        overall = sum(cost for _, cost in own) / len(own)
        by_dimension = Counter(dimension for _, _, dimension in units)
        total = sum(
            count * (_mean(per_dimension[d]) if d in per_dimension else overall)
            for d, count in by_dimension.items()
        )
        return round(total, 8), (
            f"its mean cost per call ({len(own)} calls it made, by dimension) x {n_units} calls"
        )
    others = [
        c.usage
        for stage in stage_names[:-1]
        for c in by_stage[stage]
        if c.usage is not None and c.usage.prompt_tokens
    ]
    if not others or model is None:
        return None, f"unknown: {name} made no priced call and no other judge reported tokens"
    price = _price(model)
    if price is None:
        return None, f"unknown: litellm has no price for {model}"
    prompt = sum(u.prompt_tokens or 0 for u in others) / len(others)
    completion = sum(u.completion_tokens or 0 for u in others) / len(others)
    per_call = prompt * price[0] + completion * price[1]
    return round(per_call * n_units, 8), (
        f"the other judges' mean tokens per call ({len(others)} calls) at {model}'s price "
        f"x {n_units} calls"
    )


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _price(model: str) -> tuple[float, float] | None:
    """litellm's price per prompt and per completion token of `model`."""
    from ..clients.litellm_client import import_litellm

    litellm = import_litellm()
    try:
        prompt, completion = litellm.cost_per_token(
            model=model, prompt_tokens=1, completion_tokens=1
        )
    except Exception:  # no price known
        return None
    return float(prompt), float(completion)


def summary_of(judge: Any, result: Any) -> CascadeSummary | None:
    """The `cascade` block for a cascade judge's run (None for any other judge), with the shift
    check that decides whether its guarantee applies to this run."""
    from ..cascade import CascadeJudge

    if not isinstance(judge, CascadeJudge) or judge.calibration is None:
        return None
    last = judge.stages[-1].describe()
    summary = cascade_summary(
        judge.calibration,
        [s.name for s in judge.stages],
        judge.tally.answered,
        list(result.calls),
        last.get("model"),
    )
    return with_shift_check(summary, judge.calibration, result, judge.allow_shift)


def with_shift_check(
    summary: CascadeSummary, calibration: CalibrationFile, result: Any, allow_shift: bool
) -> CascadeSummary:
    """`summary` with the run compared with the calibration set, and whether the guarantee
    is established for it."""
    from .shift import check_run

    profile = calibration.profile
    allowed = "; kept as asked (--allow-shift), without this check's support"
    if profile is None:
        note = (
            "no shift check: the calibration file holds no profile of its cases (made before "
            "the check), so this run cannot be shown to be like them; calibrate again"
        )
        return summary.model_copy(
            update={
                "guarantee_established": allow_shift,
                "guarantee_note": note + (allowed if allow_shift else ""),
            }
        )
    shift = check_run(profile, result)
    update: dict[str, Any] = {"shift": shift.model_dump(mode="json")}
    if shift.shifted:
        differs = "; ".join(shift.differing)
        note = f"shift: this run differs from the calibration set in {differs}"
        update["guarantee_established"] = allow_shift
        update["guarantee_note"] = note + (
            allowed if allow_shift else ": the guarantee is not established for this run"
        )
    return summary.model_copy(update=update)
