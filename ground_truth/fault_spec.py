"""SREGym's ground-truth string: `[fault_spec] component=X; namespace=Y || description`."""

from __future__ import annotations

import re

from .models import ComponentRef, parse_component_string

_FAULT_SPEC = re.compile(
    r"^\s*\[fault_spec\]\s*(?P<fields>.*?)\s*\|\|\s*(?P<description>.*)$", re.S
)


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
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        return []
    first = parse_component_string(names[0], namespace)
    kind = _singular_kind(first.kind)
    refs = [first.model_copy(update={"kind": kind})]
    for name in names[1:]:
        ref = parse_component_string(name, namespace)
        refs.append(ref if ref.kind else ref.model_copy(update={"kind": kind}))
    return refs


def _singular_kind(kind: str | None) -> str | None:
    if kind and kind.lower().endswith("s") and kind.lower() not in {"ingress", "address"}:
        return kind[:-1]
    return kind
