"""SREGym's ground-truth string: `[fault_spec] component=X; namespace=Y || description`."""

from __future__ import annotations

import re

from .models import ComponentRef

_FAULT_SPEC = re.compile(
    r"^\s*\[fault_spec\]\s*(?P<fields>.*?)\s*\|\|\s*(?P<description>.*)$", re.S
)
_COMPONENT_SEPARATORS = re.compile(r",|\s+and\s+|\s+\+\s+|\s*&\s*")
_NOT_PLURAL = {"dns", "status"}


def parse_fault_spec(text: str) -> tuple[list[ComponentRef], str | None, str] | None:
    """Split a SREGym root-cause string into (components, namespace, description).

    `component=deployments/frontend, geo, profile` names several components of one kind: the
    kind written before the first name applies to all of them. Returns None when the text is
    not in that form.
    """
    match = _FAULT_SPEC.match(text)
    if not match:
        return None
    fields = dict(_split_field(part) for part in match["fields"].split(";") if "=" in part)
    namespace = fields.get("namespace") or None
    components = _parse_components(fields.get("component", ""), namespace)
    return components, namespace, match["description"].strip()


def _split_field(part: str) -> tuple[str, str]:
    key, _, value = part.partition("=")
    return key.strip().lower(), value.strip()


def _parse_components(value: str, namespace: str | None) -> list[ComponentRef]:
    """`deployments/a, b` gives two deployments; `ClusterRole/x and configmap/y` and
    `daemonset/x + deployment/y` give one of each kind. A name without a kind takes the last
    kind written before it."""
    refs: list[ComponentRef] = []
    kind: str | None = None
    for part in _COMPONENT_SEPARATORS.split(value):
        ref = _component(part, namespace)
        if ref is None:
            continue
        kind = ref.kind or kind
        refs.append(ref if ref.kind else ref.model_copy(update={"kind": kind}))
    return refs


def _component(text: str, namespace: str | None) -> ComponentRef | None:
    """`kind/name`, or `kind/type/name` (a custom resource): the namespace is a field of its own
    in a fault_spec, so a leading path segment is never taken for one."""
    parts = [p.strip() for p in text.split("/") if p.strip()]
    if not parts:
        return None
    kind = _singular_kind(parts[-2]) if len(parts) >= 2 else None
    return ComponentRef(name=parts[-1], kind=kind, namespace=namespace)


def _singular_kind(kind: str) -> str:
    low = kind.lower()
    if low in _NOT_PLURAL:
        return kind
    if low.endswith("ies"):
        return kind[:-3] + "y"
    if low.endswith("sses"):
        return kind[:-2]
    if low.endswith("s") and not low.endswith("ss"):
        return kind[:-1]
    return kind
