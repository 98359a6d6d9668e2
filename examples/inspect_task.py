"""An Inspect AI task scored by the checklist: each sample carries an incident spec, the model
under evaluation writes the diagnosis, `checklist_scorer` scores it.

    pip install "diagnosis-judge[inspect]"
    inspect eval examples/inspect_task.py --model openai/gpt-4o \\
        --model-role grader=openai/gpt-4o-mini          # the judge: Inspect's grader model
    inspect eval examples/inspect_task.py -T judge=rules --model openai/gpt-4o
    python examples/inspect_task.py                     # offline: see `run_offline`
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate

from ground_truth import load_specs, load_submissions
from judge.integrations.inspect import checklist_scorer

HERE = Path(__file__).resolve().parent / "sregym-mini"
ASK = "Incident {id} is under way in the system under test. Write your root-cause diagnosis."


@task
def sregym_mini(judge: str | None = None, rubric: str = "sregym-v3") -> Task:
    """The bundled example's incidents as samples; the spec rides in the sample's metadata."""
    samples = [
        Sample(
            id=spec.id,
            input=ASK.format(id=spec.id),
            metadata={"incident_spec": spec.model_dump(mode="json")},
        )
        for spec in load_specs(HERE / "ground_truth")
    ]
    return Task(dataset=samples, solver=generate(), scorer=checklist_scorer(rubric, judge))


def replayed_diagnoses():
    """A `mockllm` output function that answers each incident with the bundled example's
    first diagnosis of it: an agent's answers, replayed without a model."""
    first: dict[str, str] = {}
    for sub in load_submissions(HERE / "outputs"):
        first.setdefault(sub.incident_id, sub.diagnosis)

    def answer(messages: list[ChatMessage], *_: object) -> ModelOutput:
        incident = next(i for i in first if f"Incident {i} " in messages[-1].text)
        output = ModelOutput.from_content(model="mockllm", content=first[incident])
        # without a usage mockllm counts tokens with tiktoken, which downloads its tables
        output.usage = ModelUsage(input_tokens=len(messages[-1].text) // 4, output_tokens=1)
        return output

    return answer


def run_offline(log_dir: str | Path) -> EvalLog:
    """The task end to end without a network: mockllm replays diagnoses, the rules judge scores."""
    model = get_model("mockllm/model", custom_outputs=replayed_diagnoses())
    [log] = eval(sregym_mini(judge="rules"), model=model, display="none", log_dir=str(log_dir))
    return log


def main() -> int:
    with tempfile.TemporaryDirectory() as logs:
        log = run_offline(logs)
        for sample in log.samples or []:  # read from the log file: inside the `with`
            score = next(iter((sample.scores or {}).values()))
            answers = (score.metadata or {}).get("answers", {})
            noes = ", ".join(q for q, a in answers.items() if a["answer"] == "No")
            print(
                f"{sample.id}: {score.value:.2f} {score.answer}"
                + (f"  (No: {noes})" if noes else "")
            )
    for metric in log.results.scores[0].metrics.values() if log.results else []:
        print(f"{metric.name}: {metric.value:.3f}")
    return 0 if log.status == "success" else 1


if __name__ == "__main__":
    sys.exit(main())
