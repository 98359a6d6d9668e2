"""The Python API: `evaluate*`, `render_prompts`, `run_sync`, and a run's options.

`evaluate` and `evaluate_submission` work from plain code (a script, or a notebook whose event
loop is running: the run then gets a thread and a loop of its own); `evaluate_async` and
`evaluate_submission_async` from async code. The CLI is a thin layer over them; the loop
itself is `judge.run`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, TypeVar

from ground_truth.matching import match_submissions
from ground_truth.models import IncidentSpec, Submission

from .checklist.prompts import Prompt, PromptRenderer
from .checklist.results import EvalResult
from .checklist.rubric import Dimension, Rubric, load_rubric
from .checklist.scoring import CaseResult
from .judges import Judge, check_judge, make_judge
from .judges.cascade import CascadeJudge
from .judges.selective.summary import summary_of
from .run.granularity import DEFAULT as DEFAULT_GRANULARITY
from .run.granularity import Granularity
from .run.granularity import check as check_granularity
from .run.intake import Intake
from .run.loop import Run
from .run.options import Control, Limits, Storage
from .run.result import Section, result_of, run_config
from .run.shard import Shard
from .run.units import units

__all__ = [
    "SECTIONS",
    "Control",
    "EvalOptions",
    "Limits",
    "Storage",
    "evaluate",
    "evaluate_async",
    "evaluate_submission",
    "evaluate_submission_async",
    "render_prompts",
    "run_sync",
]

T = TypeVar("T")
_GROUPS = {"limits": Limits, "control": Control, "storage": Storage}
_GROUP_OF = {f.name: group for group, kind in _GROUPS.items() for f in fields(kind)}


@dataclass(init=False)
class EvalOptions:
    """What a run evaluates, and how it goes (`limits`, `control`, `storage`). The defaults ask
    one call per submission with no store, limit or budget.

    - `dimensions`: the dimension ids to score (weights rescaled); `k`: of pass@k and pass^k
      (default: the fewest trials of an incident); `seed`: of the bootstrap intervals.
    - `granularity`: `"submission"` (the default: one call per submission asking every selected
      dimension's questions) or `"dimension"` (one call per submission and dimension; see
      `judge.run.granularity`). `shard`: judge only that share of the units (`judge.run.shard`).
    - `limits` (`Limits`): concurrency, rates, cooldown, error and cost budgets.
    - `control` (`Control`): pause file, signals, progress, notes, a callback per call.
    - `storage` (`Storage`): the store, `refresh`, batch mode, spilling to a file.

    Any field of the three groups may also be given by its name:
    `EvalOptions(max_concurrent=8, store="run.sqlite")` is
    `EvalOptions(limits=Limits(max_concurrent=8), storage=Storage(store="run.sqlite"))`.
    """

    dimensions: list[str] | None
    k: int | None
    seed: int
    granularity: Granularity
    shard: Shard | None
    limits: Limits = field(default_factory=Limits)
    control: Control = field(default_factory=Control)
    storage: Storage = field(default_factory=Storage)

    def __init__(
        self,
        *,
        dimensions: list[str] | None = None,
        k: int | None = None,
        seed: int = 20261126,
        granularity: Granularity = DEFAULT_GRANULARITY,
        shard: Shard | None = None,
        limits: Limits | None = None,
        control: Control | None = None,
        storage: Storage | None = None,
        **settings: Any,
    ) -> None:
        self.dimensions, self.k, self.seed = dimensions, k, seed
        self.granularity, self.shard = granularity, shard
        groups: dict[str, Any] = {"limits": limits or Limits(), "control": control or Control()}
        groups["storage"] = storage or Storage()
        for group in _GROUPS:
            changes = {n: v for n, v in settings.items() if _GROUP_OF.get(n) == group}
            setattr(self, group, replace(groups[group], **changes))
        unknown = sorted(set(settings) - set(_GROUP_OF))
        if unknown:
            raise TypeError(f"EvalOptions got unexpected keyword arguments: {', '.join(unknown)}")


def _resolution(
    pairs: list[tuple[IncidentSpec, Submission]], cases: Sequence[CaseResult]
) -> dict[str, Any] | None:
    """Programmatic resolution checks, for submissions that carry a simulator trajectory."""
    if not any(sub.trajectory for _, sub in pairs):
        return None
    from .resolution.section import resolution_of

    return resolution_of(pairs, cases)


def _entities(
    pairs: list[tuple[IncidentSpec, Submission]], cases: Sequence[CaseResult]
) -> dict[str, Any] | None:
    """Programmatic root-cause entity scores, for submissions that name structured entities."""
    if not any(sub.entities for _, sub in pairs):
        return None
    from .resolution.section import entities_of

    return entities_of(pairs, cases)


SECTIONS: Mapping[str, Section] = {"resolution": _resolution, "entities": _entities}
"""The result sections computed beside the judge, by the `EvalResult` field they fill."""


def _read_by_sections(sub: Submission) -> bool:
    """Whether a section reads `sub` (the run keeps only those after judging them)."""
    return bool(sub.trajectory or sub.entities)


def render_prompts(
    specs: list[IncidentSpec],
    submissions: list[Submission],
    rubric: Rubric,
    renderer: PromptRenderer | None = None,
    granularity: Granularity = DEFAULT_GRANULARITY,
) -> list[tuple[Submission, Dimension, Prompt]]:
    """Every prompt a run would send, without calling any judge (`judge eval --dry-run`).
    With `granularity="submission"` the dimension is the whole-submission pseudo-dimension
    (id `*`)."""
    matching = match_submissions(specs, submissions)
    asked = units(matching.pairs, rubric, renderer or PromptRenderer(), granularity)
    return [(u.submission, u.dimension, u.prompt) for u in asked]


async def evaluate_async(
    specs: list[IncidentSpec],
    submissions: Iterable[Submission],
    rubric: Rubric | str | Path | None = None,
    judge: Judge | None = None,
    renderer: PromptRenderer | None = None,
    options: EvalOptions | None = None,
    config: dict[str, Any] | None = None,
) -> EvalResult:
    """Score every submission against its spec, from async code (`await evaluate_async(...)`).

    - `specs`, `submissions`: each submission is matched to the spec with its incident id;
      a submission with no spec is an orphan and a spec with none is missing (both counted
      in the result, neither scored). `submissions` may be any iterable (say,
      `ground_truth.iter_submissions(path)`): the first calls start while later submissions
      are still being read, and an error it raises midway stops the run (no new call
      starts) and is raised once the calls in flight have ended.
    - `rubric`: a `Rubric`, a shipped rubric's name (`"sregym-v3"`, the default) or a YAML
      path.
    - `judge`: any `Judge` (default: the offline rules judge); checked before the first call.
    - `renderer`: the prompt templates (default: the shipped ones).
    - `options`: what to score and how the run goes (`EvalOptions`).
    - `config`: extra entries for the result's `config` block.

    Returns the whole `EvalResult` (cases, per-incident and overall scores, every judgment,
    every call). From `judge.run.loop.SPILL_FROM_UNITS` (submission, dimension) units on (or
    as `options.storage.spill` says), the judgments and calls are read-only sequences over a
    temporary file that lives as long as the result (`judge.checklist.items.SpilledSeq`), not
    lists. Provider failures leave questions unscored, counted in the result, never No.
    Raises `TypeError` for a judge that is not a `Judge`, `InputError` for a rubric that
    cannot be loaded, `ValueError` for an unknown `options.granularity`.
    """
    rubric, judge = _resolve(rubric, judge)
    options = options or EvalOptions()
    check_granularity(options.granularity)
    renderer = renderer or PromptRenderer()
    if options.dimensions:
        rubric = rubric.select(options.dimensions)
    if isinstance(judge, CascadeJudge):  # a calibration for another rubric or judge: refused
        judge.check(rubric, options.granularity)
    intake = Intake(
        specs, submissions, rubric, renderer, options.granularity, options.shard, _read_by_sections
    )
    run = Run(judge, intake.units(), options.limits, options.control, options.storage)
    await run.run()
    if intake.streamed:
        run.reorder(intake.order)
    matching = intake.matching()
    if (shard := intake.shard_record()) is not None:
        config = {**(config or {}), "shard": {**shard, "k": options.k}}
    if run.batch is not None:
        config = {
            **(config or {}),
            "batch": {"provider": run.batch.provider, "discount": run.batch.discount},
        }
    settings = {
        "granularity": options.granularity,
        "max_concurrent": options.limits.max_concurrent,
        "seed": options.seed,
    }
    result = result_of(
        run,
        rubric,
        matching,
        options.k,
        options.seed,
        SECTIONS,
        lambda: run_config(rubric, judge, renderer, settings, config),
    )
    result.cascade = summary_of(judge, result)
    if result.cascade is not None and result.cascade.guarantee_note:
        result.warnings.append(result.cascade.guarantee_note)
    return result


def _resolve(rubric: Rubric | str | Path | None, judge: Judge | None) -> tuple[Rubric, Judge]:
    if not isinstance(rubric, Rubric):
        rubric = load_rubric(rubric) if rubric is not None else load_rubric()
    return rubric, check_judge(judge) if judge is not None else make_judge()


def evaluate(
    specs: list[IncidentSpec],
    submissions: Iterable[Submission],
    rubric: Rubric | str | Path | None = None,
    judge: Judge | None = None,
    renderer: PromptRenderer | None = None,
    options: EvalOptions | None = None,
) -> EvalResult:
    """Score every submission against its spec; `evaluate_async` without `await`.

    Defaults: the `sregym-v3` rubric, the rules judge. Works from a script and inside a
    running event loop (Jupyter), where the run gets a worker thread and a loop of its own;
    async code should `await evaluate_async(...)` instead, which does not block its loop.
    """
    rubric, judge = _resolve(rubric, judge)  # a bad judge fails here, in the caller's thread
    return run_sync(evaluate_async(specs, submissions, rubric, judge, renderer, options))


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run`, but the main task's result is not the run's result.

    On Python 3.11 `asyncio.run` ends by looking up the SIGINT handler, and the enum lookup
    formats `repr()` of a partial holding the finished main task, whose repr includes its
    result: the whole `EvalResult`, seconds for a large run. Handing the result over through
    a box keeps that repr tiny.
    """
    box: list[T] = []

    async def main() -> None:
        box.append(await coroutine)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(main())
    else:  # a notebook's loop is running in this thread: run ours in another one
        with concurrent.futures.ThreadPoolExecutor(1, "diagnosis-judge") as worker:
            worker.submit(asyncio.run, main()).result()
    return box[0]


def evaluate_submission(
    spec: IncidentSpec,
    submission: Submission,
    rubric: Rubric | str | Path | None = None,
    judge: Judge | None = None,
    renderer: PromptRenderer | None = None,
    options: EvalOptions | None = None,
) -> CaseResult:
    """Score one submission; the result holds every question's answer (`case.judgments`).

    The submission is scored against `spec` whatever incident id it carries. Works from a
    script and inside a running event loop, like `evaluate`.
    """
    rubric, judge = _resolve(rubric, judge)
    return run_sync(evaluate_submission_async(spec, submission, rubric, judge, renderer, options))


async def evaluate_submission_async(
    spec: IncidentSpec,
    submission: Submission,
    rubric: Rubric | str | Path | None = None,
    judge: Judge | None = None,
    renderer: PromptRenderer | None = None,
    options: EvalOptions | None = None,
) -> CaseResult:
    """`evaluate_submission` for async code: `case = await evaluate_submission_async(...)`."""
    if submission.incident_id != spec.id:
        submission = submission.model_copy(update={"incident_id": spec.id})
    result = await evaluate_async([spec], [submission], rubric, judge, renderer, options)
    return result.cases[0]
