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
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeVar

from ground_truth.fault_spec import parse_fault_spec
from ground_truth.models import ComponentRef, IncidentSpec

from ..catalog import INFRASTRUCTURE, KNOWN_SERVICES
from . import names, systems, taxonomy, times, values
from .fields import Fields, read_fields

KNOWN_NAMES = frozenset(name for services in KNOWN_SERVICES.values() for name in services)

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


# How the origin was read: the spec's own fields, a `[fault_spec]` string, fields written in the
# ground-truth text (`fault_entity=...`), the subject of its prose, or not at all.
Reading = Literal["structured", "fault_spec", "fields", "prose", "none"]
Relation = Literal["exact", "instance", "container", "sibling", "none"]
T = TypeVar("T")


@dataclass
class Truth:
    """A spec as the rules judge reads it: the origin components and their namespaces, the
    mechanism text and its fault families, categories, groups, impacts and concrete values, and
    the contributing, affected and known components. `labelled`: the truth is a label row (its
    fault type written as a field: FORGE, OpenRCA), which names no impact and whose details are
    the fault type on its entity and its `times`.
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
    system: systems.System | None = None
    reading: Reading = "structured"
    no_fault: bool = False
    stated_impacts: set[str] = field(default_factory=set)
    labelled: bool = False
    times: list[datetime] = field(default_factory=list)
    codes: set[str] = field(default_factory=set)
    """The fault type written as an identifier (`adFailure`, `misconfig_k8s`,
    `kube_proxy_unavailable`), lowercased without separators: a diagnosis stating it states
    the truth's mechanism, whatever the taxonomy reads in it."""
    families_inferred: bool = False
    """The families were read from what the fault did (the whole description), the mechanism
    itself naming none (`a rule update introduced a vulnerable regex`), or only from the
    origin's own name (`kubelet`, a node family's word, for a kubelet crash): a diagnosis
    stating the mechanism in its own words is matched by them too."""
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """What the rules compute from the truth alone, kept for every diagnosis read against it
    (`memo`)."""

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """`compute()`, computed on the first call for `key` only: once per truth, not once per
        diagnosis. Call it after `parse_truth` has returned (the truth no longer changes)."""
        if key not in self.derived:
            self.derived[key] = compute()
        value: T = self.derived[key]
        return value

    def relation(self, written: str, component: ComponentRef) -> Relation:
        """How a mention of `component`, written `written`, stands to the origin: the origin
        (`exact`), one of its instances (`instance`: `cartservice-0` of `cartservice`), the
        service the origin is an instance of (`container`: `shippingservice` of
        `shippingservice-1`), another instance of that service (`sibling`), or none."""
        written = written.lower().strip("`'\"()[] ")
        for origin in self.origins:
            if same(component, origin):
                if any(systems.instance_of(written, n) for n in origin.all_names()):
                    return "instance"
                return "exact"
        for origin in self.origins:
            if not any(systems.instance_of(origin.name, n) for n in component.all_names()):
                continue
            if names.canonical(written) == names.canonical(origin.name):
                return "exact"
            if any(systems.instance_of(written, n) for n in component.all_names()):
                return "sibling"
            return "container"
        return "none"

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
    """Read a spec's ground truth: origins from `fault_origin`, the fault-spec string, fields
    written in the text or, failing all, the prose; the system they belong to; families from the
    mechanism text, the fault types written as fields and the structured fields.
    """
    parsed = parse_fault_spec(spec.ground_truth)
    description = parsed[2] if parsed else spec.ground_truth
    fields = Fields() if parsed else read_fields(spec.ground_truth)
    origins, namespaces, reading = _origins(spec, parsed, fields, description)
    system = systems.system_of(namespaces, spec.extra, spec.ground_truth, [o.name for o in origins])
    labelled = _written_as_fields(spec, fields, reading)
    if labelled:
        mechanism_text, consequence = "; ".join(fields.types), ""
    else:
        mechanism_text = _mechanism_text(description)
        consequence = description[len(mechanism_text) :].lower()
    low_description = _without_names(description.lower(), namespaces)
    low_mechanism = _without_origins(_without_names(mechanism_text.lower(), namespaces), origins)
    structured = " ".join(
        [
            _mechanism_text(spec.mechanism or ""),
            spec.problem_class or "",
            *fields.types,
            *(k.replace("|", " ") for k in spec.mechanism_keywords),
        ]
    ).lower()
    declared = taxonomy.families_in(_without_origins(structured, origins))
    families = declared | (
        set() if declared and reading == "fields" else taxonomy.families_in(low_mechanism)
    )
    inferred = not families
    if inferred:
        families = taxonomy.families_in(
            _without_origins(_without_names(description.lower(), namespaces), origins)
        ) or taxonomy.families_in(f"{structured} {low_description}")
    categories = taxonomy.categories_in(low_mechanism)
    groups = {taxonomy.FAMILY[f].group for f in families | categories}
    stated = taxonomy.impacts_in(consequence) | taxonomy.impacts_in(
        " ".join(s.replace("|", " ") for s in spec.symptoms).lower()
    )
    impacts = set(stated)
    for family in families:
        impacts |= set(taxonomy.FAMILY[family].impacts)
    origins = [_with_node_alias(o) for o in origins]
    catalog = _catalog(namespaces, origins, system)
    origins = [next((c for c in catalog if same(c, o)), o) for o in origins]
    truth = Truth(
        origins=origins,
        namespaces=namespaces,
        description=description,
        mechanism_text=mechanism_text,
        families=families,
        families_inferred=inferred and bool(families),
        codes=_codes(spec.mechanism, spec.problem_class, *fields.types, *spec.mechanism_keywords),
        categories=categories,
        groups=groups,
        impacts=impacts,
        values=[],
        catalog=catalog,
        system=system,
        reading=reading,
        stated_impacts=stated,
        no_fault=not origins and _states_no_fault(spec, fields),
        labelled=labelled,
        times=times.truth_times(spec.parameters, spec.ground_truth) if labelled else [],
    )
    truth.contributing, truth.affected = _others(truth, spec, consequence)
    truth.values = values.truth_values(
        values.without_times(mechanism_text), truth, values.parameter_values(spec.parameters)
    )
    return truth


