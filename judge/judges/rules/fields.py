r"""A ground truth written as fields, not prose: what it says about the origin, its kind, the fault
type and the namespace.

Benchmarks that label faults in tables give the judge rows, not sentences:
`level=pod; fault_entity=node-5; fault_type=node CPU load`, an OpenRCA record
(`level: pod\ncomponent: Mysql02\nreason: high memory usage`), a JSON object, or the sentence a
format adapter renders from one (`A container CPU load fault was injected into the service
cartservice`, `Faulty component: user-service`, `Root cause 1: component Mysql02 (pod) ...`,
`Root cause entities: ConfigMap flagd-config`). `read_fields` reads any of these; keys are
matched with `_`, `-` and spaces alike and in any case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ORIGIN_KEYS = (
    "fault_entity",
    "faulty_component",
    "faulty_components",
    "faulty_service",
    "root_cause_component",
    "root_cause_entity",
    "root_cause_service",
    "target_component",
    "target_service",
    "fault_object",
    "component",
    "entity",
    "location",
    "target",
    "cmdb_id",
)
LEVEL_KEYS = ("fault_level", "target_resource_kind", "resource_kind", "level", "kind")
TYPE_KEYS = (
    "fault_type",
    "failure_type",
    "fault_mechanism",
    "root_cause_reason",
    "root_cause_type",
    "injector_method",
    "mechanism",
    "reason",
    "type",
    "fault",
)
NAMESPACE_KEYS = ("namespace", "application", "app")
LEVEL_KINDS = {
    "service": "Service",
    "pod": "Pod",
    "container": "Pod",
    "node": "Node",
    "host": "Node",
    "service_instance": "ServiceInstance",
    "instance": "ServiceInstance",
}


def _key_pattern(keys: tuple[str, ...]) -> str:
    return "|".join(k.replace("_", r"[\s_-]?") for k in keys)


_VALUE = r"""\s*["']?([^;|\n{}"']{1,200}?)["']?\s*(?=[;,|\n}]|$|\s+\w[\w\s-]{0,30}?\s*[=:])"""
_FIELD = re.compile(
    rf"""(?<![\w-])["']?({_key_pattern(ORIGIN_KEYS + LEVEL_KEYS + TYPE_KEYS + NAMESPACE_KEYS)})["']?\s*[=:]{_VALUE}""",
    re.I,
)
_INJECTED = re.compile(
    r"\b(?:an?\s+)?(?P<type>[\w /.-]{2,80}?)\s+fault\s+was\s+injected\s+into\s+(?:the\s+)?"
    r"(?P<level>service\s+instance|service|pod|container|node|host|instance|component)\s+"
    r"(?P<name>[\w.-]*\w)",
    re.I,
)
_ROOT_CAUSE = re.compile(
    r"\broot\s+cause(?:\s+entities|\s+entity|\s+components?|\s+\d+)?\s*:\s*(?:component\s+)?"
    r"(?P<names>[^\n.;]*)",
    re.I,
)
_FAULTY = re.compile(r"\bfaulty\s+components?\s*:\s*(?P<names>[^\n;]*)", re.I)
_KINDED = re.compile(
    r"^(?:(?P<kind>[A-Z][A-Za-z]+)\s+)?(?P<name>[A-Za-z0-9][\w.-]*[A-Za-z0-9]|[A-Za-z0-9])"
    r"(?:\s*\((?P<level>[a-z_ ]+)\))?(?:\s+in\s+namespace\s+(?P<ns>[\w-]+))?"
)
_NOT_NAMES = frozenset({"unspecified", "unknown", "none", "n/a", "null", "the", "a", "an"})


@dataclass
class Fields:
    """What a field-written truth states (each list in the order written)."""

    origins: list[tuple[str, str | None]] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.origins or self.types)


def read_fields(text: str) -> Fields:
    """The origins (name, kind), fault types and namespaces `text` states as fields."""
    out = Fields()
    level: str | None = None
    for match in _FIELD.finditer(text):
        key = re.sub(r"[\s-]", "_", match.group(1).lower())
        value = match.group(2).strip().strip("`'\"[]").strip()
        if not value:
            continue
        if key in ORIGIN_KEYS:
            for name in re.split(r",\s*|\s+and\s+", value):
                _add_origin(out, name, None)
        elif key in LEVEL_KEYS:
            level = LEVEL_KINDS.get(
                value.lower().replace(" ", "_"), value if key != "level" else None
            )
        elif key in TYPE_KEYS:
            out.types.append(value.rstrip(" .;,)"))
        elif key in NAMESPACE_KEYS:
            out.namespaces.append(value.lower())
    for match in _INJECTED.finditer(text):
        _add_origin(
            out,
            match.group("name"),
            LEVEL_KINDS.get(match.group("level").lower().replace(" ", "_")),
        )
        out.types.append(match.group("type").strip())
    for pattern in (_ROOT_CAUSE, _FAULTY):
        for match in pattern.finditer(text):
            for item in re.split(r",\s*|\s+and\s+", match.group("names")):
                _add_kinded(out, item.strip())
    if level:
        out.origins = [(name, kind or level) for name, kind in out.origins]
    return out


def _add_kinded(out: Fields, item: str) -> None:
    """`ConfigMap flagd-config`, `Mysql02 (pod)`, `Pod load-generator in namespace otel-demo`."""
    match = _KINDED.match(item)
    if not match:
        return
    kind = match.group("kind")
    if kind and kind.lower() in {"component", "service", "pod", "node", "deployment"}:
        kind = kind.capitalize()
    level = match.group("level")
    if level:
        kind = LEVEL_KINDS.get(level.strip().replace(" ", "_"), kind)
    _add_origin(out, match.group("name"), kind)
    if match.group("ns"):
        out.namespaces.append(match.group("ns").lower())


def _add_origin(out: Fields, name: str, kind: str | None) -> None:
    name = name.strip().strip("`'\".,()[]").strip()
    if not name or name.lower() in _NOT_NAMES or " " in name or len(name) > 120:
        return
    if not any(n.lower() == name.lower() for n, _ in out.origins):
        out.origins.append((name, kind))
