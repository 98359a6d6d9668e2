"""Root-cause entity scoring in code: what ITBench asks its LLM judge to compute.

A submission's structured entities (ITBench `entities[]`, AIOpsLab localization lists, OpenRCA
components, FORGE hypotheses) are matched against the spec's fault origin. The predictions are
the entities flagged `contributing_factor: true` in the order given; when no entity carries the
flag at all, every entity is a prediction (a ranked list).

- precision = predictions that match a root cause / predictions;
- recall = distinct root causes found (each prediction may claim one) / root causes, never above 1;
- F1, and the same three over the first k predictions for k = 1..5 (ITBench's `@k`: the precision
  denominator is the number of predictions actually in the top k);
- `top_is_origin`: whether the first prediction is a root cause (False without predictions, so a
  run that named nothing counts as a miss in every top-1 rate).

Matching, in ITBench's terms. An ITBench spec carries its `groups` and `aliases` in
`extra["itbench"]`: a root cause is the alias class of a `root_cause: true` group, and a
prediction matches it when it matches any group of the class (ITBench: "If ANY entity in an alias
group has root_cause: true, then matching ANY entity in that alias group counts"). A prediction
matches a group when the namespaces agree (when both are known) and

- the kinds agree (or one is unknown) and the name equals the group's `name` or fully matches one
  of its regex `filter`s (an invalid regex such as `*.*` is read as "any name" of that exact kind);
- or both kinds are workloads (Service, Deployment, StatefulSet, DaemonSet, ReplicaSet, Pod) and
  the names are the same service once normalised: pod suffixes dropped (`cartservice-0`,
  `checkout-8546fdc74d-d68cn` -> the workload), case, punctuation and a trailing `service`
  ignored (`productcatalogservice` = `product-catalog`). This is not done for a ground truth
  that names one specific pod or a node: that needs the exact name.

Without ITBench groups the fault origin `ComponentRef`s (with their aliases) are matched the same
way, by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from .models import ComponentRef, Entity, IncidentSpec, Submission, parse_component_string

K_VALUES = (1, 2, 3, 4, 5)

OtherRole = Literal["contributing", "affected", "distractor"]
Method = Literal["itbench", "components"]
# ITBench-Evaluations' namespace filter (infrastructure/observability namespaces); not applied
# unless asked, because the judge results published with ITBench did not apply it either.
ITBENCH_EXCLUDED_NAMESPACES = frozenset(
    {
        "kube-system",
        "data-recorders",
        "clickhouse",
        "clickhouse-operator",
        "prometheus",
        "opentelemetry-operator",
        "opentelemetry-collectors",
        "metrics-server",
        "opensearch",
    }
)
WORKLOAD_KINDS = frozenset(
    {"service", "deployment", "statefulset", "daemonset", "replicaset", "pod"}
)
KNOWN_KINDS = WORKLOAD_KINDS | {
    "configmap",
    "secret",
    "namespace",
    "node",
    "ingress",
    "horizontalpodautoscaler",
    "cronjob",
    "job",
    "networkpolicy",
    "persistentvolumeclaim",
    "persistentvolume",
    "serviceaccount",
    "endpoint",
    "endpointslice",
    "storageclass",
    "role",
    "rolebinding",
    "clusterrole",
}
KIND_ALIASES = {
    "svc": "service",
    "deploy": "deployment",
    "sts": "statefulset",
    "ds": "daemonset",
    "rs": "replicaset",
    "po": "pod",
    "cm": "configmap",
    "ns": "namespace",
    "no": "node",
    "hpa": "horizontalpodautoscaler",
    "pvc": "persistentvolumeclaim",
    "pv": "persistentvolume",
    "ing": "ingress",
    "sa": "serviceaccount",
    "netpol": "networkpolicy",
}
UNKNOWN_NAMESPACES = frozenset({"", "unknown", "none", "null", "n/a", "-"})

# Kubernetes' random name suffixes use this alphabet (no vowels, no 0/1/3).
_SAFE = "bcdfghjklmnpqrstvwxz2456789"
_POD_OF_DEPLOYMENT = re.compile(rf"-[a-z0-9]{{6,10}}-[{_SAFE}]{{5}}$")
_POD_OF_SET = re.compile(rf"-(?=[{_SAFE}]*\d)[{_SAFE}]{{5}}$")
_ORDINAL = re.compile(r"-\d+$")
_KIND_SUFFIX = re.compile(r"^(?P<name>.+?)\s*\(?\s*(?P<kind>[A-Z][A-Za-z]+)\s*\)?$")
_REGEX_META = re.compile(r"[\\\[\](){}|^$*+?.]")


# ---------------------------------------------------------------- names


def normalize_kind(kind: str | None) -> str | None:
    """`Deployments`, `deploy`, `Deployment` -> `deployment`; unknown kinds are lowercased."""
    if not kind or not kind.strip():
        return None
    k = kind.strip().lower()
    k = KIND_ALIASES.get(k, k)
    for plural, singular in (("ies", "y"), ("es", ""), ("s", "")):
        if (
            k not in KNOWN_KINDS
            and k.endswith(plural)
            and k[: -len(plural)] + singular in KNOWN_KINDS
        ):
            return k[: -len(plural)] + singular
    return k


def normalize_namespace(namespace: str | None) -> str | None:
    """`namespace` stripped and lower-cased; None when it is missing or a placeholder such as
    "", "unknown", "n/a" or "-".
    """
    if namespace is None or namespace.strip().lower() in UNKNOWN_NAMESPACES:
        return None
    return namespace.strip().lower()


def workload_name(name: str) -> str:
    """The workload a pod name belongs to: `cartservice-0` -> `cartservice`."""
    for pattern in (_POD_OF_DEPLOYMENT, _POD_OF_SET, _ORDINAL):
        stripped = pattern.sub("", name)
        if stripped != name and stripped:
            return stripped
    return name


def looks_like_instance(name: str) -> bool:
    """True for names with a pod / ordinal suffix (`emailservice-0`, `node-6`, `ad-7f9c-x2b4k`)."""
    return any(p.search(name) for p in (_POD_OF_DEPLOYMENT, _POD_OF_SET, _ORDINAL))


def service_key(name: str) -> str:
    """Compare-key of a service name: case, punctuation and a trailing `service`/`svc` ignored."""
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    for suffix in ("service", "svc"):
        if key.endswith(suffix) and len(key) > len(suffix):
            return key[: -len(suffix)]
    return key


def filter_literal(pattern: str) -> str | None:
    """The plain name inside an ITBench filter (`load-generator-.*` -> `load-generator`)."""
    text = pattern.strip()
    text = re.sub(r"^\^|\$$", "", text)
    text = re.sub(r"\\b", "", text)
    text = re.sub(r"^(\.\*)+|(\.\*)+$", "", text)
    text = text.replace(r"\-", "-").replace(r"\.", ".").strip("-.")
    if not text or _REGEX_META.search(text.replace(".", "")):
        return None
    return text


def parse_entity_name(text: str) -> tuple[str | None, str | None, str]:
    """(namespace, kind, name) of `ns/Kind/name`, `kind/name`, `name Kind` or `name (Kind)`."""
    text = text.strip()
    if "/" in text:
        ref = parse_component_string(text)
        return ref.namespace, ref.kind, ref.name
    match = _KIND_SUFFIX.match(text)
    if match and " " in text and normalize_kind(match["kind"]) in KNOWN_KINDS | {"port"}:
        return None, match["kind"], match["name"].strip()
    return None, None, text


# ---------------------------------------------------------------- matchers


@dataclass(frozen=True)
class _Pred:
    label: str
    name: str
    kind: str | None
    namespace: str | None


@dataclass(frozen=True)
class _Matcher:
    """One way of naming a ground-truth component (an ITBench group, a name or an alias)."""

    label: str
    kind: str | None
    namespace: str | None
    names: frozenset[str]
    patterns: tuple[re.Pattern[str], ...] = ()
    wildcard: bool = False
    key: str | None = None

    def matches(self, pred: _Pred) -> bool:
        if self.namespace and pred.namespace and self.namespace != pred.namespace:
            return False
        same_kind = self.kind is None or pred.kind is None or self.kind == pred.kind
        if same_kind and self._matches_name(pred):
            return True
        if self.key is None or not _workload_or_none(self.kind) or not _workload_or_none(pred.kind):
            return False
        return service_key(workload_name(pred.name)) == self.key

    def _matches_name(self, pred: _Pred) -> bool:
        if self.wildcard:
            return pred.kind is not None and pred.kind == self.kind
        name = pred.name.lower()
        return name in self.names or any(p.fullmatch(pred.name) for p in self.patterns)


def _workload_or_none(kind: str | None) -> bool:
    return kind is None or kind in WORKLOAD_KINDS


def component_matcher(ref: ComponentRef, label: str | None = None) -> list[_Matcher]:
    """Matchers for a component and each of its aliases."""
    kind, namespace = normalize_kind(ref.kind), normalize_namespace(ref.namespace)
    return [_name_matcher(label or ref.name, name, kind, namespace) for name in ref.all_names()]


def _name_matcher(label: str, name: str, kind: str | None, namespace: str | None) -> _Matcher:
    instance = kind == "node" or (kind in {"pod", None} and looks_like_instance(name))
    key = service_key(name) if _workload_or_none(kind) and not instance else None
    return _Matcher(label, kind, namespace, frozenset({name.lower()}), key=key)


def group_matcher(group: dict[str, Any]) -> _Matcher:
    """A matcher for one ITBench v1 group (`id`, `kind`, `namespace`, `name` or `filter`)."""
    kind, namespace = normalize_kind(group.get("kind")), normalize_namespace(group.get("namespace"))
    filters = [str(f) for f in group.get("filter") or []]
    patterns, wildcard, literals = [], False, []
    for text in filters:
        try:
            patterns.append(re.compile(text, re.IGNORECASE))
        except re.error:
            wildcard = True
            continue
        literals.append(filter_literal(text))
    names = {str(group["name"]).lower()} if group.get("name") else set()
    plain = (
        str(group["name"]) if group.get("name") else next((lit for lit in literals if lit), None)
    )
    key = None
    if plain and _workload_or_none(kind) and not (group.get("name") and looks_like_instance(plain)):
        key = service_key(plain)
    return _Matcher(
        str(group.get("id")), kind, namespace, frozenset(names), tuple(patterns), wildcard, key
    )


@dataclass(frozen=True)
class _Target:
    label: str
    matchers: tuple[_Matcher, ...]

    def matches(self, pred: _Pred) -> bool:
        return any(m.matches(pred) for m in self.matchers)


# ---------------------------------------------------------------- targets from a spec


def _itbench_targets(
    itbench: dict[str, Any], use_aliases: bool
) -> tuple[list[_Target], list[tuple[OtherRole, _Target]]]:
    groups = {
        str(g["id"]): g for g in itbench.get("groups") or [] if isinstance(g, dict) and "id" in g
    }
    classes = (
        _alias_classes(groups, itbench.get("aliases") or [])
        if use_aliases
        else {gid: [gid] for gid in groups}
    )
    roots = [gid for gid, g in groups.items() if g.get("root_cause") is True]
    targets, seen = [], set()
    for gid in roots:
        members = classes.get(gid, [gid])
        if frozenset(members) in seen:
            continue
        seen.add(frozenset(members))
        label = "+".join(m for m in members if m in roots)
        targets.append(_Target(label, tuple(group_matcher(groups[m]) for m in members)))
    in_root = {m for t in targets for m in (x.label for x in t.matchers)}
    sources = {
        str(p.get("source")) for p in itbench.get("propagations") or [] if isinstance(p, dict)
    }
    others: list[tuple[OtherRole, _Target]] = [
        ("contributing" if gid in sources else "affected", _Target(gid, (group_matcher(g),)))
        for gid, g in groups.items()
        if gid not in in_root
    ]
    return targets, others


def _alias_classes(groups: dict[str, Any], aliases: list[Any]) -> dict[str, list[str]]:
    parent = {gid: gid for gid in groups}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for alias in aliases:
        members = (
            [str(m) for m in alias or [] if str(m) in parent] if isinstance(alias, list) else []
        )
        for other in members[1:]:
            parent[find(other)] = find(members[0])
    classes: dict[str, list[str]] = {}
    for gid in groups:
        classes.setdefault(find(gid), []).append(gid)
    return {gid: classes[find(gid)] for gid in groups}


def _component_targets(
    spec: IncidentSpec,
) -> tuple[list[_Target], list[tuple[OtherRole, _Target]]]:
    targets = [_Target(ref.name, tuple(component_matcher(ref))) for ref in spec.fault_origin]
    groups: list[tuple[OtherRole, list[ComponentRef]]] = [
        ("contributing", spec.contributing_components),
        ("affected", spec.affected_components),
        ("distractor", spec.distractors),
    ]
    others = [
        (role, _Target(ref.name, tuple(component_matcher(ref))))
        for role, refs in groups
        for ref in refs
    ]
    return targets, others


# ---------------------------------------------------------------- scores


class EntityMetrics(BaseModel):
    """Precision (predictions that hit a root cause), recall (root causes credited, each
    prediction crediting at most one) and F1; all 0.0 with no predictions or no root causes.
    """

    precision: float
    recall: float
    f1: float


class EntityAtK(EntityMetrics):
    """EntityMetrics over the top `k` ranked predictions only."""

    k: int


class EntityMatch(BaseModel):
    """What one predicted entity was matched to."""

    entity: str
    rank: int = Field(description="1-based position among the predictions.")
    matched_to: str | None = Field(None, description="The root cause it matched, if any.")
    role: Literal["origin", OtherRole] | None = None


class EntityScore(EntityMetrics):
    """Root-cause entity precision / recall / F1 of one submission, and the same @k."""

    at_k: list[EntityAtK]
    top_is_origin: bool = Field(
        description="Whether the first prediction is a root cause; False when there is none:"
        " a run that predicted nothing missed, and top-1 rates count every run."
    )
    n_predicted: int
    n_ground_truth: int
    n_correct: int = Field(description="Predictions that match a root cause.")
    n_found: int = Field(description="Distinct root causes found.")
    ground_truth: list[str] = Field(description="Labels of the root causes.")
    matches: list[EntityMatch]
    excluded: list[str] = Field(
        default_factory=list, description="Dropped by the namespace filter."
    )
    method: Method

    def at(self, k: int) -> EntityAtK:
        return next(m for m in self.at_k if m.k == k)

    def flat(self) -> dict[str, float]:
        """ITBench-Evaluations' flat metric names (`root_cause_entity_k@3_recall`, ...)."""
        out = {f"root_cause_entity_{m}": getattr(self, m) for m in ("precision", "recall", "f1")}
        for at in self.at_k:
            for m in ("precision", "recall", "f1"):
                out[f"root_cause_entity_k@{at.k}_{m}"] = getattr(at, m)
        return out


