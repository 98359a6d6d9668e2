"""Derived cases through a judge and the store: each case is a diagnosis made for a spec, put
to the judge as a submission of that spec (trial = the case's id), and its answers come back
by case. The run is `judge eval`'s: the store as cache and resume point, the gate, the
budgets, provider failures unscored and counted. `judge selftest` runs its probes through it;
any feature that makes its own cases from specs (paired prompt variants) can too.

`plan_calls` says, before any call, how many calls the store cannot answer and what they may
cost, so that a command can print it before asking.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from ground_truth.models import IncidentSpec, Submission

from ..api import EvalOptions, evaluate_async
from ..checklist.prompts import PromptRenderer
from ..checklist.results import EvalResult
from ..checklist.rubric import Rubric
from ..checklist.scoring import CaseResult
from ..judges import Judge
from ..judges.base import Cacheable
from ..judges.clients.prices import cost, priced_entry
from ..judges.llm import COMPLETION_ALLOWANCE
from ..run.batch.budget import prompt_tokens
from ..run.cache import KeyMaker, is_cacheable, leaves
from ..run.options import Storage
from ..run.units import Unit, units
from ..store import Store


class Case(Protocol):
    """A diagnosis made for a spec: what `judge_cases_async` puts to a judge."""

    @property
    def id(self) -> str: ...

    @property
    def spec_id(self) -> str: ...

    @property
    def diagnosis(self) -> str: ...


@dataclass
class CaseRun:
    """A finished run over cases: the run's whole result (calls, usage, stop, failures) and
    each case's scored answers by (spec id, case id)."""

    result: EvalResult
    by_case: dict[tuple[str, str], CaseResult]


class CallPlan(BaseModel):
    """What a run over cases will ask, found before it asks anything.

    `calls`: judge calls the store cannot answer (each leaf of a panel counts); `stored`:
    those it answers; `offline`: no call reaches a provider (the rules judge);
    `cost_usd`: the calls' estimated cost (prompt tokens as characters / 4, plus
    `completion_tokens` a call, at the model's price in litellm's map), None when a model's
    price is unknown; `unpriced`: the models without one."""

    cases: int
    calls: int
    stored: int
    offline: bool
    cost_usd: float | None
    completion_tokens: int = COMPLETION_ALLOWANCE
    unpriced: list[str] = []


def submissions_of(cases: Iterable[Case]) -> list[Submission]:
    """Each case as a submission of its spec, its id as the trial (and its agent, for cases
    that have one: the audit's are the run's submissions)."""
    return [
        Submission(
            incident_id=c.spec_id,
            trial=c.id,
            diagnosis=c.diagnosis,
            agent=getattr(c, "agent", None),
            agent_model=getattr(c, "agent_model", None),
            source={"case": c.id},
        )
        for c in cases
    ]


def plan_calls(
    specs: Sequence[IncidentSpec],
    cases: Sequence[Case],
    rubric: Rubric,
    judge: Judge,
    renderer: PromptRenderer | None = None,
    options: EvalOptions | None = None,
) -> CallPlan:
    """The calls a run over `cases` with `options` will make, and their estimated cost (see
    `CallPlan`)."""
    renderer = renderer or PromptRenderer()
    options = options or EvalOptions()
    by_id = {spec.id: spec for spec in specs}
    pairs = [(by_id[s.incident_id], s) for s in submissions_of(cases) if s.incident_id in by_id]
    made = units(pairs, rubric, renderer, options.granularity)
    asked = [unit for unit in made if unit.asked]
    storage = options.storage
    judges = leaves(judge)
    cached = [leaf for leaf in judges if is_cacheable(leaf)]
    stored = _stored(asked, cached, storage)
    calls = len(asked) * len(judges) - sum(stored.values())
    total: float | None = 0.0
    unpriced: list[str] = []
    for leaf in cached:
        model = _model(leaf)
        entry = priced_entry([model, model.split("/", 1)[-1]])
        if entry is None:
            unpriced.append(model)
            continue
        missing = len(asked) - stored[leaf.name]
        if total is not None and missing:
            each = [cost(entry, _prompt_tokens(u), COMPLETION_ALLOWANCE) or 0.0 for u in asked]
            total += sum(each) / len(each) * missing
    if unpriced:
        total = None
    return CallPlan(
        cases=len(cases),
        calls=calls,
        stored=sum(stored.values()),
        offline=not cached,
        cost_usd=total,
        unpriced=unpriced,
    )


def _model(leaf: Judge) -> str:
    assert isinstance(leaf, Cacheable)
    return str(leaf.cache_identity().get("model") or leaf.name)


def _prompt_tokens(unit: Unit) -> int:
    """A prompt's tokens as the run's token limiter counts them: characters / 4."""
    return prompt_tokens(unit.prompt.messages)


def _stored(asked: list[Unit], cached: list[Judge], storage: Storage) -> dict[str, int]:
    """How many of each cacheable leaf's calls the store answers, by leaf name."""
    found = dict.fromkeys((leaf.name for leaf in cached), 0)
    given = storage.store
    if not cached or given is None or storage.refresh or not asked:
        return found
    if not isinstance(given, Store) and not Path(given).is_file():
        return found
    store = given if isinstance(given, Store) else Store(given, readonly=True)
    try:
        tasks = [unit.task() for unit in asked]
        for leaf in cached:
            assert isinstance(leaf, Cacheable)
            keys = KeyMaker(leaf)
            wanted = [keys.parts(task).key for task in tasks]
            present = store.keys_present(wanted)
            found[leaf.name] = sum(key in present for key in wanted)
    finally:
        if store is not given:
            store.close()
    return found


async def judge_cases_async(
    specs: Sequence[IncidentSpec],
    cases: Sequence[Case],
    rubric: Rubric,
    judge: Judge,
    renderer: PromptRenderer | None = None,
    options: EvalOptions | None = None,
    config: dict[str, Any] | None = None,
) -> CaseRun:
    """Put every case to `judge` (each against the spec its `spec_id` names) as
    `evaluate_async` runs submissions, and return the answers by case. Case ids must be
    unique per spec."""
    result = await evaluate_async(
        list(specs), submissions_of(cases), rubric, judge, renderer, options, config
    )
    return CaseRun(result=result, by_case={(c.incident_id, c.trial): c for c in result.cases})