def _written_as_fields(spec: IncidentSpec, fields: Fields, reading: Reading) -> bool:
    """Whether the text states its fault type as a field (a label row, or the sentence an
    adapter renders from one): then that type is the mechanism, not the prose around it (an
    OpenRCA query's dates and "Root cause 1")."""
    if not fields.types:
        return False
    declared = (spec.mechanism or "").strip(" .").lower()
    return reading == "fields" or declared in {t.lower() for t in fields.types}


def _origins(
    spec: IncidentSpec,
    parsed: tuple[list[ComponentRef], str | None, str] | None,
    fields: Fields,
    description: str,
) -> tuple[list[ComponentRef], set[str], Reading]:
    """The origins, the namespaces they are in, and how they were read."""
    reading: Reading = "structured"
    origins = list(spec.fault_origin)
    if not origins and parsed and parsed[0]:
        origins, reading = list(parsed[0]), "fault_spec"
    if not origins and fields.origins:
        origins = [ComponentRef(name=n, kind=k) for n, k in fields.origins]
        reading = "fields"
    namespaces = {c.namespace for c in origins if c.namespace} | set(fields.namespaces)
    if parsed and parsed[1]:
        namespaces.add(parsed[1])
    if not origins:
        origins, guessed = _origins_in_prose(description)
        namespaces |= guessed
        reading = "prose" if origins else "none"
    return origins, namespaces, reading


_NO_FAULT = re.compile(
    r"\bno[_ -]?op\b|\bexpected\s+detection\s+answer:\s*no\b|\bno\s+fault\s+(?:was\s+)?injected\b"
    r"|\bnothing\s+(?:was\s+)?injected\b",
    re.I,
)


def _states_no_fault(spec: IncidentSpec, fields: Fields) -> bool:
    """A truth that no fault was injected (AIOpsLab's no-op detection problems)."""
    declared = " ".join([spec.mechanism or "", spec.problem_class or "", *fields.types])
    return bool(_NO_FAULT.search(declared) or _NO_FAULT.search(spec.ground_truth))


