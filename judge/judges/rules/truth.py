r"""The ground truth, parsed once: origin, namespaces, mechanism, values, other components, impact.

From a SREGym string `[fault_spec] component=...; namespace=... || description` (or from prose,
or from a spec's structured fields when it has them):

- `origins`: the fault_spec components (or `fault_origin`), or, in prose, the subject of the
  first sentence (`The deployment \`checkout\` has ...`, `The MongoDB deployments (a, b) ...`);
- `mechanism_text`: the description up to its first consequence (`, so`, `causing`, `leading
  to`, `Symptoms ...`): what was mutated, not what followed;
- `families`: the fault families named in the mechanism text (and `mechanism`,
  `mechanism_keywords`, `problem_class`); `impacts`: those named after it, plus the impacts each
  family implies, plus `symptoms`;
- `values`: concrete details (backticked or quoted values, ENV_VARS, `image:tag`, `key=value`,
  numbers with units, paths) from the mechanism text and `parameters`;
- `contributing`: other components named in the mechanism text; `affected`: those named after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ground_truth.fault_spec import parse_fault_spec
from ground_truth.models import ComponentRef, IncidentSpec

from ..catalog import INFRASTRUCTURE, KNOWN_SERVICES
from . import names, taxonomy, values

KNOWN_NAMES = frozenset(name for services in KNOWN_SERVICES.values() for name in services)
MAX_PARAMETER_VALUES = 200
MAX_PARAMETER_DEPTH = 12

_CONSEQUENCE = re.compile(
    r",?\s+(?:so(?:\s+that)?|causing|which\s+(?:causes|caused|leads|led|results|prevents|breaks|makes)"
    r"|leading\s+to|resulting\s+in|preventing|thereby|making|breaking|producing|triggering)\s"
    r"|\.\s+(?:symptoms?|this|these|as a result|consequently|traffic|requests|pods|it)\b",
    re.I,
)
_IDENTIFIER = re.compile(
    r"`([a-z0-9][a-z0-9._-]*[a-z0-9])`|'([a-z0-9][a-z0-9._-]*[a-z0-9])'"
    r"|\"([a-z0-9][a-z0-9._-]*[a-z0-9])\"|\b(?:deployments?|services?|statefulsets?|daemonsets?|"
    r"configmaps?|secrets?|pods?)\s*/\s*([a-z0-9][a-z0-9._-]*[a-z0-9])",
    re.I,
)
_KIND_NEAR = re.compile(
    r"\b(deployment|service|configmap|statefulset|daemonset|secret|pod|ingress|cronjob|node)s?\b",
    re.I,
)


@dataclass
class Truth:
    """A spec as the rules judge reads it: the origin components and their namespaces, the
    mechanism text and its fault families, categories, groups, impacts and concrete values, and
    the contributing, affected and known components.
    """

    origins: list[ComponentRef]
    namespaces: set[str]
    description: str
    mechanism_text: str
    families: set[str]
    categories: set[str]
    groups: set[str]
    impacts: set[str]
    values: list[values.Value]
    contributing: list[ComponentRef] = field(default_factory=list)
    affected: list[ComponentRef] = field(default_factory=list)
    catalog: list[ComponentRef] = field(default_factory=list)

    @property
    def involved(self) -> list[ComponentRef]:
        return [*self.origins, *self.contributing]

    @property
    def listed(self) -> list[ComponentRef]:
        return [*self.origins, *self.contributing, *self.affected]

    def owned_by_origin(self, component: ComponentRef) -> bool:
        """Part of the origin: a resource the mechanism names after it (`deny-all-recommendation`
        for `recommendation`), or a member of an origin that names a group (`mongodb-geo` for
        `mongodb` when no component is called just `mongodb`)."""
        parts = names.tokens(component.name)
        for origin in self.origins:
            every_workload = origin.name == "*" and (origin.kind or "deployment").lower() in {
                "deployment",
                "workload",
            }
            if every_workload and any(same(component, k) for k in self.catalog):
                return True
            own = names.tokens(origin.name)
            if origin.name == "*" or not own or len(own) >= len(parts):
                continue
            group = not any(
                names.canonical(k.name) == names.canonical(origin.name)
                for k in self.catalog
                if k is not origin
            )
            if parts[: len(own)] == own and group and origin.name.lower() not in KNOWN_NAMES:
                return True
            if set(own) < set(parts) and any(same(component, c) for c in self.contributing):
                return True
        return False


def parse_truth(spec: IncidentSpec) -> Truth:
    """Read a spec's ground truth: origins from `fault_origin`, the fault-spec string or, failing
    both, the prose; families from the mechanism text and the structured fields.
    """
    parsed = parse_fault_spec(spec.ground_truth)
    description = parsed[2] if parsed else spec.ground_truth
    namespace = parsed[1] if parsed else None
    origins = list(spec.fault_origin) or (parsed[0] if parsed else [])
    namespaces = {c.namespace for c in [*origins] if c.namespace}
    if namespace:
        namespaces.add(namespace)
    if not origins:
        origins, guessed = _origins_in_prose(description)
        namespaces |= guessed
    mechanism_text = _mechanism_text(description)
    low_mechanism = _without_names(mechanism_text.lower(), namespaces)
    structured = " ".join(
        [
            spec.mechanism or "",
            spec.problem_class or "",
            *(k.replace("|", " ") for k in spec.mechanism_keywords),
        ]
    ).lower()
    families = taxonomy.families_in(low_mechanism) | taxonomy.families_in(structured)
    if not families:
        families = taxonomy.families_in(_without_names(description.lower(), namespaces))
    categories = taxonomy.categories_in(low_mechanism)
    groups = {taxonomy.FAMILY[f].group for f in families | categories}
    consequence = description[len(mechanism_text) :].lower()
    impacts = taxonomy.impacts_in(consequence) | taxonomy.impacts_in(
        " ".join(s.replace("|", " ") for s in spec.symptoms).lower()
    )
    for family in families:
        impacts |= set(taxonomy.FAMILY[family].impacts)
    origins = [_with_node_alias(o) for o in origins]
    catalog = _catalog(namespaces, origins)
    origins = [next((c for c in catalog if same(c, o)), o) for o in origins]
    truth = Truth(
        origins=origins,
        namespaces=namespaces,
        description=description,
        mechanism_text=mechanism_text,
        families=families,
        categories=categories,
        groups=groups,
        impacts=impacts,
        values=[],
        catalog=catalog,
    )
    truth.contributing, truth.affected = _others(truth, spec, consequence)
    truth.values = values.truth_values(mechanism_text, truth, _parameter_values(spec.parameters))
    return truth


def _with_node_alias(origin: ComponentRef) -> ComponentRef:
    """A node-level origin (`node/kubelet`, `node/system-clock`) is also named as "the node"."""
    if (origin.kind or "").lower() != "node" or origin.name == "*" or "*" in origin.aliases:
        return origin
    return origin.model_copy(update={"aliases": [*origin.aliases, "*"]})


def _mechanism_text(description: str) -> str:
    match = _CONSEQUENCE.search(description)
    return description[: match.start()] if match and match.start() > 20 else description


def _without_names(text: str, namespaces: set[str]) -> str:
    """`social-network` names a namespace, not a network fault."""
    for ns in namespaces:
        text = text.replace(ns.lower(), " ")
    return text


def _catalog(namespaces: set[str], origins: list[ComponentRef]) -> list[ComponentRef]:
    """Every component the rules know for the truth's namespaces, as ComponentRefs; the one
    datastore of its kind in an application also answers to the store's name (`valkey`,
    `redis` for `valkey-cart`)."""
    known = [
        ComponentRef(name=name, namespace=ns)
        for ns in sorted(namespaces)
        for name in KNOWN_SERVICES.get(ns, [])
    ]
    infrastructure = [ComponentRef(name=name) for name in INFRASTRUCTURE]
    catalog = _unique([*origins, *known, *infrastructure])
    stores: dict[str, list[int]] = {}
    for i, c in enumerate(catalog):
        parts = names.tokens(c.name)
        if len(parts) > 1 and parts[0] in names.STORE_SYNONYMS:
            stores.setdefault(names.canonical(parts[0]), []).append(i)
    for store, members in stores.items():
        if len(members) == 1 and not any(names.canonical(c.name) == store for c in catalog):
            c = catalog[members[0]]
            catalog[members[0]] = c.model_copy(
                update={"aliases": [*c.aliases, names.tokens(c.name)[0]]}
            )
    return catalog


def _unique(components: list[ComponentRef]) -> list[ComponentRef]:
    kept: list[ComponentRef] = []
    seen: set[str] = set()
    for c in components:
        keys = {n.lower() for n in c.all_names()}
        if not keys & seen:
            kept.append(c)
        seen |= keys
    return kept


def is_origin(truth: Truth, component: ComponentRef) -> bool:
    """Whether `component` is one of the fault's origins (name variants allowed, see `same`)."""
    return any(same(component, o) for o in truth.origins)


