"""Biases planted in the fake provider's judge on purpose, so that `judge audit` can be shown to
find each of them (and to raise no alarm on a judge without them).

Each switch changes the answers the base policy gave, in this order:

- `yes_first=K`: Yes only to the first K questions in prompt order (the `Question ids:` line);
  the rest No (position bias);
- `yes_min_chars=N`: Yes only when the diagnosis has at least N characters (verbosity bias);
- `no_diagnosis_first`: No to every question when the diagnosis comes before the ground truth
  in the prompt (anchoring on the order of the two);
- `yes_family=WORD`: Yes to every question when the prompt names WORD, a model family such as
  `gpt` (self-preference, with the author's name standing in for its style);
- `flip_rate=P`: each answer flipped with probability P, drawn from the fake's seed, the
  request's seed and temperature, the prompt and the question, so the same request gets the same
  answers and a request with another seed gets fresh draws (run-to-run noise).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judge.testing.answers import diagnosis_match, diagnosis_text, last_user_text

GROUND_TRUTH_HEADING = "# Ground truth"


class PlantedBiases(BaseModel):
    """Which biases the fake's judge has (none by default); see the module docstring."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    yes_first: int | None = Field(None, ge=0)
    yes_min_chars: int | None = Field(None, ge=0)
    no_diagnosis_first: bool = False
    yes_family: str | None = Field(None, min_length=1)
    flip_rate: float = Field(0.0, ge=0.0, le=1.0)

    @property
    def any(self) -> bool:
        return self != PlantedBiases()


def apply_biases(
    answers: list[dict[str, str]],
    messages: Sequence[dict[str, Any]],
    biases: PlantedBiases,
    seed: int,
    request: dict[str, Any] | None = None,
) -> list[dict[str, str]]:
    """`answers` (in the order of the prompt's `Question ids:` line) as a judge with `biases`
    gives them; `request` is the request body (its `seed` and `temperature` enter the flips)."""
    if not biases.any:
        return answers
    text = last_user_text(messages)
    verdicts = [a["answer"] for a in answers]
    if biases.yes_first is not None:
        verdicts = [v if i < biases.yes_first else "No" for i, v in enumerate(verdicts)]
    if biases.yes_min_chars is not None and len(diagnosis_text(text)) < biases.yes_min_chars:
        verdicts = ["No"] * len(verdicts)
    if biases.no_diagnosis_first and diagnosis_first(text):
        verdicts = ["No"] * len(verdicts)
    if biases.yes_family is not None and names_family(text, biases.yes_family):
        verdicts = ["Yes"] * len(verdicts)
    if biases.flip_rate > 0:
        draw = _Draws(seed, request or {}, text)
        verdicts = [
            _other(v) if draw(a["id"]) < biases.flip_rate else v
            for a, v in zip(answers, verdicts, strict=True)
        ]
    return [{**a, "answer": v} for a, v in zip(answers, verdicts, strict=True)]


def diagnosis_first(text: str) -> bool:
    """Whether the fenced diagnosis starts before the ground truth's heading."""
    match = diagnosis_match(text)
    truth = text.find(GROUND_TRUTH_HEADING)
    return match is not None and truth >= 0 and match.start() < truth


def names_family(text: str, family: str) -> bool:
    """Whether `text` names `family` as a word start (`gpt` in `gpt-4o`, not in `chatgpt`)."""
    return re.search(rf"(?<![a-z0-9]){re.escape(family)}", text, re.IGNORECASE) is not None


def _other(verdict: str) -> str:
    return "No" if verdict == "Yes" else "Yes"


class _Draws:
    """Uniform draws in [0, 1) per question for one request."""

    def __init__(self, seed: int, request: dict[str, Any], text: str):
        sent = f"{request.get('seed')}|{request.get('temperature')}"
        self.prefix = f"{seed}\x1f{sent}\x1f{text}"

    def __call__(self, question_id: str) -> float:
        digest = hashlib.sha256(f"{self.prefix}\x1f{question_id}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64