def predictions(entities: list[Entity]) -> list[Entity]:
    """The entities that count as root-cause predictions, in order."""
    if any(e.contributing_factor is not None for e in entities):
        return [e for e in entities if e.contributing_factor is True]
    return list(entities)


def _pred(entity: Entity) -> _Pred:
    namespace, kind, name = entity.namespace, entity.kind, entity.name
    if kind is None and namespace is None:
        namespace, kind, name = parse_entity_name(entity.name)
    raw = entity.raw or entity.name
    return _Pred(str(raw), name, normalize_kind(kind), normalize_namespace(namespace))


def score_entities(
    spec: IncidentSpec,
    submission: Submission,
    *,
    exclude_namespaces: frozenset[str] | set[str] = frozenset(),
    itbench_aliases: bool = True,
) -> EntityScore | None:
    """Score the submission's structured entities; None when there is nothing to compare.

    `exclude_namespaces` drops predictions in those namespaces first (ITBench-Evaluations applies
    `ITBENCH_EXCLUDED_NAMESPACES`); `itbench_aliases=False` ignores ITBench alias groups.
    """
    if submission.entities is None:
        return None
    itbench = spec.extra.get("itbench") if isinstance(spec.extra.get("itbench"), dict) else None
    method: Method
    if itbench and itbench.get("groups"):
        targets, others = _itbench_targets(itbench, itbench_aliases)
        method = "itbench"
    else:
        targets, others = _component_targets(spec)
        method = "components"
    if not targets:
        return None
    excluded_ns = {n.lower() for n in exclude_namespaces}
    preds: list[_Pred] = []
    excluded: list[_Pred] = []
    for entity in predictions(submission.entities):
        pred = _pred(entity)
        (excluded if pred.namespace in excluded_ns else preds).append(pred)
    hits = [[i for i, t in enumerate(targets) if t.matches(p)] for p in preds]
    overall = _metrics(hits, len(targets))
    return EntityScore(
        **overall.model_dump(),
        at_k=[EntityAtK(k=k, **_metrics(hits[:k], len(targets)).model_dump()) for k in K_VALUES],
        top_is_origin=bool(hits and hits[0]),
        n_predicted=len(preds),
        n_ground_truth=len(targets),
        n_correct=sum(1 for h in hits if h),
        n_found=_max_matching(hits),
        ground_truth=[t.label for t in targets],
        matches=[
            _describe(rank, p, h, targets, others)
            for rank, (p, h) in enumerate(zip(preds, hits, strict=True), 1)
        ],
        excluded=[p.label for p in excluded],
        method=method,
    )


