"""An Inspect AI scorer: score a task's diagnoses with a checklist rubric.

Install the extra (`pip install "diagnosis-judge[inspect]"`). Each sample carries its
incident spec in `metadata["incident_spec"]` or as its `target`, in any form `judge eval
--ground-truth` reads: an `IncidentSpec` or its dict, a SREGym `[fault_spec] component=...;
namespace=... || description` string, or JSON/YAML text in any supported format (one
incident, or several of which the one whose id is the sample's). The model's output is the
diagnosis::

    from inspect_ai import Task, task
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate
    from judge.integrations.inspect import checklist_scorer

    @task
    def diagnose():
        samples = [Sample(input=alert_text, target=spec.ground_truth)]  # a [fault_spec] string
        return Task(dataset=samples, solver=generate(), scorer=checklist_scorer())

    # inspect eval diagnose.py --model openai/gpt-4o --model-role grader=openai/gpt-4o-mini

By default the judge is Inspect's own model API (the `grader` role, else the model under
evaluation), so Inspect's providers, cache, retries and limits apply; `judge="rules"` is the
offline rules judge, and any `Judge` or `make_judge` model string works too.

Each sample's `Score`: the composite as `value`, "pass" or "fail" as `answer`, and in
`metadata` the dimension scores, every scored question's answer with its evidence
(`answers`) and, kept apart, every unscored question with the reason (`unscored`; never a
No). A sample with a dimension no question of which was scored has no composite, and a sample
whose spec cannot be read (the reason in `explanation` and `metadata["error"]`) is not judged:
either is Inspect's unscored value (NaN), which metrics skip, and the eval goes on. Metrics,
over the scored samples: `pass_rate` (share that pass) and `mean_composite`, each with its
standard error (`pass_rate_stderr`, `mean_composite_stderr`: the sample standard deviation
over the square root of n, as Inspect's `stderr()`; 0 below two samples).
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import statistics
import tempfile
import warnings
from collections.abc import Callable
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

from ground_truth.errors import InputError
from ground_truth.fault_spec import parse_fault_spec
from ground_truth.loaders import load_specs
from ground_truth.models import IncidentSpec, Submission

from ..api import evaluate_submission_async
from ..checklist.judgment import DimensionVerdict, Usage, unscored
from ..checklist.rubric import Rubric, load_rubric
from ..checklist.scoring import CaseResult
from ..judges import Judge, JudgeTask, check_judge, make_judge
from ..judges.clients.errors import error_kind
from ..judges.repair import UnparseableReply, parse_reply

SPEC_KEY = "incident_spec"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][\w.-]{0,100}$")


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


def bundled_token_tables() -> Path | None:
    """The folder of tiktoken tables litellm ships (o200k_base and cl100k_base among them),
    found without importing litellm; None without it.

    Inspect's `mockllm` model counts the tokens of an output that has no `usage` with
    tiktoken's o200k_base table, which tiktoken downloads on first use. Offline, point
    `TIKTOKEN_CACHE_DIR` at this folder (README, "Inspect AI"), or give every mock output a
    usage (`examples/inspect_task.py`)."""
    spec = importlib.util.find_spec("litellm")
    for location in (spec.submodule_search_locations or []) if spec else []:
        folder = Path(location) / "litellm_core_utils" / "tokenizers"
        if folder.is_dir():
            return folder
    return None


def _verdicts(scores: list[SampleScore]) -> list[float]:
    verdicts = [(s.score.metadata or {}).get("passed") for s in scores]
    return [float(v) for v in verdicts if v is not None]


def _composites(scores: list[SampleScore]) -> list[float]:
    return [s.score.as_float() for s in scores if (s.score.metadata or {}).get("complete")]


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _stderr(values: list[float]) -> float:
    """Inspect's `stderr()`: the sample standard deviation over sqrt(n); 0 below two values."""
    return statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0


def _metric_of(values: Callable[[list[SampleScore]], list[float]], of: Callable) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        return of(values(scores))

    return compute


@metric
def pass_rate() -> Metric:
    """The share of the complete samples whose composite reaches the rubric's threshold."""
    return _metric_of(_verdicts, _mean)


