"""The audit's arms: the same cases put to the judge in several forms. Each arm is a run of its
own (`judge.selftest.cases.judge_cases_async`: the store, the gate, the budgets), and each
probe compares two arms case by case:

- `base`: the cases as `judge eval` asks them (a store that ran them answers them again);
- `repeat` (noise): the base asked again with another seed, each LLM leaf reseeded;
- `order-N` (order): the questions in another order: all reversed, then the dimensions rotated
  and each dimension's questions shuffled (seeded);
- `padded` / `shortened` (verbosity): the diagnoses padded to twice their length with neutral
  sentences, or without their filler (`judge.audit.padding`);
- `diagnosis-first` (anchoring): the diagnosis before the ground truth in the prompt;
- `named-<family>` (self): the diagnosis opens with a line naming its author's model, of the
  judge's family or of another.
"""

from __future__ import annotations

import copy
import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ground_truth.models import Submission

from ..checklist.prompts import CASE_TEMPLATE, PromptRenderer
from ..checklist.rubric import Dimension, Rubric, content_hash
from ..judges import Judge
from ..judges.base import Composite
from ..judges.llm import LLMJudge
from ..run.cache import judge_models
from . import PROBES
from .families import EXAMPLE_MODEL, family_of, other_family
from .padding import pad, shorten

VARIANTS = Path(__file__).parent / "templates"
DIAGNOSIS_FIRST = VARIANTS / "diagnosis-first"
REPEAT_SEED_OFFSET = 1000
"""Added to an LLM leaf's seed for the noise probe's repeat (far from `--repeat`'s seeds)."""


@dataclass(frozen=True)
class AuditCase:
    """One submission as an arm puts it to the judge (`judge.selftest.cases.Case`)."""

    id: str
    spec_id: str
    diagnosis: str
    agent: str | None = None
    agent_model: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.spec_id, self.id)


@dataclass
class Arm:
    """One form of the cases: what is asked (`cases`, `rubric`, `renderer`) and of whom."""

    name: str
    probe: str
    cases: list[AuditCase]
    rubric: Rubric
    renderer: PromptRenderer
    judge: Judge
    note: str | None = None


@dataclass
class ArmPlan:
    """Every arm an audit runs, and the probes it cannot run with the reason."""

    arms: list[Arm]
    skipped: dict[str, str] = field(default_factory=dict)
    families: dict[str, str] = field(default_factory=dict)
    """The judge's models with a known family: model -> family."""


def audit_cases(submissions: Sequence[Submission]) -> list[AuditCase]:
    return [
        AuditCase(s.trial, s.incident_id, s.diagnosis, s.agent, s.agent_model) for s in submissions
    ]


def sample_cases(cases: list[AuditCase], n: int | None, seed: int) -> list[AuditCase]:
    """`n` cases spread over as many incidents as possible (one from each incident in a seeded
    order, then a second from each, ...); all of them when `n` is None or not smaller."""
    if n is None or n >= len(cases):
        return list(cases)
    rng = random.Random(seed)
    by_incident: dict[str, list[AuditCase]] = defaultdict(list)
    for case in cases:
        by_incident[case.spec_id].append(case)
    for group in by_incident.values():
        rng.shuffle(group)
    incidents = sorted(by_incident)
    rng.shuffle(incidents)
    picked: list[AuditCase] = []
    while len(picked) < n:
        for incident in incidents:
            if by_incident[incident] and len(picked) < n:
                picked.append(by_incident[incident].pop())
    return picked


def plan_arms(
    cases: list[AuditCase],
    rubric: Rubric,
    renderer: PromptRenderer,
    judge: Judge,
    probes: Sequence[str] = PROBES,
    seed: int = 0,
    order_seeds: int = 2,
) -> ArmPlan:
    """The arms of an audit of `judge` on `cases` (see the module docstring)."""
    plan = ArmPlan([Arm("base", "base", cases, rubric, renderer, judge)])
    plan.families = judge_families(judge)
    add = plan.arms.append
    if "noise" in probes:
        again = reseeded(judge, REPEAT_SEED_OFFSET + seed)
        if again is None:
            plan.skipped["noise"] = (
                f"{judge.name} cannot be asked again with another seed (only LLM judges can; "
                "the rules judge is deterministic): its noise is taken as none"
            )
        else:
            add(Arm("repeat", "noise", cases, rubric, renderer, again))
    if "order" in probes:
        orders = _orders(rubric, seed, order_seeds)
        if not orders:
            plan.skipped["order"] = "the rubric has one question: there is no other order"
        for n, permuted in enumerate(orders, 1):
            add(Arm(f"order-{n}", "order", cases, permuted, renderer, judge))
    if "verbosity" in probes:
        padded = [replace(c, diagnosis=pad(c.diagnosis, seed)) for c in cases if c.diagnosis]
        add(Arm("padded", "verbosity", padded, rubric, renderer, judge))
        short = [replace(c, diagnosis=s) for c in cases if (s := shorten(c.diagnosis))]
        if short:
            add(Arm("shortened", "verbosity", short, rubric, renderer, judge))
        else:
            plan.skipped["verbosity-shortened"] = (
                "no diagnosis has filler enough to cut without changing what it says"
            )
    if "anchoring" in probes:
        anchored = diagnosis_first(renderer)
        if anchored is None:
            plan.skipped["anchoring"] = (
                f"--prompt-template {renderer.template_dir} has its own {CASE_TEMPLATE}: "
                "where the ground truth stands is its to say"
            )
        else:
            add(Arm("diagnosis-first", "anchoring", cases, rubric, anchored, judge))
    if "self" in probes:
        _self_arms(plan, cases, rubric, renderer, judge)
    return plan


