"""From judged runs and labels to a calibration: maps, reliability, thresholds, or a refusal.

The labelled items every run answered (questions, or cases with the verdict guarantee) are
split by incident, seeded: the maps from raw confidence to P(agree with the labels) are fitted
on `fit_share` of the incidents (isotonic regression per judge and question, with judge and
pooled fallbacks: `agreement.reliability`), and the thresholds are chosen on the rest
(fixed-sequence testing with the exact Clopper-Pearson bound, each judge on the items no
earlier judge answered: `agreement.selective.calibrate_cascade`). The guarantee needs the
thresholds chosen on items the maps never saw; a split by incident keeps the trials of one
incident on one side. The reliability diagrams are drawn on the selection items too, so the
calibrated one is not flattered by its own fit.

An answer a judge could not give (unscored; no verdict) has calibrated confidence -1: it never
clears a threshold and counts as a disagreement in the bound.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from agreement.ranking import Ranking, rank_confidence
from agreement.reliability import (
    ConfidenceCalibration,
    IsotonicMap,
    ReliabilityDiagram,
    choose_map_kind,
    fit_confidence_calibration,
    fit_isotonic,
    reliability_diagram,
)
from agreement.selective import CascadePlan, SelectiveRefusal, calibrate_cascade, route_cascade
from ground_truth.errors import InputError

from ...checklist.judgment import QuestionAnswer
from ...checklist.results import EvalResult, tool_version
from ...checklist.scoring import CaseResult
from ..confidence import stated_score
from .file import CANNOT_ANSWER, CalibrationFile, Guarantee, LabelSet, StageCalibration
from .identity import JudgeIdentity, identity_of
from .route import calibrate_answers
from .shift import CaseProfile, Profile, profile_cases
from .verdict import RubricShape, judge_verdict, verdict_confidence

Item = tuple[str, str, str]
"""(incident, trial, question id), or (incident, trial, "verdict")."""
VERDICT = "verdict"
DEFAULT_FIT_SHARE = 0.5
DEFAULT_MIN_COUNT = 30


class CalibrationRefused(InputError):
    """The labels cannot support the target: no judge gets a threshold (exit 2)."""


class NothingLabelled(InputError):
    """No labelled item of the guarantee's kind that every judge answered (exit 2)."""


@dataclass
class Stage:
    """One judged run as a stage: who judged, and its answers by case."""

    identity: JudgeIdentity
    source: str
    answers: dict[tuple[str, str], dict[str, QuestionAnswer]]
    cases: list[CaseResult] = field(default_factory=list)


@dataclass
class StageFit:
    """A stage's maps and how its confidence compares with agreement on the selection items."""

    identity: JudgeIdentity
    maps: ConfidenceCalibration
    verdict_map: IsotonicMap | None
    raw: ReliabilityDiagram | None
    calibrated: ReliabilityDiagram | None
    agreement: float | None = None
    n_scored: int = 0
    confidence: list[float] = field(default_factory=list)
    agreed: list[bool] = field(default_factory=list)
    ranking: Ranking | None = None
    """How its confidence ranks its answers on the selection items (AUROC)."""
    raw_ranking: Ranking | None = None
    """The same for its raw confidence (the question guarantee)."""
    profile: list[CaseProfile] = field(default_factory=list)
    """The labelled cases with its answers, as the shift check compares a run with them."""


@dataclass
class Calibrated:
    """What `fit_stages` found: each stage's fit, over which items."""

    guarantee: Guarantee
    stages: list[StageFit]
    n_fit: int
    n_select: int
    fit_share: float
    seed: int
    items: list[Item]
    select_items: list[Item] = field(default_factory=list)


def stage_of(result: EvalResult, source: str) -> Stage:
    """A result's own answers (a panel's, not its members') and its judge's identity."""
    judge = result.config.get("judge") or {}
    label = judge.get("label") or judge.get("name") or "judge"
    answers: dict[tuple[str, str], dict[str, QuestionAnswer]] = {}
    for j in result.judgments:
        answers.setdefault((j.incident_id, j.trial), {})[j.question_id] = QuestionAnswer(
            question_id=j.question_id,
            answer=j.answer,
            confidence=j.confidence,
            confidence_score=j.confidence_score,
            unscored_reason=j.unscored_reason,
        )
    identity = identity_of(judge, label, result.config.get("granularity"))
    return Stage(identity, source, answers, list(result.cases))


