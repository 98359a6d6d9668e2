"""AIOpsLab (github.com/microsoft/AIOpsLab, MIT): problem ground truth and agent sessions.

AIOpsLab keeps no ground-truth files (each problem class hard-codes its answer in `eval()`). The
ground truth is read from an AIOpsLab checkout as published (its problem registry and problem
classes, parsed with `ast`, never imported: `aiopslab_registry`), or from a YAML/JSON problem list
in the shape of the corpus extraction:
`problems[{problem_id, task_type, class, application, faulty_component, fault_type, injector,
parameters, description, expected_detection | expected_localization | expected_system_level +
expected_fault_type | mitigation_success_check}]`.

Problem -> `IncidentSpec`, one per task id (`<fault>-<task>-<n>`):
- `fault_origin` = the faulty component (namespace from the application, when it names one);
  none for the no-op detection problems;
- `mechanism` = the description (what was injected); `problem_class` = the expected analysis
  fault type (Misconfiguration, Code Defect, ...) when the task asks for it, else the injected
  `fault_type`; `parameters` = the injector's parameters plus the injector name;
- `ground_truth` = the description followed by the expected answer of the task: detection
  "Yes"/"No", the faulty component(s) for localization, system level + fault type for analysis,
  the success check for mitigation; the task fields are kept in `extra["aiopslab"]`.

Sessions -> `Submission`: AIOpsLab `Session.to_dict()` dumps (`agent, session_id, problem_id,
trace[{role, content}], results`), a folder of them, or a bundle `{"sessions": [...]}` of
extracted records (`model_dir, session_id, problem_id, task_type, submission_args,
[submission_prose], results`). The answer is the argument of the last `submit(...)`:
- detection `submit("Yes")` -> "Anomaly detected: Yes.";
- localization `submit(["geo", "profile"])` -> "Faulty component(s): geo, profile.", and each
  component becomes a structured entity (so localization gets entity precision/recall);
- analysis `submit({"system_level", "fault_type"})` -> "System level: ... Fault type: ...";
- any prose the agent wrote around the call comes first.
Mitigation sessions carry no diagnosis and are skipped (one warning). A session that never
called `submit` is kept with an empty diagnosis: it is a failed answer, not a missing one.
The trial is the session id (unique; several models answer the same problem), the agent is the
model folder (or the session's `agent`). A raw session's trace becomes the trajectory.

The sessions' `results` are the verdicts of the (forked) orchestrator that ran them:
`load_aiopslab_verdicts` exports them (or a `detailed_results_*.csv`) as a rater table, and
`cross_check_aiopslab` warns where they differ from upstream's scoring of the same answer.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..models import Action, ComponentRef, Entity, IncidentSpec, Submission, Trajectory
from ..reading import check_depth
from .aiopslab_registry import extract_problems, registry_file
from .files import (
    STRUCTURED_SUFFIXES,
    any_file,
    csv_header,
    matching_files,
    read_csv_rows,
    read_structured,
    sniff_structured,
    warn_format,
)
from .registry import FunctionAdapter

FORMAT = "aiopslab"
TASKS = ("detection", "localization", "analysis", "mitigation")
_NAMESPACE = re.compile(r"namespace\s+([a-z0-9][a-z0-9-]*)")
_SUBMIT = re.compile(r"submit\s*\((?P<args>.*)\)", re.S)

__all__ = [
    "cross_check_aiopslab",
    "load_aiopslab_specs",
    "load_aiopslab_submissions",
    "load_aiopslab_verdicts",
    "looks_like_aiopslab_specs",
    "looks_like_aiopslab_submissions",
    "task_type_of",
]


def task_type_of(problem_id: str) -> str | None:
    """`revoke_auth_mongodb-analysis-2` -> `analysis` (the task named in an AIOpsLab id)."""
    parts = re.split(r"[-_]", problem_id.lower())
    return next((t for t in reversed(parts) if t in TASKS), None)


# ---------------------------------------------------------------- ground truth


def _problems(data: Any) -> list[dict[str, Any]] | None:
    items = data.get("problems") if isinstance(data, dict) else data
    if isinstance(items, list) and items and isinstance(items[0], dict):
        first = items[0]
        if (
            "problem_id" in first
            and "task_type" in first
            and ("faulty_component" in first or any(k.startswith("expected_") for k in first))
        ):
            return items
    return None


def _is_specs_file(file: Path) -> bool:
    return _problems(sniff_structured(file)) is not None


def looks_like_aiopslab_specs(path: str | Path) -> bool:
    """Whether `path` is an AIOpsLab registry (checkout, problems folder or registry file) or
    holds problem files; only the first files of a folder are sniffed.
    """
    path = Path(path)
    return registry_file(path) is not None or any_file(path, STRUCTURED_SUFFIXES, _is_specs_file)


def load_aiopslab_specs(path: str | Path) -> list[IncidentSpec]:
    """The specs of AIOpsLab problems, read from its PROBLEM_REGISTRY (parsed, never imported)
    or from problem files; InputError when `path` holds neither.
    """
    registry = registry_file(Path(path))
    if registry is not None:
        return [
            _problem_to_spec(p, registry, f"PROBLEM_REGISTRY[{p['problem_id']!r}]", "registry")
            for p in extract_problems(Path(path))
        ]
    specs = []
    for file in matching_files(
        Path(path), STRUCTURED_SUFFIXES, _is_specs_file, "AIOpsLab problems"
    ):
        data = read_structured(file)
        key = "problems" if isinstance(data, dict) else ""
        for i, problem in enumerate(_problems(data) or []):
            specs.append(_problem_to_spec(problem, file, f"{key}[{i}]"))
    return specs


def _problem_to_spec(
    p: dict[str, Any], file: Path, where: str, schema: str = "extracted"
) -> IncidentSpec:
    pid = p.get("problem_id")
    if not pid:
        raise InputError(file, "expected a problem_id", field=f"{where}.problem_id")
    task = p.get("task_type") or task_type_of(str(pid))
    component = p.get("faulty_component")
    match = _NAMESPACE.search(str(p.get("application") or ""))
    namespace = match.group(1) if match else None
    origin = [ComponentRef(name=str(component), namespace=namespace)] if component else []
    if not origin and task != "detection":
        warn_format(
            file,
            "no faulty_component: the fault origin is unknown",
            field=f"{where}.faulty_component",
        )
    parameters = dict(p.get("parameters") or {})
    if p.get("injector"):
        parameters["injector"] = p["injector"]
    task_fields = {
        k: v
        for k, v in p.items()
        if k.startswith("expected_")
        or k
        in {
            "task_type",
            "class",
            "application",
            "source_file",
            "localization_scoring",
            "analysis_scoring",
            "mitigation_success_check",
            "fault_type",
        }
    }
    return IncidentSpec(
        id=str(pid),
        ground_truth=_render(p, task, component),
        fault_origin=origin,
        mechanism=p.get("description") or p.get("fault_type"),
        problem_class=p.get("expected_fault_type") or p.get("fault_type"),
        parameters=parameters,
        source={"format": FORMAT, "file": str(file), "field": where, "schema": schema},
        extra={"aiopslab": {**task_fields, "task_type": task}},
    )


def _render(p: dict[str, Any], task: str | None, component: Any) -> str:
    lines = [str(p.get("description") or f"Fault {p.get('fault_type')} injected.")]
    if component:
        lines.append(f"Faulty component: {component} (fault type: {p.get('fault_type')}).")
    if task == "detection":
        lines.append(f"Expected detection answer: {p.get('expected_detection', 'Yes')}.")
    elif task == "localization":
        expected = p.get("expected_localization") or ([component] if component else [])
        lines.append(f"Expected localization: {', '.join(map(str, expected))}.")
    elif task == "analysis":
        lines.append(
            f"Expected analysis: system level {p.get('expected_system_level')}, "
            f"fault type {p.get('expected_fault_type')}."
        )
    elif task == "mitigation" and p.get("mitigation_success_check"):
        lines.append(f"Mitigated when: {p['mitigation_success_check']}")
    return "\n".join(lines)


# ---------------------------------------------------------------- sessions


def _is_raw_session(data: Any) -> bool:
    return isinstance(data, dict) and {"session_id", "problem_id", "trace"} <= set(data)


def _is_bundle(data: Any) -> bool:
    sessions = data.get("sessions") if isinstance(data, dict) else None
    return (
        isinstance(sessions, list)
        and bool(sessions)
        and isinstance(sessions[0], dict)
        and {"session_id", "problem_id"} <= set(sessions[0])
    )


def _is_session_file(file: Path) -> bool:
    data = sniff_structured(file) if file.suffix.lower() == ".json" else None
    return _is_raw_session(data) or _is_bundle(data)


def looks_like_aiopslab_submissions(path: str | Path) -> bool:
    """Whether `path` is, or its first files include, an AIOpsLab session JSON."""
    return any_file(Path(path), (".json",), _is_session_file)


def load_aiopslab_submissions(path: str | Path) -> list[Submission]:
    """Submissions from AIOpsLab session files (single sessions or bundles; duplicates merged).
    Mitigation sessions are skipped and sessions that never called submit() kept with an empty
    diagnosis, each with a warning; InputError when `path` holds no session file.
    """
    records: list[tuple[Path, str, dict[str, Any]]] = []
    for file in matching_files(Path(path), (".json",), _is_session_file, "AIOpsLab sessions"):
        data = read_structured(file)
        if _is_bundle(data):
            records.extend((file, f"sessions[{i}]", s) for i, s in enumerate(data["sessions"]))
        else:
            records.append((file, "", _from_raw_session(data)))
    subs: list[Submission] = []
    skipped: Counter[str] = Counter()
    unsubmitted: Counter[str] = Counter()
    for file, where, record in _merge_duplicates(records):
        task = record.get("task_type") or task_type_of(str(record.get("problem_id", "")))
        if task == "mitigation":
            skipped[str(file)] += 1
            continue
        if record.get("submission_args") is None:
            unsubmitted[str(file)] += 1
        subs.append(_record_to_submission(record, task, file, where))
    for name, n in skipped.items():
        warn_format(name, f"{n} mitigation session(s) skipped: they carry no diagnosis")
    for name, n in unsubmitted.items():
        warn_format(name, f"{n} session(s) never called submit(): kept with an empty diagnosis")
    return subs


def _merge_duplicates(
    records: list[tuple[Path, str, dict[str, Any]]],
) -> list[tuple[Path, str, dict[str, Any]]]:
    """One record per (problem, session): a raw dump and a bundle entry of it are merged."""
    merged: dict[tuple[str, str], tuple[Path, str, dict[str, Any]]] = {}
    for file, where, record in records:
        key = (str(record.get("problem_id")), str(record.get("session_id")))
        if key not in merged:
            merged[key] = (file, where, record)
            continue
        first_file, first_where, first = merged[key]
        combined = {**first, **{k: v for k, v in record.items() if v is not None}}
        warn_format(
            file,
            f"session {key[1]} also appears in {first_file.name} "
            f"({first_where or 'raw dump'}): merged",
            field=where or "session_id",
        )
        merged[key] = (first_file, first_where, combined)
    return list(merged.values())


def _from_raw_session(data: dict[str, Any]) -> dict[str, Any]:
    """The fields of an extracted record, from a raw `Session.to_dict()` dump."""
    trace = [t for t in data.get("trace") or [] if isinstance(t, dict)]
    record = {
        k: data.get(k)
        for k in ("session_id", "problem_id", "results", "agent", "canonical_problem_id")
    }
    record["submission_args"] = None
    for item in reversed(trace):
        content = str(item.get("content") or "")
        match = _SUBMIT.search(content) if item.get("role") == "assistant" else None
        if match:
            record["submission_args"] = match["args"].strip()
            prose = (
                re.sub(r"```.*?```", "", content, flags=re.S).replace(match.group(0), "").strip()
            )
            record["submission_prose"] = prose or None
            break
    record["trajectory"] = _trajectory(trace, data.get("results"))
    return record


def _trajectory(trace: list[dict[str, Any]], results: Any) -> Trajectory:
    actions: list[Action] = []
    for item in trace:
        content = str(item.get("content") or "")
        if item.get("role") == "assistant":
            call = re.search(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*\(", content)
            actions.append(
                Action(step=len(actions) + 1, raw=content, tool=call.group(1) if call else None)
            )
        elif actions and actions[-1].observation is None:
            actions[-1].observation = content
    return Trajectory(actions=actions, metrics=results if isinstance(results, dict) else {})


def parse_submission(args: str | None) -> Any:
    """The value inside `submit(...)`: JSON, else a Python literal, else the raw text."""
    if args is None:
        return None
    text = args.strip()
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(text)
            check_depth(value, None)
            return value
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue  # InputError (too deep) is a ValueError: kept as text
    return text


def _record_to_submission(
    record: dict[str, Any], task: str | None, file: Path, where: str
) -> Submission:
    answer = parse_submission(record.get("submission_args"))
    lines = [str(record["submission_prose"]).strip()] if record.get("submission_prose") else []
    entities = None
    if record.get("submission_args") is not None:
        if task == "localization":
            components = [str(c) for c in (answer if isinstance(answer, list) else [answer]) if c]
            lines.append(
                f"Faulty component(s): {', '.join(components)}."
                if components
                else "No faulty component identified."
            )
            entities = [Entity(name=c, contributing_factor=True) for c in components]
        elif task == "analysis" and isinstance(answer, dict):
            lines.append(
                f"System level: {answer.get('system_level')}. "
                f"Fault type: {answer.get('fault_type')}."
            )
        elif task == "detection":
            lines.append(f"Anomaly detected: {answer}.")
        else:
            lines.append(f"Answer: {answer}")
    session_id = record.get("session_id")
    if not session_id or not record.get("problem_id"):
        raise InputError(file, "expected session_id and problem_id", field=where or None)
    return Submission(
        incident_id=str(record["problem_id"]),
        trial=str(session_id),
        diagnosis="\n".join(lines),
        agent=record.get("model_dir") or record.get("agent"),
        agent_model=record.get("model_dir") or None,
        entities=entities,
        trajectory=record.get("trajectory"),
        source={
            "format": FORMAT,
            "file": str(file),
            **({"field": where} if where else {}),
            "task_type": task,
            "answer": answer,
            "fork_results": record.get("results"),
            **{k: record[k] for k in ("source_file", "canonical_problem_id") if record.get(k)},
        },
    )


# ---------------------------------------------------------------- verdicts


def _fork_verdict(results: Any) -> bool | None:
    if not isinstance(results, dict):
        return None
    if isinstance(results.get("success"), bool):
        return results["success"]
    accuracy = results.get("Detection Accuracy")
    if accuracy in ("Correct", "Incorrect"):
        return accuracy == "Correct"
    return None


def load_aiopslab_verdicts(path: str | Path) -> list[dict[str, Any]]:
    """The orchestrator's own verdicts: `incident_id`, `trial` (session id), `verdict`, `task_type`.

    From a sessions file/folder (`results`) or a `detailed_results_*.csv` (`success`).
    """
    path = Path(path)
    if path.is_file() and path.suffix.lower() == ".csv":
        header = csv_header(path)
        if not {"session_id", "problem_id", "success"} <= set(header):
            raise InputError(
                path, "expected columns session_id, problem_id, success", field="columns"
            )
        return [
            {
                "incident_id": row["problem_id"],
                "trial": row["session_id"],
                "verdict": {"true": True, "false": False}.get(row["success"].strip().lower()),
                "task_type": row.get("task_type") or task_type_of(row["problem_id"]),
            }
            for row in read_csv_rows(path)
        ]
    out = []
    for file in matching_files(path, (".json",), _is_session_file, "AIOpsLab sessions"):
        data = read_structured(file)
        records = data["sessions"] if _is_bundle(data) else [data]
        for r in records:
            out.append(
                {
                    "incident_id": str(r.get("problem_id")),
                    "trial": str(r.get("session_id")),
                    "verdict": _fork_verdict(r.get("results")),
                    "task_type": r.get("task_type") or task_type_of(str(r.get("problem_id"))),
                }
            )
    return out


def upstream_verdict(spec: IncidentSpec, answer: Any) -> bool | None:
    """How upstream AIOpsLab scores `answer` for `spec` (None when it cannot be decided here)."""
    task = spec.extra.get("aiopslab", {})
    kind = task.get("task_type")
    if kind == "detection" and isinstance(answer, str):
        return answer.strip().lower() == str(task.get("expected_detection", "Yes")).lower()
    if kind == "localization":
        expected = [str(c) for c in task.get("expected_localization") or []]
        got = [str(c) for c in (answer if isinstance(answer, list) else [answer]) if c]
        return bool(expected) and (got == expected or (len(got) == 1 and got[0] in expected))
    if kind == "analysis" and isinstance(answer, dict):
        return all(
            str(answer.get(k, "")).strip().lower() == str(task.get(f"expected_{k}", "")).lower()
            for k in ("system_level", "fault_type")
        )
    return None


def cross_check_aiopslab(
    specs: list[IncidentSpec], submissions: list[Submission]
) -> list[dict[str, Any]]:
    """Warn about sessions the upstream registry does not know, and fork/upstream disagreements.

    The ai_sre_data sessions ran on a fork of AIOpsLab that registers extra ids and scores some
    analysis ids differently (e.g. `auth_miss_mongodb-analysis-1`). Returns the disagreements.
    """
    by_id = {s.id: s for s in specs}
    unknown = sorted({s.incident_id for s in submissions if s.incident_id not in by_id})
    if unknown:
        warn_format(
            submissions[0].source.get("file"),
            f"{len(unknown)} problem id(s) are not "
            f"registered upstream (a fork's ids): {', '.join(unknown)}",
            field="problem_id",
        )
    disagreements = []
    for sub in submissions:
        spec = by_id.get(sub.incident_id)
        fork = _fork_verdict(sub.source.get("fork_results"))
        if spec is None or fork is None or sub.source.get("answer") is None:
            continue
        upstream = upstream_verdict(spec, sub.source["answer"])
        if upstream is not None and upstream != fork:
            disagreements.append(
                {
                    "incident_id": sub.incident_id,
                    "trial": sub.trial,
                    "fork": fork,
                    "upstream": upstream,
                }
            )
            warn_format(
                sub.source.get("file"),
                f"session {sub.trial} on {sub.incident_id}: the "
                f"fork scored {sub.source['answer']!r} as {fork}, upstream AIOpsLab's "
                f"rule gives {upstream}",
                field=sub.source.get("field") or "results",
            )
    return disagreements


ADAPTER = FunctionAdapter(
    FORMAT,
    {
        "specs": "an AIOpsLab checkout (aiopslab/orchestrator/problems/registry.py and"
        " its problem modules), or YAML/JSON of AIOpsLab problems",
        "submissions": "session JSON (problem_id, trace, submission)",
    },
    looks_like_aiopslab_specs,
    looks_like_aiopslab_submissions,
    load_aiopslab_specs,
    load_aiopslab_submissions,
    cross_check_aiopslab,
)
