"""Components in a spec's text: every mention of a component renamed in one pass, and the
other components of the same system one may be swapped for.

A mention is a component's name or alias (or either written without its `-`/`_`
separators, as agents and propagation chains do: `productcatalog`), matched without regard
to case and never inside a longer name: `geo` is not renamed inside `mongodb-geo`, while the
name part of a `Kind/Name` notation (`deployment/checkout`, `app/adservice`) is.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterable, Mapping, Sequence

from ground_truth.models import ComponentRef, IncidentSpec

_INSIDE = r"A-Za-z0-9_\-"
FALLBACK_COMPONENTS = (
    "inventory-service",
    "billing-db",
    "session-cache",
    "notification-worker",
    "gateway-proxy",
)
"""Made-up components of no benchmark, swapped in only when a set names no other component
of the system (a single spec with no affected components)."""


def names_of(component: ComponentRef) -> list[str]:
    """The ways a component is written: its name and aliases, each also without separators."""
    found: list[str] = []
    for name in component.all_names():
        for form in (name.strip(), re.sub(r"[-_\s]", "", name.strip())):
            if len(form) >= 2 and form.lower() not in {f.lower() for f in found}:
                found.append(form)
    return found


def _pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    longest_first = sorted({n for n in names if n}, key=lambda n: (-len(n), n))
    if not longest_first:
        return None
    alternatives = "|".join(re.escape(n) for n in longest_first)
    return re.compile(rf"(?<![{_INSIDE}])(?:{alternatives})(?![{_INSIDE}])", re.IGNORECASE)


def mentions(text: str, components: Sequence[ComponentRef]) -> int:
    """How many times `text` mentions any of `components`."""
    pattern = _pattern(n for c in components for n in names_of(c))
    return 0 if pattern is None else len(pattern.findall(text))


def rename(text: str, renames: Mapping[str, str]) -> tuple[str, int]:
    """`text` with every mention of each key (any case) replaced by its value, in one pass
    (so a new name is never renamed again); and how many mentions were replaced. A mention
    written with a capital first letter keeps it."""
    lowered = {old.lower(): new for old, new in renames.items()}
    pattern = _pattern(renames)
    if pattern is None:
        return text, 0

    def replace(match: re.Match[str]) -> str:
        new = lowered[match.group(0).lower()]
        return new[:1].upper() + new[1:] if match.group(0)[:1].isupper() else new

    return pattern.subn(replace, text)


def renames_for(originals: Sequence[ComponentRef], new: Sequence[str]) -> dict[str, str]:
    """Each way of writing the i-th original component mapped to the i-th new name (the last
    new name when there are more originals than new names)."""
    mapping: dict[str, str] = {}
    for index, component in enumerate(originals):
        for name in names_of(component):
            mapping.setdefault(name, new[min(index, len(new) - 1)])
    return mapping


def system_of(spec: IncidentSpec) -> str:
    """Which system a spec's incident happened in: its fault origin's namespace, else the set
    as a whole (specs with no namespace are taken as one system)."""
    for component in spec.fault_origin:
        if component.namespace:
            return component.namespace.lower()
    return ""


def components_of(spec: IncidentSpec) -> list[ComponentRef]:
    """Every component a spec names: origins, contributing, affected and distractors."""
    return [
        *spec.fault_origin,
        *spec.contributing_components,
        *spec.affected_components,
        *spec.distractors,
    ]


def involved(spec: IncidentSpec) -> set[str]:
    """The lowercase names and aliases of every component a spec names."""
    return {n.lower() for c in components_of(spec) for n in names_of(c)}


def seeded(seed: int, *parts: str) -> random.Random:
    """A random generator for one choice, the same for the same seed and parts on any run
    (Python's `hash` of a string changes between processes; a digest does not)."""
    digest = hashlib.sha256("\x00".join([str(seed), *parts]).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def other_components(
    spec: IncidentSpec, systems: Mapping[str, list[IncidentSpec]], seed: int, count: int = 1
) -> tuple[list[str], str]:
    """Up to `count` names of components of the spec's system that are not its fault origin,
    chosen with `seed`, and which tier they came from. Preferred: the fault origins and
    victims of the system's other specs that this spec does not name (healthy here), of the
    origin's kind when both say; then any of those; then any component of the system that is
    not an origin here (this spec's victims and distractors among them); then made-up names."""
    origin = {n.lower() for c in spec.fault_origin for n in names_of(c)}
    mentioned = involved(spec)
    kinds = {c.kind.lower() for c in spec.fault_origin if c.kind}
    others = [other for other in systems.get(system_of(spec), []) if other.id != spec.id]
    culprits = [c for o in others for c in (*o.fault_origin, *o.affected_components)]
    everything = [*components_of(spec), *(c for o in others for c in components_of(o))]
    tiers = [
        (
            "the system's other origins and victims, of the same kind",
            [c for c in culprits if _clear(c, mentioned) and _same_kind(c, kinds)],
        ),
        ("the system's other origins and victims", [c for c in culprits if _clear(c, mentioned)]),
        ("the system's components but the origin", [c for c in everything if _clear(c, origin)]),
        (
            "made-up components",
            [c for n in FALLBACK_COMPONENTS if _clear(c := ComponentRef(name=n), mentioned)],
        ),
    ]
    rng = seeded(seed, spec.id, "component")
    for tier, components in tiers:
        unique = sorted({c.name for c in components}, key=str.lower)
        if unique:
            rng.shuffle(unique)
            return unique[:count], tier
    return [], ""


def _same_kind(component: ComponentRef, kinds: set[str]) -> bool:
    return not kinds or component.kind is None or component.kind.lower() in kinds


def _clear(component: ComponentRef, taken: set[str]) -> bool:
    """Whether none of the component's names is among `taken`."""
    return not any(n.lower() in taken for n in names_of(component))
