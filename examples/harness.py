"""Score submissions one at a time from another harness, through the Python API.

A benchmark harness (SREGym-, ITBench-, SRE-Zero-like) usually has the ground truth in memory
and gets one diagnosis at a time from the agent it runs. This script plays that harness over the
bundled example set:

    python examples/harness.py                      # the offline rules judge
    JUDGE_MODEL=openai/gpt-4o-mini python examples/harness.py

An async harness awaits `evaluate_submission_async(...)` with the same arguments instead; the
plain call also works inside a running event loop (a notebook), in a worker thread of its own.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ground_truth import Submission, load_specs, load_submissions
from judge import evaluate_submission, load_rubric, make_judge

HERE = Path(__file__).resolve().parent / "sregym-mini"


def main() -> int:
    rubric = load_rubric("sregym-v3")
    judge = (
        make_judge(
            os.environ.get("JUDGE_MODEL"),
            api_base=os.environ.get("JUDGE_BASE_URL"),
            api_key=os.environ.get("JUDGE_API_KEY"),
        )
        if os.environ.get("JUDGE_MODEL")
        else make_judge()
    )
    specs = {spec.id: spec for spec in load_specs(HERE / "ground_truth")}
    for done in load_submissions(HERE / "outputs"):
        # what a harness holds after its agent answered: an incident id and free text
        submission = Submission(
            incident_id=done.incident_id, trial=done.trial, diagnosis=done.diagnosis
        )
        case = evaluate_submission(
            specs[submission.incident_id], submission, rubric=rubric, judge=judge
        )
        failing = [j.question_id for j in case.judgments if j.answer == "No"]
        verdict = "pass" if case.passed else ("fail" if case.passed is False else "incomplete")
        print(
            f"{case.incident_id}/{case.trial}: {case.composite:.2f} {verdict}"
            + (f"  (No: {', '.join(failing)})" if failing else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