def rubric_of(results: Sequence[EvalResult], sources: Sequence[str]) -> tuple[str, RubricShape]:
    """The one rubric every result was scored with: its hash and shape; InputError otherwise."""
    hashes = {(r.config.get("rubric") or {}).get("hash") for r in results}
    if len(hashes) != 1 or None in hashes:
        listed = ", ".join(
            f"{s}: {(r.config.get('rubric') or {}).get('hash')}"
            for r, s in zip(results, sources, strict=True)
        )
        raise InputError(sources[0], f"the results were scored with different rubrics ({listed})")
    first = results[0]
    rubric = first.config.get("rubric") or {}
    wanted = first.config.get("dimensions") or list(rubric.get("weights") or {})
    dimensions: dict[str, list[str]] = {d: [] for d in wanted}
    for j in first.judgments:
        questions = dimensions.get(j.dimension_id)
        if questions is not None and j.question_id not in questions:
            questions.append(j.question_id)
    shape = RubricShape(
        threshold=float(rubric.get("threshold", 0.7)),
        weights={d: float(w) for d, w in (rubric.get("weights") or {}).items()},
        dimensions=dimensions,
    )
    return str(hashes.pop()), shape


def reference_labels(
    question: Mapping[Any, str | None], verdict: Mapping[Any, str | None], rubric: RubricShape
) -> dict[Item, str]:
    """The labels as items: every labelled question, and a verdict per case (the labels' own
    `verdict` row, else derived from a fully labelled checklist as the judge scores its own)."""
    out: dict[Item, str] = {}
    by_case: dict[tuple[str, str], dict[str, str | None]] = {}
    for key, answer in question.items():
        if answer is not None:
            out[(key.incident_id, key.trial, key.unit)] = answer
        by_case.setdefault((key.incident_id, key.trial), {})[key.unit] = answer
    for (incident, trial), answers in by_case.items():
        if all(answers.get(q) is not None for q in rubric.questions):
            derived = _labels_verdict(answers, rubric)
            if derived is not None:
                out[(incident, trial, VERDICT)] = derived
    for key, answer in verdict.items():
        if answer is not None:
            out[(key.incident_id, key.trial, VERDICT)] = answer
    return out


def _labels_verdict(answers: Mapping[str, str | None], rubric: RubricShape) -> str | None:
    passed = judge_verdict(answers, rubric)
    return None if passed is None else ("Yes" if passed else "No")


def fit_stages(
    stages: Sequence[Stage],
    labels: Mapping[Item, str],
    rubric: RubricShape,
    *,
    guarantee: Guarantee = "question",
    fit_share: float = DEFAULT_FIT_SHARE,
    seed: int = 0,
    min_count: int = DEFAULT_MIN_COUNT,
    label_files: Sequence[str] = (),
    maps: Sequence[StageCalibration] | None = None,
) -> Calibrated:
    """Each stage's maps (on the fitting items) and reliability diagrams (on the selection
    items); InputError when the labels and the results share no item. `maps`: keep these
    stages' maps (an earlier calibration's) instead of fitting new ones: every labelled item
    then goes to choosing the thresholds (`fit_share` must be 0)."""
    if not 0.0 <= fit_share < 1.0:
        raise InputError("--fit-share", f"expected a share from 0 up to (not) 1, got {fit_share}")
    items = _items(stages, labels, guarantee)
    if not items:
        raise NothingLabelled(
            label_files[0] if label_files else "--human", _nothing_labelled(labels, guarantee)
        )
    if maps is not None and (fit_share or len(maps) != len(stages)):
        raise ValueError("maps: one per stage, and only with fit_share 0")
    fit_items, select_items = _split(items, fit_share, seed)
    fits = [
        _fit_stage(
            s,
            labels,
            fit_items,
            select_items,
            guarantee,
            rubric,
            min_count,
            seed,
            None if maps is None else maps[n],
        )
        for n, s in enumerate(stages)
    ]
    return Calibrated(
        guarantee, fits, len(fit_items), len(select_items), fit_share, seed, items, select_items
    )