# A node's own name (a number in it, or a role a cluster names its hosts by), not a function.
_NODE_NAME = re.compile(r"\d|^(?:master|control[-_ ]?plane|worker|minion|head|leader)\b", re.I)


def _with_node_alias(origin: ComponentRef) -> ComponentRef:
    """A node-level origin named by function (`node/kubelet`, `node/system-clock`) is also named
    as "the node"; a numbered node (`node-5`) is not any node."""
    if (origin.kind or "").lower() != "node" or origin.name == "*" or "*" in origin.aliases:
        return origin
    if _NODE_NAME.search(origin.name):
        return origin  # `node-5`, `master`, `worker-01` are one node, not any node
    return origin.model_copy(update={"aliases": [*origin.aliases, "*"]})


def _mechanism_text(description: str) -> str:
    match = _CONSEQUENCE.search(description)
    return description[: match.start()] if match and match.start() > 20 else description


def _without_names(text: str, namespaces: set[str]) -> str:
    """`social-network` names a namespace, not a network fault."""
    for ns in namespaces:
        text = text.replace(ns.lower(), " ")
    return text


_CODE = re.compile(r"[A-Za-z][a-z0-9]*(?:[_-][A-Za-z0-9]+|[A-Z][a-z0-9]+)+")


def _codes(*labels: str | None) -> set[str]:
    """The labels written as one identifier (snake_case, kebab-case or camelCase), normalised."""
    return {
        re.sub(r"[_-]", "", label).lower()
        for label in labels
        if label and _CODE.fullmatch(label.strip()) and len(label.strip()) >= 6
    }


def _without_origins(text: str, origins: list[ComponentRef]) -> str:
    """A family named only by the origin's name or kind (`coredns`, `kubelet (node)`, a
    `ValidatingWebhookConfiguration/x`, a Kafka `topic/x`) says which component, not what went
    wrong with it: those words are blanked (the diagnosis is read so too)."""
    for start, end in names.name_spans(text, origins):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _catalog(
    namespaces: set[str], origins: list[ComponentRef], system: systems.System | None = None
) -> list[ComponentRef]:
    """Every component the rules know for the truth's namespaces and system, as ComponentRefs;
    the one datastore of its kind in an application also answers to the store's name
    (`valkey`, `redis` for `valkey-cart`)."""
    known = [
        ComponentRef(name=name, namespace=ns)
        for ns in sorted(namespaces)
        for name in KNOWN_SERVICES.get(ns, [])
    ]
    if system is not None and not (system.key in KNOWN_SERVICES and system.key in namespaces):
        known.extend(systems.components_of(system))
    infrastructure = [ComponentRef(name=name) for name in INFRASTRUCTURE]
    origins = [_with_aliases_of(o, known) for o in origins]
    catalog = _unique([*origins, *known, *_services_of_instances(origins, known), *infrastructure])
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


def _with_aliases_of(origin: ComponentRef, known: list[ComponentRef]) -> ComponentRef:
    """The origin with the aliases its system knows it by (SRE-Zero's `web` for `web_server`)."""
    extra = [a for k in known if same(k, origin) for a in k.aliases if a not in origin.all_names()]
    return origin.model_copy(update={"aliases": [*origin.aliases, *extra]}) if extra else origin


_INSTANCE_NUMBER = re.compile(r"[-_]?\d{1,3}$")


def _services_of_instances(
    origins: list[ComponentRef], known: list[ComponentRef]
) -> list[ComponentRef]:
    """`frontend` for an origin `frontend-1` that no known catalog has a service for: so that
    its siblings (`frontend-0`) are seen as other components and `frontend` as its service."""
    out = []
    known_names = {n.lower() for k in known for n in k.all_names()}
    for origin in origins:
        service = _INSTANCE_NUMBER.sub("", origin.name)
        if (origin.kind or "").lower() in {"node", "host"} or origin.name.lower() in known_names:
            continue
        if service == origin.name or len(service) < 2:
            continue
        derived = systems.instance_of(origin.name, service)
        if derived and not any(systems.instance_of(origin.name, n) for n in known_names):
            out.append(ComponentRef(name=service, namespace=origin.namespace))
    return out


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


