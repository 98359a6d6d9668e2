"""ITBench-Evaluations' judge output, read so its LLM-judged entity metrics can be compared
with the ones `ground_truth.entities` computes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import InputError
from ..files import read_structured
from .common import canonical_incident_id


def load_itbench_judge_results(path: str | Path) -> list[dict[str, Any]]:
    """ITBench-Evaluations' per-case entity verdicts, to compare with `score_entities`.

    Reads `evaluation_results.json` (`{raw_results, statistics, config}`) or an AgentBeats
    leaderboard file wrapping it. One dict per case: `incident_id`, `trial`, `error`,
    `gt_entities`, `predicted` (`[{entity, matches_gt, matched_to}]`) and `metrics` (the flat
    `root_cause_entity_*` numbers the judge computed; None where it gave none).
    """
    path = Path(path)
    data = read_structured(path)
    blocks = (
        [data]
        if isinstance(data, dict) and "raw_results" in data
        else [
            r.get("evaluation_results") for r in (data.get("results") or []) if isinstance(r, dict)
        ]
        if isinstance(data, dict)
        else []
    )
    rows = []
    for block in blocks:
        for raw in (block or {}).get("raw_results") or []:
            rows.append(_judge_row(raw))
    if not rows:
        raise InputError(path, "holds no ITBench judge results", field="raw_results")
    return rows


def _judge_row(raw: dict[str, Any]) -> dict[str, Any]:
    scores = raw.get("scores") or {}
    entity = scores.get("root_cause_entity") or {}
    metrics: dict[str, float | None] = {}
    for name, block in [("", entity)] + [
        (f"k@{k}_", scores.get(f"root_cause_entity_k@{k}") or {}) for k in range(1, 6)
    ]:
        for m in ("precision", "recall", "f1"):
            value = block.get(f"calculation_{m}")
            metrics[f"root_cause_entity_{name}{m}"] = (
                float(value) if isinstance(value, (int, float)) else None
            )
    return {
        "incident_id": canonical_incident_id(raw.get("incident_id", "")),
        "trial": str(raw.get("trial_id", "")),
        "error": raw.get("error"),
        "gt_entities": entity.get("gt_entities") or [],
        "predicted": [
            {
                "entity": p.get("entity"),
                "matches_gt": p.get("matches_gt"),
                "matched_to": p.get("matched_to"),
            }
            for p in entity.get("predicted_entities") or []
            if isinstance(p, dict)
        ],
        "metrics": metrics,
    }
