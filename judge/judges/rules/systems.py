"""The systems benchmarks run, each with its own component names: a spec's names are read within
its own system, never in another one's catalog (Online Boutique's `cartservice` is not
astronomy-shop's `cart`).

A system lists its services (and datastores), its nodes or hosts, and how it writes an instance
of a service: a Kubernetes pod (`cartservice-0`, `cartservice2-0`, `user-service-7d9f8-x2k1p`) or
a numbered instance (`webservice1`). A name that is an instance of a service is that service
narrowed down (`instance_of`); two instances of one service are siblings, not one component.

Which system a spec is in comes from its namespace, the adapter's record of the system
(`extra`/`source`), a system named in its text, or, failing those, the one system whose
catalog holds its origin's exact name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ground_truth.models import ComponentRef

from ..catalog import KNOWN_SERVICES


@dataclass(frozen=True)
class System:
    """One application: its key, the words that name it, its components and its node names;
    `second_deployments` when each service also runs as `<service>2` (Online Boutique's
    `cartservice2-0`)."""

    key: str
    names: tuple[str, ...]
    components: tuple[str, ...]
    nodes: tuple[str, ...] = ()
    second_deployments: bool = False
    spoken: tuple[tuple[str, str], ...] = ()
    """(component, the word the system's own texts call it by): SRE-Zero's `web` tier."""
    plain_names: bool = False
    """Its components are named by common words (`cache`, `database`): written bare, they are
    the components."""


_BOUTIQUE = (
    "frontend",
    "cartservice",
    "productcatalogservice",
    "currencyservice",
    "paymentservice",
    "shippingservice",
    "emailservice",
    "checkoutservice",
    "recommendationservice",
    "adservice",
    "redis-cart",
    "loadgenerator",
)
SYSTEMS: tuple[System, ...] = (
    *(
        System(namespace, (namespace,), tuple(services))
        for namespace, services in KNOWN_SERVICES.items()
    ),
    System(
        "online-boutique",
        ("online-boutique", "onlineboutique", "hipstershop", "market", "cloudbed"),
        _BOUTIQUE,
        tuple(f"node-{i}" for i in range(1, 7)),
        second_deployments=True,
    ),
    System(
        "micross",
        ("micross", "gaia"),
        (
            "frontend",
            "webservice",
            "mobservice",
            "loginservice",
            "dbservice",
            "redisservice",
            "redis",
            "zookeeper",
            "mysql",
            *(
                f"{s}{i}"
                for s in ("webservice", "mobservice", "loginservice", "dbservice", "redisservice")
                for i in (1, 2)
            ),
        ),
        tuple(f"host{i}" for i in range(1, 6)),
    ),
    System(
        "bank",
        ("bank",),
        (
            "apache01",
            "apache02",
            "tomcat01",
            "tomcat02",
            "tomcat03",
            "tomcat04",
            "mg01",
            "mg02",
            "ig01",
            "ig02",
            "mysql01",
            "mysql02",
            "redis01",
            "redis02",
        ),
    ),
    System(
        "telecom",
        ("telecom",),
        (
            *(f"docker_{i:03d}" for i in range(1, 9)),
            *(f"db_{i:03d}" for i in range(1, 14)),
        ),
        tuple(f"os_{i:03d}" for i in range(1, 23)),
    ),
    System(
        "sre-zero",
        ("sre-zero", "srezero"),
        ("web_server", "database", "cache", "load_balancer", "message_queue"),
        spoken=(("web_server", "web"),),
        plain_names=True,
    ),
)
BY_KEY = {s.key: s for s in SYSTEMS}
_INSTANCE_SUFFIX = r"(?:\d{1,2})?(?:-(?=[a-z]*\d)[a-z0-9]{1,10}){0,2}"


K8S_NAMESPACES = frozenset(KNOWN_SERVICES)


def components_of(system: System) -> list[ComponentRef]:
    """The system's components and nodes as ComponentRefs: `cartservice` also answers to
    `cart-service` (`the cart service`) and, where services run twice, to `cartservice2`."""
    namespace = system.key if system.key in K8S_NAMESPACES else None
    out = []
    for name in system.components:
        aliases = []
        if name.endswith("service") and "-" not in name and "_" not in name and len(name) > 7:
            aliases.append(f"{name[:-7]}-service")
        if system.second_deployments and name.endswith("service"):
            aliases.append(f"{name}2")
        aliases += [word for component, word in system.spoken if component == name]
        out.append(ComponentRef(name=name, namespace=namespace, aliases=aliases))
    kind = "node" if system.nodes and not system.nodes[0].startswith("host") else "host"
    out.extend(ComponentRef(name=n, kind=kind, namespace=None) for n in system.nodes)
    return out


@lru_cache(maxsize=4096)
def instance_of(name: str, service: str) -> bool:
    """`cartservice-0`, `cartservice2-0`, `webservice1`, `user-service-7d9f8-x2k1p` are instances
    of `cartservice`, `webservice`, `user-service`; `mongodb-geo` is not one of `mongodb`."""
    name, service = name.lower(), service.lower()
    if name == service or not name.startswith(service):
        return False
    return bool(re.fullmatch(_INSTANCE_SUFFIX, name[len(service) :]))


def service_of(name: str, system: System | None) -> str | None:
    """The service `name` is an instance of, in `system` (None when it is no instance)."""
    if system is None:
        return None
    found = [c for c in system.components if instance_of(name, c)]
    return max(found, key=len) if found else None


def system_of(
    spec_namespaces: set[str], extra: dict[str, Any], text: str, origins: list[str]
) -> System | None:
    """The system a spec is in: its namespace, the adapter's record, a system named in its text,
    else the only system whose catalog holds an origin's exact name (or its service's)."""
    for namespace in sorted(spec_namespaces):
        if namespace in BY_KEY:
            return BY_KEY[namespace]
    recorded = _recorded_system(extra)
    for candidate in (recorded, text):
        found = _named_system(candidate.lower()) if candidate else None
        if found is not None:
            return found
    for held in (_holds_exactly, instance_of):
        holders = {
            s.key
            for s in SYSTEMS
            for o in origins
            if any(held(o.lower(), c) for c in (*s.components, *s.nodes))
        }
        if holders:
            return BY_KEY[holders.pop()] if len(holders) == 1 else None
    return None


def _holds_exactly(name: str, component: str) -> bool:
    return name == component


def _recorded_system(extra: dict[str, Any]) -> str:
    parts: list[str] = []
    for record in extra.values():
        if isinstance(record, dict):
            parts.extend(str(record.get(k) or "") for k in ("system", "application", "namespace"))
    return " ".join(parts)


_NAMED = {name: system for system in SYSTEMS for name in system.names}
_NAMED_PATTERN = re.compile(
    r"(?<![a-z0-9-])("
    + "|".join(sorted(map(re.escape, _NAMED), key=len, reverse=True))
    + r")(?![a-z0-9])"
)


def _named_system(text: str) -> System | None:
    found = {_NAMED[m.group(1)].key for m in _NAMED_PATTERN.finditer(text)}
    return BY_KEY[found.pop()] if len(found) == 1 else None


def leading_component(sentence: str) -> tuple[str, System | None] | None:
    """The component a sentence opens with (`cache authentication token expired`, `web server
    cache usage disabled`): its name, and its system when only one system has it."""
    low = sentence.lower().lstrip(" `'\"")
    if low.startswith("the "):
        low = low[4:]
    found: dict[str, set[str]] = {}
    for system in SYSTEMS:
        for name in system.components:
            for written in {name, name.replace("_", " "), name.replace("-", " ")}:
                if low == written or re.match(re.escape(written) + r"(?![\w-])", low):
                    found.setdefault(name, set()).add(system.key)
    if not found:
        return None
    name = max(found, key=len)
    keys = found[name]
    return name, BY_KEY[next(iter(keys))] if len(keys) == 1 else None
