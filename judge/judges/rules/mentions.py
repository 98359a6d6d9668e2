"""The components a diagnosis names, found by the truth's catalog of names (and, for components
the catalog does not know, by how a name is written: `deployment/x`, `the x-y service`), each
with the role of the segment it is in, whether it is named in another namespace, and how it
stands to the origin; a list of everything the application runs blames none of them.
"""

from __future__ import annotations

import math
from itertools import pairwise

from ground_truth.models import ComponentRef

from . import names, systems
from .cues import ACCOUNT, CANDIDATE, COORDINATED
from .parsed import Diagnosis, Mention, Role, segment_of, token_at
from .segments import LIST_OF_EVERYTHING
from .truth import Truth, same

# A namespace stated this close to a mention (same clause) qualifies it.
NAMESPACE_REACH = 60
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def find_mentions(diagnosis: Diagnosis, truth: Truth) -> list[Mention]:
    """Every component the diagnosis names, in order, each with its role (see `Mention`)."""
    low = diagnosis.low
    found: list[Mention] = []
    accounts = [m.span() for m in ACCOUNT.finditer(low)]
    candidates: list[tuple[int, int, ComponentRef]] = []
    for component, searcher in truth.memo("mentions.searched", lambda: _searched(truth)):
        for start, end in names.spans_of(low, searcher):
            in_account = any(a <= start < b for a, b in accounts)
            if not names.is_value_at(low, start) and not in_account:
                candidates.append((start, end, component))
    for start, end, component in _most_specific(candidates, low):
        found.append(_mention(diagnosis, truth, component, start, low[start:end]))
    found.extend(_unknown_components(diagnosis, truth, found))
    found.sort(key=lambda m: m.start)
    _mark_lists(diagnosis, found, truth)
    if not any(o.name == "*" for o in truth.origins):
        _owned_only_beside_the_origin(found)
    return found


def _searched(truth: Truth) -> list[tuple[ComponentRef, names.Searcher]]:
    """The components a diagnosis is searched for (the catalog, then what the truth lists that
    the catalog lacks), each with its names' `searcher`: `strict` when the truth does not list
    it, `plain` when its system names components by common words."""
    listed = truth.listed
    extra = [c for c in listed if not any(same(c, k) for k in truth.catalog)]
    return [
        (c, names.searcher(c, not any(same(c, t) for t in listed), _the_systems_own(c, truth)))
        for c in truth.catalog + extra
    ]


def _the_systems_own(component: ComponentRef, truth: Truth) -> bool:
    """A system that names its components by common words (SRE-Zero's `cache`, `database`,
    `web_server`) is written about with those words bare: there they are the components."""
    system = truth.system
    return (
        system is not None
        and system.plain_names
        and any(
            names.canonical(n) in {names.canonical(c) for c in system.components}
            for n in component.all_names()
        )
    )


def _owned_only_beside_the_origin(mentions: list[Mention]) -> None:
    """A resource named after the origin (`deny-all-recommendation` of `recommendation`) stands
    for it only where the diagnosis names the origin itself too: a name merely holding the
    origin's (`NetworkPolicy deny-all-recommendation ... pods labeled service=search`) is not.
    (A member of an origin that is every workload is that origin: the caller leaves those be.)"""
    if any(m.origin and m.relation != "none" for m in mentions):
        return
    for mention in mentions:
        mention.origin = False


def _most_specific(
    candidates: list[tuple[int, int, ComponentRef]], low: str
) -> list[tuple[int, int, ComponentRef]]:
    """Where a name is part of a longer one (`redis-cart` in `redis-cart-0`'s service, the
    service `shippingservice` in the pod `shippingservice-1`), the longer, or the one named
    exactly as written; other components written alike are all kept."""

    def exact(item: tuple[int, int, ComponentRef]) -> bool:
        written = names.canonical(low[item[0] : item[1]])
        return any(names.canonical(n) == written for n in item[2].all_names())

    kept: list[tuple[int, int, ComponentRef]] = []
    widest: tuple[int, int, ComponentRef] | None = None  # the kept match reaching furthest
    for item in sorted(candidates, key=lambda c: (c[0], c[0] - c[1], not exact(c))):
        start, end, component = item
        if widest is None or start >= widest[1] or not _one_family(widest[2], component):
            kept.append(item)
            if widest is None or end > widest[1]:
                widest = item
    return kept


def _one_family(a: ComponentRef, b: ComponentRef) -> bool:
    """Whether one is an instance of the other."""
    return any(
        systems.instance_of(x, y) or systems.instance_of(y, x)
        for x in a.all_names()
        for y in b.all_names()
    )


