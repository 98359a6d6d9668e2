"""ITBench (github.com/itbench-hub): ground truth v1 and agent outputs.

Ground truth, read from any of
- a v1 document, bare (`groups`, `propagations`, `alerts`, `fault`, `aliases`,
  `recommended_actions`, `metadata.version`) or in the CRD envelope (`apiVersion: itbench.io/v1`,
  `kind: GroundTruth`, `metadata.name`, `spec: {...}`, `recommendedActions` in camelCase);
- a JSON list of them (ITBench-Evaluations' `ground_truths.json`, each with an `id`);
- a scenario folder, or a folder of scenario folders (`Scenario-2`, `scenario_2` -> id `2`),
  each holding `ground_truth.yaml|yml|json`, `gt.*` or `groundtruth*.yaml`. The folder's name is
  the incident id, as in ITBench-Evaluations; an `id` or `metadata.name` inside that disagrees
  warns (ITBench's scenario_61 says `scenario-110`). When folders have both ITBench's
  `groundtruth_v1.yaml` and the newer, simpler v2 `groundtruth.yaml`, v1 is used (its groups and
  propagations are what ITBench-Evaluations' prompts judge against) and one warning per loaded
  folder says so; v2 alone, and ITBench-Scenarios' `kind: SilverTruth` draft of it, is loaded from
  its `entities` and `solutions`;
- older ITBench-Scenarios layouts: a flat folder of `incident_N.yaml` (or `scenario_N.yaml`)
  v1 files (2025-07..2026-01), and role folders `incident_N/vars/main.yaml` whose
  `docs_incident_N` variable holds the v1 body (2025-03..06).

v1 -> `IncidentSpec`:
- groups with `root_cause: true` -> `fault_origin` (name from `name`, else from the regex filter,
  else from the group id; kind; namespace; other names in the group's alias class -> aliases);
- other groups that are a propagation `source` -> `contributing_components`, the rest ->
  `affected_components`;
- the fault entry of the root cause -> `mechanism` (its `condition`, unless a placeholder such as
  "To Be Specified", else the root cause's first propagation condition) and `problem_class`
  (its `category`); all fault entries (entity, condition, category, mechanism, `changed`
  from/to) -> `parameters["faults"]`;
- alerts -> `symptoms`; recommended actions -> `expected_fix`;
- `ground_truth`: the structure rendered as readable text;
- the raw `groups`, `aliases`, `propagations`, `alerts` -> `extra["itbench"]`, which
  `ground_truth.entities` uses to score structured entities with ITBench's regex filters.

Agent outputs: `<outputs>/<incident>/<trial>/[outputs/]agent_output.json` (or
`agent_response.json`), a single such file, or an AgentBeats leaderboard result
(`results[].agent_outputs.scenarios{"Scenario-1": output}`). Both schemas are read: the current
one (`entities[{name: "ns/Kind/name", contributing_factor, reasoning, evidence}]`,
`propagations[{source, target, condition, effect}]`, `alerts_explained[]`) and the older one
(`entities[{id, name: "flagd Service", contributing_factor}]`, propagations by id with
`source_name`/`target_name`, optional `incident_summary`), and the paper-era one whose entities
are only `{id: <topology hash>, root_cause}` (kept with the id as name, with a warning). The diagnosis text is built from the
entities' names, reasoning and evidence, the propagations and the explained alerts; the
entities are kept, parsed, on `Submission.entities`.

ITBench-Evaluations' judge output (`evaluation_results.json`, or inside a leaderboard file) is
read by `load_itbench_judge_results` so its LLM-computed entity metrics can be compared with ours.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..entities import filter_literal, parse_entity_name, service_key
from ..errors import InputError
from ..models import ComponentRef, Entity, IncidentSpec, Submission
from ..reading import parse_json
from .files import (
    SNIFF_LIMIT,
    STRUCTURED_SUFFIXES,
    any_file,
    files_with_suffix,
    read_structured,
    read_text,
    sniff_structured,
    text_or_none,
    warn_format,
)
from .registry import FunctionAdapter

FORMAT = "itbench"
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
# `SilverTruth`: ITBench-Scenarios' draft of v2 (2025-12), the same entities-and-solutions shape.
V2_KINDS = {"GroundTruth": "v2", "SilverTruth": "silvertruth"}
ROLE_VARS = Path("vars") / "main.yaml"
_DOCS_KEY = re.compile(r"^docs_incident_(\d+)$")
AGENT_FILES = (
    "outputs/agent_output.json",
    "outputs/agent_response.json",
    "agent_output.json",
    "agent_response.json",
)
PLACEHOLDERS = {"", "to be specified", "tbd", "todo", "n/a", "none", "unknown"}
_ID_PATTERNS = (
    re.compile(r"^scenario[-_]?i?(\d+)$", re.I),
    re.compile(r"^incident[-_]?(\d+)$", re.I),
    re.compile(r"[-_](\d+)$"),
)


def canonical_incident_id(name: str | int) -> str:
    """`Scenario-2`, `scenario_2`, `incident-2`, `2` -> `2` (ITBench-Evaluations' rule)."""
    text = str(name).strip()
    if text.isdigit():
        return text
    for pattern in _ID_PATTERNS:
        match = pattern.search(text)
        if match:
            return match.group(1)
    return text


# ---------------------------------------------------------------- ground truth: detection


def _is_v1(data: Any) -> bool:
    body = data.get("spec") if isinstance(data, dict) and "apiVersion" in data else data
    return (
        isinstance(body, dict)
        and isinstance(body.get("groups"), list)
        and ("propagations" in body or "fault" in body or "alerts" in body)
    )


def _is_v2(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and str(data.get("apiVersion", "")).startswith("itbench.io/")
        and data.get("kind") in V2_KINDS
        and isinstance(data.get("spec"), dict)
        and "entities" in data["spec"]
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
    return _is_v1(docs[2] if docs else data) or _is_v2(data)


def _scenario_file(folder: Path) -> tuple[Path | None, Path | None]:
    """(the v1-or-named ground-truth file, the v2 `groundtruth.yaml`) of a scenario folder."""
    v2 = next((folder / n for n in V2_NAMES if (folder / n).is_file()), None)
    for name in GT_NAMES:
        if (folder / name).is_file():
            return folder / name, v2
    others = sorted(p for p in folder.glob("groundtruth*.y*ml") if p.name not in V2_NAMES)
    return (others[0] if others else None), v2


def looks_like_itbench_specs(path: str | Path) -> bool:
    """Whether `path` is ITBench ground truth: a file, a consolidated list, scenario folders or
    role folders; only the first folders and files are sniffed.
    """
    path = Path(path)
    if path.is_file():
        return _is_gt_document(sniff_structured(path))
    if not path.is_dir():
        return False
    if (path / CONSOLIDATED).is_file():
        return _is_gt_document(sniff_structured(path / CONSOLIDATED))
    folders = [path, *sorted(p for p in path.iterdir() if p.is_dir())]
    for folder in folders[:SNIFF_LIMIT]:
        main, v2 = _scenario_file(folder)
        candidate = main or v2 or _role_vars(folder)
        if candidate is not None:
            return _is_gt_document(sniff_structured(candidate))
    return any_file(path, STRUCTURED_SUFFIXES, lambda f: _is_gt_document(sniff_structured(f)))


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
    elif (path / CONSOLIDATED).is_file():
        specs = _laid_out(_specs_from_file(path / CONSOLIDATED, None, False), "consolidated list")
    else:
        specs = [
            spec
            for file, folder_id, authoritative, layout in _gt_files(path)
            for spec in _laid_out(_specs_from_file(file, folder_id, authoritative), layout)
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


def _laid_out(specs: list[IncidentSpec], layout: str) -> list[IncidentSpec]:
    for spec in specs:
        spec.source["layout"] = layout
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
    if _is_v2(doc):
        return _v2_to_spec(body, file, incident_id, V2_KINDS[doc["kind"]])
    if not isinstance(body.get("groups"), list):
        raise InputError(file, "expected a list of groups", field=_join(prefix, "groups"))
    return _v1_to_spec(body, file, prefix, incident_id, envelope)


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
                field=_join(where, str(field)),
            )
        return named
    incident_id = declared or named
    if not incident_id:
        raise InputError(
            file, "no incident id (expected `id` or `metadata.name`)", field=where or None
        )
    return incident_id


def _join(prefix: str, field: str) -> str:
    return f"{prefix}.{field}" if prefix else field


class _V1:
    """One v1 ground truth being read: its groups, and warnings about them."""

    def __init__(self, body: dict[str, Any], file: Path, prefix: str):
        self.body, self.file, self.prefix = body, file, prefix
        self.groups: dict[str, dict[str, Any]] = {}
        self.index: dict[str, int] = {}
        for i, group in enumerate(body.get("groups") or []):
            if not isinstance(group, dict) or not group.get("id"):
                self.warn(f"groups[{i}]", "group without an id: skipped")
                continue
            self.groups[str(group["id"])] = group
            self.index[str(group["id"])] = i
        self.propagations = [p for p in body.get("propagations") or [] if isinstance(p, dict)]
        self.alerts = [a for a in body.get("alerts") or [] if isinstance(a, dict)]
        self.faults = [
            self._fault(i, f) for i, f in enumerate(body.get("fault") or []) if isinstance(f, dict)
        ]
        self.aliases = [a for a in body.get("aliases") or [] if isinstance(a, list)]
        self.roots = [gid for gid, g in self.groups.items() if g.get("root_cause") is True]
        self.classes = self._alias_classes()

    def warn(self, field: str, message: str) -> None:
        warn_format(self.file, message, field=_join(self.prefix, field))

    def _fault(self, i: int, fault: dict[str, Any]) -> dict[str, Any]:
        """The fault with its `entity` an object: anything else is read as the entity's name."""
        entity = fault.get("entity")
        if entity is None or isinstance(entity, dict):
            return fault
        self.warn(
            f"fault[{i}].entity",
            f"expected an object (group_id, name, kind), got {_compact(entity)!r}: read as a name",
        )
        return {**fault, "entity": {"name": str(entity)}}

    def _alias_classes(self) -> dict[str, list[str]]:
        classes = {gid: {gid} for gid in self.groups}
        for i, alias in enumerate(self.aliases):
            members = []
            for j, member in enumerate(alias):
                if str(member) in self.groups:
                    members.append(str(member))
                else:
                    self.warn(f"aliases[{i}][{j}]", f"{member!r} is not a defined group: ignored")
            merged = set().union(*(classes[m] for m in members)) if members else set()
            for gid in merged:
                classes[gid] = merged
        return {gid: sorted(members) for gid, members in classes.items()}

    def name(self, gid: str) -> str:
        group = self.groups[gid]
        if group.get("name"):
            return str(group["name"])
        for pattern in group.get("filter") or []:
            literal = filter_literal(str(pattern))
            if literal:
                return literal
        return _name_from_id(gid, group.get("kind"))

    def describe(self, gid: str) -> str:
        if gid not in self.groups:
            return gid
        kind = self.groups[gid].get("kind")
        return f"{kind} {self.name(gid)}" if kind else self.name(gid)

    def check(self) -> None:
        for gid, group in self.groups.items():
            i = self.index[gid]
            for j, pattern in enumerate(group.get("filter") or []):
                try:
                    re.compile(str(pattern))
                except re.error as exc:
                    self.warn(
                        f"groups[{i}].filter[{j}]",
                        f"{pattern!r} is not a valid regex ({exc.msg}): read as any name of kind "
                        f"{group.get('kind')} in namespace {group.get('namespace')}",
                    )
        if len(self.roots) != 1:
            self.warn(
                "groups",
                "no group has root_cause: true: the fault origin is unknown"
                if not self.roots
                else f"{len(self.roots)} groups have root_cause: true ({', '.join(self.roots)}): "
                "all are kept as fault origins and entity recall is computed over them",
            )
        for field, items, keys in (
            ("alerts", self.alerts, ("group_id",)),
            ("propagations", self.propagations, ("source", "target")),
        ):
            for i, item in enumerate(items):
                for key in keys:
                    if item.get(key) is not None and str(item[key]) not in self.groups:
                        self.warn(f"{field}[{i}].{key}", f"{item[key]!r} is not a defined group")
        for i, fault in enumerate(self.faults):
            entity = fault.get("entity") or {}
            group_id, name = entity.get("group_id"), entity.get("name")
            if group_id is not None and str(group_id) not in self.groups:
                self.warn(f"fault[{i}].entity.group_id", f"{group_id!r} is not a defined group")
            elif (
                group_id is not None
                and name
                and str(name) != str(group_id)
                and str(name) in self.groups
            ):
                self.warn(
                    f"fault[{i}].entity", f"names group {name!r} but group_id is {group_id!r}"
                )

    def symptom_groups(self) -> set[str]:
        targets = {str(p.get("target")) for p in self.propagations}
        return targets | {str(a.get("group_id")) for a in self.alerts}

    def component(self, gid: str, warn_merges: bool) -> ComponentRef:
        group, name = self.groups[gid], self.name(gid)
        symptoms = self.symptom_groups()
        by_name: dict[str, list[str]] = {}
        for other in self.classes[gid]:
            by_name.setdefault(self.name(other), []).append(other)
        aliases = []
        for other_name, members in by_name.items():
            if other_name == name:
                continue
            merged_symptoms = [m for m in members if m in symptoms]
            if service_key(other_name) != service_key(name) and merged_symptoms:
                if warn_merges:
                    self.warn(
                        "aliases",
                        f"alias group merges root cause {gid!r} with symptom "
                        f"{merged_symptoms[0]!r}: naming {other_name!r} counts as the root cause "
                        f"in ITBench's entity scoring, but it is not offered as another name "
                        f"of {name!r}",
                    )
                continue
            aliases.append(other_name)
        return ComponentRef(
            name=name, kind=group.get("kind"), namespace=group.get("namespace"), aliases=aliases
        )


def _name_from_id(gid: str, kind: str | None) -> str:
    """`accounting-horizontal-pod-autoscaler-1` (kind HorizontalPodAutoscaler) -> `accounting`."""
    name = re.sub(r"-\d+$", "", gid)
    if kind:
        kebab = re.sub(r"(?<!^)(?=[A-Z])", "-", kind).lower()
        for suffix in (kebab, kind.lower()):
            if name.lower().endswith("-" + suffix) and len(name) > len(suffix) + 1:
                return name[: -len(suffix) - 1]
    return name


def _v1_to_spec(
    body: dict[str, Any], file: Path, prefix: str, incident_id: str, envelope: bool
) -> IncidentSpec:
    gt = _V1(body, file, prefix)
    gt.check()
    root_class = {m for r in gt.roots for m in gt.classes[r]}
    sources = {str(p.get("source")) for p in gt.propagations}
    contributing: list[ComponentRef] = []
    affected: list[ComponentRef] = []
    placed = set(root_class)
    for p in gt.propagations:
        for gid in (str(p.get("source")), str(p.get("target"))):
            if gid in gt.groups and gid not in placed:
                placed.add(gid)
                (contributing if gid in sources else affected).append(gt.component(gid, False))
    for alert in gt.alerts:
        gid = str(alert.get("group_id"))
        if gid in gt.groups and gid not in placed:
            placed.add(gid)
            affected.append(gt.component(gid, False))
    root_fault = _root_fault(gt)
    actions = body.get("recommended_actions") or body.get("recommendedActions") or []
    try:
        return IncidentSpec(
            id=incident_id,
            ground_truth=_render_v1(gt, actions),
            fault_origin=[gt.component(r, True) for r in gt.roots],
            mechanism=_mechanism(gt, root_fault),
            problem_class=_text(root_fault.get("category")) if root_fault else None,
            parameters={"faults": [_fault_summary(gt, f) for f in gt.faults]} if gt.faults else {},
            contributing_components=contributing,
            affected_components=affected,
            symptoms=[_alert_text(gt, a) for a in gt.alerts],
            expected_fix=_fix_text(actions),
            source={
                "format": FORMAT,
                "file": str(file),
                "schema": "v1",
                "shape": "envelope" if envelope else "bare",
                **({"field": prefix} if prefix else {}),
            },
            extra={
                "itbench": {
                    "groups": list(gt.groups.values()),
                    "aliases": gt.aliases,
                    "propagations": gt.propagations,
                    "alerts": gt.alerts,
                    "root_cause_groups": gt.roots,
                }
            },
        )
    except ValidationError as exc:
        raise InputError(file, str(exc.errors()[0]["msg"]), field=prefix or None) from None


def _text(value: Any) -> str | None:
    text = str(value).strip() if value is not None else ""
    return None if text.lower() in PLACEHOLDERS else text


def _root_fault(gt: _V1) -> dict[str, Any] | None:
    root_names = {gt.name(r).lower() for r in gt.roots} | set(gt.roots)
    for fault in gt.faults:
        entity = fault.get("entity") or {}
        if (
            str(entity.get("group_id")) in gt.roots
            or str(entity.get("name", "")).lower() in root_names
        ):
            return fault
    return gt.faults[0] if len(gt.faults) == 1 else None


def _mechanism(gt: _V1, root_fault: dict[str, Any] | None) -> str | None:
    if root_fault and _text(root_fault.get("condition")):
        return _text(root_fault["condition"])
    roots = {m for r in gt.roots for m in gt.classes[r]}
    for p in gt.propagations:
        if str(p.get("source")) in roots and _text(p.get("condition")):
            return _text(p["condition"])
    return _text(root_fault.get("category")) if root_fault else None


def _fault_entity(gt: _V1, fault: dict[str, Any]) -> str:
    entity = fault.get("entity") or {}
    gid = str(entity.get("group_id", ""))
    if gid in gt.groups:
        return gt.describe(gid)
    return " ".join(str(entity[k]) for k in ("kind", "name") if entity.get(k)) or "?"


def _fault_summary(gt: _V1, fault: dict[str, Any]) -> dict[str, Any]:
    out = {"entity": _fault_entity(gt, fault)}
    for key in ("condition", "category", "fault_mechanism", "changed"):
        if fault.get(key) is not None:
            out[key] = fault[key]
    return out


def _compact(value: Any, limit: int = 240) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _render_v1(gt: _V1, actions: list[Any]) -> str:
    lines = []
    for r in gt.roots:
        group = gt.groups[r]
        where = f" in namespace {group['namespace']}" if group.get("namespace") else ""
        lines.append(f"Root cause: {gt.describe(r)}{where}.")
    for fault in gt.faults:
        tags = ", ".join(str(fault[k]) for k in ("category", "fault_mechanism") if fault.get(k))
        line = (
            f"Fault in {_fault_entity(gt, fault)}: {_text(fault.get('condition')) or 'unspecified'}"
        )
        line += f" [{tags}]" if tags else ""
        changed = fault.get("changed")
        if isinstance(changed, dict):
            line += (
                f"; changed {changed.get('element', '?')} from {_compact(changed.get('from'))!r}"
                f" to {_compact(changed.get('to'))!r}"
            )
        lines.append(line + ".")
    if gt.propagations:
        lines.append("Propagation:")
        for p in gt.propagations:
            condition = _text(p.get("condition")) or "unspecified"
            effect = _text(p.get("effect")) or "unspecified"
            lines.append(
                f"- {gt.describe(str(p.get('source')))} -> {gt.describe(str(p.get('target')))}: "
                f"{condition}; effect: {effect}"
            )
    if gt.alerts:
        lines.append("Alerts:")
        lines.extend(f"- {_alert_text(gt, a)}" for a in gt.alerts)
    fix = _fix_text(actions)
    if fix:
        lines.append(f"Recommended actions: {fix}")
    return "\n".join(lines) or "ITBench scenario (empty ground truth)"


def _alert_text(gt: _V1, alert: dict[str, Any]) -> str:
    description = (alert.get("metadata") or {}).get("description")
    text = f"{alert.get('id', 'alert')} on {gt.describe(str(alert.get('group_id')))}"
    return f"{text}: {description}" if description else text


def _fix_text(actions: list[Any]) -> str | None:
    options = []
    for item in actions:
        solution = item.get("solution", item) if isinstance(item, dict) else item
        steps = solution.get("actions") if isinstance(solution, dict) else solution
        steps = steps if isinstance(steps, list) else [steps]
        text = "; then ".join(str(s) for s in steps if s)
        if text:
            options.append(text)
    if not options:
        return None
    if len(options) == 1:
        return options[0]
    return "any of: " + " | ".join(f"({i}) {o}" for i, o in enumerate(options, 1))


def _v2_to_spec(body: dict[str, Any], file: Path, incident_id: str, schema: str) -> IncidentSpec:
    origin, names = [], []
    for i, entity in enumerate(body.get("entities") or []):
        meta = entity.get("metadata") or {} if isinstance(entity, dict) else {}
        if not meta.get("name"):
            warn_format(file, "entity without metadata.name: skipped", field=f"spec.entities[{i}]")
            continue
        origin.append(
            ComponentRef(
                name=meta["name"], kind=entity.get("kind"), namespace=meta.get("namespace")
            )
        )
        names.append(f"{entity.get('kind', '')} {meta['name']}".strip())
    alerts = [
        str(a.get("name") if isinstance(a, dict) else a)
        for a in body.get("alerts") or []
        if isinstance(a, str) or (isinstance(a, dict) and a.get("name"))
    ]
    fixes = []
    for option in body.get("solutions") or []:
        steps = [s for block in option or [] for s in (block or {}).get("steps") or []]
        fixes.append(
            "; then ".join(
                f"{s.get('text', '')} (`{s['command']}`)"
                if s.get("command")
                else str(s.get("text", ""))
                for s in steps
            )
        )
    fix = (
        fixes[0]
        if len(fixes) == 1
        else (
            "any of: " + " | ".join(f"({i}) {f}" for i, f in enumerate(fixes, 1)) if fixes else None
        )
    )
    text = [f"Root cause entities: {', '.join(names) or 'unspecified'}."]
    if alerts:
        text.append(f"Alerts: {', '.join(alerts)}.")
    if fix:
        text.append(f"Fix: {fix}")
    return IncidentSpec(
        id=incident_id,
        ground_truth="\n".join(text),
        fault_origin=origin,
        symptoms=alerts,
        expected_fix=fix,
        source={"format": FORMAT, "file": str(file), "schema": schema},
        extra={"itbench": {"schema": schema, "entities": body.get("entities") or []}},
    )


# ---------------------------------------------------------------- agent outputs


def _is_agent_output(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and "diagnosis" not in data
        and isinstance(data.get("entities"), list)
    )


def _is_leaderboard(data: Any) -> bool:
    results = data.get("results") if isinstance(data, dict) else None
    return isinstance(results, list) and any(
        isinstance(r, dict) and isinstance((r.get("agent_outputs") or {}).get("scenarios"), dict)
        for r in results
    )


def _trial_files(root: Path) -> list[tuple[Path, Path | None]]:
    """(trial folder, its agent-output file or None) for `<root>/<incident>/<trial>/`."""
    out = []
    for incident in sorted(p for p in root.iterdir() if p.is_dir()):
        for trial in sorted((p for p in incident.iterdir() if p.is_dir()), key=_trial_sort):
            if trial.name == "outputs":
                continue
            out.append(
                (trial, next((trial / n for n in AGENT_FILES if (trial / n).is_file()), None))
            )
    return out


def _trial_sort(path: Path) -> tuple[int, str]:
    return (int(path.name), "") if path.name.isdigit() else (1 << 30, path.name)


def looks_like_itbench_submissions(path: str | Path) -> bool:
    """Whether `path` is an ITBench agent output or leaderboard file, or a folder of trial folders
    holding agent outputs.
    """
    path = Path(path)
    if path.is_file():
        data = _sniff_output(path)
        return _is_agent_output(data) or _is_leaderboard(data)
    if not path.is_dir():
        return False
    files = [f for _, f in _trial_files(path) if f is not None]
    return bool(files) and _is_agent_output(_sniff_output(files[0]))


def _sniff_output(path: Path) -> Any:
    if path.suffix.lower() != ".json":
        return None
    try:
        return _parse_output(read_text(path), path)
    except InputError:
        return None


def _parse_output(text: str, path: Path) -> Any:
    """An agent output file: JSON, or a JSON string holding (fenced) JSON."""
    data = parse_json(text, path)
    if isinstance(data, str):
        fenced = re.search(r"```(?:json)?\s*(.*?)```", data, re.S)
        try:
            data = parse_json(fenced.group(1) if fenced else data, path)
        except InputError as exc:
            raise InputError(path, f"the JSON string holds {exc.message}") from None
    return data


def load_itbench_submissions(path: str | Path) -> list[Submission]:
    """Submissions from one agent output or leaderboard file, or from every trial folder under
    `path`; trial folders with no or unreadable agent output are skipped with a warning.
    """
    path = Path(path)
    if path.is_file():
        data = _parse_output(read_text(path), path)
        if _is_leaderboard(data):
            return _leaderboard_submissions(data, path)
        trial_dir = path.parent.parent if path.parent.name == "outputs" else path.parent
        return [
            _output_to_submission(
                data, canonical_incident_id(trial_dir.parent.name), trial_dir.name, path, None
            )
        ]
    subs = []
    for trial_dir, file in _trial_files(path):
        if file is None:
            warn_format(trial_dir, "no agent_output.json in this trial folder: a bad run, skipped")
            continue
        try:
            data = _parse_output(read_text(file), file)
        except InputError as exc:
            warn_format(file, f"unreadable agent output, skipped ({exc.message})", field=exc.field)
            continue
        subs.append(
            _output_to_submission(
                data, canonical_incident_id(trial_dir.parent.name), trial_dir.name, file, None
            )
        )
    if not subs:
        raise InputError(
            path, "holds no ITBench agent outputs (<incident>/<trial>/agent_output.json)"
        )
    return subs


def _leaderboard_submissions(data: dict[str, Any], file: Path) -> list[Submission]:
    agent = (data.get("participants") or {}).get("agent")
    subs = []
    for i, result in enumerate(data.get("results") or []):
        scenarios = (result.get("agent_outputs") or {}).get("scenarios") or {}
        for name, output in scenarios.items():
            subs.append(
                _output_to_submission(
                    output,
                    canonical_incident_id(name),
                    str(i + 1),
                    file,
                    agent,
                    where=f"results[{i}].agent_outputs.scenarios.{name}",
                )
            )
    if not subs:
        raise InputError(file, "holds no agent outputs", field="results[].agent_outputs")
    return subs


def _output_to_submission(
    data: Any, incident_id: str, trial: str, file: Path, agent: str | None, where: str = ""
) -> Submission:
    if not isinstance(data, dict):
        raise InputError(
            file, "expected a JSON object (an ITBench agent output)", field=where or None
        )
    entities, by_id, id_only = [], {}, []
    for i, raw in enumerate(data.get("entities") or []):
        entity = _entity(raw) or _id_entity(raw)
        if entity is None:
            warn_format(
                file, "entity without a name: skipped", field=_join(where, f"entities[{i}]")
            )
            continue
        written = entity.raw
        if written is None:
            id_only.append(f"entities[{i}]")
        entities.append(entity)
        if isinstance(raw, dict) and raw.get("id"):
            by_id[str(raw["id"])] = written or entity.name
    if id_only:
        warn_format(
            file,
            f"{len(id_only)} entit{'y' if len(id_only) == 1 else 'ies'} ({', '.join(id_only[:3])}"
            f"{', ...' if len(id_only) > 3 else ''}) named only by a topology id (the ITBench"
            " paper's output schema): kept with the id as name, which no ground-truth name or"
            " filter can match",
            field=where or None,
        )
    diagnosis = _diagnosis(data, entities, by_id)
    if not diagnosis:
        warn_format(
            file,
            "agent output names no entities, propagations or alerts: empty diagnosis",
            field=where or None,
        )
    return Submission(
        incident_id=incident_id,
        trial=trial,
        diagnosis=diagnosis,
        agent=agent,
        entities=entities,
        source={
            "format": FORMAT,
            "file": str(file),
            "schema": _schema(data),
            **({"field": where} if where else {}),
        },
    )


def _schema(data: dict[str, Any]) -> str:
    entities = [e for e in data.get("entities") or [] if isinstance(e, dict)]
    if any("id" in e and not e.get("name") for e in entities):
        return "paper"
    return "legacy" if any("id" in e for e in entities) or "incident_summary" in data else "current"


def _entity(raw: Any) -> Entity | None:
    if not isinstance(raw, dict) or not str(raw.get("name") or "").strip():
        return None
    full = str(raw["name"]).strip()
    namespace, kind, name = parse_entity_name(full)
    flag = raw.get("contributing_factor")
    return Entity(
        name=name,
        kind=kind,
        namespace=namespace,
        contributing_factor=flag if isinstance(flag, bool) else None,
        reasoning=text_or_none(raw.get("reasoning")),
        evidence=text_or_none(raw.get("evidence")),
        raw=full,
        **_extra(raw),
    )


def _id_entity(raw: Any) -> Entity | None:
    """A paper-era entity, `{id: <topology hash>, root_cause: true}`: the id is all it has."""
    if not isinstance(raw, dict) or not str(raw.get("id") or "").strip():
        return None
    flag = raw.get("root_cause", raw.get("contributing_factor"))
    return Entity(
        name=str(raw["id"]).strip(),
        kind=text_or_none(raw.get("kind")),
        namespace=text_or_none(raw.get("namespace")),
        contributing_factor=flag if isinstance(flag, bool) else None,
        reasoning=text_or_none(raw.get("reasoning")),
        evidence=text_or_none(raw.get("evidence")),
        **_extra(raw),
    )


def _extra(raw: dict[str, Any]) -> dict[str, Any]:
    """The entity's keys that `Entity` does not declare, kept as they are. A key named like a
    declared field is read by the caller, with its type checked, or (`raw`, `rank`) is not the
    file's to set."""
    return {k: v for k, v in raw.items() if k not in Entity.model_fields}


def _diagnosis(data: dict[str, Any], entities: list[Entity], by_id: dict[str, str]) -> str:
    lines = _summary_lines(data.get("incident_summary"))
    causes = [e for e in entities if e.contributing_factor]
    others = [e for e in entities if not e.contributing_factor]
    for title, group in (
        ("Root cause entities (contributing factors):", causes),
        ("Other entities examined (not contributing):", others),
    ):
        if group:
            lines.append(title)
            lines.extend(f"- {_entity_line(e)}" for e in group)
    propagations = [p for p in data.get("propagations") or [] if isinstance(p, dict)]
    if propagations:
        lines.append("Propagation:")
        for p in propagations:
            source = p.get("source_name") or by_id.get(str(p.get("source")), p.get("source"))
            target = p.get("target_name") or by_id.get(str(p.get("target")), p.get("target"))
            condition, effect = p.get("condition") or "", p.get("effect") or ""
            lines.append(f"- {source} -> {target}: {condition}; effect: {effect}")
    alerts = [a for a in data.get("alerts_explained") or [] if isinstance(a, dict)]
    if alerts:
        lines.append("Alerts explained:")
        for a in alerts:
            state = "explained" if a.get("explained") else "not explained"
            lines.append(f"- {a.get('alert')}: {a.get('explanation') or ''} ({state})")
    return "\n".join(lines)


def _summary_lines(summary: Any) -> list[str]:
    if not isinstance(summary, dict):
        return []
    lines = [f"Summary: {summary['title']}"] if summary.get("title") else []
    if summary.get("impact"):
        lines.append(f"Impact: {summary['impact']}")
    causes = summary.get("root_causes") or []
    if causes:
        lines.append("Root causes:")
        lines.extend(f"- {c}" for c in causes)
    factors = [f for f in summary.get("contributing_factors") or [] if isinstance(f, dict)]
    if factors:
        lines.append("Contributing factors:")
        lines.extend(f"- {f.get('name')}: {f.get('description') or ''}" for f in factors)
    return lines


def _entity_line(entity: Entity) -> str:
    text = entity.raw or entity.name
    if entity.reasoning:
        text += f": {entity.reasoning}"
    if entity.evidence:
        text += f" Evidence: {entity.evidence}"
    return text


# ---------------------------------------------------------------- the LLM judge's results


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


__all__ = [
    "canonical_incident_id",
    "load_itbench_judge_results",
    "load_itbench_specs",
    "load_itbench_submissions",
    "looks_like_itbench_specs",
    "looks_like_itbench_submissions",
]


ADAPTER = FunctionAdapter(
    FORMAT,
    {
        "specs": "ground_truth*/groundtruth* YAML/JSON (v1 groups and propagations, or v2"
        " entities), alone or in scenario folders",
        "submissions": "<incident>/<trial>/agent_output.json with entities, or an"
        " AgentBeats leaderboard JSON",
    },
    looks_like_itbench_specs,
    looks_like_itbench_submissions,
    load_itbench_specs,
    load_itbench_submissions,
)
