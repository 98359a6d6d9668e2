"""ITBench ground truth: which files and folders hold it, and reading each into specs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...errors import InputError, bad_file
from ...models import IncidentSpec
from ...reading import RefusedInput
from ..files import (
    STRUCTURED_SUFFIXES,
    any_file,
    child_folders,
    files_with_suffix,
    first_readable,
    read_structured,
    sniff_structured,
    warn_format,
)
from .common import canonical_incident_id, join
from .specs import V2_KINDS, is_v2, v1_to_spec, v2_to_spec

CONSOLIDATED = "ground_truths.json"
GT_NAMES = (
    "ground_truth.yaml",
    "ground_truth.yml",
    "ground_truth.json",
    "gt.yaml",
    "gt.yml",
    "gt.json",
    "groundtruth_v1.yaml",
    "groundtruth_v1.yml",
)
V2_NAMES = ("groundtruth.yaml", "groundtruth.yml")
ROLE_VARS = Path("vars") / "main.yaml"
_DOCS_KEY = re.compile(r"^docs_incident_(\d+)$")


# ---------------------------------------------------------------- ground truth: detection


def _is_v1(data: Any) -> bool:
    body = data.get("spec") if isinstance(data, dict) and "apiVersion" in data else data
    return (
        isinstance(body, dict)
        and isinstance(body.get("groups"), list)
        and ("propagations" in body or "fault" in body or "alerts" in body)
    )


def _docs_incident(data: Any) -> tuple[str, str, Any] | None:
    """(key, incident id, body) of a 2025-03..06 role-variable file (`docs_incident_N: {...}`)."""
    if not isinstance(data, dict):
        return None
    for key, body in data.items():
        match = _DOCS_KEY.match(str(key))
        if match and isinstance(body, dict):
            return str(key), match.group(1), body
    return None


def _is_gt_document(data: Any) -> bool:
    if isinstance(data, list):
        return bool(data) and _is_v1(data[0])
    docs = _docs_incident(data)
    return _is_v1(docs[2] if docs else data) or is_v2(data)


def _scenario_file(folder: Path) -> tuple[Path | None, Path | None]:
    """(the v1-or-named ground-truth file, the v2 `groundtruth.yaml`) of a scenario folder."""
    v2 = next((folder / n for n in V2_NAMES if (folder / n).is_file()), None)
    for name in GT_NAMES:
        if (folder / name).is_file():
            return folder / name, v2
    others = sorted(p for p in folder.glob("groundtruth*.y*ml") if p.name not in V2_NAMES)
    return (others[0] if others else None), v2


def looks_like_itbench_specs(path: str | Path) -> bool:
    """Whether `path` is ITBench ground truth: a file, a consolidated list, scenario folders,
    role folders, a flat folder of files, or a folder one level above any of these (ITBench's
    `roles/scenarios/`); decided by the first readable ground-truth candidate.
    """
    path = Path(path)
    if path.is_file():
        return _is_gt_document(sniff_structured(path))
    return _holds_specs(path) or bool(child_folders(path, _holds_specs))


def _holds_specs(path: Path) -> bool:
    if not path.is_dir():
        return False
    if (path / CONSOLIDATED).is_file():
        return _is_gt_document(sniff_structured(path / CONSOLIDATED))
    folders = [path, *sorted(p for p in path.iterdir() if p.is_dir())]
    candidates = [c for folder in folders if (c := _candidate(folder)) is not None]
    found = first_readable(candidates, sniff_structured)
    if found is not None:
        return _is_gt_document(found)
    return any_file(path, STRUCTURED_SUFFIXES, lambda f: _is_gt_document(sniff_structured(f)))


def _candidate(folder: Path) -> Path | None:
    main, v2 = _scenario_file(folder)
    return main or v2 or _role_vars(folder)


# ---------------------------------------------------------------- ground truth: loading


def _role_vars(folder: Path) -> Path | None:
    """`roles/incident_N/vars/main.yaml`, the file of the 2025-03..06 layout, if present."""
    file = folder / ROLE_VARS
    return file if folder.name.lower().startswith("incident") and file.is_file() else None


def _gt_files(path: Path) -> list[tuple[Path, str, bool, str]]:
    """(file, id from its folder or name, whether that id overrides the one inside, layout) of
    each ground truth in a folder: scenario folders, role folders, or a flat folder of files."""
    folders = (
        [path]
        if _scenario_file(path) != (None, None) or _role_vars(path)
        else sorted(p for p in path.iterdir() if p.is_dir())
    )
    both, found = [], []
    for folder in folders:
        main, v2 = _scenario_file(folder)
        if main is not None and v2 is not None:
            both.append(folder)
        chosen = main or v2 or _role_vars(folder)
        if chosen is not None:
            layout = "role variables" if chosen.name == ROLE_VARS.name else "scenario folders"
            found.append((chosen, canonical_incident_id(folder.name), True, layout))
    if both:
        warn_format(
            path,
            f"{len(both)} scenario folder(s) (e.g. {both[0].name}) hold both groundtruth_v1.yaml"
            " and the v2 groundtruth.yaml: using groundtruth_v1.yaml (its groups and"
            " propagations are what ITBench-Evaluations judges against; v2 lacks them)",
        )
    if found:
        return found
    flat = files_with_suffix(path, STRUCTURED_SUFFIXES)
    return [
        (f, canonical_incident_id(f.stem), False, "flat folder")
        for f in flat
        if _is_gt_document(sniff_structured(f))
    ]


def load_itbench_specs(path: str | Path) -> list[IncidentSpec]:
    """The specs in ITBench ground truth in any of its layouts (each spec records which);
    InputError listing the expected layouts when `path` yields none.
    """
    path = Path(path)
    if path.is_file():
        folder_id, authoritative = _fallback_id(path)
        specs = _laid_out(_specs_from_file(path, folder_id, authoritative), "file")
    elif _holds_specs(path):
        specs = _folder_specs(path)
    else:
        specs = [
            spec
            for child in child_folders(path, _holds_specs)
            for spec in _laid_out(_folder_specs(child), f"under {child.name}/", append=True)
        ]
    if not specs:
        raise InputError(
            path,
            "holds no ITBench ground truth (expected ground_truths.json, scenario folders with"
            " ground_truth.yaml / groundtruth_v1.yaml / groundtruth.yaml, incident_N/vars/main.yaml"
            " role folders, or a folder of incident_N.yaml files)",
        )
    _warn_entities_only(path, specs)
    return specs


def _folder_specs(path: Path) -> list[IncidentSpec]:
    """The specs of a folder holding ground truth itself; a file in it that cannot be read is
    a bad file (`bad_file`: `judge check` lists every one), the others still read."""
    if (path / CONSOLIDATED).is_file():
        return _laid_out(_specs_from_file(path / CONSOLIDATED, None, False), "consolidated list")
    specs = []
    for file, folder_id, authoritative, layout in _gt_files(path):
        try:
            specs.extend(_laid_out(_specs_from_file(file, folder_id, authoritative), layout))
        except RefusedInput:
            raise
        except InputError as exc:
            bad_file(_expecting(exc))
    return specs


def _expecting(exc: InputError) -> InputError:
    """`exc`, saying what the file was expected to be."""
    return InputError(
        exc.path, f"{exc.message} (expected an ITBench ground truth, v1 or v2)", field=exc.field
    )


def _laid_out(specs: list[IncidentSpec], layout: str, append: bool = False) -> list[IncidentSpec]:
    for spec in specs:
        spec.source["layout"] = f"{spec.source['layout']}, {layout}" if append else layout
    return specs


def _warn_entities_only(path: Path, specs: list[IncidentSpec]) -> None:
    """One warning for all v2 / SilverTruth specs read (not one per file)."""
    thin = [s for s in specs if s.source.get("schema") in V2_KINDS.values()]
    if thin:
        schemas = sorted({str(s.source["schema"]) for s in thin})
        warn_format(
            path,
            f"{len(thin)} ground truth(s) in ITBench {'/'.join(schemas)} form (e.g. incident"
            f" {thin[0].id}): no groups, propagations or fault entries; only the entities and"
            " solutions are used",
        )


def _fallback_id(file: Path) -> tuple[str, bool]:
    """The id a lone file's name gives; a generic name (`groundtruth_v1.yaml`) defers to its
    scenario folder, whose name then wins over the id inside, as in ITBench-Evaluations."""
    stem = file.stem
    if file.name == ROLE_VARS.name and file.parent.name == ROLE_VARS.parent.name:
        return canonical_incident_id(file.parent.parent.name), True
    generic = stem.lower() in {"ground_truth", "gt", "groundtruth", "groundtruth_v1"}
    return canonical_incident_id(file.parent.name if generic else stem), generic


def _specs_from_file(file: Path, named: str | None, authoritative: bool) -> list[IncidentSpec]:
    data = read_structured(file)
    if isinstance(data, list):
        return [_document_to_spec(item, file, f"[{i}]", None, False) for i, item in enumerate(data)]
    return [_document_to_spec(data, file, "", named, authoritative)]


def _document_to_spec(
    doc: Any, file: Path, where: str, named: str | None, authoritative: bool
) -> IncidentSpec:
    if not isinstance(doc, dict):
        raise InputError(file, "expected an ITBench ground-truth mapping", field=where or None)
    docs = _docs_incident(doc)
    if docs is not None:
        where, declared, doc = docs[0], docs[1], docs[2]
        named, authoritative = (named, authoritative) if authoritative else (declared, True)
    envelope = "apiVersion" in doc and isinstance(doc.get("spec"), dict)
    body = doc["spec"] if envelope else doc
    prefix = f"{where}.spec" if envelope and where else ("spec" if envelope else where)
    incident_id = _incident_id(doc, body, file, where, named, authoritative)
    if is_v2(doc):
        return v2_to_spec(body, file, incident_id, V2_KINDS[doc["kind"]])
    if not isinstance(body.get("groups"), list):
        raise InputError(file, "expected a list of groups", field=join(prefix, "groups"))
    return v1_to_spec(body, file, prefix, incident_id, envelope)


def _incident_id(
    doc: dict[str, Any],
    body: dict[str, Any],
    file: Path,
    where: str,
    named: str | None,
    authoritative: bool,
) -> str:
    """The folder's id when it is authoritative (a mismatch with the id inside warns), else the
    id inside (`id`, `metadata.name`), else the file's name."""
    field, raw = next(
        (
            (f, v)
            for f, v in (
                ("id", doc.get("id")),
                ("spec.id", body.get("id") if body is not doc else None),
                ("metadata.name", (doc.get("metadata") or {}).get("name")),
            )
            if v is not None
        ),
        (None, None),
    )
    declared = canonical_incident_id(raw) if raw is not None else None
    if authoritative and named:
        if declared is not None and declared != named:
            warn_format(
                file,
                f"says {raw!r} but its folder says incident {named!r}: using {named!r}, as"
                " ITBench's evaluator does, so agent outputs in that folder's name join",
                field=join(where, str(field)),
            )
        return named
    incident_id = declared or named
    if not incident_id:
        raise InputError(
            file, "no incident id (expected `id` or `metadata.name`)", field=where or None
        )
    return incident_id
