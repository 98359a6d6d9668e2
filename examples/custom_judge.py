"""Write your own judge: `name`, `describe()` and `judge(task)` (a plain or an `async def`).

    python examples/custom_judge.py
    PYTHONPATH=examples judge eval --judge-model custom_judge:OriginJudge \\
        --ground-truth examples/sregym-mini/ground_truth --outputs examples/sregym-mini/outputs
"""

from pathlib import Path

from ground_truth import load_specs, load_submissions
from judge import DimensionVerdict, JudgeTask, QuestionAnswer, evaluate, register_judge


class OriginJudge:
    """Yes to every question when the diagnosis names the fault's origin, else No."""

    name = "origin"

    def describe(self) -> dict:
        return {"name": "origin", "model": None, "params": {}}

    def judge(self, task: JudgeTask) -> DimensionVerdict:
        text = task.submission.diagnosis.lower()
        named = [c.name for c in task.spec.fault_origin if c.name.lower() in text]
        answer = "Yes" if named else "No"
        return DimensionVerdict(
            answers=[
                QuestionAnswer(question_id=q, answer=answer, evidence=", ".join(named))
                for q in task.question_ids
            ]
        )


register_judge("origin", OriginJudge)  # now also `make_judge("origin")`

if __name__ == "__main__":
    data = Path(__file__).parent / "sregym-mini"
    specs, outputs = load_specs(data / "ground_truth"), load_submissions(data / "outputs")
    overall = evaluate(specs, outputs, judge=OriginJudge()).overall
    print(f"{overall.n_cases} cases, pass rate {overall.pass_rate.value:.2f}")
