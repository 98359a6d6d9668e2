"""What a judge says about one (submission, dimension): an answer per question, or why not."""

from __future__ import annotations

from types import UnionType
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, Field

Answer = Literal["Yes", "No"]
BELOW_GUARANTEE = "below_guarantee"
"""The start of the reason a cascade gives a question no judge was sure enough of."""
Confidence = Literal["High", "Medium", "Low"]
CONFIDENCE_SCORE = (
    "The judge's own confidence in this answer in [0, 1] (rules: the strength of what it found; "
    "llm: the Yes/No token's probability, the share of k samples that agree, or the stated "
    "level; panel: its members' combined). A score, not a probability, until `judge "
    "calibrate` maps it to the chance of agreeing with the labels. None: the judge gave none."
)


class QuestionAnswer(BaseModel):
    """One question's answer. `answer is None` means unscored, and `unscored_reason` says why."""

    question_id: str
    answer: Answer | None = None
    evidence: str | None = None
    confidence: Confidence | None = None
    confidence_score: float | None = Field(None, ge=0.0, le=1.0, description=CONFIDENCE_SCORE)
    unscored_reason: str | None = None
    stage: str | None = Field(
        None, description="A cascade's answer: the name of the judge (stage) that gave it."
    )

    @property
    def scored(self) -> bool:
        return self.answer is not None


class Usage(BaseModel):
    """Tokens and cost of one judge call; None if the provider did not say or no price is known."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = Field(None, description="None when the model's price is unknown.")
    cached_tokens: int | None = Field(
        None,
        description="Prompt tokens the provider served from its prompt cache (part of "
        "prompt_tokens; OpenAI's prompt_tokens_details.cached_tokens, Anthropic's "
        "cache_read_input_tokens).",
    )
    cache_write_tokens: int | None = Field(
        None, description="Prompt tokens written to the provider's cache (Anthropic)."
    )


class JudgeIdentity(BaseModel):
    """Which model answered a call, as its provider said, so that two runs whose answers differ
    can be told apart: a new model version or backend configuration behind the same model name
    changes answers without changing any setting of ours."""

    model_version: str | None = Field(
        None, description="The model the reply names (`model`: often a dated version)."
    )
    system_fingerprint: str | None = Field(
        None, description="The provider's backend configuration (`system_fingerprint`), if sent."
    )
    seed: int | None = Field(None, description="The seed sent with the request, if one was.")

    @classmethod
    def of(
        cls, model: str | None, fingerprint: str | None, seed: int | None
    ) -> JudgeIdentity | None:
        """The identity a reply gives, None when there is nothing to say."""
        if model is None and fingerprint is None and seed is None:
            return None
        return cls(model_version=model, system_fingerprint=fingerprint, seed=seed)


class DimensionVerdict(BaseModel):
    """A judge's reply for one dimension of one case."""

    answers: list[QuestionAnswer]
    attempts: int = 1
    error: str | None = Field(None, description="Why the dimension is (partly) unscored, if it is.")
    error_kind: str | None = Field(
        None, description="rate_limit, timeout, server, auth, bad_request, unparseable, ..."
    )
    usage: Usage | None = None
    requests: int = Field(0, description="Provider requests sent, retries and re-asks included.")
    attempt_errors: dict[str, int] = Field(
        default_factory=dict,
        description="Failed requests or unusable replies by kind, including those retried.",
    )
    cached: bool = Field(False, description="Served from the store; no provider was asked.")
    members: dict[str, DimensionVerdict] | None = Field(
        None, description="For a panel: each member's own verdict, keyed by member name."
    )
    batch_id: str | None = Field(
        None, description="The provider batch job that answered it (`judge eval --batch`)."
    )
    identity: JudgeIdentity | None = Field(
        None, description="Which model answered, as the provider said (None: it said nothing)."
    )

    def answer_for(self, question_id: str) -> QuestionAnswer | None:
        return next((a for a in self.answers if a.question_id == question_id), None)


def unscored(
    question_ids: list[str], reason: str, kind: str, attempts: int = 1
) -> DimensionVerdict:
    """A verdict in which every question is unscored for the same reason (never No)."""
    answers = [QuestionAnswer(question_id=q, unscored_reason=reason) for q in question_ids]
    return DimensionVerdict(answers=answers, attempts=attempts, error=reason, error_kind=kind)


