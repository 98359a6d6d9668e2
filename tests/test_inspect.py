"""The Inspect AI scorer, end to end and offline: Inspect's `mockllm` model writes the
diagnoses and, as the `grader` role, answers the checklist."""

from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate

from ground_truth import load_specs, load_submissions
from judge import evaluate_submission
from judge.integrations.inspect import checklist_scorer

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "sregym-mini"
SPEC = load_specs(EXAMPLE / "ground_truth" / "incorrect_image.yaml")[0]
DIAGNOSIS = next(s for s in load_submissions(EXAMPLE / "outputs") if s.incident_id == SPEC.id)


def _output(content: str) -> ModelOutput:
    output = ModelOutput.from_content(model="mockllm", content=content)
    output.usage = ModelUsage(input_tokens=100, output_tokens=20)  # else tiktoken downloads
    return output


def mock(reply) -> Any:
    """A mockllm model whose reply is `reply(last_message_text)`."""
    return get_model(
        "mockllm/model", custom_outputs=lambda messages, *_: _output(reply(messages[-1].text))
    )


def checklist_reply(no: set[str]) -> Any:
    """A grader answering every question id it is asked: No for those in `no`, else Yes."""

    def reply(prompt: str) -> str:
        ids = re.search(r"Question ids: (.+)", prompt)[1].split(", ")  # type: ignore[index]
        answers = [
            {
                "id": q,
                "answer": "No" if q in no else "Yes",
                "evidence": "quoted",
                "confidence": "High",
            }
            for q in ids
        ]
        return json.dumps({"answers": answers})

    return reply


def run(task: Task, grader: Any, tmp_path: Path):
    solver = mock(lambda _: DIAGNOSIS.diagnosis)
    roles = {"grader": grader} if grader is not None else None
    [log] = eval(task, model=solver, model_roles=roles, display="none", log_dir=str(tmp_path))
    return log


def one_sample_task(judge: Any = None, **sample: Any) -> Task:
    sample = sample or {"metadata": {"incident_spec": SPEC.model_dump(mode="json")}}
    return Task(
        dataset=[Sample(id="s1", input="diagnose", **sample)],
        solver=generate(),
        scorer=checklist_scorer(judge=judge),
    )


def metrics(log) -> dict[str, float]:
    return {name: m.value for name, m in log.results.scores[0].metrics.items()}


def test_the_example_task_runs_offline_and_scores_like_the_python_api(tmp_path) -> None:
    spec = importlib.util.spec_from_file_location(
        "inspect_task", REPO / "examples" / "inspect_task.py"
    )
    example = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(example)  # type: ignore[union-attr]
    log = example.run_offline(tmp_path)
    assert log.status == "success"
    specs = {s.id: s for s in load_specs(EXAMPLE / "ground_truth")}
    firsts: dict[str, Any] = {}
    for sub in load_submissions(EXAMPLE / "outputs"):
        firsts.setdefault(sub.incident_id, sub)
    expected = {i: evaluate_submission(specs[i], sub) for i, sub in firsts.items()}
    samples = {s.id: next(iter(s.scores.values())) for s in log.samples}
    assert samples.keys() == expected.keys()
    for incident, score in samples.items():
        case = expected[incident]
        assert score.value == pytest.approx(case.composite)
        assert score.answer == ("pass" if case.passed else "fail")
        noes = {q for q, a in score.metadata["answers"].items() if a["answer"] == "No"}
        assert noes == {j.question_id for j in case.judgments if j.answer == "No"}
    passed = [c.passed for c in expected.values()]
    assert metrics(log)["pass_rate"] == pytest.approx(sum(passed) / len(passed))
    composites = [c.composite for c in expected.values()]
    assert metrics(log)["mean_composite"] == pytest.approx(sum(composites) / len(composites))


def test_by_default_the_grader_role_model_judges_with_the_spec_as_target(tmp_path) -> None:
    grader = mock(checklist_reply(no={"D2-Q1", "D3-Q3"}))
    task = one_sample_task(target=SPEC.model_dump_json())
    log = run(task, grader, tmp_path)
    score = next(iter(log.samples[0].scores.values()))
    # D1 3/3, D2 2/3, D3 2/3 with weights .33/.33/.34
    assert score.value == pytest.approx(0.33 + 0.33 * 2 / 3 + 0.34 * 2 / 3)
    assert score.answer == "pass"
    assert score.metadata["judge"] == "inspect:mockllm/model"
    assert score.metadata["answers"]["D2-Q1"] == {
        "answer": "No",
        "evidence": "quoted",
        "confidence": "High",
    }
    assert score.metadata["unscored"] == {}
    assert metrics(log) == {"pass_rate": 1.0, "mean_composite": pytest.approx(score.value)}


def test_an_unusable_grader_leaves_questions_unscored_never_no(tmp_path) -> None:
    log = run(one_sample_task(), mock(lambda _: "I think it is fine."), tmp_path)
    score = next(iter(log.samples[0].scores.values()))
    assert math.isnan(score.value) and score.answer is None
    assert score.metadata["answers"] == {}
    assert len(score.metadata["unscored"]) == 9
    assert all(
        "unparseable reply after 3 attempts" in r for r in score.metadata["unscored"].values()
    )
    assert score.metadata["complete"] is False


def test_the_rules_judge_needs_no_grader(tmp_path) -> None:
    log = run(one_sample_task(judge="rules"), None, tmp_path)
    score = next(iter(log.samples[0].scores.values()))
    assert score.value == pytest.approx(evaluate_submission(SPEC, DIAGNOSIS).composite)
    assert score.metadata["judge"] == "rules"


def test_a_sample_without_a_usable_spec_is_an_error_naming_sample_and_field(tmp_path) -> None:
    task = one_sample_task(judge="rules", metadata={"incident_spec": {"id": "x"}})
    log = run(task, None, tmp_path)
    assert log.status == "error"
    assert "sample 's1': metadata['incident_spec'] is not a usable incident spec: ground_truth" in (
        log.error.message
    )


def test_a_failing_grader_leaves_questions_unscored_with_the_error(tmp_path) -> None:
    class RateLimitError(Exception):
        """Named like the providers' own: classified as a rate limit."""

    def fail(_: str) -> str:
        raise RateLimitError("slow down")

    log = run(one_sample_task(), mock(fail), tmp_path)
    score = next(iter(log.samples[0].scores.values()))
    assert math.isnan(score.value) and score.metadata["answers"] == {}
    reasons = set(score.metadata["unscored"].values())
    assert reasons == {"inspect:mockllm/model failed: RateLimitError: slow down"}