def _mention(
    diagnosis: Diagnosis, truth: Truth, component: ComponentRef, start: int, written: str
) -> Mention:
    relation = truth.relation(written, component)
    if relation == "sibling":
        component = ComponentRef(name=written.strip("`'\"()[]-_ ."))
    origin = relation in {"exact", "instance", "container"} or truth.owned_by_origin(component)
    foreign = _foreign(diagnosis, truth, start)
    segment = segment_of(diagnosis, start)
    role: Role = segment.role if segment else "mentioned"
    strong = bool(segment and segment.strong)
    return Mention(
        component, start, role, foreign, origin and not foreign, strong, relation, written=written
    )


def _role(diagnosis: Diagnosis, at: int) -> Role:
    segment = segment_of(diagnosis, at)
    return segment.role if segment else "mentioned"


def _mark_lists(diagnosis: Diagnosis, mentions: list[Mention], truth: Truth) -> None:
    """`frontend, cart, checkout, ad, currency, ...`: a list of (half or more of) everything the
    application runs, bystanders included, blames none of them; four named culprits are blame."""
    application = sum(1 for c in truth.catalog if c.namespace in truth.namespaces)
    enough = max(LIST_OF_EVERYTHING, math.ceil(application / 2))
    by_segment: dict[int, list[Mention]] = {}
    for mention in mentions:
        segment = segment_of(diagnosis, mention.start)
        if segment is not None:
            by_segment.setdefault(id(segment), []).append(mention)
    for group in by_segment.values():
        distinct = {names.canonical(m.component.name) for m in group}
        others = {names.canonical(m.component.name) for m in group if not m.origin}
        if len(distinct) >= enough and len(others) >= 2 and _comma_list(diagnosis.low, group):
            for mention in group:
                mention.role = "listed"


def _comma_list(low: str, group: list[Mention]) -> bool:
    gaps = [low[a.start + len(token_at(low, a.start)) : b.start] for a, b in pairwise(group)]
    coordinated = sum(1 for gap in gaps if COORDINATED.match(gap))
    return coordinated >= LIST_OF_EVERYTHING - 1


def _foreign(diagnosis: Diagnosis, truth: Truth, start: int) -> bool:
    """Named in a namespace other than the truth's (stated beside it or in its clause)."""
    if not truth.namespaces:
        return False
    known = {ns.lower() for ns in truth.namespaces}
    token_end = start + len(token_at(diagnosis.low, start))
    beside = names.prefixed_namespace(
        diagnosis.low, start, diagnosis.text
    ) or names.suffixed_namespace(diagnosis.low, token_end)
    if beside:
        return beside not in known
    segment = segment_of(diagnosis, start)
    if segment is None:
        return False
    low = diagnosis.low
    first = max(segment.start, start - NAMESPACE_REACH)
    last = min(segment.end, token_end + NAMESPACE_REACH)
    while first > segment.start and low[first - 1] in _NAME_CHARS:
        first -= 1  # never read a namespace cut in two (`namespace=hotel` of `hotel-reservation`)
    while last < segment.end and low[last] in _NAME_CHARS:
        last += 1
    stated = names.stated_namespaces(low[first:last])
    return bool(stated) and not stated & known


def _catalog_keys(truth: Truth) -> frozenset[str]:
    """Every `names.keys` of the catalog, gathered once per truth: a component shares one with
    them exactly when it is the `same` as one of its components."""
    return truth.memo(
        "catalog.keys", lambda: frozenset(k for c in truth.catalog for k in names.keys(c))
    )


def _catalog_searchers(truth: Truth) -> list[names.Searcher]:
    """`names.find`'s searcher of each catalog component, made once per truth."""
    return truth.memo("catalog.searchers", lambda: [names.searcher(c) for c in truth.catalog])


def _unknown_components(diagnosis: Diagnosis, truth: Truth, known: list[Mention]) -> list[Mention]:
    """Components the catalog does not know, blamed by name (`deployment/nginx-proxy`)."""
    found = []
    known_starts = {m.start for m in known}
    namespaces = {ns.lower() for ns in truth.namespaces}
    for match in CANDIDATE.finditer(diagnosis.low):
        name = next(g for g in match.groups() if g)
        start = match.start(match.lastindex or 0)
        if start in known_starts or name in namespaces or ":" in name or name in {"all", "*"}:
            continue
        ref = ComponentRef(name=name)
        if names.keys(ref) & _catalog_keys(truth) or any(
            names.spans_of(name, searcher) for searcher in _catalog_searchers(truth)
        ):
            continue
        segment = segment_of(diagnosis, start)
        strong = bool(segment and segment.strong)
        found.append(
            Mention(
                ref,
                start,
                _role(diagnosis, start),
                _foreign(diagnosis, truth, start),
                strong=strong,
            )
        )
    return found
