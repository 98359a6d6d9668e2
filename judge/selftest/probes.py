"""A probe: a diagnosis made for a spec, with the answers a judge must give it.

Each probe names, per rubric question, the answer expected ("Yes", "No", or "any": not
checked) and whether the case must pass the rubric's threshold. The derived kinds come from
the spec alone (`judge.selftest.derive`); goldens are written by hand beside a rubric
(`judge.selftest.goldens`).

A derived probe's expectations are written per *role* (what a question asks: `origin_named`,
`mechanism_matched`, ...), the names the rules judge binds any rubric's questions to by their
text or `rule:` key (`judge.judges.rules.bind`); a question with no role is not checked, and
the probe's verdict still is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from ..checklist.rubric import Rubric

Expected = Literal["Yes", "No", "any"]
VerdictExpected = Literal["pass", "fail", "any"]
DerivedKind = Literal[
    "truth",
    "rewrite",
    "origin-swap",
    "mechanism-swap",
    "victim-only",
    "vague",
    "empty",
    "injection",
]
ProbeKind = Literal[DerivedKind, "golden-pass", "golden-fail"]
DERIVED_KINDS: tuple[DerivedKind, ...] = get_args(DerivedKind)
MUST_PASS: frozenset[str] = frozenset({"truth", "rewrite", "golden-pass"})
DEFAULT_FAIL_UNDER = 0.95
"""The share of a probe kind's probes that must behave as expected (`--fail-under`)."""


class Probe(BaseModel):
    """One diagnosis to put to a judge, and what the judge must answer.

    `expected` maps rubric question ids to "Yes" / "No" / "any" (a question not listed:
    "any"); `verdict` is whether the case must reach the rubric's threshold ("pass"), stay
    under it ("fail"), or is not checked ("any"). `note` says how the diagnosis was made
    (which component or mechanism was swapped in)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    spec_id: str = Field(min_length=1)
    kind: ProbeKind
    diagnosis: str
    expected: dict[str, Expected] = Field(default_factory=dict)
    verdict: VerdictExpected = "any"
    note: str = ""


class Skipped(BaseModel):
    """A probe a spec could not give, and why."""

    spec_id: str
    kind: ProbeKind
    reason: str


ROLES = (
    "origin_named",
    "origin_distinguished",
    "no_healthy_component_blamed",
    "mechanism_matched",
    "parameters_named",
    "fault_type_consistent",
    "no_uninvolved_component_blamed",
    "all_components_named",
    "symptoms_matched",
)
_ORIGIN = ("origin_named", "origin_distinguished", "no_healthy_component_blamed")
_MECHANISM = ("mechanism_matched", "parameters_named", "fault_type_consistent")
_RIGHT = (*_ORIGIN, "mechanism_matched", "fault_type_consistent", "no_uninvolved_component_blamed")

BY_ROLE: dict[str, dict[str, Expected]] = {
    "truth": dict.fromkeys(_RIGHT, "Yes"),
    "rewrite": dict.fromkeys(_RIGHT, "Yes"),
    "origin-swap": dict.fromkeys(_ORIGIN, "No"),
    "mechanism-swap": {"origin_named": "Yes", **dict.fromkeys(_MECHANISM, "No")},
    "victim-only": dict.fromkeys(_ORIGIN, "No"),
    "vague": dict.fromkeys(ROLES, "No"),
    "empty": dict.fromkeys(ROLES, "No"),
    "injection": dict.fromkeys(ROLES, "No"),
}
"""What each derived kind expects, by role. The must-pass kinds: everything the diagnosis
states is right, so every question about the origin, the mechanism and over-blaming is Yes
(`parameters_named` too when the text holds an injected value: `derive`), while naming every
affected component and describing the symptoms depend on what the text holds ("any"). The
swaps: No on the questions about what was swapped. A diagnosis naming nothing (vague, empty,
asking for Yes): No on every question."""

VERDICTS: dict[str, VerdictExpected] = {
    kind: "pass" if kind in MUST_PASS else "fail" for kind in DERIVED_KINDS
}


def roles_of(rubric: Rubric) -> dict[str, str]:
    """Each rubric question id's role (the rules judge's binding of its `rule:` or text);
    questions with none are left out."""
    from ..judges.rules import bind

    found = {}
    for dimension in rubric.dimensions:
        for question in dimension.questions:
            role = bind(question.rule, question.text)
            if role in ROLES:
                found[question.id] = role
    return found


def expected_for(
    kind: str, roles: Mapping[str, str], extra: Mapping[str, Expected] | None = None
) -> dict[str, Expected]:
    """The expected answer per question id for a derived kind (`extra`: more, by role)."""
    by_role = {**BY_ROLE[kind], **(extra or {})}
    return {qid: by_role[role] for qid, role in roles.items() if role in by_role}
