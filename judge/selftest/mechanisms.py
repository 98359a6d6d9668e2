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

SWAPS: dict[str, str] = {
    "memory": "{c} has its memory limit set far too low (32Mi), so its container is OOMKilled "
    "and restarts in a loop.",
    "image": "{c} was rolled out with a container image tag that does not exist "
    "(v0.0.0-missing), so its pods are stuck in ImagePullBackOff.",
    "dns": "{c}'s pods were given a wrong DNS policy, so they cannot resolve any service hostname.",
    "scheduling": "{c}'s pods carry a nodeSelector for a node that does not exist, so the "
    "scheduler leaves them Pending.",
    "auth": "The database credentials {c} logs in with were revoked, so every login it makes "
    "fails with an authentication error.",
    "disk_space": "The disk under {c}'s data volume is full, so its writes fail with no space "
    "left on device.",
    "code": "A code bug in {c}'s latest release throws a NullPointerException on every "
    "request it serves.",
    "network_policy": "A NetworkPolicy denies all ingress traffic to {c}, so no other service "
    "can connect to it.",
}
"""One mechanism sentence per fault family, `{c}` standing for the component; each names its
own family and no other (`tests/test_selftest_probes.py` checks it against the taxonomy)."""


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
    """A family of `SWAPS` that neither the spec's families, their neighbours nor their groups
    include, chosen with `seed`; None when every one is too close."""
    families, groups = families_of(spec)
    far = [
        name
        for name in sorted(SWAPS)
        if name not in families
        and taxonomy.FAMILY[name].group not in groups
        and not any(taxonomy.compatible(name, {f}) for f in families)
    ]
    if not far:
        return None
    return seeded(seed, spec.id, "mechanism").choice(far)
