"""Configuration of the fake OpenAI-compatible provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from judge.testing.answers import AnswerPolicy
from judge.testing.batches import BatchOutcome
from judge.testing.biases import PlantedBiases
from judge.testing.faults import NO_FAULT_NAMES, FaultKind, parse_fault_kind
from judge.testing.formats import FORMATS, FormatName, RefusalShape
from judge.testing.logprobs import ConfidencePolicy


class FakeProviderConfig(BaseModel):
    """How the fake provider behaves.

    - `latency`: seconds from a request's arrival to its reply, fixed or a `(low, high)` range
      drawn per call from the seed. The fake's own work on the reply counts in it, as a real
      provider's does: a benchmark then charges neither client for the fake's CPU (building
      nine checklist answers with log-probabilities costs it more than a canned reply).
    - `rpm` / `rate_window`: the server's own limit, at most `rpm` accepted requests in any
      `rate_window` seconds; beyond it 429 with `Retry-After` (and `retry-after-ms`).
    - `fault_rates`: probability per fault kind, drawn per call index from `seed` (sum <= 1).
    - `fault_schedule`: explicit fault (or None / "ok") for call indices 0, 1, ...; it overrides
      `fault_rates` for the indices it covers.
    - `hang_seconds`: how long a `hang` fault holds the connection before closing it unanswered.
    - `retry_after`: the delay an injected 429 announces.
    - `fast_429`: an injected 429 comes back at once, as a provider's rate limit is decided
      before any work; by default it takes the same latency as an answer.
    - `api_key`: when set, requests must carry `Authorization: Bearer <api_key>` or get 401.
    - `answer_policy`: `(question_id, messages) -> "Yes" | "No"`; default a stable hash.
    - `model_policies`: an answer policy per model name (as the request names it, without a
      litellm provider prefix), for one server playing several models; others use
      `answer_policy`.
    - `logprobs`: whether a request that asks for `logprobs` gets them (False: a server that
      ignores the parameter); `confidence_policy`: `(model, question_id, messages, answer) ->
      P(answer)`, the probability each answer's token gets (default: a stable hash in
      [0.5, 1); see `judge.testing.logprobs`).
    - `log_path`: a JSONL file each call record is appended to.
    - `response_formats`: the reply formats the server accepts (`json_schema`,
      `json_object+schema`, `json_object`, `text` = none asked); others are refused in the
      `format_refusal` shape (see `judge.testing.formats`).
    - `ignore_schema`: accept a `json_object` schema but do not enforce it (the answers come
      back wrapped in another key, in lower case, in a code fence).
    - `stop_after_answers`: a small model that ends its answer list after this many answers
      (a 1.5B model asked nine questions answered three), unless the request's `json_object`
      schema pins the list (`prefixItems`), as a grammar-enforcing server then forces every item.
    - `plain_reply`: the reply to a prompt that names no question ids (another tool's judge
      prompt, e.g. ITBench's evaluator in `benchmarks/anchors.py`), as the completion's text.
    - `echo_key_padding`: when set, a 401's message echoes the key it was sent, after this many
      filler characters (a badly behaved gateway; for testing that the key is masked everywhere).
    - `batch_delay`: seconds a batch (`/v1/batches`) stays in progress before it ends.
    - `batch_schedule`: how each batch ends, by creation order (`ok`, `partial`, `expire`,
      `fail`; later ones `ok`); see `judge.testing.batches`.
    - `batch_partial_rate`: the seeded share of a `partial` batch's lines that fail (500).
    - `batch_expire_done`: the share of an `expire` batch's lines answered before it expired.
    - `biases`: biases planted in the judge's answers on purpose (`judge.testing.biases`:
      position, verbosity, anchoring, a model family's name, random flips), drawn from `seed`.
    - `model_version`: the model a reply names (`model`), as a provider names the dated
      version it served; None echoes the model the request named.
    - `system_fingerprint`: the backend configuration each reply names; None sends none.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = "127.0.0.1"
    port: int = Field(0, ge=0, le=65535)
    models: list[str] = Field(default_factory=lambda: ["fake-judge"])
    seed: int = 0
    latency: float | tuple[float, float] = 0.0
    rpm: int | None = Field(None, gt=0)
    rate_window: float = Field(60.0, gt=0)
    fault_rates: dict[FaultKind, float] = Field(default_factory=dict)
    fault_schedule: list[FaultKind | None] = Field(default_factory=list)
    hang_seconds: float = Field(5.0, ge=0)
    retry_after: float = Field(1.0, ge=0)
    fast_429: bool = False
    api_key: SecretStr | None = None
    answer_policy: AnswerPolicy | None = Field(None, exclude=True)
    model_policies: dict[str, AnswerPolicy] = Field(default_factory=dict, exclude=True)
    logprobs: bool = True
    confidence_policy: ConfidencePolicy | None = Field(None, exclude=True)
    log_path: Path | None = None
    response_formats: tuple[FormatName, ...] = FORMATS
    format_refusal: RefusalShape = "openai-400"
    ignore_schema: bool = False
    stop_after_answers: int | None = Field(None, ge=0)
    echo_key_padding: int | None = Field(None, ge=0)
    plain_reply: str = "OK"
    batch_delay: float = Field(1.0, ge=0)
    batch_schedule: list[BatchOutcome] = Field(default_factory=list)
    batch_partial_rate: float = Field(0.5, ge=0, le=1)
    batch_expire_done: float = Field(0.5, ge=0, le=1)
    biases: PlantedBiases = Field(default_factory=PlantedBiases)
    model_version: str | None = None
    system_fingerprint: str | None = "fp_fake"

    @field_validator("batch_schedule", mode="before")
    @classmethod
    def _batch_outcomes(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value

    @field_validator("latency")
    @classmethod
    def _latency_range(cls, value: float | tuple[float, float]) -> float | tuple[float, float]:
        low, high = value if isinstance(value, tuple) else (value, value)
        if low < 0 or high < low:
            raise ValueError(f"latency must be >= 0 and low <= high, got {value!r}")
        return value

    @field_validator("fault_rates", mode="before")
    @classmethod
    def _fault_names(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {parse_fault_kind(str(k)): v for k, v in value.items()}
        return value

    @field_validator("fault_schedule", mode="before")
    @classmethod
    def _schedule_names(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.split(",")
        if isinstance(value, list | tuple):
            return [
                None
                if item is None or str(item).strip().lower() in NO_FAULT_NAMES
                else parse_fault_kind(str(item))
                for item in value
            ]
        return value

    @model_validator(mode="after")
    def _rates_are_probabilities(self) -> FakeProviderConfig:
        for kind, p in self.fault_rates.items():
            if not 0 <= p <= 1:
                raise ValueError(f"fault rate for {kind.value} must be in [0, 1], got {p}")
        total = sum(self.fault_rates.values())
        if total > 1 + 1e-9:
            raise ValueError(f"fault rates sum to {total:.3f}; they must sum to at most 1")
        return self

    def latency_range(self) -> tuple[float, float]:
        if isinstance(self.latency, tuple):
            return self.latency
        return (self.latency, self.latency)
