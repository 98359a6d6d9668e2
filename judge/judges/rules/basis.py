"""What an answer of the rules judge rests on, kept beside it.

A rule's Yes or No is as strong as what it found: the origin named exactly or only as one of its
pods, blamed in so many words or inferred from a failing component, a fault type read from a
headline or from anywhere in the text, a ground truth read from its own fields or guessed from
its prose. `Basis` keeps that per answer so that a confidence in [0, 1] can be derived from it
later; the stored `Judgment` does not carry it yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ...checklist.judgment import QuestionAnswer
from .truth import Reading

# How the component an answer turns on was found in the diagnosis: under its own name, another
# spelling (`user-svc`), one of its instances (`cartservice-0` for `cartservice`), the service
# of the instance the truth names (`shippingservice` for `shippingservice-1`), or not at all.
NameMatch = Literal["exact", "alias", "instance", "container", "none"]
# How the diagnosis states what decides the answer: in so many words (a cause cue, a
# hypothesis' headline), implied (a clause that names a mechanism), inferred (a failing
# component, a cause naming no component), only mentioned, or not at all.
Claim = Literal["explicit", "implied", "inferred", "mention", "none"]


@dataclass(frozen=True)
class Basis:
    """The strength of what one answer rests on (see the module docstring)."""

    truth: Reading = "structured"
    name: NameMatch = "none"
    claim: Claim = "none"
    conflicting: bool = False
    cut: bool = False


@dataclass(frozen=True)
class Ruling:
    """A rule's answer to one question, with what it rests on."""

    answer: QuestionAnswer
    basis: Basis = field(default_factory=Basis)
