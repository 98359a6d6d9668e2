"""Components in a spec's text: every mention of a component renamed in one pass, and the
other components of the same system one may be swapped for.

A mention is a component's name or alias, also written without its `-`/`_` separators or
with spaces for them (`productcatalog`, `product catalog`), and with a conventional suffix
(`user-service`, `checkoutsvc`, a pod's `-7d9f8b6c4-x2x9z`); matched without regard to case
and never inside a longer name: `geo` is not renamed inside `mongodb-geo`, while the name part
of a `Kind/Name` notation (`deployment/checkout`, `app/adservice`) is. A name of several words
is also written by its first word alone, where no other component of its system has that word,
as the name of what one reads of a component: `Web logs show ...`, `Web TIMEOUT_MS is too low`,
`the web tier` of `web_server` (its short form; `oldest message age` is no `message_queue`).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterable, Mapping, Sequence

from ground_truth.models import ComponentRef, IncidentSpec

_INSIDE = r"A-Za-z0-9_\-"
_SUFFIX = r"(?:[-_]?(?:service|svc|deployment|deploy|pod|server))?(?:-[a-z0-9]{6,10}-[a-z0-9]{5})?"
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
    """The ways a component is written: its name and aliases, each also without separators
    and with spaces for them; only forms of two characters or more with a letter."""
    found: list[str] = []
    for name in (n.strip() for n in component.all_names()):
        for form in (name, re.sub(r"[-_\s]", "", name), re.sub(r"[-_\s]+", " ", name)):
            usable = len(form) >= 2 and re.search(r"[A-Za-z]", form)
            if usable and form.lower() not in {f.lower() for f in found}:
                found.append(form)
    return found


_READ_OF = (
    r"logs?|metrics?|status|config(?:uration)?|settings?|tier|workers?|pods?|containers?"
    r"|instances?|replicas?|process(?:es)?|health|(?-i:[A-Z][A-Z0-9]*_[A-Z0-9_]+)"
)
"""What one reads of a component, written after its short form (`Web logs`, `Web TIMEOUT_MS`)."""


def short_forms(component: ComponentRef, system: Sequence[ComponentRef]) -> list[str]:
    """The first word of the component's names of several words (`web` of `web_server` and
    `web server`), when it is a name of three characters or more and no other component of
    `system` (a component named otherwise) has that word in a name."""
    own = {_squeezed(n) for n in component.all_names()}
    taken = {
        word
        for other in system
        if not own & {_squeezed(n) for n in other.all_names()}
        for name in other.all_names()
        for word in _words(name)
    }
    found: list[str] = []
    for name in component.all_names():
        words = _words(name)
        first = words[0] if len(words) > 1 else ""
        usable = len(first) >= 3 and re.search(r"[a-z]", first) and first not in taken
        if usable and first not in found:
            found.append(first)
    return found


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[-_\s.]+", name.strip().lower()) if w]


def _squeezed(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _pattern(names: Iterable[str], short: Iterable[str] = ()) -> re.Pattern[str] | None:
    """Any of `names`, or of the `short` forms followed by what one reads of a component."""
    longest_first = sorted({n for n in names if n}, key=lambda n: (-len(n), n))
    shorts = sorted({n for n in short if n} - set(longest_first), key=lambda n: (-len(n), n))
    if not longest_first and not shorts:
        return None
    alternatives = "|".join(
        [re.escape(n).replace(r"\ ", r"\s+") for n in longest_first]
        + [rf"{re.escape(n)}(?=\s+(?:{_READ_OF})(?![{_INSIDE}]))" for n in shorts]
    )
    return re.compile(
        rf"(?<![{_INSIDE}])(?P<name>{alternatives}){_SUFFIX}(?![{_INSIDE}])", re.IGNORECASE
    )


def mentions(text: str, components: Sequence[ComponentRef]) -> int:
    """How many times `text` mentions any of `components`."""
    pattern = _pattern(n for c in components for n in names_of(c))
    return 0 if pattern is None else len(pattern.findall(text))


def rename(
    text: str, renames: Mapping[str, str], short: Mapping[str, str] | None = None
) -> tuple[str, int]:
    """`text` with every mention of each key (any case) replaced by its value, in one pass
    (so a new name is never renamed again), and of each `short` form where it names a
    component; and how many mentions were replaced. A mention written with a capital first
    letter keeps it."""
    short = short or {}
    lowered = {_spaced(old): new for old, new in {**short, **renames}.items()}
    pattern = _pattern(renames, short)
    if pattern is None:
        return text, 0

    def replace(match: re.Match[str]) -> str:
        new = lowered[_spaced(match.group("name"))]
        return new[:1].upper() + new[1:] if match.group(0)[:1].isupper() else new

    return pattern.subn(replace, text)


def _spaced(name: str) -> str:
    return re.sub(r"\s+", " ", name.lower())


def renames_for(
    originals: Sequence[ComponentRef],
    new: Sequence[str],
    system: Sequence[ComponentRef] | None = None,
) -> dict[str, str]:
    """Each way of writing the i-th original component mapped to the i-th new name (the last
    new name when there are more originals than new names); given the components of their
    `system`, each short form instead (for `rename`'s `short`)."""
    mapping: dict[str, str] = {}
    for index, component in enumerate(originals):
        forms = names_of(component) if system is None else short_forms(component, system)
        for name in forms:
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
    chosen with `seed`, and which tier they came from. Never a component the spec's text
    already names, nor one whose name holds an origin's name or is held in it (`user` and
    `user-service`, `geo` and `mongodb-geo`: one may be the other, or read as it). Preferred:
    the fault origins and victims of the system's other specs, of the origin's kind when both
    say; then any of those; then any other component the system's specs name; then made-up
    names."""
    kinds = {c.kind.lower() for c in spec.fault_origin if c.kind}
    others = [other for other in systems.get(system_of(spec), []) if other.id != spec.id]
    culprits = [c for o in others for c in (*o.fault_origin, *o.affected_components)]
    everything = [*components_of(spec), *(c for o in others for c in components_of(o))]
    made_up = [ComponentRef(name=n) for n in FALLBACK_COMPONENTS]
    tiers = [
        (
            "the system's other origins and victims, of the same kind",
            [c for c in culprits if _same_kind(c, kinds)],
        ),
        ("the system's other origins and victims", culprits),
        ("the system's other components", everything),
        ("made-up components", made_up),
    ]
    rng = seeded(seed, spec.id, "component")
    picked: list[str] = []
    used: list[str] = []
    for tier, components in tiers:
        fresh = sorted({c.name for c in components if _fresh(c, spec)} - set(picked), key=str.lower)
        rng.shuffle(fresh)
        if fresh and len(picked) < count:
            picked += fresh[: count - len(picked)]
            used.append(tier)
    return picked, "; then ".join(used)


def _fresh(component: ComponentRef, spec: IncidentSpec) -> bool:
    """Whether `component` can stand in for the spec's origin: not named by the spec (its
    text or its components) and not confusable with an origin by its name."""
    if mentions(spec.ground_truth, [component]) or not _clear(component, involved(spec)):
        return False
    return not any(related(component, origin) for origin in spec.fault_origin)


def related(one: ComponentRef, other: ComponentRef) -> bool:
    """Whether a name of one, without separators, holds a name of the other."""
    squeeze = [re.sub(r"[^a-z0-9]", "", n.lower()) for n in one.all_names()]
    others = [re.sub(r"[^a-z0-9]", "", n.lower()) for n in other.all_names()]
    return any(a and b and (a in b or b in a) for a in squeeze for b in others)


def _same_kind(component: ComponentRef, kinds: set[str]) -> bool:
    return not kinds or component.kind is None or component.kind.lower() in kinds


def _clear(component: ComponentRef, taken: set[str]) -> bool:
    """Whether none of the component's names is among `taken`."""
    return not any(n.lower() in taken for n in names_of(component))
