"""A finished run as an `EvalResult`: the scored cases, every judgment and call, the summaries,
the config block, and the sections computed beside the judge (`Section`)."""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from itertools import groupby
from typing import Any

from ground_truth.matching import Matching
from ground_truth.models import IncidentSpec, Submission

from ..checklist.items import WithParts
from ..checklist.judgment import Judgment
from ..checklist.prompts import PromptRenderer
from ..checklist.results import EvalResult, Orphan, tool_version
from ..checklist.rubric import Rubric
from ..checklist.scoring import CaseResult, DimensionScore, Tally, dimension_score, scored_case
from ..judges import Gated, Judge
from .cache import is_cacheable
from .loop import Run
from .sink import SpillFile
from .units import Done

Section = Callable[
    [list[tuple[IncidentSpec, Submission]], Sequence[CaseResult]], dict[str, Any] | None
]
"""A part of the result computed beside the judge from the matched inputs and the scored cases
(resolution checks, entity scores); None when no submission carries what it reads. The run
takes them by the `EvalResult` field they fill (`judge.api.SECTIONS`)."""


def result_of(
    run: Run,
    rubric: Rubric,
    matching: Matching,
    k: int | None,
    seed: int,
    sections: Mapping[str, Section],
    config: Callable[[], dict[str, Any]],
) -> EvalResult:
    """The result of a finished `run` over `matching`'s pairs. `config()` gives the config
    block; it is asked after the run, since the judge's description holds what the run
    found out (reply format, reply shares)."""
    run.keep.flush()  # a spill file that cannot be written fails the run here, not later
    calls = run.call_records()
    attempt_errors = run.attempt_errors(calls)
    incomplete = run.incomplete()
    stopped = run.gate.stopped if incomplete else None
    usage = run.usage() if any(_metered(leaf) for leaf in run.leaves) else None
    cases, judgments, members, failed, tally = _assemble(run, rubric)
    run.release()
    incidents, k = tally.all.incidents(rubric, k)
    overall = tally.all.overall(
        incidents, rubric, k, len(matching.missing), len(matching.orphans), seed
    )
    overall.n_failed_questions = failed
    extra: dict[str, Any] = {
        name: compute(matching.pairs, cases) for name, compute in sections.items()
    }
    return EvalResult(
        by_agent=tally.by_agent(rubric, k, seed),
        **extra,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        tool_version=tool_version(),
        complete=not incomplete and not overall.n_failed_questions,
        config=_with_store(config(), run),
        overall=overall,
        incidents=incidents,
        cases=cases,
        judgments=judgments,
        member_judgments=members,
        calls=calls,
        errors=dict(Counter(c.error_kind for c in calls if c.error_kind)),
        attempt_errors=attempt_errors,
        stopped=stopped,
        incomplete=incomplete,
        usage=usage,
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


def run_config(
    rubric: Rubric,
    judge: Judge,
    renderer: PromptRenderer,
    settings: dict[str, Any],
    extra: dict[str, Any] | None,
) -> dict[str, Any]:
    """The result's `config` block: the rubric, the judge, the templates, then `settings`
    (granularity, concurrency, seed) and `extra` (the caller's, shard, batch)."""
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
        **settings,
        **(extra or {}),
    }


def _with_store(config: dict[str, Any], run: Run) -> dict[str, Any]:
    """The config block with the store the run used (`store`, as given), where the report
    finds the raw reply behind each call."""
    if run.store is not None:
        config["store"] = str(run.store.path)
    return config


def _metered(judge: Judge) -> bool:
    """Whether the result gets a `usage` block: the judge makes calls worth counting."""
    return is_cacheable(judge) or isinstance(judge, Gated)


def _assemble(
    run: Run, rubric: Rubric
) -> tuple[Sequence[CaseResult], Sequence[Judgment], Sequence[Judgment], int, Tally]:
    """The scored cases, their judgments (one per question, in the cases' order), the panel
    members' and cascade stages' own judgments, the failed questions' count and the cases'
    tally for the summaries, from the run's answers, each let go of once its case holds it.

    The units come in the result's order, a case's units one after another. A run that
    spilled its answers (`judge.run.sink.SpillFile`) spills each case as it is made too,
    and the result's cases read it back with its judgments (`WithParts`): 100,000 cases
    would take about 150 MB as pydantic objects."""
    tally = Tally(rubric)
    spill = run.keep if isinstance(run.keep, SpillFile) else None
    kept: list[CaseResult] = []
    spilled = array("q")
    every, bounds, members = array("q"), array("q", [0]), array("q")
    failed = 0
    for (i, t), answers in groupby(run.take_answers(), key=_case_of):
        scores: dict[str, DimensionScore] = {}
        for done in answers:
            every.extend(done.judgments)
            scores.update((s.dimension_id, s) for s in done.scores())
            members.extend(done.members)
            failed += done.failed
        judgments = run.keep.sequence(Judgment, every[bounds[-1] :])
        bounds.append(len(every))
        case = scored_case(
            i, t, _case_scores(scores, rubric), judgments, rubric, done.agent, done.submitted
        )
        tally.add(case)
        if spill is None:
            kept.append(case)
        else:
            spilled.append(spill.add(case))
    if spill is None:
        cases: Sequence[CaseResult] = kept
        judged = run.keep.sequence(Judgment, every)
    else:
        judged = spill.sequence(Judgment, every)
        cases = WithParts(spill, CaseResult, spilled, "judgments", judged, bounds)
    return cases, judged, run.keep.sequence(Judgment, members), failed, tally


def _case_of(done: Done) -> tuple[str, str]:
    return done.incident_id, done.trial


def _case_scores(scores: dict[str, DimensionScore], rubric: Rubric) -> list[DimensionScore]:
    """One score per rubric dimension, in its order; none for a dimension nobody answered."""
    return [scores.get(d.id) or dimension_score(d.id, []) for d in rubric.dimensions]
