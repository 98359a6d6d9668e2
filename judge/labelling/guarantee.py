"""Does a cascade's promise hold on the run it was made for? Checked on a few labels of it.

`judge calibrate --check RESULT --human FEW.csv --calibration FILE` takes a cascade run, the
calibration it ran with and labels on some of its cases, and tests the promised agreement on
the labelled items the cascade answered (questions, or cases with the verdict guarantee):

- the agreement observed there, and its one-sided (1 - alpha) Clopper-Pearson bounds with
  the effective sample size of Korn and Graubard (1998): the items of one incident move
  together, so n is shrunk by the design effect the incidents show (a cluster-robust
  variance; at most n; the number of incidents when every item agrees, or none, and so no
  spread shows it) before the exact binomial bound;
- `holds` when the lower bound reaches the target, `fails` when the upper bound is under
  it, else `not established`, with how many more labelled items (at the agreement and
  design effect seen) would let the lower bound reach it;
- what abstaining bought: the first asked judge's own answers on the labelled items the
  cascade abstained on, and their agreement;
- the shift check again (the run against the calibration set).

Labels drawn by `judge labels serve --order informative` carry their inclusion probabilities:
each labelled case is then weighted by its inverse (a Hajek ratio), which the design effect
includes. `recalibrate` re-chooses the thresholds on the labelled items of this run, with the
calibration's maps kept, and profiles this run's labelled cases: the file a run like this one
is then checked against.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from agreement.ratings import ItemKey
from agreement.selective import clopper_pearson_lower, labels_needed
from agreement.shift import ShiftTest
from ground_truth.errors import InputError

from ..checklist.results import EvalResult, load_result
from ..judges.selective.file import CalibrationFile, load_calibration
from ..judges.selective.fit import (
    VERDICT,
    Item,
    Stage,
    choose_thresholds,
    fit_stages,
    reference_labels,
)
from ..judges.selective.shift import check_run, run_answers
from ..judges.selective.verdict import judge_verdict
from .labelset import CaseKey, LabelSet, read_label_set

Verdict = Literal["holds", "fails", "not established"]


class GuaranteeCheck(BaseModel):
    """The promised agreement tested on labelled items of the run it was promised for."""

    result: str | None = None
    labels: str | None = None
    labeller: str
    guarantee: str = Field(description="question or verdict: what the promise is about.")
    target: float
    alpha: float
    design: Literal["simple random sample", "drawn with recorded probabilities"]
    n_labelled: int = Field(description="Labelled items of the run (answered or not).")
    n_answered: int = Field(description="Of those, the items the cascade answered.")
    n_incidents: int = Field(description="Incidents the answered labelled items come from.")
    agreement: float | None = Field(description="Agreement with the labels on those items.")
    effective_n: float | None = Field(
        description="The items' worth as independent draws (n over the design effect)."
    )
    lower_bound: float | None = Field(description="One-sided (1 - alpha) lower bound.")
    upper_bound: float | None = Field(description="One-sided (1 - alpha) upper bound.")
    verdict: Verdict
    more_labels: int | None = Field(
        None,
        description="Labelled answered items more that would let the lower bound reach the "
        "target at the agreement and design effect seen; None: more would not help.",
    )
    abstained: int = Field(0, description="Labelled items the cascade abstained on.")
    abstained_agreement: float | None = Field(
        None,
        description="The first asked judge's own answers on those items, against the labels: "
        "what abstaining bought (lower than `agreement` if it bought anything).",
    )
    shift: ShiftTest | None = None
    message: str


def check_guarantee(
    result: EvalResult | str | Path,
    labels: LabelSet | str | Path,
    calibration: CalibrationFile | str | Path,
    *,
    annotator: str | None = None,
) -> GuaranteeCheck:
    """Test a cascade run's promise on labels of some of its cases.

    Raises:
        InputError: the result is not a cascade run with this calibration, or the labels are
            for cases it does not hold, for another rubric, or none of them is usable.
    """
    result_path = None if isinstance(result, EvalResult) else str(result)
    if not isinstance(result, EvalResult):
        result = load_result(result)
    if not isinstance(labels, LabelSet):
        labels = read_label_set(labels, annotator)
    if not isinstance(calibration, CalibrationFile):
        calibration = load_calibration(calibration)
    _check_run(result, calibration, result_path)
    _check_labels(result, labels)
    items = _labelled_items(result, labels, calibration)
    if not items:
        raise InputError(
            labels.source,
            f"no labelled {calibration.guarantee} of the run's cases"
            + (
                " has a verdict label or a fully labelled checklist"
                if calibration.guarantee == VERDICT
                else ""
            ),
        )
    answered = [i for i in items if i.answer is not None]
    weights = np.array([i.weight for i in answered])
    agreed = np.array([i.answer == i.label for i in answered], dtype=float)
    clusters = [i.incident for i in answered]
    estimate = _bounds(agreed, weights, clusters, calibration.alpha)
    verdict, more = _verdict(estimate, calibration.target, calibration.alpha, len(answered))
    dropped = [i for i in items if i.answer is None and i.first is not None]
    shift = check_run(calibration.profile, result) if calibration.profile is not None else None
    check = GuaranteeCheck(
        result=result_path,
        labels=labels.source,
        labeller=labels.labeller,
        guarantee=calibration.guarantee,
        target=calibration.target,
        alpha=calibration.alpha,
        design="drawn with recorded probabilities" if labels.drawn else "simple random sample",
        n_labelled=len(items),
        n_answered=len(answered),
        n_incidents=len(set(clusters)),
        agreement=estimate.agreement,
        effective_n=estimate.effective_n,
        lower_bound=estimate.lower,
        upper_bound=estimate.upper,
        verdict=verdict,
        more_labels=more,
        abstained=sum(1 for i in items if i.answer is None),
        abstained_agreement=(
            sum(i.first == i.label for i in dropped) / len(dropped) if dropped else None
        ),
        shift=shift,
        message="",
    )
    return check.model_copy(update={"message": _message(check)})


class _Item(BaseModel):
    incident: str
    label: str
    answer: str | None = Field(description="The cascade's answer; None: it abstained.")
    first: str | None = Field(description="The first asked judge's own answer.")
    weight: float


class _Estimate(BaseModel):
    agreement: float | None
    effective_n: float | None
    lower: float | None
    upper: float | None


def _bounds(
    agreed: np.ndarray, weights: np.ndarray, clusters: list[str], alpha: float
) -> _Estimate:
    """The weighted agreement and its one-sided bounds at the Korn-Graubard effective n."""
    n = len(agreed)
    if n == 0:
        return _Estimate(agreement=None, effective_n=None, lower=None, upper=None)
    total = float(weights.sum())
    p = float((weights * agreed).sum() / total)
    groups = sorted(set(clusters))
    sums = dict.fromkeys(groups, 0.0)
    for residual, cluster in zip(weights * (agreed - p), clusters, strict=True):
        sums[cluster] += float(residual)
    c = len(groups)
    variance = c / (c - 1) * sum(v * v for v in sums.values()) / total**2 if c > 1 else 0.0
    spread = variance > 0 and 0 < p < 1  # else no design effect to read: a draw per incident
    effective = min(float(n), p * (1 - p) / variance) if spread else float(c)
    k = p * effective
    lower = float(clopper_pearson_lower(k, effective, alpha))
    upper = 1.0 - float(clopper_pearson_lower(effective - k, effective, alpha))
    return _Estimate(agreement=p, effective_n=effective, lower=lower, upper=upper)


def _verdict(
    estimate: _Estimate, target: float, alpha: float, n: int
) -> tuple[Verdict, int | None]:
    if estimate.lower is None or estimate.agreement is None or estimate.effective_n is None:
        return "not established", None
    if estimate.lower >= target:
        return "holds", 0
    if estimate.upper is not None and estimate.upper < target:
        return "fails", None
    needed = labels_needed(estimate.agreement, target, alpha)
    if needed is None:
        return "not established", None
    design_effect = n / estimate.effective_n if estimate.effective_n else 1.0
    return "not established", max(1, math.ceil(needed * design_effect) - n)


def _message(check: GuaranteeCheck) -> str:
    promise = f"agreement >= {check.target:g} on the {check.guarantee}s answered"
    seen = (
        f"{check.agreement:.3f} on {check.n_answered} labelled {check.guarantee}s answered "
        f"({check.n_incidents} incidents; worth {check.effective_n:.1f} independent ones), "
        f"one-sided {1 - check.alpha:g} bounds [{check.lower_bound:.3f}, {check.upper_bound:.3f}]"
        if check.agreement is not None
        and check.effective_n is not None
        and check.lower_bound is not None
        and check.upper_bound is not None
        else f"none of the {check.n_labelled} labelled {check.guarantee}s was answered"
    )
    if check.verdict == "holds":
        head = f"The promise holds on this run: {promise}; seen {seen}."
    elif check.verdict == "fails":
        head = f"The promise FAILS on this run: {promise}; seen {seen}."
    elif check.more_labels is not None:
        head = (
            f"Not established: {promise}; seen {seen}. About {check.more_labels} more labelled "
            f"{check.guarantee}s that the cascade answers, at this agreement, would settle it."
        )
    else:
        head = (
            f"Not established: {promise}; seen {seen}. The agreement seen is not above the "
            "target, so more labels of the same kind would not establish it."
        )
    if check.shift is not None and check.shift.shifted:
        head += f" The run differs from the calibration set: {'; '.join(check.shift.differing)}."
    return head


def _check_run(result: EvalResult, calibration: CalibrationFile, path: str | None) -> None:
    summary = result.cascade
    if summary is None:
        raise InputError(
            path,
            "not a cascade run: --check tests the promise of a `judge eval --judge-model "
            "cascade:... --calibration FILE` result",
        )
    if summary.label_set != calibration.labels.hash:
        raise InputError(
            path,
            f"the run was made with the calibration of label set {summary.label_set}, not "
            f"this file's ({calibration.labels.hash}): check it against the file it ran with",
            field="cascade.label_set",
        )


def _check_labels(result: EvalResult, labels: LabelSet) -> None:
    expected = (result.config.get("rubric") or {}).get("hash")
    if labels.rubric_hash and expected and labels.rubric_hash != expected:
        raise InputError(
            labels.source,
            f"the labels were made for rubric {labels.rubric_hash}, the run scored rubric "
            f"{expected}",
            field="rubric_hash",
        )
    held = {(c.incident_id, c.trial) for c in result.cases}
    foreign = [c.key for c in labels.cases if c.key not in held]
    if foreign:
        shown = ", ".join(f"{i}/{t}" for i, t in foreign[:5])
        raise InputError(
            labels.source,
            f"labels for {len(foreign)} cases the run does not hold ({shown}); expected labels "
            "on the run's cases",
            field="incident_id",
        )


def _labelled_items(
    result: EvalResult, labels: LabelSet, calibration: CalibrationFile
) -> list[_Item]:
    """The labelled items of the run with the cascade's answer, the first asked judge's own
    answer and the item's weight (1, or 1 / its case's inclusion probability)."""
    first = calibration.profile.judge if calibration.profile is not None else None
    own = _answers(result)
    theirs = {} if first is None else run_answers(result, first)
    reference = label_items(labels, calibration)
    weights = {c.key: _weight(c.probability, labels.drawn) for c in labels.cases}
    out = []
    for (incident, trial, unit), label in sorted(reference.items()):
        weight = weights.get((incident, trial))
        if weight is None:
            continue
        case = own.get((incident, trial), {})
        mine = theirs.get((incident, trial), {})
        if unit == VERDICT:
            answer = case.get(VERDICT)
            given = {q: a.answer for q, a in mine.items()}
            verdict = judge_verdict(given, calibration.rubric) if given else None
            stage_answer = None if verdict is None else ("Yes" if verdict else "No")
        else:
            answer = case.get(unit)
            stage_answer = mine[unit].answer if unit in mine else None
        out.append(
            _Item(incident=incident, label=label, answer=answer, first=stage_answer, weight=weight)
        )
    return out


def _answers(result: EvalResult) -> dict[CaseKey, dict[str, str | None]]:
    """The cascade's answer per case and question, and its verdict (None where it abstained)."""
    found: dict[CaseKey, dict[str, str | None]] = {}
    for j in result.judgments:
        found.setdefault((j.incident_id, j.trial), {})[j.question_id] = j.answer
    for case in result.cases:
        verdict = None if case.passed is None else ("Yes" if case.passed else "No")
        found.setdefault((case.incident_id, case.trial), {})[VERDICT] = verdict
    return found


