"""SREGym's ground-truth string: `[fault_spec] component=X; namespace=Y || description`.

Real component fields are not always `kind/name`. Each part is normalised to a plain name with
its kind and namespace:

- `deployments/frontend, geo` -> two deployments (a kind applies to the names after it);
- `vpa-updater CronJob (kube-system)` -> CronJob `vpa-updater` in `kube-system`;
- `postgresql (table catalog.products)` -> `postgresql` (the parenthesis is a detail);
- `search-to-rate RPC path` -> `search-to-rate`, also known as `search` and `rate`;
- `deployments/all`, `all hotel-reservation deployments` -> every deployment (`*`);
- `node/<worker node picked at run time>` -> any node (`*`);
- `kafka topic/orders-fulfillment` -> topic `orders-fulfillment`, also known as `kafka`;
- `customresource/tidbcluster/basic` -> TiDBCluster `basic`, also known as `tidbcluster`.
"""

from __future__ import annotations

import re

from .models import ComponentRef

_FAULT_SPEC = re.compile(
    r"^\s*\[fault_spec\]\s*(?P<fields>.*?)\s*\|\|\s*(?P<description>.*)$", re.S
)
_COMPONENT_SEPARATORS = re.compile(r",|\s+and\s+|\s+\+\s+|\s*&\s*")
_PARENTHESIS = re.compile(r"\(([^)]*)\)")
_NOT_PLURAL = {"dns", "status", "ingress"}
_NAMESPACE_LIKE = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
# Words that describe a component without being part of its name.
_DESCRIPTORS = {
    "victim",
    "table",
    "resource",
    "resources",
    "configuration",
    "path",
    "rpc",
    "the",
    "target",
    "object",
}
_WILDCARDS = {"all", "*", "every", "each"}
_KIND_WORDS = {
    "deployment",
    "service",
    "pod",
    "statefulset",
    "daemonset",
    "replicaset",
    "configmap",
    "secret",
    "cronjob",
    "job",
    "node",
    "ingress",
    "namespace",
    "networkpolicy",
    "persistentvolumeclaim",
    "pvc",
    "clusterrole",
    "role",
    "rolebinding",
    "serviceaccount",
    "horizontalpodautoscaler",
    "hpa",
    "resourcequota",
    "priorityclass",
    "topic",
    "workload",
}
NORMALISED_NAME = re.compile(r"^(\*|[a-z0-9][a-z0-9._/-]*)$", re.I)


def parse_fault_spec(text: str) -> tuple[list[ComponentRef], str | None, str] | None:
    """Split a SREGym root-cause string into (components, namespace, description).

    Returns None when the text is not in that form.
    """
    match = _FAULT_SPEC.match(text)
    if not match:
        return None
    fields = dict(_split_field(part) for part in match["fields"].split(";") if "=" in part)
    namespace = fields.get("namespace") or None
    components = _parse_components(fields.get("component", ""), namespace)
    return components, namespace, match["description"].strip()


def is_normalised(component: ComponentRef) -> bool:
    """A name the rules judge can match: one token of name characters, or `*` (any)."""
    return bool(NORMALISED_NAME.match(component.name))


def _split_field(part: str) -> tuple[str, str]:
    key, _, value = part.partition("=")
    return key.strip().lower(), value.strip()


def _parse_components(value: str, namespace: str | None) -> list[ComponentRef]:
    """A name without a kind takes the last kind written before it."""
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
    text, namespace = _parenthesis(text, namespace)
    parts = [p.strip() for p in text.split("/") if p.strip()]
    if not parts:
        return None
    if len(parts) >= 3 and parts[0].lower() == "customresource":
        return ComponentRef(name=parts[-1], kind=parts[1], namespace=namespace, aliases=[parts[1]])
    aliases: list[str] = []
    kind = None
    if len(parts) >= 2:
        kind_words = parts[-2].split()
        kind = _singular_kind(kind_words[-1])
        aliases = [w for w in kind_words[:-1] if w.lower() not in _DESCRIPTORS]
    name, word_kind, more = _name_from_words(parts[-1].split(), namespace)
    return ComponentRef(
        name=name, kind=kind or word_kind, namespace=namespace, aliases=[*aliases, *more]
    )


def _parenthesis(text: str, namespace: str | None) -> tuple[str, str | None]:
    """`(kube-system)` is a namespace; anything else in parentheses is a detail, dropped."""
    for inner in _PARENTHESIS.findall(text):
        inner = inner.strip()
        if _NAMESPACE_LIKE.match(inner) and (inner == namespace or inner.endswith("-system")):
            namespace = inner
    return _PARENTHESIS.sub(" ", text).strip(), namespace


def _name_from_words(words: list[str], namespace: str | None) -> tuple[str, str | None, list[str]]:
    """(name, kind, aliases) from `vpa-updater CronJob`, `all hotel-reservation deployments`,
    `search-to-rate RPC path`, `victim node nf_conntrack table`."""
    kind = None
    named: list[str] = []
    for word in words:
        if _singular_kind(word).lower() in _KIND_WORDS and len(words) > 1:
            kind = kind or _singular_kind(word)
        else:
            named.append(word)
    ns = (namespace or "").lower()
    kept = [w for w in named if w.lower() not in _DESCRIPTORS and w.lower() != ns] or named
    if not kept or any(w.lower() in _WILDCARDS for w in kept) or kept[0].startswith("<"):
        return "*", kind, []
    name = "-".join(kept)
    aliases = name.split("-to-") if "-to-" in name else []
    return name, kind, [a for a in aliases if a]


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
