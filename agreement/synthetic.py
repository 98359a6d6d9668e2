"""Build result dicts in the `judge eval` shape from plain answers (tests, examples, benchmarks).

Scoring follows DESIGN.md: dimension score = share of Yes among scored questions, composite =
weighted sum of dimension scores (weights renormalised over scored dimensions), pass =
composite >= threshold.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def dimension_of_question(question_id: str) -> str:
    """`D1-Q2` -> `D1` (the rubric convention); other ids are their own dimension."""
    return question_id.split("-", 1)[0]


def result_from_answers(
    answers: Mapping[tuple[str, str, str], str | None],
    *,
    judge: str = "llm",
    model: str | None = None,
    threshold: float = 0.7,
    weights: Mapping[str, float] | None = None,
    dimension_of: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A result dict from `{(incident_id, trial, question_id): "Yes" | "No" | None}`."""
    judge_label = model or judge
    judgments = []
    per_case: dict[tuple[str, str], dict[str, list[str | None]]] = {}
    for (incident, trial, question), answer in answers.items():
        dimension = (dimension_of or {}).get(question) or dimension_of_question(question)
        judgments.append(
            {
                "incident_id": incident,
                "trial": trial,
                "dimension_id": dimension,
                "question_id": question,
                "answer": answer,
                "evidence": None,
                "confidence": None,
                "unscored_reason": None if answer is not None else "synthetic: unscored",
                "judge": judge_label,
                "prompt_hash": "",
            }
        )
        per_case.setdefault((incident, trial), {}).setdefault(dimension, []).append(answer)
    cases = [
        _case(incident, trial, dims, threshold, weights)
        for (incident, trial), dims in per_case.items()
    ]
    return {
        "schema_version": "1",
        "config": {
            "rubric": {"name": "synthetic", "version": "0", "hash": ""},
            "judge": {"name": judge, "model": model, "params": {}},
        },
        "judgments": judgments,
        "cases": cases,
        "incidents": [],
        "overall": {},
        "missing": [],
        "orphans": [],
    }


def _case(
    incident: str,
    trial: str,
    dims: dict[str, list[str | None]],
    threshold: float,
    weights: Mapping[str, float] | None,
) -> dict[str, Any]:
    dimensions = []
    weighted, total = 0.0, 0.0
    for dimension, values in dims.items():
        scored = [v for v in values if v is not None]
        score = sum(v == "Yes" for v in scored) / len(scored) if scored else None
        dimensions.append(
            {
                "dimension_id": dimension,
                "score": score,
                "n_scored": len(scored),
                "n_unscored": len(values) - len(scored),
            }
        )
        if score is not None:
            w = (weights or {}).get(dimension, 1.0)
            weighted += w * score
            total += w
    composite = weighted / total if total else None
    return {
        "incident_id": incident,
        "trial": trial,
        "composite": composite,
        "passed": None if composite is None else composite >= threshold,
        "complete": all(d["n_unscored"] == 0 for d in dimensions),
        "dimensions": dimensions,
    }
