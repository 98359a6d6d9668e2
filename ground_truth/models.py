"""The two models everything downstream works with: `IncidentSpec` and `Submission`.

Format adapters turn benchmark files into these; nothing after loading knows a file format.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .reading import whole_characters

_UNSEEN = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf"})
"""Unicode categories that print as nothing: spaces, separators, controls, format characters
(a zero-width space, a word joiner)."""


def readable_id(value: Any) -> Any:
    """`value`, refused when it is text made only of whitespace or invisible characters: such
    an id would be printed as an empty column, and no one could name it back."""
    if isinstance(value, str) and value and all(unicodedata.category(c) in _UNSEEN for c in value):
        raise ValueError(f"{value!r} is only whitespace or invisible characters: expected an id")
    return value


class ComponentRef(BaseModel):
    """A component of the system under test: a service, deployment, pod, node, CronJob, ...

    `name` is the bare name (`checkout`); `kind` and `namespace` are optional qualifiers
    (`Deployment`, `astronomy-shop`); `aliases` are other names people use for it
    (`checkoutservice`, `checkout-svc`).
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    kind: str | None = None
    namespace: str | None = None
    aliases: list[str] = Field(default_factory=list)

    @classmethod
    def coerce(cls, value: Any) -> Any:
        """Accept a plain string (`checkout`, `deployment/checkout`, `ns/Kind/name`)."""
        if isinstance(value, str):
            return parse_component_string(value).model_dump()
        return value

    def all_names(self) -> list[str]:
        return [self.name, *self.aliases]


def parse_component_string(text: str, namespace: str | None = None) -> ComponentRef:
    """Parse `name`, `kind/name` or `namespace/Kind/name` into a `ComponentRef`."""
    parts = [p.strip() for p in text.strip().split("/") if p.strip()]
    if len(parts) >= 3:
        return ComponentRef(namespace=parts[0], kind=parts[1], name="/".join(parts[2:]))
    if len(parts) == 2:
        return ComponentRef(kind=parts[0], name=parts[1], namespace=namespace)
    return ComponentRef(name=parts[0] if parts else text.strip(), namespace=namespace)


def _coerce_components(value: Any) -> Any:
    if value is None:
        return []
    if isinstance(value, (str, dict)):
        value = [value]
    if not isinstance(value, list):
        return value  # left for validation to refuse, naming the field (`3` is no component)
    return [ComponentRef.coerce(v) for v in value]


class IncidentSpec(BaseModel):
    """The ground truth of one incident.

    `ground_truth` is the natural-language text a judge is shown (for SREGym, the exact
    `[fault_spec] component=...; namespace=... || description` string). The structured fields
    are what the offline `rules` judge and the resolution checks reason over; any of them may be
    empty, in which case a question that needs it is left unscored rather than answered No.
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    ground_truth: str = Field(min_length=1)
    fault_origin: list[ComponentRef] = Field(
        default_factory=list,
        description="Where the fault originated (several for correlated faults).",
    )
    mechanism: str | None = Field(None, description="What went wrong, in a phrase.")
    mechanism_keywords: list[str] = Field(
        default_factory=list,
        description="Terms that characterise the mechanism; `a|b` lists alternative spellings.",
    )
    problem_class: str | None = None
    parameters: dict[str, Any] = Field(
        default_factory=dict,
        description="Injected parameters (ports, env var names, image tags, ...).",
    )
    contributing_components: list[ComponentRef] = Field(default_factory=list)
    affected_components: list[ComponentRef] = Field(default_factory=list)
    symptoms: list[str] = Field(
        default_factory=list, description="Observable symptoms; `a|b` lists alternative spellings."
    )
    distractors: list[ComponentRef] = Field(
        default_factory=list, description="Components that look unhealthy but are not the cause."
    )
    expected_fix: str | None = None
    source: dict[str, Any] = Field(
        default_factory=dict, description="Where the spec came from (format, file, attribution)."
    )
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Format-specific data kept for later stages."
    )

    @field_validator(
        "fault_origin",
        "contributing_components",
        "affected_components",
        "distractors",
        mode="before",
    )
    @classmethod
    def _components(cls, value: Any) -> Any:
        return _coerce_components(value)

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        return readable_id(str(value) if isinstance(value, int) else value)

    @field_validator("parameters", "extra", mode="before")
    @classmethod
    def _bounded_depth(cls, value: Any) -> Any:
        """Free-form data is walked recursively later (the rules judge flattens `parameters`):
        refuse nesting that would end in a RecursionError, however the spec was built."""
        from .reading import MAX_DEPTH, nesting_depth

        if nesting_depth(value) > MAX_DEPTH:
            raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
        return value

    @model_validator(mode="after")
    def _origin_from_fault_spec(self) -> IncidentSpec:
        """A SREGym `[fault_spec] component=...; namespace=...` string names the origin."""
        if not self.fault_origin:
            from .fault_spec import parse_fault_spec

            parsed = parse_fault_spec(self.ground_truth)
            if parsed:
                self.fault_origin = parsed[0]
        return self


class Entity(BaseModel):
    """A structured root-cause entity an agent named (ITBench `entities[]` and the like)."""

    model_config = ConfigDict(extra="allow")

    name: str
    kind: str | None = None
    namespace: str | None = None
    contributing_factor: bool | None = None
    reasoning: str | None = None
    evidence: str | None = None
    raw: str | None = Field(
        None, description="The name as the agent wrote it, when `name` was parsed out of it."
    )
    rank: int | None = Field(None, description="1-based position in the agent's ranked list.")
    fault_type: str | None = Field(None, description="The fault the agent blamed on this entity.")


class Action(BaseModel):
    """One step of a simulator trajectory."""

    model_config = ConfigDict(extra="allow")

    step: int | None = None
    raw: str | None = Field(None, description="The action as the agent wrote it.")
    tool: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    accepted: bool | None = Field(None, description="Whether the simulator accepted the action.")
    observation: str | None = None


class Trajectory(BaseModel):
    """What an agent did in a simulator, in order, and how the simulator ended."""

    model_config = ConfigDict(extra="allow")

    actions: list[Action] = Field(default_factory=list)
    final_state: dict[str, Any] = Field(default_factory=dict)
    metrics: dict[str, Any] = Field(
        default_factory=dict, description="Metrics the simulator itself recorded, if any."
    )


class Submission(BaseModel):
    """One agent's answer for one incident in one trial."""

    model_config = ConfigDict(extra="forbid")

    incident_id: str = Field(min_length=1)
    trial: str = "1"
    diagnosis: str
    agent: str | None = None
    agent_model: str | None = Field(
        None,
        description="The model behind the agent, where its output names one (SREGym traces, "
        "SRE-Zero and AIOpsLab runs): a judge of the same family may favour it.",
    )
    entities: list[Entity] | None = None
    trajectory: Trajectory | None = None
    source: dict[str, Any] = Field(default_factory=dict)

    @field_validator("incident_id", "trial", mode="before")
    @classmethod
    def _as_text(cls, value: Any) -> Any:
        return readable_id(whole_characters(str(value) if isinstance(value, int) else value))

    @field_validator("diagnosis", "agent", "agent_model")
    @classmethod
    def _whole_characters(cls, value: Any) -> Any:
        return whole_characters(value)

    @property
    def key(self) -> tuple[str, str]:
        return (self.incident_id, self.trial)