def choose_thresholds(
    calibrated: Calibrated,
    labels: Mapping[Item, str],
    rubric_hash: str,
    rubric: RubricShape,
    *,
    target: float,
    alpha: float = 0.1,
    split_alpha: bool = True,
    label_files: Sequence[str] = (),
    reference: str = "labels",
) -> CalibrationFile:
    """Each stage's threshold on the selection items, as a calibration file; raises
    `CalibrationRefused` (exit 2) when no stage can be given one, saying how many more labels
    the target would need."""
    fits = calibrated.stages
    plan = calibrate_cascade(
        [f.confidence for f in fits],
        [f.agreed for f in fits],
        target,
        alpha,
        names=[f.identity.name for f in fits],
        split_alpha=split_alpha,
        clusters=[item[0] for item in calibrated.select_items],
        answered=[[c != CANNOT_ANSWER for c in f.confidence] for f in fits],
        seed=calibrated.seed,
    )
    if all(stage.threshold is None for stage in plan.stages):
        reason = _refusal(calibrated, plan, rubric, target, alpha)
        raise CalibrationRefused("--target-agreement", reason)
    routing = route_cascade(plan, [f.confidence for f in fits], [f.agreed for f in fits])
    items = calibrated.items
    return CalibrationFile(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        tool_version=tool_version(),
        guarantee=calibrated.guarantee,
        target=target,
        alpha=alpha,
        stage_alpha=plan.stage_alpha,
        rubric_hash=rubric_hash,
        rubric=rubric,
        labels=LabelSet(
            hash=_label_hash(items, labels, calibrated.guarantee),
            files=[str(f) for f in label_files],
            reference=reference,
            n_items=len(items),
            n_fit=calibrated.n_fit,
            n_select=calibrated.n_select,
        ),
        fit_share=calibrated.fit_share,
        seed=calibrated.seed,
        stages=[
            StageCalibration(
                judge=fit.identity,
                maps=fit.maps,
                verdict_map=fit.verdict_map,
                n_reaching=stage.n_reaching,
                selection=stage.selection,
                ranking=stage.ranking,
                selects=stage.selects,
                reliability_raw=fit.raw,
                reliability_calibrated=fit.calibrated,
            )
            for fit, stage in zip(fits, plan.stages, strict=True)
        ],
        coverage=routing.coverage,
        agreement=routing.agreement,
        profile=_profile(fits, plan, rubric),
    )


def _profile(fits: Sequence[StageFit], plan: CascadePlan, rubric: RubricShape) -> Profile:
    """The labelled cases as the first judge a run asks (the first with a threshold) saw
    them."""
    first = next(i for i, stage in enumerate(plan.stages) if stage.threshold is not None)
    return Profile(
        judge=fits[first].identity.name, questions=rubric.questions, cases=fits[first].profile
    )


def _items(stages: Sequence[Stage], labels: Mapping[Item, str], guarantee: Guarantee) -> list[Item]:
    """Labelled items (of the guarantee's kind) every stage answered a call for, sorted."""
    wanted = sorted(item for item in labels if (item[2] == VERDICT) == (guarantee == "verdict"))
    return [
        item
        for item in wanted
        if all(
            (item[0], item[1]) in s.answers
            and (guarantee == "verdict" or item[2] in s.answers[(item[0], item[1])])
            for s in stages
        )
    ]


def _nothing_labelled(labels: Mapping[Item, str], guarantee: Guarantee) -> str:
    verdicts = sum(1 for item in labels if item[2] == VERDICT)
    questions = len(labels) - verdicts
    if guarantee == "question" and not questions:
        return f"the labels hold no question labels ({verdicts} verdicts: --guarantee verdict)"
    if guarantee == "verdict" and not verdicts:
        return "the labels hold no verdicts, nor a fully labelled checklist to derive one from"
    return (
        f"no labelled {guarantee} that every judge answered: the labels and the results share "
        "no case (check the incident ids and trials)"
    )


def _split(items: list[Item], fit_share: float, seed: int) -> tuple[list[Item], list[Item]]:
    incidents = sorted({item[0] for item in items})
    order = np.random.default_rng(seed).permutation(len(incidents))
    fitting = {incidents[i] for i in order[: round(fit_share * len(incidents))]}
    return (
        [item for item in items if item[0] in fitting],
        [item for item in items if item[0] not in fitting],
    )


