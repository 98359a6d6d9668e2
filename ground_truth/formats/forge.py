"""FORGE 2026 rca-llm-reasoning (github.com/boerste/rca-llm-reasoning, MIT): ranked hypotheses.

Riddell et al. ran LLMs on OpenRCA's Online-Boutique / GAIA faults; each answer lists up to three
ranked root-cause hypotheses (`type`, `description`, `location`, `justification`,
`propagation_path`).

Ground truth, from a fault label CSV (`data/fault-alerts/<system>/label.csv`: `fault_id,
fault_level, fault_entity, fault_type, fault_st_time, fault_ed_time, fault_duration,
fault_datetime`; the system is the folder name, or the file name after `label_`) or from the
`ground_truth` joined into a diagnoses file. One fault -> one `IncidentSpec`, id
`<system>-<fault_id>` (`Online-Boutique-cloudbed-1-0`): `fault_origin` = the faulty entity, of
kind Service / Pod / Node after `fault_level`; `mechanism` and `problem_class` = the fault type;
`parameters` = start, end, duration and datetime.

MicroSS (GAIA) labels carry `fault_level: service_instance` (kind `ServiceInstance`), bracketed
fault types (`[memory_anomalies]`, unwrapped) and the injector's `fault_message` (kept in the text
and `parameters`). A `fault-alerts/` folder is read through its `<system>/label.csv` files.

Upstream runs (`results/v4/<model>/<system>/<task>/<modality>/<alerts>/<kg>/
responses-<workflow>.txt`: one JSON object a line, `{kg_id, fault_id, messages, final_response,
ttr, error, past_steps}`) are read directly: `final_response` is `{root_causes: [...]}`, null for a
failed run (a submission with no hypotheses: a miss, never left out), or a string holding the
mapping as JSON or as a Python literal. The trial is `<model>/<workflow>/<modality>/<alerts>/<kg>`.

Diagnoses (`{"_about": {model, workflow, system, ...}, "records": [{fault_id, kg_id,
ground_truth, root_causes[], ttr_seconds, had_error}]}`) -> one `Submission` per record: the
diagnosis lists the hypotheses in rank order with all their fields, and each hypothesis'
`location` becomes a ranked entity (with its type, justification and path), so entity scoring
gives top-1 / @k localisation. The system comes from `kg_id` (`<system>-KG`). The trial is the
run's `<model>/<workflow>`, so several runs on one fault stay distinct; `agent` says the same.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..models import ComponentRef, Entity, IncidentSpec, Submission
from ..reading import input_files, parse_json, read_head
from .files import (
    SNIFF_LIMIT,
    csv_header,
    files_with_suffix,
    read_csv_rows,
    read_structured,
    read_text,
    sniff_structured,
    text_or_none,
    warn_format,
)
from .registry import FunctionAdapter

FORMAT = "forge"
LABEL_COLUMNS = {"fault_id", "fault_level", "fault_entity", "fault_type"}
# MicroSS (GAIA) injects faults into one instance of a service (`redisservice2`): no k8s kind.
LEVEL_KINDS = {
    "service": "Service",
    "pod": "Pod",
    "node": "Node",
    "service_instance": "ServiceInstance",
}
RESPONSES = re.compile(r"^responses-(?P<workflow>.+)\.txt$")
# Responses files are recognised by content; these are the suffixes looked at.
RESPONSE_SUFFIXES = (".txt", ".jsonl")
# results/v4/<model>/<system>/<task>/<modality>/<alerts representation>/<kg representation>/
SETTING_DEPTH = 4
HYPOTHESIS_FIELDS = ("type", "location", "description", "justification", "propagation_path")

__all__ = [
    "load_forge_specs",
    "load_forge_submissions",
    "looks_like_forge_specs",
    "looks_like_forge_submissions",
]


def _is_diagnoses(data: Any) -> bool:
    records = data.get("records") if isinstance(data, dict) else None
    return (
        isinstance(records, list)
        and bool(records)
        and isinstance(records[0], dict)
        and {"fault_id", "root_causes"} <= set(records[0])
    )


def _is_label_csv(file: Path) -> bool:
    return file.suffix.lower() == ".csv" and set(csv_header(file)) >= LABEL_COLUMNS


def _is_diagnoses_file(file: Path) -> bool:
    return file.suffix.lower() == ".json" and _is_diagnoses(sniff_structured(file))


def _is_responses_file(file: Path) -> bool:
    """An upstream responses file (`responses-<workflow>.txt`, or renamed: any `.txt`/`.jsonl`):
    JSON lines with `fault_id` and `final_response`, recognised by content."""
    if file.suffix.lower() not in RESPONSE_SUFFIXES:
        return False
    try:
        head = read_head(file)
    except InputError:
        return False
    first, complete = head.split("\n", 1)[0], "\n" in head
    if not complete:  # a line longer than the head (the chat `messages` come first)
        return first.lstrip().startswith("{") and all(
            f'"{k}"' in first for k in ("kg_id", "fault_id")
        )
    try:
        data = parse_json(first, file)
    except InputError:
        return False
    return isinstance(data, dict) and {"fault_id", "final_response"} <= set(data)


def _responses_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path] if _is_responses_file(path) else []
    return [f for f in _response_candidates(path) if _is_responses_file(f)]


def _response_candidates(path: Path) -> list[Path]:
    return input_files(path, lambda p: p.suffix.lower() in RESPONSE_SUFFIXES)


def _label_files(path: Path) -> list[Path]:
    """`label.csv` files: `path` itself, inside it, or in its system folders (`fault-alerts/`)."""
    labels = [f for f in files_with_suffix(path, (".csv",)) if _is_label_csv(f)]
    if labels or not path.is_dir():
        return labels
    folders = sorted(p for p in path.iterdir() if p.is_dir())
    return [f for d in folders if (f := d / "label.csv").is_file() and _is_label_csv(f)]


def looks_like_forge_specs(path: str | Path) -> bool:
    """Whether `path` holds FORGE label CSVs, or diagnoses JSON (which may carry ground truth)."""
    path = Path(path)
    if _label_files(path):
        return True
    return any(_is_diagnoses_file(f) for f in files_with_suffix(path, (".json",))[:SNIFF_LIMIT])


def looks_like_forge_submissions(path: str | Path) -> bool:
    """Whether `path` holds FORGE diagnoses JSON or `responses-<workflow>.txt` JSON lines."""
    path = Path(path)
    if any(_is_diagnoses_file(f) for f in files_with_suffix(path, (".json",))[:SNIFF_LIMIT]):
        return True
    if path.is_file():
        return _is_responses_file(path)
    return any(_is_responses_file(f) for f in _response_candidates(path)[:SNIFF_LIMIT])


# ---------------------------------------------------------------- ground truth


def _label_system(file: Path) -> str:
    stem = file.stem
    return stem[len("label_") :] if stem.lower().startswith("label_") else file.parent.name


def _records_system(data: dict[str, Any], record: dict[str, Any]) -> str:
    kg = str(record.get("kg_id") or "")
    if kg.endswith("-KG"):
        return kg[: -len("-KG")]
    system = str((data.get("_about") or {}).get("system") or "unknown")
    return system.split(" (")[0]


def load_forge_specs(path: str | Path) -> list[IncidentSpec]:
    """The specs of FORGE faults: from label CSVs when there are any, else from the ground truth
    joined into diagnoses JSON (records without it skipped with a warning). The first spec of a
    fault id wins; InputError when `path` yields none.
    """
    path = Path(path)
    labels = _label_files(path)
    specs: dict[str, IncidentSpec] = {}
    for file in labels:
        system = _label_system(file)
        for line, row in enumerate(read_csv_rows(file), start=2):
            spec = _fault_spec(system, row, file, f"line {line}")
            specs.setdefault(spec.id, spec)
    if not labels:
        for file in [f for f in files_with_suffix(path, (".json",)) if _is_diagnoses_file(f)]:
            data = read_structured(file)
            for i, record in enumerate(data["records"]):
                truth = record.get("ground_truth")
                if not isinstance(truth, dict):
                    warn_format(file, "no ground_truth joined: skipped", field=f"records[{i}]")
                    continue
                row = {"fault_id": record.get("fault_id"), **truth}
                spec = _fault_spec(
                    _records_system(data, record), row, file, f"records[{i}].ground_truth"
                )
                specs.setdefault(spec.id, spec)
    if not specs:
        raise InputError(
            path, "holds no FORGE fault labels (label.csv, or diagnoses with ground_truth)"
        )
    return list(specs.values())


def _fault_type(value: Any) -> str | None:
    """MicroSS writes `[memory_anomalies]`, the Market systems `container CPU load`."""
    text = str(value or "").strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1].strip()
    return text or None


def _fault_spec(system: str, row: dict[str, Any], file: Path, where: str) -> IncidentSpec:
    entity, fault_type = (
        str(row.get("fault_entity") or "").strip(),
        _fault_type(row.get("fault_type")),
    )
    fault_id = str(row.get("fault_id") or "").strip()
    if not fault_id or not entity:
        raise InputError(file, "expected fault_id and fault_entity", field=where)
    level = str(row.get("fault_level") or "").strip().lower()
    when = row.get("fault_datetime") or row.get("fault_st_time")
    message = str(row.get("fault_message") or "").strip()
    text = (
        f"A {fault_type} fault was injected into the {level.replace('_', ' ') or 'component'}"
        f" {entity}{f' at {when}' if when else ''} ({system})."
        + (f"\nInjection log: {message}" if message else "")
    )
    return IncidentSpec(
        id=f"{system}-{fault_id}",
        ground_truth=text,
        fault_origin=[ComponentRef(name=entity, kind=LEVEL_KINDS.get(level))],
        mechanism=fault_type,
        problem_class=fault_type,
        parameters={
            k: row[k]
            for k in (
                "fault_st_time",
                "fault_ed_time",
                "fault_duration",
                "fault_datetime",
                "fault_message",
                "orig_fault_id",
                "augmented",
            )
            if row.get(k) not in (None, "")
        },
        source={
            "format": FORMAT,
            "file": str(file),
            "field": where,
            "schema": "label" if file.suffix.lower() == ".csv" else "diagnoses",
        },
        extra={"forge": {"system": system, "fault_id": fault_id, "fault_level": level}},
    )


# ---------------------------------------------------------------- diagnoses


def load_forge_submissions(path: str | Path) -> list[Submission]:
    """Submissions from FORGE diagnoses JSON, else from `responses-*.txt` files; the run is named
    by the file's model/workflow, else its stem. InputError when `path` holds neither.
    """
    path = Path(path)
    files = [f for f in files_with_suffix(path, (".json",)) if _is_diagnoses_file(f)]
    if not files:
        responses = _responses_files(path)
        if responses:
            return [sub for f in responses for sub in _responses_submissions(f)]
        raise InputError(
            path,
            "holds no FORGE diagnoses (responses-<workflow>.txt JSON lines, or JSON with"
            " records[].root_causes)",
        )
    subs = []
    for file in files:
        data = read_structured(file)
        about = data.get("_about") or {}
        run = "/".join(str(about[k]) for k in ("model", "workflow") if about.get(k)) or file.stem
        for i, record in enumerate(data["records"]):
            subs.append(_record_submission(data, record, run, file, f"records[{i}]"))
    return subs


def _record_submission(
    data: dict[str, Any], record: dict[str, Any], run: str, file: Path, where: str
) -> Submission:
    hypotheses = [h for h in record.get("root_causes") or [] if isinstance(h, dict)]
    if record.get("had_error") or not hypotheses:
        warn_format(file, "the run failed or gave no hypotheses: empty diagnosis", field=where)
    lines = []
    for rank, h in enumerate(hypotheses, 1):
        lines.append(
            f"Hypothesis {rank}: {h.get('type') or 'unspecified fault'} at "
            f"{h.get('location') or 'unspecified location'}."
        )
        lines.extend(
            f"  {k.replace('_', ' ').capitalize()}: {h[k]}"
            for k in ("description", "justification", "propagation_path")
            if h.get(k)
        )
    entities = [
        Entity(
            name=str(h["location"]).strip(),
            reasoning=text_or_none(h.get("justification")),
            evidence=text_or_none(h.get("propagation_path")),
            rank=rank,
            fault_type=text_or_none(h.get("type")),
        )
        for rank, h in enumerate(hypotheses, 1)
        if str(h.get("location") or "").strip()
    ]
    return Submission(
        incident_id=f"{_records_system(data, record)}-{record.get('fault_id')}",
        trial=run,
        diagnosis="\n".join(lines),
        agent=run,
        entities=entities,
        source={
            "format": FORMAT,
            "file": str(file),
            "field": where,
            "schema": "diagnoses",
            **{k: record[k] for k in ("ttr_seconds", "had_error") if k in record},
        },
    )


# ---------------------------------------------------------------- upstream responses-*.txt


def _run_of(file: Path) -> tuple[str, str]:
    """(trial, agent) of `results/v4/<model>/<system>/<task>/<modality>/<alerts>/<kg>/
    responses-<workflow>.txt`: the model and workflow, and the setting so runs stay distinct."""
    match = RESPONSES.match(file.name)
    workflow = match.group("workflow") if match else file.stem
    folders = [p.name for p in file.parents][: SETTING_DEPTH + 2]
    if len(folders) < SETTING_DEPTH + 2:
        return workflow, workflow
    model = folders[SETTING_DEPTH + 1]
    setting = "/".join(reversed(folders[: SETTING_DEPTH - 1]))
    return f"{model}/{workflow}/{setting}", f"{model}/{workflow}"


def _responses_submissions(file: Path) -> list[Submission]:
    trial, agent = _run_of(file)
    subs = []
    for number, line in enumerate(read_text(file).splitlines(), 1):
        if not line.strip():
            continue
        where = f"line {number}"
        raw = parse_json(line, file, field=where)
        if not isinstance(raw, dict) or "fault_id" not in raw:
            raise InputError(file, "expected a JSON object with fault_id", field=where)
        answer = _final_response(raw.get("final_response"), file, f"{where}.final_response")
        record = {
            "fault_id": raw["fault_id"],
            "kg_id": raw.get("kg_id"),
            "root_causes": (answer or {}).get("root_causes") or [],
            "ttr_seconds": raw.get("ttr"),
            "had_error": bool(raw.get("error")),
        }
        sub = _record_submission({}, record, trial, file, where)
        subs.append(
            sub.model_copy(update={"agent": agent, "source": {**sub.source, "schema": "responses"}})
        )
    if not subs:
        raise InputError(file, "holds no responses")
    return subs


def _final_response(value: Any, file: Path, where: str) -> dict[str, Any] | None:
    """The answer: a mapping, or a string holding one as JSON or as a Python literal (read
    with `ast.literal_eval`, which evaluates no code)."""
    if value is None or isinstance(value, dict):
        return value
    if isinstance(value, str):
        for parse in (json.loads, ast.literal_eval):
            try:
                data = parse(value)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(data, dict):
                return data
    warn_format(
        file,
        "final_response is not a mapping, nor one written as JSON or a Python literal: no"
        " hypotheses",
        field=where,
    )
    return None


ADAPTER = FunctionAdapter(
    FORMAT,
    {
        "specs": "label_*.csv (fault_id, fault_level, fault_entity, fault_type) or a"
        " diagnoses JSON",
        "submissions": "diagnoses JSON (hypotheses with type, location, justification)",
    },
    looks_like_forge_specs,
    looks_like_forge_submissions,
    load_forge_specs,
    load_forge_submissions,
)
