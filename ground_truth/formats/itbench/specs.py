"""One ITBench ground-truth document (v1, or v2 / SilverTruth) as an `IncidentSpec`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ...entities import filter_literal, service_key
from ...errors import InputError
from ...models import ComponentRef, IncidentSpec
from ..files import warn_format
from .common import FORMAT, compact, join, text

# `SilverTruth`: ITBench-Scenarios' draft of v2 (2025-12), the same entities-and-solutions shape.
V2_KINDS = {"GroundTruth": "v2", "SilverTruth": "silvertruth"}


def is_v2(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and str(data.get("apiVersion", "")).startswith("itbench.io/")
        and data.get("kind") in V2_KINDS
        and isinstance(data.get("spec"), dict)
        and "entities" in data["spec"]
    )


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
        warn_format(self.file, message, field=join(self.prefix, field))

    def _fault(self, i: int, fault: dict[str, Any]) -> dict[str, Any]:
        """The fault with its `entity` an object: anything else is read as the entity's name."""
        entity = fault.get("entity")
        if entity is None or isinstance(entity, dict):
            return fault
        self.warn(
            f"fault[{i}].entity",
            f"expected an object (group_id, name, kind), got {compact(entity)!r}: read as a name",
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


def v1_to_spec(
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
            problem_class=text(root_fault.get("category")) if root_fault else None,
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
    if root_fault and text(root_fault.get("condition")):
        return text(root_fault["condition"])
    roots = {m for r in gt.roots for m in gt.classes[r]}
    for p in gt.propagations:
        if str(p.get("source")) in roots and text(p.get("condition")):
            return text(p["condition"])
    return text(root_fault.get("category")) if root_fault else None


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


def _render_v1(gt: _V1, actions: list[Any]) -> str:
    lines = []
    for r in gt.roots:
        group = gt.groups[r]
        where = f" in namespace {group['namespace']}" if group.get("namespace") else ""
        lines.append(f"Root cause: {gt.describe(r)}{where}.")
    for fault in gt.faults:
        tags = ", ".join(str(fault[k]) for k in ("category", "fault_mechanism") if fault.get(k))
        line = (
            f"Fault in {_fault_entity(gt, fault)}: {text(fault.get('condition')) or 'unspecified'}"
        )
        line += f" [{tags}]" if tags else ""
        changed = fault.get("changed")
        if isinstance(changed, dict):
            line += (
                f"; changed {changed.get('element', '?')} from {compact(changed.get('from'))!r}"
                f" to {compact(changed.get('to'))!r}"
            )
        lines.append(line + ".")
    if gt.propagations:
        lines.append("Propagation:")
        for p in gt.propagations:
            condition = text(p.get("condition")) or "unspecified"
            effect = text(p.get("effect")) or "unspecified"
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
    shown = f"{alert.get('id', 'alert')} on {gt.describe(str(alert.get('group_id')))}"
    return f"{shown}: {description}" if description else shown


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


def v2_to_spec(body: dict[str, Any], file: Path, incident_id: str, schema: str) -> IncidentSpec:
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
    lines = [f"Root cause entities: {', '.join(names) or 'unspecified'}."]
    if alerts:
        lines.append(f"Alerts: {', '.join(alerts)}.")
    if fix:
        lines.append(f"Fix: {fix}")
    return IncidentSpec(
        id=incident_id,
        ground_truth="\n".join(lines),
        fault_origin=origin,
        symptoms=alerts,
        expected_fix=fix,
        source={"format": FORMAT, "file": str(file), "schema": schema},
        extra={"itbench": {"schema": schema, "entities": body.get("entities") or []}},
    )
