"""A mechanism of another fault family, for the probe that keeps the fault origin and swaps
what went wrong with it.

The families are the rules judge's (`judge.judges.rules.taxonomy`, read through its public
names): a spec's families are those its mechanism, problem class, keywords and ground truth
name; the swapped-in mechanism is one whose family, and the family's group, the spec names
nowhere, so no reading of the ground truth makes the two the same fault.
"""

from __future__ import annotations

from ground_truth.models import IncidentSpec

from ..judges.rules import taxonomy
from .components import seeded

WORKLOAD, CONFIG, NODE, NAMESPACE = "workload", "config", "node", "namespace"
SWAPS: dict[str, tuple[str, frozenset[str]]] = {
    "memory": (
        "{c} has its memory limit set far too low (32Mi), so its container is OOMKilled and "
        "restarts in a loop.",
        frozenset({WORKLOAD}),
    ),
    "image": (
        "{c} was changed to reference a container image tag that does not exist "
        "(v0.0.0-missing), so the pods that use it are stuck in ImagePullBackOff.",
        frozenset({WORKLOAD, CONFIG}),
    ),
    "dns": (
        "{c}'s pods were given a wrong DNS policy, so they cannot resolve any service hostname.",
        frozenset({WORKLOAD}),
    ),
    "scheduling": (
        "{c}'s pods carry a nodeSelector for a node that does not exist, so the scheduler "
        "leaves them Pending.",
        frozenset({WORKLOAD}),
    ),
    "auth": (
        "The credentials in {c} were revoked, so every login made with them fails with an "
        "authentication error.",
        frozenset({WORKLOAD, CONFIG}),
    ),
    "code": (
        "A code bug in {c}'s latest release throws a NullPointerException on every request "
        "it serves.",
        frozenset({WORKLOAD}),
    ),
    "disk_space": (
        "The disk under {c} is full, so its writes fail with no space left on device.",
        frozenset({WORKLOAD, NODE}),
    ),
    "cpu": (
        "{c} is starved of CPU: a stress process pins its cores at 100% CPU usage, so its "
        "requests time out.",
        frozenset({WORKLOAD, NODE}),
    ),
    "packet_loss": (
        "Packet loss of 40% was injected on {c}, so calls to and from it time out.",
        frozenset({WORKLOAD, NODE, NAMESPACE}),
    ),
    "network_policy": (
        "A NetworkPolicy denies all ingress traffic to {c}, so no other service can connect to it.",
        frozenset({WORKLOAD, NAMESPACE}),
    ),
}
"""Per fault family, a mechanism sentence (`{c}` stands for the component) and the kinds of
component it can be said of (`kind_class`). Each sentence names its own family and no other
(`tests/selftest/test_selftest_probes.py` checks it against the taxonomy)."""


_CLASSES = {
    NODE: {"node", "host", "machine", "vm"},
    NAMESPACE: {"namespace", "ns"},
    CONFIG: {
        "configmap",
        "secret",
        "role",
        "clusterrole",
        "rolebinding",
        "clusterrolebinding",
        "serviceaccount",
        "resourcequota",
        "limitrange",
        "networkpolicy",
        "ingress",
        "persistentvolumeclaim",
        "storageclass",
        "customresourcedefinition",
        "mutatingwebhookconfiguration",
        "validatingwebhookconfiguration",
    },
}


def kind_class(kind: str | None) -> str:
    """What a component is, for the mechanisms that can be said of it: a node, a namespace,
    a configuration object (ConfigMap, Secret, RBAC, quota, ...), or a workload (anything
    else, and a component of no stated kind)."""
    lowered = (kind or "").lower().replace(" ", "")
    for cls, kinds in _CLASSES.items():
        if lowered in kinds or (lowered.endswith("s") and lowered[:-1] in kinds):
            return cls
    return WORKLOAD


def spec_text(spec: IncidentSpec) -> str:
    """Everything a spec says about its fault, lowercased."""
    parts = [spec.ground_truth, spec.mechanism or "", spec.problem_class or ""]
    parts += [k.replace("|", " ") for k in spec.mechanism_keywords]
    return "\n".join(parts).lower()


def families_of(spec: IncidentSpec) -> tuple[set[str], set[str]]:
    """The fault families a spec names (by their terms or only by their area), and their
    groups together with the groups it names only vaguely."""
    text = spec_text(spec)
    families = taxonomy.families_in(text) | taxonomy.categories_in(text)
    groups = {taxonomy.FAMILY[f].group for f in families} | taxonomy.generic_groups_in(text)
    return families, groups


def swap_family(spec: IncidentSpec, seed: int) -> str | None:
    """A family of `SWAPS` that can be said of the spec's first fault origin and that neither
    the spec's families, their neighbours nor their groups include, chosen with `seed`; None
    when every one is too close."""
    families, groups = families_of(spec)
    fits = kind_class(spec.fault_origin[0].kind if spec.fault_origin else None)
    far = [
        name
        for name, (_, kinds) in sorted(SWAPS.items())
        if fits in kinds
        and name not in families
        and taxonomy.FAMILY[name].group not in groups
        and not any(taxonomy.compatible(name, {f}) for f in families)
    ]
    if not far:
        return None
    return seeded(seed, spec.id, "mechanism").choice(far)
