"""The `llm` judge: any litellm model answers one dimension's questions as structured JSON.

litellm is imported on first use (it takes seconds to import). It is called with
`num_retries=0` and an explicit timeout: retries of transient provider errors are ours
(tenacity, transient errors only). A reply that does not answer every question id exactly once
is re-asked a bounded number of times, then the dimension is recorded as unscored with the
reason. Provider errors are never turned into "No" answers.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

from ..judgment import DimensionVerdict, QuestionAnswer, Usage, unscored
from .base import JudgeTask


class AnswerItem(BaseModel):
    id: str
    answer: Literal["Yes", "No"]
    evidence: str
    confidence: Literal["High", "Medium", "Low"]


class DimensionReply(BaseModel):
    """The response format the model is asked for."""

    answers: list[AnswerItem]


class UnparseableReply(ValueError):
    pass


def import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def error_kind(exc: BaseException) -> str:
    """Classify a provider exception by its litellm class name (litellm need not be imported)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    for kind, markers in (
        ("rate_limit", {"RateLimitError"}),
        ("timeout", {"Timeout", "APITimeoutError", "TimeoutError"}),
        ("auth", {"AuthenticationError", "PermissionDeniedError"}),
        ("refusal", {"ContentPolicyViolationError"}),
        ("bad_request", {"BadRequestError", "NotFoundError", "UnprocessableEntityError"}),
        ("server", {"InternalServerError", "ServiceUnavailableError", "BadGatewayError"}),
        ("connection", {"APIConnectionError"}),
    ):
        if names & markers:
            return kind
    return "error"


NO_KEY = "no-key-given"
"""Sent to a self-hosted `api_base` when no key is configured: litellm's OpenAI client refuses
to send a request without one, while most local servers ignore it."""

TRANSIENT = {"rate_limit", "timeout", "server", "connection"}


def parse_reply(content: str | None, question_ids: list[str]) -> list[QuestionAnswer]:
    """Validate a reply: JSON in the asked shape, every question id answered exactly once."""
    if not content:
        raise UnparseableReply("empty reply")
    try:
        reply = DimensionReply.model_validate_json(_strip_code_fence(content))
    except ValidationError as exc:
        raise UnparseableReply(
            f"reply is not the requested JSON: {exc.errors()[0]['msg']}"
        ) from None
    ids = [a.id for a in reply.answers]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    missing = [q for q in question_ids if q not in ids]
    unknown = sorted(set(ids) - set(question_ids))
    problems = [
        f"{label}: {', '.join(values)}"
        for label, values in (
            ("duplicate ids", duplicates),
            ("missing ids", missing),
            ("unknown ids", unknown),
        )
        if values
    ]
    if problems:
        raise UnparseableReply("; ".join(problems))
    by_id = {a.id: a for a in reply.answers}
    return [
        QuestionAnswer(
            question_id=q,
            answer=by_id[q].answer,
            evidence=by_id[q].evidence,
            confidence=by_id[q].confidence,
        )
        for q in question_ids
    ]


def _strip_code_fence(content: str) -> str:
    stripped = content.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[-1]
        stripped = stripped.rsplit("```", 1)[0]
    return stripped


class LLMJudge:
    """A judge backed by any litellm model string (`openai/gpt-4o-mini`, `ollama/llama3`, ...)."""

    def __init__(
        self,
        model: str,
        api_base: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        seed: int | None = 0,
        timeout: float = 120.0,
        max_reasks: int = 2,
        max_retries: int = 3,
        retry_wait: float = 1.0,
        extra_params: dict[str, Any] | None = None,
        name: str | None = None,
    ):
        self.model = model
        self.api_base = api_base
        self._api_key = api_key
        self.temperature = temperature
        self.seed = seed
        self.timeout = timeout
        self.max_reasks = max_reasks
        self.max_retries = max_retries
        self.retry_wait = retry_wait
        self.extra_params = extra_params or {}
        self.name = name or f"llm:{model}"
        import_litellm()  # seconds on a cold start: pay it here, not inside the event loop

    def describe(self) -> dict[str, Any]:
        params = {
            "temperature": self.temperature,
            "seed": self.seed,
            "timeout": self.timeout,
            "max_reasks": self.max_reasks,
            "max_retries": self.max_retries,
            **self.extra_params,
        }
        return {"name": "llm", "model": self.model, "api_base": self.api_base, "params": params}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        messages = list(task.prompt.messages)
        usage = Usage(prompt_tokens=0, completion_tokens=0, cost_usd=0.0)
        for attempt in range(1, self.max_reasks + 2):
            try:
                response = await self._call(messages)
            except Exception as exc:  # provider errors become unscored, never No
                kind = error_kind(exc)
                reason = f"{kind} from {self.model}: {_provider_words(exc)}"
                verdict = unscored(task.question_ids, reason, kind, attempt)
                return verdict.model_copy(update={"usage": usage})
            _add_usage(usage, response)
            content = response.choices[0].message.content
            try:
                answers = parse_reply(content, task.question_ids)
                return DimensionVerdict(answers=answers, attempts=attempt, usage=usage)
            except UnparseableReply as exc:
                problem = str(exc)
            messages = [
                *task.prompt.messages,
                {"role": "assistant", "content": content or ""},
                {
                    "role": "user",
                    "content": f"Your reply was not usable ({problem}). Reply again "
                    "with JSON only, answering every question id exactly once.\n"
                    f"Question ids: {', '.join(task.question_ids)}",
                },
            ]
        reason = f"unparseable reply after {self.max_reasks + 1} attempts: {problem}"
        verdict = unscored(task.question_ids, reason, "unparseable", self.max_reasks + 1)
        return verdict.model_copy(update={"usage": usage})

    async def _call(self, messages: list[dict[str, str]]) -> Any:
        litellm = import_litellm()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "response_format": DimensionReply,
            "temperature": self.temperature,
            "timeout": self.timeout,
            "num_retries": 0,
            "drop_params": True,
            **self.extra_params,
        }
        if self.seed is not None:
            kwargs["seed"] = self.seed
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        elif self.api_base:
            kwargs["api_key"] = NO_KEY
        async for attempt in AsyncRetrying(
            retry=retry_if_exception(lambda e: error_kind(e) in TRANSIENT),
            stop=stop_after_attempt(self.max_retries + 1),
            wait=wait_random_exponential(multiplier=self.retry_wait, max=60 * self.retry_wait),
            reraise=True,
        ):
            with attempt:
                return await litellm.acompletion(**kwargs)
        raise AssertionError("unreachable")


def _provider_words(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def _add_usage(total: Usage, response: Any) -> None:
    usage = getattr(response, "usage", None)
    if usage is not None:
        total.prompt_tokens = (total.prompt_tokens or 0) + (getattr(usage, "prompt_tokens", 0) or 0)
        total.completion_tokens = (total.completion_tokens or 0) + (
            getattr(usage, "completion_tokens", 0) or 0
        )
    cost = _cost(response)
    total.cost_usd = None if cost is None or total.cost_usd is None else total.cost_usd + cost


def _cost(response: Any) -> float | None:
    try:
        return float(import_litellm().completion_cost(completion_response=response))
    except Exception:  # unknown model price: say unknown, never 0
        return None
