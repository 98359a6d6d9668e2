"""The evaluation loop: for every (submission, dimension) render a prompt, ask the judge, score.

This is the Python API harnesses call (`evaluate`, `evaluate_submission`); the CLI is a thin
layer over it.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from ground_truth.matching import match_submissions
from ground_truth.models import IncidentSpec, Submission

from .judges import Judge, JudgeTask, make_judge
from .judgment import DimensionVerdict, Judgment, QuestionAnswer
from .prompts import Prompt, PromptRenderer
from .results import CallRecord, EvalResult, Orphan
from .rubric import Dimension, Rubric, load_rubric
from .scoring import CaseResult, score_case, summarize_incidents, summarize_overall

EMPTY_DIAGNOSIS = "the diagnosis is empty"


def tool_version() -> str:
    try:
        return version("diagnosis-judge")
    except PackageNotFoundError:
        return "0+unknown"


@dataclass
class EvalOptions:
    max_concurrent: int = 5
    dimensions: list[str] | None = None
    k: int | None = None
    seed: int = 20261126
    on_call_done: Callable[[CallRecord], None] | None = None


@dataclass
class _Unit:
    spec: IncidentSpec
    submission: Submission
    dimension: Dimension
    prompt: Prompt


def _units(
    pairs: list[tuple[IncidentSpec, Submission]], rubric: Rubric, renderer: PromptRenderer
) -> list[_Unit]:
    return [
        _Unit(spec, sub, dim, renderer.render(spec, sub, dim))
        for spec, sub in pairs
        for dim in rubric.dimensions
    ]


def render_prompts(
    specs: list[IncidentSpec],
    submissions: list[Submission],
    rubric: Rubric,
    renderer: PromptRenderer | None = None,
) -> list[tuple[Submission, Dimension, Prompt]]:
    """Every prompt a run would send, without calling any judge (`judge eval --dry-run`)."""
    matching = match_submissions(specs, submissions)
    units = _units(matching.pairs, rubric, renderer or PromptRenderer())
    return [(u.submission, u.dimension, u.prompt) for u in units]


async def _ask(judge: Judge, unit: _Unit) -> DimensionVerdict:
    if not unit.submission.diagnosis.strip():
        answers = [
            QuestionAnswer(question_id=q.id, answer="No", evidence="", confidence="High")
            for q in unit.dimension.questions
        ]
        return DimensionVerdict(answers=answers, attempts=0, error=EMPTY_DIAGNOSIS)
    task = JudgeTask(unit.spec, unit.submission, unit.dimension, unit.prompt)
    return await judge.judge(task)


def _judgments(unit: _Unit, verdict: DimensionVerdict, judge_name: str) -> list[Judgment]:
    return [_judgment(unit, a, judge_name) for a in verdict.answers]


def _member_judgments(done: list[tuple[_Unit, DimensionVerdict]]) -> list[Judgment]:
    """A panel's members' own answers, under their names (they do not enter the scores)."""
    return [
        _judgment(unit, a, name)
        for unit, verdict in done
        for name, member in (verdict.members or {}).items()
        for a in member.answers
    ]


def _judgment(unit: _Unit, answer: QuestionAnswer, judge_name: str) -> Judgment:
    return Judgment(
        incident_id=unit.submission.incident_id,
        trial=unit.submission.trial,
        dimension_id=unit.dimension.id,
        question_id=answer.question_id,
        answer=answer.answer,
        evidence=answer.evidence,
        confidence=answer.confidence,
        unscored_reason=answer.unscored_reason,
        judge=judge_name,
        prompt_hash=unit.prompt.hash,
    )


def _call_record(unit: _Unit, verdict: DimensionVerdict, judge_name: str) -> CallRecord:
    return CallRecord(
        incident_id=unit.submission.incident_id,
        trial=unit.submission.trial,
        dimension_id=unit.dimension.id,
        judge=judge_name,
        prompt_hash=unit.prompt.hash,
        attempts=verdict.attempts,
        error=verdict.error,
        error_kind=verdict.error_kind,
        usage=verdict.usage,
    )


async def evaluate_async(
    specs: list[IncidentSpec],
    submissions: list[Submission],
    rubric: Rubric,
    judge: Judge,
    renderer: PromptRenderer | None = None,
    options: EvalOptions | None = None,
    config: dict[str, Any] | None = None,
) -> EvalResult:
    options = options or EvalOptions()
    renderer = renderer or PromptRenderer()
    if options.dimensions:
        rubric = rubric.select(options.dimensions)
    matching = match_submissions(specs, submissions)
    units = _units(matching.pairs, rubric, renderer)
    semaphore = asyncio.Semaphore(max(1, options.max_concurrent))

    async def run(unit: _Unit) -> tuple[_Unit, DimensionVerdict]:
        async with semaphore:
            verdict = await _ask(judge, unit)
        if options.on_call_done:
            options.on_call_done(_call_record(unit, verdict, judge.name))
        return unit, verdict

    done = await asyncio.gather(*(run(u) for u in units))
    cases = _score_cases(done, rubric, judge.name)
    incidents, k = summarize_incidents(cases, rubric, options.k)
    calls = [_call_record(u, v, judge.name) for u, v in done]
    overall = summarize_overall(
        cases, incidents, rubric, k, len(matching.missing), len(matching.orphans), options.seed
    )
    return EvalResult(
        resolution=_resolution(matching.pairs, cases),
        entities=_entities(matching.pairs),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        tool_version=tool_version(),
        config=_config(rubric, judge, renderer, options, config),
        overall=overall,
        incidents=incidents,
        cases=cases,
        judgments=[j for c in cases for j in c.judgments] + _member_judgments(done),
        calls=calls,
        errors=dict(Counter(c.error_kind for c in calls if c.error_kind)),
        missing=matching.missing,
        orphans=[
            Orphan(
                incident_id=o.incident_id,
                trial=o.trial,
                file=o.source.get("loaded_from") or o.source.get("file"),
            )
            for o in matching.orphans
        ],
    )


def _resolution(
    pairs: list[tuple[IncidentSpec, Submission]], cases: list[CaseResult]
) -> dict[str, Any] | None:
    if not any(sub.trajectory for _, sub in pairs):
        return None
    from .resolution.section import resolution_section

    section = resolution_section(pairs, {(c.incident_id, c.trial): c.passed for c in cases})
    return section.model_dump(mode="json") if section else None


def _entities(pairs: list[tuple[IncidentSpec, Submission]]) -> dict[str, Any] | None:
    """Programmatic root-cause entity scores, for submissions that name structured entities."""
    if not any(sub.entities for _, sub in pairs):
        return None
    from ground_truth.entities import score_entities

    scores = [(sub, score) for spec, sub in pairs if (score := score_entities(spec, sub))]
    if not scores:
        return None
    cases = [
        {"incident_id": s.incident_id, "trial": s.trial, **e.model_dump(mode="json")}
        for s, e in scores
    ]
    means = {
        m: sum(getattr(e, m) for _, e in scores) / len(scores)
        for m in ("precision", "recall", "f1")
    }
    top = [e.top_is_origin for _, e in scores if e.top_is_origin is not None]
    means["top_is_origin"] = sum(top) / len(top) if top else None
    return {"n": len(scores), "mean": means, "cases": cases}


def _score_cases(
    done: list[tuple[_Unit, DimensionVerdict]], rubric: Rubric, judge_name: str
) -> list[CaseResult]:
    grouped: dict[tuple[str, str], list[Judgment]] = {}
    agents: dict[tuple[str, str], str | None] = {}
    for unit, verdict in done:
        key = unit.submission.key
        grouped.setdefault(key, []).extend(_judgments(unit, verdict, judge_name))
        agents[key] = unit.submission.agent
    return [score_case(i, t, js, rubric, agents[(i, t)]) for (i, t), js in grouped.items()]


def _config(
    rubric: Rubric,
    judge: Judge,
    renderer: PromptRenderer,
    options: EvalOptions,
    extra: dict[str, Any] | None,
) -> dict[str, Any]:
    return {
        "rubric": {
            "name": rubric.name,
            "version": rubric.version,
            "hash": rubric.hash,
            "threshold": rubric.scoring.threshold,
            "weights": rubric.scoring.weights,
        },
        "judge": {**judge.describe(), "label": judge.name},
        "prompt_template": {
            "dir": str(renderer.template_dir) if renderer.template_dir else None,
            "hash": renderer.fingerprint,
        },
        "dimensions": [d.id for d in rubric.dimensions],
        "max_concurrent": options.max_concurrent,
        "seed": options.seed,
        **(extra or {}),
    }


def _resolve(rubric: Rubric | str | Path | None, judge: Judge | None) -> tuple[Rubric, Judge]:
    if not isinstance(rubric, Rubric):
        rubric = load_rubric(rubric) if rubric is not None else load_rubric()
    return rubric, judge or make_judge()


def evaluate(
    specs: list[IncidentSpec],
    submissions: list[Submission],
    rubric: Rubric | str | Path | None = None,
    judge: Judge | None = None,
    renderer: PromptRenderer | None = None,
    options: EvalOptions | None = None,
) -> EvalResult:
    """Score every submission against its spec. Defaults: the `sregym-v3` rubric, the rules judge."""
    rubric, judge = _resolve(rubric, judge)
    return asyncio.run(evaluate_async(specs, submissions, rubric, judge, renderer, options))


def evaluate_submission(
    spec: IncidentSpec,
    submission: Submission,
    rubric: Rubric | str | Path | None = None,
    judge: Judge | None = None,
    renderer: PromptRenderer | None = None,
) -> CaseResult:
    """Score one submission; the result holds every question's answer (`case.judgments`)."""
    if submission.incident_id != spec.id:
        submission = submission.model_copy(update={"incident_id": spec.id})
    return evaluate([spec], [submission], rubric, judge, renderer).cases[0]