def _metrics(hits: list[list[int]], n_targets: int) -> EntityMetrics:
    if not hits or n_targets == 0:
        return EntityMetrics(precision=0.0, recall=0.0, f1=0.0)
    precision = sum(1 for h in hits if h) / len(hits)
    recall = min(1.0, _max_matching(hits) / n_targets)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return EntityMetrics(precision=precision, recall=recall, f1=f1)


def _max_matching(hits: list[list[int]]) -> int:
    """Most root causes that can be credited when each prediction claims at most one."""
    owner: dict[int, int] = {}

    def claim(pred: int, seen: set[int]) -> bool:
        for target in hits[pred]:
            if target in seen:
                continue
            seen.add(target)
            if target not in owner or claim(owner[target], seen):
                owner[target] = pred
                return True
        return False

    return sum(1 for pred in range(len(hits)) if claim(pred, set()))


def _describe(
    rank: int,
    pred: _Pred,
    hit: list[int],
    targets: list[_Target],
    others: list[tuple[OtherRole, _Target]],
) -> EntityMatch:
    if hit:
        return EntityMatch(
            entity=pred.label, rank=rank, matched_to=targets[hit[0]].label, role="origin"
        )
    role = next((r for r, t in others if t.matches(pred)), None)
    return EntityMatch(entity=pred.label, rank=rank, role=role)