def _self_arms(
    plan: ArmPlan, cases: list[AuditCase], rubric: Rubric, renderer: PromptRenderer, judge: Judge
) -> None:
    """A `named-<family>` arm per family of the judge's models, and one of another family when
    the judge has one family only; each names a model of its family as the author."""
    if not plan.families:
        plan.skipped["self"] = (
            f"no model family is known for {judge.name}: there is no own family to name"
        )
        return
    named: dict[str, str] = {}
    for model, family in plan.families.items():
        named.setdefault(family, model.rsplit("/", 1)[-1])
    if len(named) == 1:
        other = other_family(next(iter(named)))
        named[other] = EXAMPLE_MODEL[other]
    for family, model in named.items():
        authored = [replace(c, diagnosis=attributed(c.diagnosis, model)) for c in cases]
        plan.arms.append(Arm(f"named-{family}", "self", authored, rubric, renderer, judge))


def attributed(diagnosis: str, model: str) -> str:
    """The diagnosis opening with a line naming the model its agent ran on."""
    return f"Written by an SRE agent running {model}.\n\n{diagnosis}"


def judge_families(judge: Judge) -> dict[str, str]:
    """The families of the judge's LLM leaves' models: model -> family (known ones only)."""
    return {m: f for m in judge_models(judge) if (f := family_of(m)) is not None}


def _orders(rubric: Rubric, seed: int, count: int) -> list[Rubric]:
    """`count` other orders of the questions, each moving every question it can: the first is
    the whole order reversed (dimensions and the questions in each); the next ones rotate the
    dimensions by one more place each and shuffle each dimension's questions (seeded). A
    position bias then meets other questions at every position, whatever its reach. None when
    the rubric has one question."""
    if rubric.question_count < 2:
        return []
    rng = random.Random(seed)
    own = _question_order(rubric)
    dimensions = rubric.dimensions
    found: list[Rubric] = []
    for n in range(count):
        if n == 0:
            ordered = [_reordered(d, d.questions[::-1]) for d in dimensions[::-1]]
        else:
            turn = n % len(dimensions)
            rotated = dimensions[turn:] + dimensions[:turn]
            ordered = [_reordered(d, _shuffled(d.questions, rng)) for d in rotated]
        permuted = rubric.model_copy(update={"dimensions": ordered})
        if _question_order(permuted) == own:  # one dimension of one question's worth: reverse
            permuted = rubric.model_copy(
                update={"dimensions": [_reordered(d, d.questions[::-1]) for d in dimensions]}
            )
        content = permuted.model_dump(exclude={"name", "path", "hash"})
        found.append(permuted.model_copy(update={"hash": content_hash(content)}))
    return found


def _reordered(dimension: Dimension, questions: list) -> Dimension:
    return dimension.model_copy(update={"questions": list(questions)})


def _shuffled(items: list, rng: random.Random) -> list:
    items = list(items)
    rng.shuffle(items)
    return items


def _question_order(rubric: Rubric) -> list[str]:
    return [q.id for d in rubric.dimensions for q in d.questions]


def diagnosis_first(renderer: PromptRenderer) -> PromptRenderer | None:
    """`renderer` with the diagnosis before the ground truth in every prompt; None when its
    template folder has a `case.j2` of its own."""
    folder = renderer.template_dir
    if folder is not None and (folder / CASE_TEMPLATE).is_file():
        return None
    return PromptRenderer(folder, renderer.reply_order, first=DIAGNOSIS_FIRST)


def reseeded(judge: Judge, offset: int) -> Judge | None:
    """`judge` with each LLM leaf's seed moved by `offset` and its name marked `~offset`, so
    that the store asks it again; None when a leaf is no LLM judge (it has no seed)."""
    if isinstance(judge, Composite):
        members = [reseeded(j, offset) for j in judge.judges()]
        if any(m is None for m in members):
            return None
        return judge.with_judges([m for m in members if m is not None])
    if not isinstance(judge, LLMJudge):
        return None
    again = copy.copy(judge)
    again.seed = (judge.seed or 0) + offset
    again.name = f"{judge.name}~{offset}"
    again.replies, again.repairs = Counter(), Counter()
    return again
