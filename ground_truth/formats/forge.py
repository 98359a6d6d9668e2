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

Diagnoses (`{"_about": {model, workflow, system, ...}, "records": [{fault_id, kg_id,
ground_truth, root_causes[], ttr_seconds, had_error}]}`) -> one `Submission` per record: the
diagnosis lists the hypotheses in rank order with all their fields, and each hypothesis'
`location` becomes a ranked entity (with its type, justification and path), so entity scoring
gives top-1 / @k localisation. The system comes from `kg_id` (`<system>-KG`). The trial is the
run's `<model>/<workflow>`, so several runs on one fault stay distinct; `agent` says the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..models import ComponentRef, Entity, IncidentSpec, Submission
from .detect import (
    csv_header,
    files_with_suffix,
    read_csv_rows,
    read_structured,
    sniff_structured,
    warn_format,
)

FORMAT = "forge"
LABEL_COLUMNS = {"fault_id", "fault_level", "fault_entity", "fault_type"}
LEVEL_KINDS = {"service": "Service", "pod": "Pod", "node": "Node"}
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


def looks_like_forge_specs(path: str | Path) -> bool:
    return any(
        _is_label_csv(f) or _is_diagnoses_file(f)
        for f in files_with_suffix(Path(path), (".csv", ".json"))
    )


def looks_like_forge_submissions(path: str | Path) -> bool:
    return any(_is_diagnoses_file(f) for f in files_with_suffix(Path(path), (".json",)))


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
    path = Path(path)
    labels = [f for f in files_with_suffix(path, (".csv",)) if _is_label_csv(f)]
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


def _fault_spec(system: str, row: dict[str, Any], file: Path, where: str) -> IncidentSpec:
    entity, fault_type = str(row.get("fault_entity") or "").strip(), row.get("fault_type")
    fault_id = str(row.get("fault_id") or "").strip()
    if not fault_id or not entity:
        raise InputError(file, "expected fault_id and fault_entity", field=where)
    level = str(row.get("fault_level") or "").strip().lower()
    when = row.get("fault_datetime")
    text = (
        f"A {fault_type} fault was injected into the {level or 'component'} {entity}"
        f"{f' at {when}' if when else ''} ({system})."
    )
    return IncidentSpec(
        id=f"{system}-{fault_id}",
        ground_truth=text,
        fault_origin=[ComponentRef(name=entity, kind=LEVEL_KINDS.get(level))],
        mechanism=fault_type,
        problem_class=fault_type,
        parameters={
            k: row[k]
            for k in ("fault_st_time", "fault_ed_time", "fault_duration", "fault_datetime")
            if row.get(k) not in (None, "")
        },
        source={"format": FORMAT, "file": str(file), "field": where},
        extra={"forge": {"system": system, "fault_id": fault_id, "fault_level": level}},
    )


# ---------------------------------------------------------------- diagnoses


def load_forge_submissions(path: str | Path) -> list[Submission]:
    path = Path(path)
    files = [f for f in files_with_suffix(path, (".json",)) if _is_diagnoses_file(f)]
    if not files:
        raise InputError(path, "holds no FORGE diagnoses (JSON with records[].root_causes)")
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
            reasoning=h.get("justification"),
            evidence=h.get("propagation_path"),
            rank=rank,
            fault_type=h.get("type"),
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
            **{k: record[k] for k in ("ttr_seconds", "had_error") if k in record},
        },
    )
