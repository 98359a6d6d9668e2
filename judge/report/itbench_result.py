"""A result in ITBench's `evaluation_results.json` shape, so that scripts written for
ITBench-Evaluations read it unchanged.

ITBench-Evaluations writes `{raw_results, statistics, config}`: one raw result per trial
(`incident_id`, `trial_id`, `scores` by metric, `calculation_precision` / `_recall` / `_f1` for
the entity metrics), per-incident statistics (`{metric: {mean, stderr, n}}`) and overall ones,
macro-averaged over incidents (`{metric: {mean, stderr, n_incidents}}` and `total_bad_runs`).
This module builds the same from a result file and the entity matches it holds, reading nothing
else: ITBench's code carries no licence, so nothing of it is copied; the shape is the one its
README documents and its published result files show.

Under ITBench's names go only the metrics whose meaning is the same: root-cause entity
precision, recall and F1 (`root_cause_entity`), the same over the first k predictions
(`root_cause_entity_k@1`..`@5`, and `root_cause_entity_k` for k = 3, its legacy key). ITBench's
are judged by an LLM that decides which predicted entity matches the ground truth; ours are
computed in code (`ground_truth.entities`), and two definitions differ: our recall counts each
root cause once however many predictions match it, and never exceeds 1, where ITBench's @k
recall counts matching predictions. The checklist's own scores go beside them under names
ITBench does not use: `checklist` in each raw result, `checklist_composite` and
`checklist_pass` in the statistics. ITBench's other criteria (reasoning, propagation chain,
fault localisation, proximity) are not computed and are never written.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..checklist.results import EvalResult, write_json_atomic
from ..checklist.scoring import CaseResult

COMPUTED = ("ROOT_CAUSE_ENTITY", "ROOT_CAUSE_ENTITY_K")
"""ITBench criteria this writer fills (`ROOT_CAUSE_ENTITY_K`: older versions' name for @k)."""
NOT_COMPUTED = (
    "ROOT_CAUSE_REASONING",
    "PROPAGATION_CHAIN",
    "FAULT_LOCALIZATION",
    "ROOT_CAUSE_REASONING_PARTIAL",
    "ROOT_CAUSE_PROXIMITY",
    "ROOT_CAUSE_PROXIMITY_FP",
    "ROOT_CAUSE_RESOURCE",
)
"""ITBench criteria judged by its LLM (or its FinOps domain) that nothing here computes."""
K_VALUES = (1, 2, 3, 4, 5)
LEGACY_K = 3
ENTITY_KEYS = tuple(
    f"root_cause_entity{part}_{m}" for part in ("", "_k") for m in ("precision", "recall", "f1")
)
CHECKLIST_KEYS = ("checklist_composite", "checklist_pass")
JUSTIFICATION = (
    "computed in code by diagnosis-judge (ground_truth.entities): each predicted entity matched"
    " by name, kind and namespace against the ground truth's root-cause groups and aliases;"
    " no LLM was asked"
)
BAD_RUN = "bad run"
"""What the ITBench reader's warnings say of a trial it skipped (ITBench's `total_bad_runs`)."""


def itbench_result(
    result: EvalResult,
    eval_criteria: Iterable[str] = ("ROOT_CAUSE_ENTITY",),
    k: int = LEGACY_K,
    domain: str = "sre",
    result_file: str | None = None,
) -> dict[str, Any]:
    """`result` as ITBench's `evaluation_results.json` (a JSON-ready dict)."""
    criteria = list(eval_criteria)
    entities = {
        (str(c["incident_id"]), str(c["trial"])): c
        for c in ((result.entities or {}).get("cases") or [])
    }
    cases = {(case.incident_id, case.trial): case for case in result.cases}
    keys = list(cases) + [key for key in entities if key not in cases]
    raw = [_raw_result(key, cases.get(key), entities.get(key)) for key in keys]
    bad = sum(BAD_RUN in w for w in result.warnings)
    return {
        "raw_results": raw,
        "statistics": statistics(raw, bad),
        "config": {
            "domain": domain,
            "ground_truth_path": result.config.get("ground_truth"),
            "outputs_path": result.config.get("outputs"),
            "eval_criteria": criteria,
            "k": k,
        },
        "diagnosis_judge": {
            "result_file": result_file,
            "tool_version": result.tool_version,
            "rubric": result.config.get("rubric"),
            "judge": result.config.get("judge"),
            "entity_metrics": JUSTIFICATION,
            "not_computed": [c for c in NOT_COMPUTED if c not in criteria],
        },
    }


def write_itbench_result(path: str | Path, result: EvalResult, **options: Any) -> Path:
    """Write `itbench_result(result, **options)` to `path` atomically."""
    write_json_atomic(path, json.dumps(itbench_result(result, **options), indent=2) + "\n")
    return Path(path)


def _raw_result(
    key: tuple[str, str], case: CaseResult | None, entity: dict[str, Any] | None
) -> dict[str, Any]:
    """One trial's raw result: `incident_id`, `trial_id`, `scores`."""
    scores: dict[str, Any] = {}
    if entity is not None:
        scores.update(_entity_scores(entity))
    if case is not None and case.composite is not None:
        scores["checklist"] = {
            "composite": case.composite,
            "passed": case.passed,
            "dimensions": {d.dimension_id: d.score for d in case.dimensions},
        }
    out: dict[str, Any] = {"incident_id": key[0], "trial_id": key[1], "scores": scores}
    if case is not None and case.agent:
        out["agent"] = case.agent
    if not scores:
        out["error"] = "no score: every checklist question unscored and no entities to score"
    return out


def _entity_scores(entity: dict[str, Any]) -> dict[str, Any]:
    at = {int(a["k"]): a for a in entity.get("at_k") or []}
    scores: dict[str, Any] = {
        "root_cause_entity": {
            "gt_entities": list(entity.get("ground_truth") or []),
            "predicted_entities": [
                {
                    "entity": m["entity"],
                    "matches_gt": m.get("matched_to") is not None,
                    "matched_to": m.get("matched_to"),
                }
                for m in entity.get("matches") or []
            ],
            **_calculation(entity),
            "justification": JUSTIFICATION,
        }
    }
    if LEGACY_K in at:
        scores["root_cause_entity_k"] = _calculation(at[LEGACY_K])
    for k in K_VALUES:
        if k in at:
            scores[f"root_cause_entity_k@{k}"] = _calculation(at[k])
    return scores


def _calculation(metrics: dict[str, Any]) -> dict[str, float]:
    return {f"calculation_{m}": float(metrics[m]) for m in ("precision", "recall", "f1")}


# ---------------------------------------------------------------- statistics


def _values(raw: dict[str, Any]) -> dict[str, float]:
    """The numbers one raw result contributes, by statistics key."""
    scores = raw.get("scores") or {}
    out = {}
    for name in ("root_cause_entity", "root_cause_entity_k"):
        block = scores.get(name) or {}
        for m in ("precision", "recall", "f1"):
            value = block.get(f"calculation_{m}")
            if isinstance(value, (int, float)):
                out[f"{name}_{m}"] = float(value)
    checklist = scores.get("checklist") or {}
    if isinstance(checklist.get("composite"), (int, float)):
        out["checklist_composite"] = float(checklist["composite"])
    if isinstance(checklist.get("passed"), bool):
        out["checklist_pass"] = 1.0 if checklist["passed"] else 0.0
    return out


def statistics(raw: list[dict[str, Any]], bad_runs: int = 0) -> dict[str, Any]:
    """Per-incident `{key: {mean, stderr, n}}` (stderr: population deviation / sqrt(n)) and
    overall `{key: {mean, stderr, n_incidents}}`, the mean of the incidents' means (stderr: the
    sample standard error of those means, None for one incident), and `total_bad_runs`."""
    by_incident: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for item in raw:
        for key, value in _values(item).items():
            by_incident[str(item["incident_id"])][key].append(value)
    per_incident = {
        incident: {key: _trials(values) for key, values in metrics.items()}
        for incident, metrics in by_incident.items()
    }
    overall: dict[str, Any] = {}
    for key in (*ENTITY_KEYS, *CHECKLIST_KEYS):
        means = [m[key]["mean"] for m in per_incident.values() if key in m]
        if means:
            overall[key] = {
                "mean": sum(means) / len(means),
                "stderr": _sample_error(means),
                "n_incidents": len(means),
            }
    overall["total_bad_runs"] = bad_runs
    return {"per_incident": per_incident, "overall": overall}


def _trials(values: list[float]) -> dict[str, Any]:
    mean = sum(values) / len(values)
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return {"mean": mean, "stderr": spread / math.sqrt(len(values)), "n": len(values)}


def _sample_error(values: list[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    return spread / math.sqrt(len(values))
