"""An Inspect AI scorer: score a task's diagnoses with a checklist rubric.

Install the extra (`pip install "diagnosis-judge[inspect]"`). Each sample carries its
incident spec, in `metadata["incident_spec"]` (a dict or an `IncidentSpec`) or as its
`target` (the spec as JSON or YAML text); the model's output is the diagnosis::

    from inspect_ai import Task, task
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate
    from judge.integrations.inspect import checklist_scorer

    @task
    def diagnose():
        samples = [Sample(input=alert_text, metadata={"incident_spec": spec.model_dump()})]
        return Task(dataset=samples, solver=generate(), scorer=checklist_scorer())

    # inspect eval diagnose.py --model openai/gpt-4o --model-role grader=openai/gpt-4o-mini

By default the judge is Inspect's own model API (the `grader` role, else the model under
evaluation), so Inspect's providers, cache, retries and limits apply; `judge="rules"` is the
offline rules judge, and any `Judge` or `make_judge` model string works too.

Each sample's `Score`: the composite as `value`, "pass" or "fail" as `answer`, and in
`metadata` the dimension scores, every scored question's answer with its evidence
(`answers`) and, kept apart, every unscored question with the reason (`unscored`; never a
No). A sample with a dimension no question of which was scored has no composite: its score
is Inspect's unscored value (NaN), which metrics skip. Metrics: `pass_rate` (share of the
complete samples that pass) and `mean_composite`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
)
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    metric,
    scorer,
)
from inspect_ai.solver import TaskState
from pydantic import ValidationError

from ground_truth.models import IncidentSpec, Submission

from ..api import evaluate_submission_async
from ..checklist.rubric import Rubric, load_rubric
from ..checklist.scoring import CaseResult
from ..judges import Judge, JudgeTask, check_judge, make_judge
from ..judges.llm import UnparseableReply, error_kind, parse_reply
from ..judgment import DimensionVerdict, Usage, unscored

SPEC_KEY = "incident_spec"


class InspectModelJudge:
    """Inspect's model API (`inspect_ai.model.Model`) as a judge.

    It sends the rendered prompt through `model.generate()`, so Inspect's retries, cache,
    rate limits and usage accounting apply. A reply that does not answer every question id
    once is re-asked `max_reasks` times, then the dimension is unscored; an error Inspect
    gives up on leaves the dimension unscored with the reason, never No.
    """

    def __init__(
        self, model: Model, max_reasks: int = 2, config: GenerateConfig | None = None
    ) -> None:
        self.model = model
        self.max_reasks = max_reasks
        self.config = config or GenerateConfig(temperature=0.0)
        self.name = f"inspect:{model}"

    def describe(self) -> dict[str, Any]:
        """Kind, model and the generation settings that change answers."""
        params = self.config.model_dump(exclude_none=True)
        return {"name": "inspect", "model": str(self.model), "params": params}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        """One dimension's answers from the model, re-asked while the reply is unusable."""
        messages = [_chat_message(m) for m in task.prompt.messages]
        usage = Usage(prompt_tokens=0, completion_tokens=0, cost_usd=None)
        problem = ""
        for attempt in range(1, self.max_reasks + 2):
            try:
                output = await self.model.generate(messages, config=self.config)
            except Exception as exc:  # Inspect has retried already; unscored, never No
                reason = f"{self.name} failed: {type(exc).__name__}: {exc}"
                verdict = unscored(task.question_ids, reason, error_kind(exc), attempt)
                return _with_usage(verdict, usage)
            if output.usage is not None:
                usage.prompt_tokens = (usage.prompt_tokens or 0) + output.usage.input_tokens
                usage.completion_tokens = (
                    usage.completion_tokens or 0
                ) + output.usage.output_tokens
            if output.error:
                reason = f"{self.name} failed: {output.error}"
                return _with_usage(unscored(task.question_ids, reason, "error", attempt), usage)
            try:
                answers = parse_reply(output.completion, task.question_ids).answers
            except UnparseableReply as exc:
                problem = str(exc)
                messages += [
                    ChatMessageAssistant(content=output.completion or ""),
                    ChatMessageUser(content=_reask(problem, task.question_ids)),
                ]
                continue
            return _with_usage(DimensionVerdict(answers=answers, attempts=attempt), usage)
        reason = f"unparseable reply after {self.max_reasks + 1} attempts: {problem}"
        verdict = unscored(task.question_ids, reason, "unparseable", self.max_reasks + 1)
        return _with_usage(verdict, usage)


def _chat_message(message: dict[str, str]) -> ChatMessage:
    if message["role"] == "system":
        return ChatMessageSystem(content=message["content"])
    if message["role"] == "assistant":
        return ChatMessageAssistant(content=message["content"])
    return ChatMessageUser(content=message["content"])