def _fit_stage(
    stage: Stage,
    labels: Mapping[Item, str],
    fit_items: list[Item],
    select_items: list[Item],
    guarantee: Guarantee,
    rubric: RubricShape,
    min_count: int,
    seed: int = 0,
    kept: StageCalibration | None = None,
) -> StageFit:
    name = stage.identity.name
    if kept is not None:
        maps, verdict_map = kept.maps, kept.verdict_map
    else:
        maps = _question_maps(stage, labels, fit_items, guarantee, rubric, min_count, seed)
        verdict_map = None
        if guarantee == "verdict":
            x, y = _verdict_points(stage, labels, fit_items, maps, rubric)
            verdict_map = fit_isotonic(x, y) if x else None
    raw: list[float] = []
    confidence: list[float] = []
    agreed: list[bool] = []
    for item in select_items:
        answers = stage.answers[(item[0], item[1])]
        if guarantee == "verdict":
            value = _case_confidence(name, answers, maps, verdict_map, rubric)
            mine = _labels_verdict({q: a.answer for q, a in answers.items()}, rubric)
            raw_value = value
        else:
            answer = answers[item[2]]
            raw_value = stated_score(answer)
            value = None if raw_value is None else calibrate_answers(maps, name, [answer])[item[2]]
            mine = answer.answer
        agreed.append(mine is not None and mine == labels[item])
        confidence.append(CANNOT_ANSWER if value is None else value)
        raw.append(-1.0 if raw_value is None else raw_value)
    scored = [i for i, c in enumerate(confidence) if c != CANNOT_ANSWER]
    clusters = [select_items[i][0] for i in scored]
    labelled = {(i[0], i[1]) for i in [*fit_items, *select_items]}
    cases = [c for c in stage.cases if (c.incident_id, c.trial) in labelled]
    fit = StageFit(
        identity=stage.identity,
        maps=maps,
        verdict_map=verdict_map,
        raw=_diagram([raw[i] for i in scored], [agreed[i] for i in scored])
        if guarantee == "question"
        else None,
        calibrated=_diagram([confidence[i] for i in scored], [agreed[i] for i in scored]),
        agreement=sum(agreed) / len(agreed) if agreed else None,
        n_scored=len(scored),
        confidence=confidence,
        agreed=agreed,
        ranking=_ranking(
            [confidence[i] for i in scored], [agreed[i] for i in scored], clusters, seed
        ),
        raw_ranking=_ranking([raw[i] for i in scored], [agreed[i] for i in scored], clusters, seed)
        if guarantee == "question"
        else None,
        profile=profile_cases(cases, stage.answers),
    )
    return fit


def _ranking(
    confidence: list[float], agreed: list[bool], clusters: list[str], seed: int
) -> Ranking | None:
    """The AUROC of a confidence on the selection items (95% interval; chance at alpha 0.1)."""
    return rank_confidence(confidence, agreed, clusters, seed=seed) if confidence else None


def _question_maps(
    stage: Stage,
    labels: Mapping[Item, str],
    fit_items: list[Item],
    guarantee: Guarantee,
    rubric: RubricShape,
    min_count: int,
    seed: int = 0,
) -> ConfidenceCalibration:
    """Maps on the fitting items (all of a case's questions with the verdict guarantee), of the
    kind that ranks held-out incidents' answers best among them (`choose_map_kind`); the
    identity map when there are none."""
    name = stage.identity.name
    x: list[float] = []
    y: list[bool] = []
    questions: list[str] = []
    values: list[str] = []
    incidents: list[str] = []
    cases = {(i[0], i[1]) for i in fit_items}
    for case in sorted(cases):
        answers = stage.answers.get(case, {})
        wanted = (
            rubric.questions
            if guarantee == "verdict"
            else [i[2] for i in fit_items if (i[0], i[1]) == case]
        )
        for qid in wanted:
            answer = answers.get(qid)
            label = labels.get((case[0], case[1], qid))
            score = None if answer is None else stated_score(answer)
            if answer is None or answer.answer is None or score is None or label is None:
                continue
            x.append(score)
            y.append(answer.answer == label)
            questions.append(qid)
            values.append(answer.answer)
            incidents.append(case[0])
    if not x:
        identity = IsotonicMap(thresholds=[0.0, 1.0], values=[0.0, 1.0], n=0, n_agreed=0)
        return ConfidenceCalibration(min_count=min_count, pooled=identity, judges={}, questions=[])
    judges = [name] * len(x)
    choice = choose_map_kind(
        x, y, judges, questions, values, incidents, min_count=min_count, seed=seed
    )
    maps = fit_confidence_calibration(
        x, y, judges, questions, answers=values, min_count=min_count, kind=choice.kind
    )
    return maps.model_copy(update={"choice": choice})


