"""What a judge is, for a calibration: what changes its answers and the meaning of its scores.

A calibration file holds a map and a threshold per judge, and they are only true of that
judge: the same model at another temperature, with another reply order, or asked one dimension
at a time instead of a whole submission at once answers differently. `identity_of` reads it
from a judge's `describe()` (or a result's `config.judge`, which is that plus `label`) and the
run's granularity. It leaves out what does not change an answer: timeouts, retries, the
endpoint and the reply format the server settled on. Token log-probabilities change what a
score means: an llm judge that did not ask for them (`--confidence stated`, the default since
they became optional) is marked `confidence: stated`, so a cascade, whose stages ask for them,
refuses a calibration fitted on stated levels; a judge that asked, and results made before
they were optional, carry no mark.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, Field

NOT_ANSWER_CHANGING = frozenset(
    {
        "timeout",
        "max_reasks",
        "max_retries",
        "max_rate_limit_retries",
        "retry_wait",
    }
)
GRANULARITY_FREE = frozenset({"rules"})
"""Judges that answer the same whichever granularity the run asks at."""


class JudgeIdentity(BaseModel):
    """A judge as a calibration knows it."""

    name: str = Field(description="The name its answers carry (`rules`, `llm:openai/gpt-4o`).")
    kind: str | None = Field(None, description="`rules`, `llm`, `panel`, or a judge's own.")
    model: str | None = None
    params: dict[str, Any] = Field(
        default_factory=dict, description="The parameters that change its answers."
    )
    granularity: str | None = Field(
        None, description="dimension or submission; None for a judge indifferent to it."
    )

    @property
    def key(self) -> str:
        """A short hash of the identity."""
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def differences(self, other: JudgeIdentity) -> list[str]:
        """The fields in which `other` differs, as `field: ours != theirs`."""
        ours, theirs = self.model_dump(mode="json"), other.model_dump(mode="json")
        return [
            f"{name}: {ours[name]!r} != {theirs[name]!r}"
            for name in ours
            if ours[name] != theirs[name]
        ]


def identity_of(
    description: dict[str, Any], name: str | None = None, granularity: str | None = None
) -> JudgeIdentity:
    """The identity of the judge `description` describes (`judge.describe()`, or a result's
    `config.judge`), named `name` (default: the description's `label`, else its `name`)."""
    kind = description.get("name")
    params = {
        key: value
        for key, value in (description.get("params") or {}).items()
        if key not in NOT_ANSWER_CHANGING
    }
    if description.get("reply_order") is not None:
        params["reply_order"] = description["reply_order"]
    if kind == "llm" and description.get("logprobs") is False:
        params["confidence"] = "stated"
    members = description.get("members")
    if members:
        params["members"] = [
            identity_of(m, m.get("member"), granularity).model_dump(mode="json") for m in members
        ]
    label = name or description.get("label") or kind or "judge"
    return JudgeIdentity(
        name=str(label),
        kind=None if kind is None else str(kind),
        model=description.get("model"),
        params=json.loads(json.dumps(params, default=str)),
        granularity=None if kind in GRANULARITY_FREE else granularity,
    )
