"""The Inspect AI scorer, end to end and offline: Inspect's `mockllm` model writes the
diagnoses and, as the `grader` role, answers the checklist."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLE, FIXTURES, REPO, load_script
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate

from ground_truth import Submission, load_specs, load_submissions
from judge import evaluate_submission
from judge.integrations.inspect import checklist_scorer

pytestmark = pytest.mark.slow

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
    example = load_script(REPO / "examples" / "inspect_task.py")
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
    assert metrics(log) == {
        "pass_rate": 1.0,
        "pass_rate_stderr": 0.0,  # one sample, as Inspect's stderr() says
        "mean_composite": pytest.approx(score.value),
        "mean_composite_stderr": 0.0,
    }


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


def test_a_sample_without_a_usable_spec_is_unscored_naming_sample_and_field(tmp_path) -> None:
    task = one_sample_task(judge="rules", metadata={"incident_spec": {"id": "x"}})
    log = run(task, None, tmp_path)
    score = next(iter(log.samples[0].scores.values()))
    assert log.status == "success" and math.isnan(score.value)
    assert score.explanation == (
        "sample 's1': metadata['incident_spec'] is not a usable incident spec: "
        "ground_truth: Field required"
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


# ---- the targets the CLI reads; an unreadable one leaves its sample unscored (issue 24)

SREGYM_SPEC = next(s for s in load_specs(FIXTURES / "formats" / "sregym") if s.fault_origin)
ITBENCH_GT = FIXTURES / "formats" / "itbench" / "scenarios" / "scenario_2"


def scores_by_sample(log) -> dict[Any, Any]:
    return {s.id: next(iter(s.scores.values())) for s in log.samples}


def test_a_sregym_fault_spec_string_as_target_scores_like_the_cli(tmp_path) -> None:
    task = Task(
        dataset=[Sample(id=SREGYM_SPEC.id, input="diagnose", target=SREGYM_SPEC.ground_truth)],
        solver=generate(),
        scorer=checklist_scorer(judge="rules"),
    )
    log = run(task, None, tmp_path)
    score = scores_by_sample(log)[SREGYM_SPEC.id]
    expected = evaluate_submission(
        SREGYM_SPEC, Submission(incident_id=SREGYM_SPEC.id, diagnosis=DIAGNOSIS.diagnosis)
    )
    assert log.status == "success"
    assert score.value == pytest.approx(expected.composite)
    assert score.metadata["incident_id"] == SREGYM_SPEC.id


def test_an_itbench_ground_truth_yaml_as_target_is_read(tmp_path) -> None:
    text = (ITBENCH_GT / "groundtruth_v1.yaml").read_text()
    task = Task(
        dataset=[Sample(id="scenario_2", input="diagnose", target=text)],
        solver=generate(),
        scorer=checklist_scorer(judge="rules"),
    )
    log = run(task, None, tmp_path)
    score = scores_by_sample(log)["scenario_2"]
    assert log.status == "success" and score.metadata["complete"]
    assert math.isfinite(score.value)


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("{id: x", "not JSON or YAML"),
        ("The checkout service crashed.", "str text, not a mapping"),
        ('{"id": "x"}', "ground_truth: Field required"),
        ("", "it is empty"),
    ],
)
def test_an_unreadable_target_leaves_that_sample_unscored_and_the_eval_goes_on(
    tmp_path, target: str, reason: str
) -> None:
    task = Task(
        dataset=[
            Sample(id="bad", input="diagnose", target=target),
            Sample(id="good", input="diagnose", target=SPEC.model_dump_json()),
        ],
        solver=generate(),
        scorer=checklist_scorer(judge="rules"),
    )
    log = run(task, None, tmp_path)
    scores = scores_by_sample(log)
    assert log.status == "success"
    bad = scores["bad"]
    assert math.isnan(bad.value) and bad.answer is None
    assert bad.explanation.startswith("sample 'bad': target is not a usable incident spec: ")
    assert reason in bad.explanation and bad.metadata["error"] == bad.explanation
    assert metrics(log)["mean_composite"] == pytest.approx(scores["good"].value)


def test_the_metrics_carry_standard_errors_as_inspect_computes_them(tmp_path) -> None:
    from inspect_ai.scorer import SampleScore, Score, stderr

    grader = mock(checklist_reply(no={"D1-Q1", "D1-Q2", "D2-Q1", "D3-Q3"}))
    task = Task(
        dataset=[
            Sample(id=str(i), input="diagnose", metadata={"incident_spec": spec})
            for i, spec in enumerate([SPEC.model_dump(mode="json")] * 3)
        ],
        solver=generate(),
        scorer=checklist_scorer(judge="rules"),
    )
    log = run(task, grader, tmp_path)
    values = [s.value for s in scores_by_sample(log).values()]
    passed = [float(s.answer == "pass") for s in scores_by_sample(log).values()]
    found = metrics(log)
    assert set(found) == {
        "pass_rate",
        "pass_rate_stderr",
        "mean_composite",
        "mean_composite_stderr",
    }

    def inspect_stderr(xs: list[float]) -> float:
        return stderr()([SampleScore(score=Score(value=x), sample_id=i) for i, x in enumerate(xs)])

    assert found["mean_composite_stderr"] == pytest.approx(inspect_stderr(values))
    assert found["pass_rate_stderr"] == pytest.approx(inspect_stderr(passed))


def test_the_readme_way_to_run_mockllm_offline_works(tmp_path) -> None:
    """The README's commands: tiktoken's tables from litellm's copy, then `inspect eval` with
    mockllm's default outputs (which have no usage, so mockllm counts their tokens)."""
    import os
    import subprocess
    import sys

    readme = (REPO / "README.md").read_text()
    assert "bundled_token_tables" in readme and "--model mockllm/model" in readme
    from judge.integrations.inspect import bundled_token_tables

    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    env["TIKTOKEN_CACHE_DIR"] = str(bundled_token_tables())
    done = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "examples/inspect_task.py",
         "--model", "mockllm/model", "-T", "judge=rules", "--log-dir", str(tmp_path),
         "--display", "none", "--log-format", "json"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [log_file] = tmp_path.glob("*.json")
    log = json.loads(log_file.read_text())
    assert log["status"] == "success"
    assert len(log["samples"]) == len(load_specs(EXAMPLE / "ground_truth"))