def _reask(problem: str, question_ids: list[str]) -> str:
    return (
        f"Your reply was not usable ({problem}). Reply again with JSON only, answering every "
        f"question id exactly once.\nQuestion ids: {', '.join(question_ids)}"
    )


def _with_usage(verdict: DimensionVerdict, usage: Usage) -> DimensionVerdict:
    return verdict.model_copy(update={"usage": usage, "requests": verdict.attempts})


@metric
def pass_rate() -> Metric:
    """The share of the complete samples whose composite reaches the rubric's threshold."""

    def compute(scores: list[SampleScore]) -> float:
        verdicts = [(s.score.metadata or {}).get("passed") for s in scores]
        decided = [v for v in verdicts if v is not None]
        return sum(decided) / len(decided) if decided else float("nan")

    return compute


@metric
def mean_composite() -> Metric:
    """The mean composite of the complete samples (unscored samples are left out)."""

    def compute(scores: list[SampleScore]) -> float:
        values = [s.score.as_float() for s in scores if (s.score.metadata or {}).get("complete")]
        return sum(values) / len(values) if values else float("nan")

    return compute


@scorer(metrics=[pass_rate(), mean_composite()])
def checklist_scorer(
    rubric: str | Path | Rubric = "sregym-v3",
    judge: Judge | str | None = None,
    spec_key: str = SPEC_KEY,
    grader_role: str = "grader",
) -> Scorer:
    """Score each sample's output (the diagnosis) against its incident spec with a rubric.

    - `rubric`: a shipped rubric's name, a YAML path or a `Rubric`;
    - `judge`: None for Inspect's model in `grader_role` (else the model under evaluation),
      `"rules"` for the offline rules judge, another `make_judge` string, or any `Judge`;
    - `spec_key`: the sample metadata key holding the spec (else the target is the spec).
    """
    loaded = rubric if isinstance(rubric, Rubric) else load_rubric(rubric)
    fixed = _fixed_judge(judge)

    async def score(state: TaskState, target: Target) -> Score:
        spec = sample_spec(state, target, spec_key)
        submission = Submission(
            incident_id=spec.id, trial=str(state.epoch), diagnosis=state.output.completion
        )
        used = fixed or InspectModelJudge(get_model(role=grader_role))
        case = await evaluate_submission_async(spec, submission, loaded, used)
        return case_score(case, used.name)

    return score


def _fixed_judge(judge: Judge | str | None) -> Judge | None:
    if judge is None:
        return None
    return make_judge(judge) if isinstance(judge, str) else check_judge(judge)


def sample_spec(state: TaskState, target: Target, spec_key: str = SPEC_KEY) -> IncidentSpec:
    """The sample's incident spec: `metadata[spec_key]`, else the target's text (JSON/YAML)."""
    given = (state.metadata or {}).get(spec_key)
    where = f"metadata[{spec_key!r}]"
    if given is None:
        where = "target"
        try:
            given = yaml.safe_load(target.text) if target.text.strip() else None
        except yaml.YAMLError as exc:
            raise ValueError(_bad_spec(state, where, f"not JSON or YAML ({exc})")) from None
        if given is None:
            raise ValueError(
                _bad_spec(state, where, f"no incident spec: set metadata[{spec_key!r}] or target")
            )
    if isinstance(given, IncidentSpec):
        return given
    try:
        return IncidentSpec.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise ValueError(_bad_spec(state, where, f"{field}: {first['msg']}")) from None


def _bad_spec(state: TaskState, where: str, problem: str) -> str:
    return f"sample {state.sample_id!r}: {where} is not a usable incident spec: {problem}"


def case_score(case: CaseResult, judge_name: str) -> Score:
    """An Inspect `Score` for one scored submission (see the module docstring)."""
    answers = {
        j.question_id: {"answer": j.answer, "evidence": j.evidence, "confidence": j.confidence}
        for j in case.judgments
        if j.answer is not None
    }
    left = {j.question_id: j.unscored_reason for j in case.judgments if j.answer is None}
    dimensions = {d.dimension_id: d.score for d in case.dimensions}
    metadata = {
        "incident_id": case.incident_id,
        "composite": case.composite,
        "passed": case.passed,
        "complete": case.complete,
        "dimensions": dimensions,
        "answers": answers,
        "unscored": left,
        "judge": judge_name,
    }
    shown = ", ".join(f"{d} {'-' if s is None else f'{s:.2f}'}" for d, s in dimensions.items())
    noes = [q for q, a in answers.items() if a["answer"] == "No"]
    explanation = shown + (f"; No: {', '.join(noes)}" if noes else "")
    explanation += f"; unscored: {', '.join(left)}" if left else ""
    if case.composite is None:
        return Score.unscored(
            reason="incomplete: a dimension has no scored question",
            explanation=explanation,
            metadata=metadata,
        )
    return Score(
        value=case.composite,
        answer="pass" if case.passed else "fail",
        explanation=explanation,
        metadata=metadata,
    )
