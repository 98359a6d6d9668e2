"""`selftest_judge` and `selftest_judge_async`: derive the probes, add the rubric's goldens,
say the plan, put them to the judge and report (`judge selftest` runs them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ground_truth.errors import InputError
from ground_truth.models import IncidentSpec

from ..api import EvalOptions, run_sync
from ..checklist.prompts import PromptRenderer
from ..checklist.rubric import Rubric, load_rubric
from ..judges import Judge, check_judge, make_judge
from ..run.granularity import check as check_granularity
from .cases import CallPlan, judge_cases_async, plan_calls
from .derive import derive_probes
from .goldens import goldens_path, load_goldens
from .probes import DEFAULT_FAIL_UNDER, Probe
from .report import SelftestReport, summarise


def selftest_judge(
    specs: Sequence[IncidentSpec] | None = None,
    rubric: Rubric | str | Path | None = None,
    judge: Judge | None = None,
    options: EvalOptions | None = None,
    *,
    goldens: bool | str | Path = True,
    seed: int = 0,
    fail_under: float = DEFAULT_FAIL_UNDER,
    renderer: PromptRenderer | None = None,
    on_plan: Callable[[CallPlan], None] | None = None,
) -> SelftestReport:
    """Check a judge without labels (`judge selftest`); `selftest_judge_async` without `await`.

    Defaults: the `sregym-v3` rubric and its goldens, the rules judge. Works from a script and
    inside a running event loop (Jupyter), as `evaluate` does.
    """
    rubric, judge = _resolve(rubric, judge)  # a bad judge fails here, in the caller's thread
    return run_sync(
        selftest_judge_async(
            specs,
            rubric,
            judge,
            options,
            goldens=goldens,
            seed=seed,
            fail_under=fail_under,
            renderer=renderer,
            on_plan=on_plan,
        )
    )


async def selftest_judge_async(
    specs: Sequence[IncidentSpec] | None = None,
    rubric: Rubric | str | Path | None = None,
    judge: Judge | None = None,
    options: EvalOptions | None = None,
    *,
    goldens: bool | str | Path = True,
    seed: int = 0,
    fail_under: float = DEFAULT_FAIL_UNDER,
    renderer: PromptRenderer | None = None,
    on_plan: Callable[[CallPlan], None] | None = None,
) -> SelftestReport:
    """Check a judge without labels, from async code: put to it diagnoses derived from each
    spec that it must pass (the ground truth verbatim and rewritten) or fail (fault origin or
    mechanism swapped, a victim blamed, vague, empty, asking for Yes), and the rubric's
    hand-written goldens; report per probe kind and per question the share that behaved as
    expected (`SelftestReport`: `ok` is every kind at or above `fail_under`).

    - `specs`: the benchmark's specs (`judge.selftest.derive`); None or empty: the goldens
      alone.
    - `rubric`, `judge`, `renderer`: as `evaluate_async` takes them (default: `sregym-v3`,
      the rules judge, the shipped templates).
    - `options`: how the run goes (`EvalOptions`: its limits, control, storage and
      granularity; a store makes a rerun ask nothing again, `max_cost` stops it).
    - `goldens`: True runs `<rubric>.goldens.yaml` beside the rubric's file when there is
      one, False none, a path that file.
    - `seed`: picks the swapped-in components and mechanisms (not `options.seed`).
    - `on_plan`: called with the calls to make and their estimated cost before the first.

    Provider failures leave probes unscored (counted, never failed); `report.run_result` is
    the run behind the report. Raises `InputError` when there is nothing to check or a
    goldens file is bad.
    """
    options = options or EvalOptions()
    check_granularity(options.granularity)
    rubric, judge = _resolve(rubric, judge)
    derivation = derive_probes(list(specs or []), rubric, seed)
    all_specs, probes = list(specs or []), list(derivation.probes)
    golden_file = _goldens_file(goldens, rubric)
    if golden_file is not None:
        golden_specs, golden_probes = load_goldens(golden_file, rubric)
        golden_specs, golden_probes = _apart(golden_specs, golden_probes, all_specs)
        all_specs += golden_specs
        probes += golden_probes
    if not probes:
        raise InputError(
            None, "nothing to check: no spec to derive probes from and no goldens for the rubric"
        )
    renderer = renderer or PromptRenderer()
    plan = plan_calls(all_specs, probes, rubric, judge, renderer, options)
    if on_plan is not None:
        on_plan(plan)
    run = await judge_cases_async(all_specs, probes, rubric, judge, renderer, options)
    return summarise(
        probes,
        run,
        fail_under=fail_under,
        skipped=derivation.skipped,
        plan=plan,
        judge=judge.name,
        rubric={"name": rubric.name, "hash": rubric.hash},
        goldens=str(golden_file) if golden_file else None,
        seed=seed,
    )


def _resolve(rubric: Rubric | str | Path | None, judge: Judge | None) -> tuple[Rubric, Judge]:
    if not isinstance(rubric, Rubric):
        rubric = load_rubric(rubric) if rubric is not None else load_rubric()
    return rubric, check_judge(judge) if judge is not None else make_judge()


def _goldens_file(goldens: bool | str | Path, rubric: Rubric) -> Path | None:
    if goldens is False:
        return None
    if goldens is True:
        return goldens_path(rubric)
    return Path(goldens)


def _apart(
    specs: list[IncidentSpec], probes: list[Probe], taken: list[IncidentSpec]
) -> tuple[list[IncidentSpec], list[Probe]]:
    """The goldens' specs and probes with spec ids apart from the benchmark's: a golden spec
    whose id a benchmark spec has is renamed `goldens:<id>`."""
    ids = {spec.id for spec in taken}
    renamed = {s.id: f"goldens:{s.id}" for s in specs if s.id in ids}
    if not renamed:
        return specs, probes
    specs = [s.model_copy(update={"id": renamed.get(s.id, s.id)}) for s in specs]
    probes = [p.model_copy(update={"spec_id": renamed.get(p.spec_id, p.spec_id)}) for p in probes]
    return specs, probes