def same(a: ComponentRef, b: ComponentRef) -> bool:
    """One component: `user-service` = `user-svc` = `userservice`, `mongodb-geo-db` =
    `mongodb-geo` = `mongo-geo` (kinds and namespaces aside)."""
    keys_a = {names.canonical(n) for n in a.all_names()}
    return any(names.canonical(n) in keys_a for n in b.all_names())


def _others(
    truth: Truth, spec: IncidentSpec, consequence: str
) -> tuple[list[ComponentRef], list[ComponentRef]]:
    """Components the description names besides the origin: in the mechanism (contributing) or
    after it (affected); the spec's own lists come first."""
    sentences = re.split(r"(?<=[.!?])\s+", truth.mechanism_text, maxsplit=1)
    mechanism = sentences[0].lower()
    consequence = " ".join([*sentences[1:], consequence]).lower()
    contributing = list(spec.contributing_components)
    affected = list(spec.affected_components)
    for component in [*truth.catalog, *_kind_named(truth.description, truth)]:
        if is_origin(truth, component):
            continue
        if _named(mechanism, component):
            contributing.append(component)
        elif _named(consequence, component):
            affected.append(component)
    contributing = _unique([c for c in contributing if not is_origin(truth, c)])
    affected = _unique(
        [
            c
            for c in affected
            if not is_origin(truth, c) and not any(same(c, x) for x in contributing)
        ]
    )
    return contributing, affected


