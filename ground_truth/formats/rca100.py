"""RCA-100 runs (forks of OpenRCA named `openrca_rca100`): OpenRCA's agent-CSV columns, with
tasks named `t001`.. instead of `task_1`..`task_7` and JSON answers on both sides.

A row (`test/result/rca100/agent-<tag>-<model>.csv`) holds the alert the agent was given in
`instruction` (after `[Task directory: rca100/cases/t001]`), the agent's answer in
`prediction` and the truth in `groundtruth`, both `{"root_cause_entities": [...],
"root_cause_types": [...]}`; `passed`, `failed` and `score` are the run's own scoring.

One task -> one `IncidentSpec`, id `<dataset>-<task>` (`rca100-t001`, from the task directory;
else the folder and the task index): `fault_origin` = the root-cause entities, `mechanism` and
`problem_class` = the first root-cause type, every type in `mechanism_keywords`. An answer's
entities become ranked entities, so entity scoring gives top-1 / @k localisation.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..models import ComponentRef, Entity, IncidentSpec
from ..reading import parse_json
from .files import warn_format

TASK = re.compile(r"^t\d+$")
_TASK_DIR = re.compile(r"\[Task directory:\s*(?P<dataset>[^/\]\s]+)/cases/(?P<case>[^\]\s/]+)\]")
KEYS = ("root_cause_entities", "root_cause_types")


def is_rca100_row(row: dict[str, str]) -> bool:
    """Whether an agent-CSV row is an RCA-100 task (`task_index` `t001`, ...)."""
    return bool(TASK.match((row.get("task_index") or "").strip()))


def rca100_id(row: dict[str, str], file: Path) -> str:
    """`rca100-t001`: the task directory the instruction names, else folder and task index."""
    found = _TASK_DIR.search(row.get("instruction") or "")
    if found:
        return f"{found['dataset']}-{found['case']}"
    return f"{file.parent.name}-{(row.get('task_index') or '').strip()}"


def answer(text: str, file: Path, field: str) -> dict[str, list[str]]:
    """`{"root_cause_entities": [...], "root_cause_types": [...]}` read from `text` (JSON, maybe
    in a ```json fence); InputError naming `field` when it is not that."""
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    data = parse_json((fenced.group(1) if fenced else text).strip() or "null", file, field=field)
    if not isinstance(data, dict) or not any(isinstance(data.get(k), list) for k in KEYS):
        raise InputError(
            file, "expected JSON with root_cause_entities and root_cause_types lists", field=field
        )
    return {k: [str(v).strip() for v in data.get(k) or [] if str(v).strip()] for k in KEYS}


def rca100_spec(row: dict[str, str], file: Path, line: int, schema: str) -> IncidentSpec:
    """The spec of one RCA-100 task from the row's `groundtruth`."""
    truth = answer(row.get("groundtruth") or "", file, f"line {line}.groundtruth")
    entities, types = truth["root_cause_entities"], truth["root_cause_types"]
    if not entities:
        raise InputError(file, "no root_cause_entities", field=f"line {line}.groundtruth")
    task = _TASK_DIR.sub("", row.get("instruction") or "").strip()
    text = [f"Alert given to the agent: {task}"] if task else []
    text.append(f"Root cause entities: {', '.join(entities)}.")
    if types:
        text.append(f"Root cause types: {', '.join(types)}.")
    return IncidentSpec(
        id=rca100_id(row, file),
        ground_truth="\n".join(text),
        fault_origin=[ComponentRef(name=e) for e in entities],
        mechanism=types[0] if types else None,
        mechanism_keywords=types,
        problem_class=types[0] if types else None,
        source={"format": "openrca", "file": str(file), "field": f"line {line}", "schema": schema},
        extra={"rca100": {"task_index": row.get("task_index"), **truth}},
    )


def rca100_answer(row: dict[str, str], file: Path, line: int) -> tuple[str, list[Entity]]:
    """(diagnosis text, ranked entities) of the row's `prediction`; an answer that is not the
    expected JSON is an empty diagnosis, with a warning naming the field."""
    field = f"line {line}.prediction"
    try:
        said: dict[str, Any] = answer(row.get("prediction") or "", file, field)
    except InputError as exc:
        warn_format(file, f"{exc.message}: empty diagnosis", field=field)
        return "", []
    entities, types = said["root_cause_entities"], said["root_cause_types"]
    lines = [f"Root cause entities: {', '.join(entities) or 'none'}."]
    if types:
        lines.append(f"Root cause types: {', '.join(types)}.")
    ranked = [
        Entity(name=e, rank=i, fault_type=types[i - 1] if len(types) == len(entities) else None)
        for i, e in enumerate(entities, 1)
    ]
    return "\n".join(lines), ranked