class Judgment(BaseModel):
    """One question's answer for one case, as stored in the result file.

    A result's `judgments` hold one per (case, question): the answer the run stands behind. A
    panel's members' and a cascade's stages' own answers are in its `member_judgments`."""

    incident_id: str
    trial: str
    dimension_id: str
    question_id: str
    answer: Answer | None
    evidence: str | None = None
    confidence: Confidence | None = None
    confidence_score: float | None = Field(None, ge=0.0, le=1.0, description=CONFIDENCE_SCORE)
    unscored_reason: str | None = None
    judge: str
    prompt_hash: str
    """The hash of the prompt the judge was asked (part of a stored answer's key); empty for a
    judge that reads no prompt (the rules judge renders none)."""
    identity: JudgeIdentity | None = None
    """Which model answered, as its provider said (model version, `system_fingerprint`, the
    seed sent); None for a judge that asks no provider, or a provider that said nothing."""
    stage: str | None = Field(
        None,
        description="A cascade's answer: the judge (stage) whose answer it kept; None for any "
        "other judge, and for a question no stage settled.",
    )
    abstained: bool = Field(
        False,
        description="A cascade left the question unscored because no judge's calibrated "
        "confidence reached its threshold (`below_guarantee`), not because a call failed.",
    )

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.incident_id, self.trial, self.question_id)


def abstained(answer: QuestionAnswer) -> bool:
    """Whether an unscored answer is a cascade's abstention (not a failure)."""
    return answer.answer is None and (answer.unscored_reason or "").startswith(BELOW_GUARANTEE)


_FULL_FIELD_SETS: dict[type[BaseModel], set[str]] = {}
_NESTING_FIELDS: dict[type[BaseModel], tuple[str, ...]] = {}
_PLAIN = (str, int, float, bool, type(None))
M = TypeVar("M", bound=BaseModel)


def compact(model: M) -> M:
    """`model`, and the models inside it, sharing one fields-set with every instance of their
    class that sets every field.

    pydantic gives each instance its own set of the fields it was given: 728 bytes for a
    `Judgment`, twice its own size, 65 MB over the 90,000 judgments of 10,000 submissions.
    Only a set naming every field is shared, so that assigning a field (which adds its name
    to the set) never changes what another instance reports as set.
    """
    cls = type(model)
    full = _full_set(cls)
    if model.__pydantic_fields_set__ == full:
        object.__setattr__(model, "__pydantic_fields_set__", full)
    values = model.__dict__
    for name in _nesting_fields(cls):
        value = values.get(name)
        if isinstance(value, BaseModel):
            compact(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, BaseModel):
                    compact(item)
    return model


def trusted(cls: type[M], **values: Any) -> M:
    """A `cls` made of values already validated (taken from validated models), every field
    given: what `model_construct` makes, ~4x cheaper than validating them again, and sharing
    the one full fields-set as `compact` would. The models inside are not compacted."""
    full = _full_set(cls)
    if values.keys() != full:
        raise TypeError(f"{cls.__name__} needs every field: {sorted(full ^ values.keys())}")
    model = cls.__new__(cls)
    object.__setattr__(model, "__dict__", values)
    object.__setattr__(model, "__pydantic_fields_set__", full)
    object.__setattr__(model, "__pydantic_extra__", None)
    object.__setattr__(model, "__pydantic_private__", None)
    return model


def _full_set(cls: type[BaseModel]) -> set[str]:
    full = _FULL_FIELD_SETS.get(cls)
    if full is None:
        full = _FULL_FIELD_SETS.setdefault(cls, set(cls.model_fields))
    return full


def _nesting_fields(cls: type[BaseModel]) -> tuple[str, ...]:
    """The fields of `cls` that can hold a model (or a list of them): every field but those
    typed with plain values only (strings, numbers, booleans, None, literals)."""
    names = _NESTING_FIELDS.get(cls)
    if names is None:
        names = tuple(n for n, f in cls.model_fields.items() if not _plain(f.annotation))
        _NESTING_FIELDS[cls] = names
    return names


def _plain(annotation: Any) -> bool:
    if get_origin(annotation) is Literal:
        return True
    if annotation in _PLAIN:
        return True
    if get_origin(annotation) in (Union, UnionType):
        return all(_plain(a) for a in get_args(annotation))
    return False
