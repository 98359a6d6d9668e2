"""An audit's arms answered by the fake provider's logic in-process, without the run: for
tests and benchmarks of `judge audit`'s statistics over many seeds (a hundred audits of the
bundled example in seconds). Each arm's prompts are rendered as the run renders them (one
call per submission) and answered as the fake would answer them, its planted biases and
flips included; `judge.audit.check.compare_arms` then compares them as an audit does."""

from __future__ import annotations

from collections.abc import Sequence

from ground_truth.models import IncidentSpec, Submission
from judge.audit.arms import ArmPlan
from judge.audit.effects import ArmAnswers, score
from judge.checklist.rubric import whole_submission
from judge.run.cache import leaves
from judge.testing.answers import hash_policy
from judge.testing.biases import apply_biases
from judge.testing.config import FakeProviderConfig

_RENDERED: dict[tuple[str, ...], list[dict[str, str]]] = {}
"""Prompts rendered before, by (templates, rubric, spec, diagnosis): over many seeds most
arms ask the same prompts again."""


def answer_arms(
    plan: ArmPlan, specs: Sequence[IncidentSpec], config: FakeProviderConfig, cache: bool = True
) -> dict[str, ArmAnswers]:
    """Each arm's answers, by arm name, from a fake with `config` (an empty diagnosis gets No
    to every question without asking, as in a run). The arms' judges must be LLM judges (one
    leaf each): their seed and temperature go into the fake's draws."""
    policy = config.answer_policy or hash_policy
    by_id = {spec.id: spec for spec in specs}
    found = {}
    rendered = _RENDERED if cache else {}
    for arm in plan.arms:
        (leaf,) = leaves(arm.judge)
        request = {
            "seed": getattr(leaf, "seed", None),
            "temperature": getattr(leaf, "temperature", None),
        }
        dimension = whole_submission(arm.rubric.dimensions)
        ids = [q.id for q in dimension.questions]
        answers = ArmAnswers(arm.name, arm.probe)
        for case in arm.cases:
            if case.diagnosis.strip():
                key = (arm.renderer.fingerprint, arm.rubric.hash, case.spec_id, case.diagnosis)
                messages = rendered.get(key)
                if messages is None:
                    sub = Submission(
                        incident_id=case.spec_id, trial=case.id, diagnosis=case.diagnosis
                    )
                    spec = by_id[case.spec_id]
                    messages = rendered[key] = arm.renderer.render(spec, sub, dimension).messages
                given = [{"id": q, "answer": policy(q, messages)} for q in ids]
                given = apply_biases(given, messages, config.biases, config.seed, request)
                yes = {a["id"]: a["answer"] == "Yes" for a in given}
            else:
                yes = dict.fromkeys(ids, False)
            answers.answers[case.key] = yes
            scored = score(yes, arm.rubric)
            if scored is not None:
                answers.composite[case.key], answers.passed[case.key] = scored
        found[arm.name] = answers
    return found