@metric
def pass_rate_stderr() -> Metric:
    """The standard error of `pass_rate`."""
    return _metric_of(_verdicts, _stderr)


@metric
def mean_composite() -> Metric:
    """The mean composite of the complete samples (unscored samples are left out)."""
    return _metric_of(_composites, _mean)


@metric
def mean_composite_stderr() -> Metric:
    """The standard error of `mean_composite`."""
    return _metric_of(_composites, _stderr)


@scorer(metrics=[pass_rate(), pass_rate_stderr(), mean_composite(), mean_composite_stderr()])
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
        try:
            spec = sample_spec(state, target, spec_key)
        except ValueError as exc:  # this sample is not judged; the eval goes on
            return unreadable_spec(str(exc))
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
    """The sample's incident spec: `metadata[spec_key]`, else the target (see the module
    docstring for the forms read). ValueError naming the sample and what was expected."""
    given = (state.metadata or {}).get(spec_key)
    where = f"metadata[{spec_key!r}]"
    if given is None:
        where, given = "target", target.text
    if isinstance(given, IncidentSpec):
        return given
    sample = str(state.sample_id) if state.sample_id is not None else "sample"
    try:
        if isinstance(given, str):
            return spec_from_text(given, sample)
        return _native(given)
    except ValueError as exc:
        raise ValueError(_bad_spec(state, where, str(exc))) from None


EXPECTED = (
    "expected an incident spec as JSON or YAML (any format `judge eval --ground-truth` "
    "reads), or a SREGym `[fault_spec] component=...; namespace=... || description` string"
)


def spec_from_text(text: str, sample_id: str) -> IncidentSpec:
    """The incident spec `text` holds, read as `judge eval --ground-truth` reads a file: a
    SREGym `[fault_spec]` string (its incident id `sample_id`), or JSON/YAML in any format;
    of several incidents, the one called `sample_id`. ValueError saying what is wrong."""
    if not text.strip():
        raise ValueError(f"it is empty: {EXPECTED}")
    if parse_fault_spec(text) is not None:
        return _from_file(json.dumps({sample_id: text.strip()}), "json", sample_id, "sregym")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"not JSON or YAML ({' '.join(str(exc).split())}): {EXPECTED}") from None
    if isinstance(data, dict) and "ground_truth" in data:
        return _native(data)
    if not isinstance(data, dict | list):
        raise ValueError(f"{type(data).__name__} text, not a mapping: {EXPECTED}")
    return _from_file(text, "json" if _is_json(text) else "yaml", sample_id, "auto")


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _native(data: Any) -> IncidentSpec:
    try:
        return IncidentSpec.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise ValueError(f"{field}: {first['msg']}") from None


def _from_file(text: str, suffix: str, sample_id: str, fmt: str) -> IncidentSpec:
    """`text` written to a file and read by the CLI's loaders (format `fmt`): as
    `<sample_id>/ground_truth.<suffix>`, the layout of an ITBench scenario, whose folder names
    the incident when its file does not."""
    with tempfile.TemporaryDirectory(prefix="judge-inspect-") as folder:
        name = sample_id if _SAFE_NAME.match(sample_id) else "sample"
        path = Path(folder) / name / f"ground_truth.{suffix}"
        path.parent.mkdir()
        path.write_text(text, encoding="utf-8")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                specs = load_specs(path, fmt)
        except InputError as exc:
            raise ValueError(str(exc).replace(str(path), "the text")) from None
    if len(specs) == 1:
        return specs[0]
    chosen = [s for s in specs if s.id == sample_id]
    if chosen:
        return chosen[0]
    ids = ", ".join(repr(s.id) for s in specs[:5])
    raise ValueError(f"holds {len(specs)} incidents ({ids}, ...) and none is {sample_id!r}")


def _bad_spec(state: TaskState, where: str, problem: str) -> str:
    return f"sample {state.sample_id!r}: {where} is not a usable incident spec: {problem}"


def unreadable_spec(reason: str) -> Score:
    """The unscored Score of a sample whose spec cannot be read: the reason in `explanation`
    and `metadata["error"]`, no composite and no verdict."""
    return Score.unscored(
        reason="scoring_failed",
        explanation=reason,
        metadata={"error": reason, "complete": False, "passed": None, "composite": None},
    )


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
