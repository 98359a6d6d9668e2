"""One selftest: derive the probes, add the rubric's goldens, plan, run them through the
judge, and report (`judge selftest`; `judge.selftest_judge` in the Python API)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ground_truth.errors import InputError
from ground_truth.models import IncidentSpec

from ..checklist.prompts import PromptRenderer
from ..checklist.rubric import Rubric, load_rubric
from ..judges import Judge, check_judge, make_judge
from ..run.granularity import DEFAULT as DEFAULT_GRANULARITY
from ..run.granularity import Granularity
from ..run.options import Control, Limits, Storage
from .cases import CallPlan, judge_cases_async, plan_calls
from .derive import derive_probes
from .goldens import goldens_path, load_goldens
from .probes import DEFAULT_FAIL_UNDER, Probe
from .report import SelftestReport, summarise


async def run_selftest(
    specs: Sequence[IncidentSpec] | None = None,
    rubric: Rubric | str | Path | None = None,
    judge: Judge | None = None,
    *,
    goldens: bool | str | Path = True,
    seed: int = 0,
    fail_under: float = DEFAULT_FAIL_UNDER,
    renderer: PromptRenderer | None = None,
    limits: Limits | None = None,
    control: Control | None = None,
    storage: Storage | None = None,
    granularity: Granularity = DEFAULT_GRANULARITY,
    on_plan: Callable[[CallPlan], None] | None = None,
) -> SelftestReport:
    """Check a judge without labels: put to it probes derived from `specs` and the rubric's
    goldens, and report per probe kind and per question the share it got right.

    - `specs`: the benchmark's specs; each gives must-pass probes (its ground truth verbatim,
      and rewritten "Root cause: <origin>. <mechanism>.") and must-fail ones (origin swapped,
      mechanism swapped, a victim blamed, vague, empty, asking for Yes); see
      `judge.selftest.derive`. None or empty: the goldens alone.
    - `rubric`: a `Rubric`, a shipped rubric's name (default `sregym-v3`) or a YAML path.
    - `judge`: any `Judge` (default: the offline rules judge).
    - `goldens`: True (default) runs the goldens beside the rubric's file when there are
      some (`rubrics/<name>.goldens.yaml`); False runs none; a path runs that file.
    - `seed`: picks the swapped-in components and mechanisms.
    - `fail_under`: a probe kind whose share of probes behaving as expected is under this
      fails the selftest (`report.ok` False).
    - `limits`, `control`, `storage`, `granularity`: the run's, as `judge.EvalOptions` holds
      them (a store makes a rerun ask nothing again; `limits.max_cost` stops it).
    - `on_plan`: called with the calls to make and their estimated cost before the first.

    Raises `InputError` when there is nothing to check (no spec, no goldens) or a goldens
    file is bad. Provider failures leave probes unscored, counted in the report, never failed.
    """
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
    storage = storage or Storage()
    plan = plan_calls(all_specs, probes, rubric, judge, renderer, storage, granularity)
    if on_plan is not None:
        on_plan(plan)
    run = await judge_cases_async(
        all_specs, probes, rubric, judge, renderer, limits, control, storage, granularity
    )
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