_STATES_MECHANISM = re.compile(r"\W*(?:mechanism|root[ _-]?cause|cause|injected\s+fault)\s*:", re.I)


# `The Service \`legacy-config-service\` does not exist`: what the mechanism says is missing is
# part of it, not a victim.
_ABSENT = re.compile(
    r"\b(?:does\s+not|doesn't|no\s+longer)\s+exist|\b(?:is|was|are|were)\s+(?:missing|absent|deleted|removed)\b",
    re.I,
)


def _others(
    truth: Truth, spec: IncidentSpec, consequence: str
) -> tuple[list[ComponentRef], list[ComponentRef]]:
    """Components the description names besides the origin: in the mechanism (contributing) or
    after it (affected); the spec's own lists come first. A sentence of the consequence that
    says it states the mechanism (`Mechanism: the flagd-config ConfigMap has ...`) is mechanism."""
    sentences = re.split(r"(?<=[.!?;])\s+", truth.mechanism_text, maxsplit=1)
    rest = re.split(r"(?<=[.!?])\s+|\n", sentences[1]) if sentences[1:] else []
    after = [*rest, *re.split(r"(?<=[.!?])\s+", consequence)]
    stated = [s for s in rest if _ABSENT.search(s)]
    stated += [s for s in after if _STATES_MECHANISM.match(s) and s not in stated]
    mechanism = " ".join([sentences[0], *stated]).lower()
    consequence = " ".join(s for s in after if s not in stated).lower()
    described = f"{mechanism} {consequence}"
    contributing = list(spec.contributing_components)
    affected = list(spec.affected_components)
    ours = [name for name in _ours(truth) if name in described]
    for component in [*truth.catalog, *_kind_named(truth.description, truth)]:
        if is_origin(truth, component) or _instead_of_the_origin(described, component, ours):
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


def _instead_of_the_origin(text: str, component: ComponentRef, ours: list[str]) -> bool:
    """`the faulty MongoDB (mongodb-geo or mongodb-rate)`, `the dependent service (geo or rate)`:
    a description written for a class of problems names the instances it could have hit as
    alternatives; the one that is not the origin (nor the service whose name the origin carries,
    `geo` of `mongodb-geo`) is not part of this fault. `ours`: the names of `_ours` that
    `text` holds (any match holds both names)."""
    others = {n.lower() for n in component.all_names()}.difference(ours)
    for mine in ours:
        for other in others:
            if other not in text:
                continue
            a, b = re.escape(mine), re.escape(other)
            if re.search(
                rf"\b{a}\W{{0,3}}\s+or\s+\W{{0,3}}{b}\b|\b{b}\W{{0,3}}\s+or\s+\W{{0,3}}{a}\b", text
            ):
                return True
    return False


def _ours(truth: Truth) -> set[str]:
    """The origins' names and the components' names each origin's name is made of."""
    ours = {n.lower() for o in truth.origins for n in o.all_names()}
    parts = {p for name in ours for p in name.split("-")}
    return ours | {n.lower() for c in truth.catalog for n in c.all_names() if n.lower() in parts}


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
    leading = systems.leading_component(first)
    if leading is not None:
        name, system = leading
        in_namespace = system is not None and system.key in systems.K8S_NAMESPACES
        return [ComponentRef(name=name)], {system.key} if in_namespace and system else set()
    kinds = dict.fromkeys(_KIND_WORDS[m.group(1)] for m in _KIND_WORD.finditer(first.lower()))
    return [ComponentRef(name="*", kind=kind) for kind in kinds], set()


_KIND_WORDS = {
    "persistentvolume": "persistentvolume",
    "persistentvolumes": "persistentvolume",
    "persistent volume": "persistentvolume",
    "persistent volumes": "persistentvolume",
    "pv": "persistentvolume",
    "pvs": "persistentvolume",
    "namespace": "namespace",
    "disk": "disk",
    "disks": "disk",
}
_KIND_WORD = re.compile(r"\b(" + "|".join(sorted(_KIND_WORDS, key=len, reverse=True)) + r")\b")


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