def _verdict_points(
    stage: Stage,
    labels: Mapping[Item, str],
    fit_items: list[Item],
    maps: ConfidenceCalibration,
    rubric: RubricShape,
) -> tuple[list[float], list[bool]]:
    x, y = [], []
    for item in fit_items:
        answers = stage.answers[(item[0], item[1])]
        value = _case_confidence(stage.identity.name, answers, maps, None, rubric)
        mine = _labels_verdict({q: a.answer for q, a in answers.items()}, rubric)
        if value is not None and mine is not None:
            x.append(value)
            y.append(mine == labels[item])
    return x, y


def _case_confidence(
    name: str,
    answers: Mapping[str, QuestionAnswer],
    maps: ConfidenceCalibration,
    verdict_map: IsotonicMap | None,
    rubric: RubricShape,
) -> float | None:
    listed = list(answers.values())
    value = verdict_confidence(
        {q: a.answer for q, a in answers.items()},
        calibrate_answers(maps, name, listed),
        rubric,
    )
    if value is None or verdict_map is None:
        return value
    return float(verdict_map.predict(np.array([value]))[0])


def _diagram(confidence: list[float], agreed: list[bool]) -> ReliabilityDiagram | None:
    return reliability_diagram(confidence, agreed) if confidence else None


def _label_hash(items: list[Item], labels: Mapping[Item, str], guarantee: str) -> str:
    text = "\n".join([guarantee, *("\t".join([*item, labels[item]]) for item in items)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _refusal(
    calibrated: Calibrated, plan: CascadePlan, rubric: RubricShape, target: float, alpha: float
) -> str:
    """Why no judge gets a threshold, and how many more labels would give the likeliest one
    its threshold: every stage was tested on every selection item (none answered any), so
    each one's refusal (`agreement.selective.SelectiveRefusal`) counts selection items."""
    refusals = [s.selection for s in plan.stages if isinstance(s.selection, SelectiveRefusal)]
    reasons = "; ".join(
        f"{s.name}: {s.selection.reason}"
        for s in plan.stages
        if isinstance(s.selection, SelectiveRefusal)
    )
    head = (
        f"the labels cannot support agreement >= {target:g} at alpha {alpha:g} "
        f"({calibrated.n_select} selection items; each judge tested at alpha "
        f"{plan.stage_alpha:.3g}): {reasons}"
    )
    if any(r.cause == "ranking" for r in refusals):
        return (
            head + ". A confidence that ranks the judge's answers (or more labelled incidents, "
            "which narrow the AUROC's interval) would let a threshold be chosen"
        )
    needs = [r.more_labels_needed for r in refusals if r.more_labels_needed is not None]
    if not needs:
        return (
            head + ". More labels of the same kind would not help: lower --target-agreement, "
            "raise --alpha, or use a stronger judge"
        )
    if min(needs) == 0:
        return (
            head + ". A lower threshold's agreement would clear the bound with these labels, "
            "but the fixed sequence stops at the first threshold that fails: more labels (or a "
            "higher --alpha) would let the test reach it"
        )
    selecting = min(needs)
    total = int(np.ceil(selecting / (1.0 - calibrated.fit_share)))
    if calibrated.guarantee == "verdict":
        more = f"About {total} more labelled cases"
    else:
        cases = int(np.ceil(total / len(rubric.questions)))
        more = f"About {total} more labelled questions (~{cases} more cases labelled in full)"
    return (
        head + f". {more}, at the agreement observed, would support it: {selecting} more for "
        f"choosing thresholds, since --fit-share {calibrated.fit_share:g} of new labels go to "
        "fitting the maps"
    )


def load_stages(paths: Sequence[Path]) -> tuple[list[Stage], list[EvalResult]]:
    """Each result file as a stage, in the order given (cheapest judge first)."""
    from ...checklist.results import load_result

    results = [load_result(p) for p in paths]
    stages = [stage_of(r, str(p)) for r, p in zip(results, paths, strict=True)]
    names = [s.identity.name for s in stages]
    if len(set(names)) != len(names):
        raise InputError(
            paths[0], f"two results were judged by the same judge ({', '.join(names)})"
        )
    return stages, results
