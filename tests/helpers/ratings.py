"""Synthetic ratings: a random truth, raters who flip or skip some of its answers, and their
label sheets, for the tests of agreement statistics and of what shows them."""

from __future__ import annotations

import csv
import random
from pathlib import Path

from agreement.synthetic import result_from_answers

QUESTIONS = ["D1-Q1", "D1-Q2", "D1-Q3", "D2-Q1", "D2-Q2", "D2-Q3"]
B = 60


def truth(n: int = 24, seed: int = 0) -> dict[tuple[str, str, str], str]:
    rng = random.Random(seed)
    return {
        (f"inc-{i:02d}", "1", q): rng.choice(["Yes", "No"]) for i in range(n) for q in QUESTIONS
    }


def noisy(answers: dict, flip: float, seed: int, missing: float = 0.0) -> dict:
    rng = random.Random(seed)
    out = {}
    for key, value in answers.items():
        if rng.random() < missing:
            out[key] = None
        elif rng.random() < flip:
            out[key] = "No" if value == "Yes" else "Yes"
        else:
            out[key] = value
    return out


def label_csv(path: Path, answers: dict, annotator: str, verdicts: dict | None = None) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["incident_id", "trial", "question_id", "answer", "annotator"])
        for (incident, trial, question), answer in answers.items():
            writer.writerow([incident, trial, question, answer or "", annotator])
        for (incident, trial), answer in (verdicts or {}).items():
            writer.writerow([incident, trial, "verdict", answer, annotator])
    return path


def verdicts_of(answers: dict, threshold: float = 0.7) -> dict:
    result = result_from_answers(answers, threshold=threshold)
    return {(c["incident_id"], c["trial"]): "Yes" if c["passed"] else "No" for c in result["cases"]}