def _weight(probability: float | None, drawn: bool) -> float | None:
    if not drawn:
        return 1.0
    return None if probability is None else 1.0 / probability


def label_items(labels: LabelSet, calibration: CalibrationFile) -> dict[Item, str]:
    """The labels as a calibration's items: questions, and verdicts (given, or derived from a
    fully labelled checklist as the judge scores its own)."""
    question: dict[ItemKey, str | None] = {}
    verdict: dict[ItemKey, str | None] = {}
    for case in labels.cases:
        for qid, answer in case.answers.items():
            question[ItemKey(case.incident_id, case.trial, qid)] = answer
        if case.verdict is not None:
            verdict[ItemKey(case.incident_id, case.trial, VERDICT)] = case.verdict
    every = reference_labels(question, verdict, calibration.rubric)
    kind = calibration.guarantee
    return {item: a for item, a in every.items() if (item[2] == VERDICT) == (kind == "verdict")}


def recalibrate(
    result: EvalResult, labels: LabelSet, calibration: CalibrationFile
) -> CalibrationFile:
    """The calibration's maps with thresholds re-chosen on this run's labelled items, and
    this run's labelled cases as its profile; InputError when the labels were drawn with
    probabilities or some stage did not answer every labelled case."""
    if labels.drawn:
        raise InputError(
            labels.source,
            "--recalibrate chooses thresholds on a simple random sample of labels; these were "
            "drawn with probabilities (--order informative): check with them, recalibrate "
            "with a random sample",
        )
    items = label_items(labels, calibration)
    cases = {(i[0], i[1]) for i in items}
    stages = []
    for stage in calibration.stages:
        answers = run_answers(result, stage.judge.name)
        missing = sorted(cases - answers.keys())
        if missing:
            raise InputError(
                "--recalibrate",
                f"{stage.judge.name} answered {len(cases) - len(missing)} of the {len(cases)} "
                "labelled cases in this run (a cascade asks a later judge only what earlier "
                f"ones were not sure of): run `judge eval --judge-model {stage.judge.name}` on "
                "the labelled cases and calibrate their results with `judge calibrate`",
            )
        stages.append(
            Stage(stage.judge, f"{stage.judge.name} (this run)", answers, list(result.cases))
        )
    rubric_hash = (result.config.get("rubric") or {}).get("hash") or calibration.rubric_hash
    fitted = fit_stages(
        stages,
        items,
        calibration.rubric,
        guarantee=calibration.guarantee,
        fit_share=0.0,
        label_files=[labels.source or "--human"],
        maps=calibration.stages,
    )
    return choose_thresholds(
        fitted,
        items,
        str(rubric_hash),
        calibration.rubric,
        target=calibration.target,
        alpha=calibration.alpha,
        label_files=[labels.source or "--human"],
        reference=labels.labeller,
    )