def _named(text: str, component: ComponentRef) -> bool:
    r"""Named as a component, not as a value (`the intended value \`frontend\``) nor as an
    ordinary word (`valid cart state`)."""
    return any(not names.is_value_at(text, at) for at in names.find(text, component, strict=True))


_KIND_NAMED = re.compile(
    r"\b(?:configmap|deployment|daemonset|statefulset|cronjob|service)\s+[`'\"]([a-z0-9][a-z0-9-]*[a-z0-9])[`'\"]"
    r"|[`'\"]([a-z0-9][a-z0-9-]*[a-z0-9])[`'\"]\s+(?:configmap|deployment|daemonset|statefulset|cronjob|service)\b",
    re.I,
)


def _kind_named(description: str, truth: Truth) -> list[ComponentRef]:
    """Components the description writes with their kind (the `flagd-config` ConfigMap) that
    the catalog does not know."""
    found = []
    for match in _KIND_NAMED.finditer(description):
        name = next(g for g in match.groups() if g)
        ref = ComponentRef(name=name)
        if name.lower() in {ns.lower() for ns in truth.namespaces}:
            continue
        if not any(same(ref, c) for c in truth.catalog):
            found.append(ref)
    return found


def _origins_in_prose(description: str) -> tuple[list[ComponentRef], set[str]]:
    r"""The subject of the first sentence: `The deployment \`checkout\``, `The MongoDB
    deployments (a, b)`, `The password in valkey`; else the first known component named."""
    first = re.split(r"(?<=[.!?])\s", description.strip(), maxsplit=1)[0]
    subject = re.split(
        r"\s(?:is|are|has|have|was|were|had|uses?|pins?|points?|sets?|contains?|reports?)\s",
        first,
        maxsplit=1,
    )[0]
    low = description.lower()
    for passage in (subject, first, description):
        found = _named_in(passage)
        if found:
            return found, _namespaces_of(found, low)
    if re.search(r"\b(?:all|every)\s+(?:\w+\s+)?(?:deployments|services|pods)\b", low):
        return [ComponentRef(name="*", kind="deployment")], set()
    return [], set()


def _named_in(passage: str) -> list[ComponentRef]:
    low = passage.lower()
    found: list[tuple[int, ComponentRef]] = []
    for match in _IDENTIFIER.finditer(passage):
        name = next(g for g in match.groups() if g)
        kind = _KIND_NEAR.search(passage[max(0, match.start() - 24) : match.end() + 24])
        if ":" in name or "." in name or (name.lower() in names.COMMON_WORDS and not kind):
            continue
        found.append((match.start(), ComponentRef(name=name, kind=kind.group(1) if kind else None)))
    if re.search(r"\b(?:all|every)\s+(?:\w+\s+)?(?:deployments|services)\b", low) and not found:
        return [ComponentRef(name="*", kind="deployment")]
    for ns in KNOWN_SERVICES:
        for ref in _catalog({ns}, []):
            hits = names.find(low, ref, strict=True)
            if hits and not any(same(ref, c) for _, c in found):
                found.append((hits[0], ref))
    found.sort(key=lambda item: item[0])
    return _unique([c for _, c in found])


def _namespaces_of(components: list[ComponentRef], low: str) -> set[str]:
    """The application whose services the prose names most (none when it is unclear)."""
    counts = {
        ns: sum(1 for name in services if names.find(low, ComponentRef(name=name), strict=True))
        for ns, services in KNOWN_SERVICES.items()
    }
    best = max(counts.values(), default=0)
    winners = [ns for ns, n in counts.items() if n == best and n > 0]
    return set(winners) if len(winners) == 1 else set()


def _parameter_values(parameters: dict[str, Any]) -> list[tuple[str, str]]:
    """(key, value) leaves of a spec's `parameters`, bounded in depth and count: an alias bomb
    or a 900-level value is cut short, never expanded."""
    out: list[tuple[str, str]] = []
    stack: list[tuple[str, Any, int]] = [("", parameters, 0)]
    visited = 0
    while stack and len(out) < MAX_PARAMETER_VALUES and visited < MAX_PARAMETER_VALUES * 10:
        key, value, depth = stack.pop()
        visited += 1
        if isinstance(value, dict):
            if depth < MAX_PARAMETER_DEPTH:
                stack.extend(
                    (str(k), v, depth + 1)
                    for k, v in reversed(list(value.items())[:MAX_PARAMETER_VALUES])
                )
        elif isinstance(value, (list, tuple)):
            if depth < MAX_PARAMETER_DEPTH:
                stack.extend((key, v, depth + 1) for v in reversed(value[:MAX_PARAMETER_VALUES]))
        elif value is not None and not isinstance(value, bool):
            out.append((key, str(value).strip()))
    return out
