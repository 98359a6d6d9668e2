"""The `llm` judge: a model answers one dimension's questions as structured JSON.

The model is reached through one of two clients (`judge.judges.clients`): the `openai` SDK
for `openai/...` models and OpenAI-compatible endpoints, litellm for every other provider.
Either is imported when a run knows it will send a request, in a background thread, and
never for a run the store answers. Neither retries: retries of transient provider errors are
ours (exponential backoff with jitter, tenacity's, transient errors only, never shorter than
the provider's Retry-After), and so is the timeout of each request. The reply asked for is
`judge.judges.reply_format`'s; its format is negotiated with the server
(`judge.judges.structured`): a refusal of the format steps down at once and is never retried.
An almost-right reply is repaired when that is unambiguous (`judge.judges.repair`); one that
still does not answer every question id exactly once is re-asked a bounded number of times,
then the dimension is recorded as unscored with the reason. Provider errors are never turned
into "No" answers. Every credential the judge holds (its key, and those in the environment
the clients may send) is masked in whatever the provider sends back, as it arrives: the reply's
text in `_send`, an error's words in `_reason` (`judge.judges.mask`). Answers, evidence,
reasons, re-asks and the reply log are all read from the masked text.

Every request passes the run's gate (`judge.run.control.Gate`: pause, cooldown, rate limit,
concurrency, stop); outside a run a `NullGate` lets everything through.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections import Counter
from contextvars import ContextVar
from typing import Any

from tenacity import wait_random_exponential

from ..checklist.judgment import DimensionVerdict, JudgeIdentity, Usage, unscored
from .base import JudgeTask, NullGate, RequestGate, RunStopped
from .clients import TRANSIENT, Client, Reply, choose, error_kind, make_client
from .clients.errors import CONNECTION_LEVEL, MAX_RETRY_AFTER, retry_after_seconds
from .clients.exchanges import Exchange, record
from .clients.litellm_client import import_litellm
from .clients.openai_client import NO_KEY
from .clients.prices import priced_entry
from .clients.sent import REQUEST_SENT
from .confidence import TOP_LOGPROBS, with_scores
from .mask import Secrets, scrub_params
from .repair import UnparseableReply, parse_reply
from .reply_format import (
    REPLY_ORDERS,
    ReplyOrder,
    pinned_schema,
    reask_messages,
    schema_hash,
    strict_format,
)
from .structured import (
    FormatRefused,
    Mode,
    Negotiation,
    is_format_refusal,
    response_format,
)

COMPLETION_ALLOWANCE = 300
"""Tokens a reply is assumed to take before it arrives, for the `--tpm` limiter."""
FRAME_TOKENS = 40
ANSWER_TOKENS = 160
"""The reply tokens a call may take (`max_tokens`) by default: `FRAME_TOKENS` for the JSON
around the answers and `ANSWER_TOKENS` per question id, its id, Yes/No and confidence as JSON
(~25 tokens) and the "short verbatim quote" the prompt asks for as evidence, given four times
room. Without a cap a model that loops (repeating its evidence, never closing the JSON)
writes until its context is full, long after the call gave up on it (`timeout`), and a
one-request server (llama.cpp with one slot) serves no one else meanwhile."""


class LLMJudge:
    """A judge backed by a model string (`openai/gpt-4o-mini`, `anthropic/claude-...`,
    `ollama/llama3`, or any model at an OpenAI-compatible `api_base`).

    `client`: `auto` (the `openai` SDK for OpenAI and OpenAI-compatible endpoints, litellm for
    the rest; `judge.judges.clients.choose`), `openai` or `litellm`."""

    def __init__(
        self,
        model: str,
        api_base: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        seed: int | None = 0,
        timeout: float = 120.0,
        max_reasks: int = 2,
        max_retries: int = 5,
        max_rate_limit_retries: int | None = None,
        retry_wait: float = 1.0,
        extra_params: dict[str, Any] | None = None,
        name: str | None = None,
        structured_output: str = "auto",
        reply_order: ReplyOrder = "answer-first",
        client: str = "auto",
        logprobs: bool | None = None,
        max_tokens: int | None = None,
    ):
        self.model = model
        self.api_base = api_base
        self._api_key = api_key
        self.secrets = Secrets.of(api_key)
        """What is masked in every provider's word this judge keeps (`judge.judges.mask`)."""
        self.temperature = temperature
        self.seed = seed
        self.timeout = timeout
        self.max_reasks = max_reasks
        self.max_retries = max_retries
        self.max_rate_limit_retries = (
            6 * max_retries if max_rate_limit_retries is None else max_rate_limit_retries
        )
        """429s a call rides out (default six times `max_retries`: 30); see `_RetryBudget`."""
        self.retry_wait = retry_wait
        self.extra_params = extra_params or {}
        self.name = name or f"llm:{model}"
        self.gate: RequestGate = NullGate()
        self.negotiation = Negotiation(structured_output)
        if reply_order not in REPLY_ORDERS:
            raise ValueError(
                f"reply_order must be one of {', '.join(REPLY_ORDERS)}, not {reply_order!r}"
            )
        self.reply_order: ReplyOrder = reply_order
        """The order of each answer's fields (see `EvidenceFirstItem`); pair it with a
        `PromptRenderer(reply_order=...)` so that a reply asked for in the prompt alone
        (`prompt` mode) is described in the same order."""
        if max_tokens is not None and max_tokens < 0:
            raise ValueError(f"max_tokens must be 0 (no cap) or more, not {max_tokens}")
        self.max_tokens = max_tokens
        """The reply tokens each request allows: None sizes them to the reply asked for
        (`reply_tokens`), except for a model litellm's map says reasons (its thinking counts
        against the cap, by far more than the reply); 0 sends no cap; N sends N. A
        `max_tokens` in `extra_params` wins."""
        self._reasons: bool | None = None
        self.replies: Counter[str] = Counter()
        """This judge's replies by outcome: clean, repaired, reasked, unscored."""
        self.repairs: Counter[str] = Counter()
        self.logprobs = bool(logprobs)
        """Whether each request asks for the answer tokens' log-probabilities (the answers'
        confidence, `judge.judges.confidence`: `--confidence logprobs`, and a cascade's
        stages). Off by default: a reply with them is ~30x larger (every token of it with its
        likeliest alternatives), and reading it was the largest part of a call's CPU; the
        confidence is then the level the model states. Through litellm they are asked only of
        a provider litellm says returns them (decided at the first request)."""
        self._ask_logprobs: int | None = None
        """What each request asks (`TOP_LOGPROBS` alternatives, or None), once decided."""
        self.cache_marker: bool | None = None
        """Whether the shared start of each prompt is marked `cache_control` (see
        `judge.judges.clients.litellm_client.needs_cache_marker`; decided at the first
        request, once the client is loaded);
        other providers cache a repeated prefix by themselves."""
        self.client: Client = make_client(
            choose(model, api_base, client, self.extra_params),
            model,
            api_base,
            api_key,
            self.endpoint(),
        )
        """How requests reach the model (`judge.judges.clients`)."""

    def prefetch(self) -> None:
        """The run will send this judge requests: start importing its client's library now;
        construction does not, so a rerun the store answers never pays it."""
        self.client.prefetch()

    async def aclose(self) -> None:
        """The run is over: close the connections its event loop opened."""
        await self.client.aclose()

    def describe(self) -> dict[str, Any]:
        params = {
            "temperature": self.temperature,
            "seed": self.seed,
            "timeout": self.timeout,
            "max_reasks": self.max_reasks,
            "max_retries": self.max_retries,
            "max_rate_limit_retries": self.max_rate_limit_retries,
            **self.extra_params,
        }
        return {
            "name": "llm",
            "model": self.model,
            "api_base": self.api_base,
            "client": self.client.name,
            "params": scrub_params(params),
            "reply_order": self.reply_order,
            "logprobs": self.logprobs,
            "max_tokens": "auto" if self.max_tokens is None else self.max_tokens,
            "structured_output": self.negotiation.mode if self.negotiation.confirmed else None,
            "structured_output_negotiation": self.negotiation.describe(),
            "replies": reply_shares(self.replies),
            "repairs": dict(sorted(self.repairs.items())),
        }

    @property
    def structured_output_key(self) -> str:
        """The name under which a store can remember this endpoint's working reply format
        (`structured_output:<model>@<api_base>`); give the value back with
        `self.negotiation.adopt(mode)`."""
        return f"structured_output:{self.model}@{self.api_base or ''}"

    def cache_identity(self) -> dict[str, Any]:
        """What changes this judge's answers. Not the endpoint (`api_base`), the timeout or the
        retry settings: the same model asked the same prompt elsewhere is the same judgment."""
        params = {"temperature": self.temperature, "seed": self.seed, **self.extra_params}
        if self.logprobs:  # the answers' scores differ; a run without keeps the keys it had
            params["logprobs"] = TOP_LOGPROBS
        return {
            "model": self.model,
            "params": scrub_params(params),
            "schema": schema_hash(self.reply_order),
        }

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        if self.cache_marker is None:
            await self.client.ready()
            self.cache_marker = self.client.cache_marker()
            if self.logprobs and (self.client.name == "openai" or supports_logprobs(self.model)):
                self._ask_logprobs = TOP_LOGPROBS
        asked = task.prompt.cache_marked() if self.cache_marker else list(task.prompt.messages)
        messages = list(asked)
        usage = Usage(prompt_tokens=0, completion_tokens=0, cost_usd=0.0)
        tally = _Tally()
        for attempt in range(1, self.max_reasks + 2):
            if attempt > 1:
                self.gate.retrying()
            token = _TALLY.set(tally)
            try:
                reply = await self._call(messages, task.question_ids)
            except RunStopped:
                raise
            except FormatRefused as refused:
                reason = self._refused_reason(refused)
                verdict = unscored(task.question_ids, reason, "bad_request", attempt)
                return tally.finish(verdict, usage)
            except Exception as exc:  # provider errors become unscored, never No
                kind = error_kind(exc)
                verdict = unscored(task.question_ids, self._reason(kind, exc), kind, attempt)
                return tally.finish(verdict, usage)
            finally:
                _TALLY.reset(token)
            self.gate.succeeded(
                estimate_tokens(messages),
                reply.prompt_tokens,
                reply.completion_tokens,
                reply.cost,
                reply.cached_tokens,
                reply.cache_write_tokens,
            )  # counted before the handover: a cost budget sees it before the next request
            await asyncio.sleep(HANDOVER_SECONDS)
            _add_usage(usage, reply)
            content = reply.content
            logged = self._log_reply(messages, reply, tally.latency)
            try:
                parsed = parse_reply(content, task.question_ids)
            except UnparseableReply as exc:
                problem = str(exc)
                logged.error_kind, logged.error = "unparseable", problem
                tally.errors["unparseable"] += 1
                self.replies["reasked" if attempt <= self.max_reasks else "unscored"] += 1
            else:
                self.replies["repaired" if parsed.repairs else "clean"] += 1
                self.repairs.update(parsed.repairs)
                answers = with_scores(parsed.answers, reply.logprobs)
                identity = self.identity(reply)
                verdict = DimensionVerdict(answers=answers, attempts=attempt, identity=identity)
                return tally.finish(verdict, usage)
            messages = reask_messages(asked, content, problem, task.question_ids)
        reason = f"unparseable reply after {self.max_reasks + 1} attempts: {problem}"
        verdict = unscored(task.question_ids, reason, "unparseable", self.max_reasks + 1)
        return tally.finish(verdict, usage)

    def identity(self, reply: Reply) -> JudgeIdentity | None:
        """Which model answered `reply`, as the provider said, and the seed sent with it."""
        return JudgeIdentity.of(reply.model, reply.system_fingerprint, self.seed)

    def _log_reply(
        self, messages: list[dict[str, Any]], reply: Reply, latency: float | None
    ) -> Exchange:
        """Log an answered request for the store (`judge.judges.clients.exchanges`): the reply text as it
        arrived (credentials masked, `_send`)."""
        exchange = Exchange(
            messages,
            reply=reply.content,
            finish_reason=reply.finish_reason,
            latency_s=latency,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            cached_tokens=reply.cached_tokens,
            cost_usd=reply.cost,
        )
        record(exchange)
        return exchange

    def _reason(self, kind: str, exc: BaseException) -> str:
        """What went wrong, in one line; the key is masked before the line is shortened. A
        connection that failed names the endpoint it was made to."""
        where = ""
        if kind in CONNECTION_LEVEL:
            where = self.secrets.mask(f" at {self.api_base or 'its default endpoint'}")
        words = _provider_words(self.secrets.mask(str(exc)))
        return f"{kind} from {self.model}{where}: {words}"

    def _refused_reason(self, refused: FormatRefused) -> str:
        words = _provider_words(self.secrets.mask(str(refused.cause)))
        return (
            f"bad_request from {self.model}: the server refused response_format "
            f"{refused.mode!r} (forced by --structured-output {refused.mode}; "
            f"'auto' steps down to a format it accepts): {words}"
        )

    async def _call(self, messages: list[dict[str, Any]], question_ids: list[str]) -> Reply:
        """One answer in the negotiated reply format. While no reply has confirmed the format,
        one request probes it and the others wait (see `Negotiation`); a refusal of the format
        steps down at once and is never retried."""
        negotiation = self.negotiation
        while True:
            mode = negotiation.mode
            probe = False
            if not negotiation.confirmed:
                if negotiation.probing:
                    await negotiation.wait_probe()
                    if negotiation.mode != mode or not negotiation.probing:
                        continue
                else:
                    probe = True
                    negotiation.start_probe()
            sent = REQUEST_SENT.set(negotiation.request_sent) if probe else None
            try:
                reply = await self._send(messages, mode, question_ids)
            except Exception as exc:
                if not self._refused(exc, mode):
                    raise
                continue
            finally:
                if sent is not None:
                    REQUEST_SENT.reset(sent)
                if probe:
                    negotiation.end_probe()
            if mode == negotiation.mode:
                negotiation.confirmed = True
            return reply

    def _refused(self, exc: BaseException, mode: Mode) -> bool:
        """True when `exc` refused the reply format and a weaker one is now in use; raises
        `FormatRefused` when the user forced the refused format."""
        if mode == "prompt" or not is_format_refusal(exc):
            return False
        weaker = self.negotiation.step_down(mode)
        if weaker is None:
            refused = FormatRefused(mode, exc)
            self.gate.failed("bad_request", self._refused_reason(refused), None)
            raise refused from exc
        note = getattr(self.gate, "note", None)
        if note is not None and weaker == self.negotiation.mode:
            note(
                f"{self.model} at {self.api_base or 'its default endpoint'} refused "
                f"response_format {mode!r}; asking with {weaker!r} from now on"
            )
        return True

    def request(
        self, messages: list[dict[str, Any]], mode: Mode, question_ids: list[str] | None = None
    ) -> dict[str, Any]:
        """What one call asks: model, messages, reply format and the params that change the
        answer (a provider batch's request lines are built from it too). In `json_object+schema`
        mode the schema pins `question_ids` (see `pinned_schema`)."""
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
        if cap := self.token_cap(question_ids):
            kwargs["max_tokens"] = cap
        kwargs |= {"temperature": self.temperature, **self.extra_params}
        reply_format = response_format(mode, strict_format(self.reply_order))
        if mode == "json_object+schema" and question_ids:
            pinned = pinned_schema(question_ids, self.reply_order)
            reply_format = {"type": "json_object", "schema": pinned}
        if reply_format is not None:
            kwargs["response_format"] = reply_format
        if self.seed is not None:
            kwargs["seed"] = self.seed
        return kwargs

    def token_cap(self, question_ids: list[str] | None) -> int | None:
        """The `max_tokens` a request for `question_ids` sends (see `max_tokens`); None: none
        (an explicit `max_tokens` in `extra_params` is sent instead when there is one)."""
        if self.max_tokens is not None:
            return self.max_tokens or None
        if not question_ids:
            return None
        if self._reasons is None:
            self._reasons = reasons(self.model)
        return None if self._reasons else reply_tokens(len(question_ids))

    def endpoint(self) -> dict[str, str]:
        """Where litellm's calls go and the key they carry (its `api_base`, `api_key`)."""
        kwargs = {"api_base": self.api_base} if self.api_base else {}
        if self._api_key:
            kwargs["api_key"] = self._api_key
        elif self.api_base:
            kwargs["api_key"] = NO_KEY
        return kwargs

    async def _send(
        self, messages: list[dict[str, Any]], mode: Mode, question_ids: list[str] | None = None
    ) -> Reply:
        """One answer from the provider, retrying transient errors; every request is gated.
        Every request of either client ends here, as a `Reply` (its raw text in `content`) or
        as an exception and its `error_kind`."""
        request = self.request(messages, mode, question_ids)
        estimated = estimate_tokens(messages)
        tally = _TALLY.get(None) or _Tally()
        budget: _RetryBudget | None = None
        attempt = 0
        while True:
            attempt += 1
            try:
                async with self.gate.slot(estimated):
                    self.negotiation.arm_probe()
                    tally.requests += 1
                    sent = time.monotonic()
                    try:
                        reply = await self.client.complete(
                            request, self.timeout, self._ask_logprobs
                        )
                    except Exception as exc:
                        refused = mode != "prompt" and is_format_refusal(exc)
                        kind = "format_refused" if refused else error_kind(exc)
                        reason = self._reason(kind, exc)
                        tally.errors[kind] += 1
                        took = time.monotonic() - sent
                        record(Exchange(messages, error_kind=kind, error=reason, latency_s=took))
                        if not refused:
                            self.gate.failed(kind, reason, retry_after_seconds(exc))
                        raise
                    tally.latency = time.monotonic() - sent
            except Exception as exc:
                if error_kind(exc) not in TRANSIENT or (
                    mode != "prompt" and is_format_refusal(exc)
                ):
                    raise
                budget = budget or _RetryBudget(self.max_retries, self.max_rate_limit_retries)
                state = _Failed(attempt, exc)
                wait = _RetryAfterOrBackoff(self.retry_wait)(state)
                if budget(state):
                    raise
                self.gate.retrying()
                await self.gate.sleep(wait)
            else:
                return self._masked(reply)

    def _masked(self, reply: Reply) -> Reply:
        """The reply with every credential masked in its text, before anything reads it."""
        if not reply.content or not self.secrets:
            return reply
        return dataclasses.replace(reply, content=self.secrets.mask(reply.content))


HANDOVER_SECONDS = 0.002
"""After its reply arrives a call pauses this long before reading it, so that the call waiting
for the request slot it left gets its request onto the wire first. httpx yields to the event
loop several times on the way (its connection pool's locks), and each time the reply's
parsing, scoring and storing (~3 ms) ran first: from a call's start to its request's first
byte took 3.7 ms (median), 0.7 ms with the pause (`benchmarks/anchors.py` inputs, 200
submissions, 0.2 s latency, 5 in flight). Where no call waits for the slot the pause delays
the call's end by 2 ms, against requests that take seconds."""


class _Tally:
    """Requests sent and failures seen while answering one dimension (one per task, so the
    judge can answer many dimensions at once: see `_TALLY`)."""

    def __init__(self) -> None:
        self.requests = 0
        self.errors: Counter[str] = Counter()
        self.latency: float | None = None
        """Seconds the last answered request took."""

    def finish(self, verdict: DimensionVerdict, usage: Usage) -> DimensionVerdict:
        return verdict.model_copy(
            update={
                "usage": usage,
                "requests": self.requests,
                "attempt_errors": dict(self.errors),
            }
        )


_TALLY: ContextVar[_Tally] = ContextVar("judge_llm_tally")


@dataclasses.dataclass(frozen=True, slots=True)
class _Failed:
    """A failed attempt as the retry rules read it (tenacity's retry state: its number and
    its outcome's exception). The retries are a loop of `_send`, not tenacity's: its
    per-call machinery (a retry object, its state and futures for every call, most of
    which never fail) cost more CPU than the rest of the request's own bookkeeping."""

    attempt_number: int
    error: BaseException

    @property
    def outcome(self) -> _Failed:
        return self

    def exception(self) -> BaseException:
        return self.error


class _RetryBudget:
    """When a call gives up: after `faults` retried server errors, timeouts and lost
    connections, or after `rate_limited` retried 429s. A 429 is the provider saying "later",
    not a fault of the call, so it does not use up the fault budget: at 50% 429s five retries
    lost one call in 64 (measured: 1 of 150 calls failed), thirty lose one in 2^31."""

    def __init__(self, faults: int, rate_limited: int):
        self.left = {"fault": faults, "rate_limit": rate_limited}

    def __call__(self, state: Any) -> bool:
        exc = state.outcome.exception() if state.outcome else None
        budget = "rate_limit" if exc is not None and error_kind(exc) == "rate_limit" else "fault"
        self.left[budget] -= 1
        return self.left[budget] < 0


class _RetryAfterOrBackoff:
    """The provider's Retry-After when it gives one (it knows when it takes requests again),
    and up to `RETRY_AFTER_JITTER` of it again at random; else exponential backoff with jitter.

    Without the jitter the calls that met a provider's quota together come back together and
    meet it again: against the fake's own quota (`benchmarks/cooldown.py`, 150 calls at 8 in
    flight) 2.7 429s per call, 1.8 with up to half again, at the same wall time and the same
    throughput under random 429s; up to as long again cut them to 1.6 but lost an eighth of
    that throughput."""

    RETRY_AFTER_JITTER = 0.5

    def __init__(self, multiplier: float):
        self.backoff = wait_random_exponential(multiplier=multiplier, max=60 * multiplier)

    def __call__(self, state: Any) -> float:
        wait = self.backoff(state)
        exc = state.outcome.exception() if state.outcome else None
        asked = retry_after_seconds(exc) if exc is not None else None
        if not asked:
            return wait
        return min(asked * random.uniform(1.0, 1.0 + self.RETRY_AFTER_JITTER), MAX_RETRY_AFTER)


def reply_shares(counts: Counter[str]) -> dict[str, Any]:
    """Replies by outcome, and each outcome's share of all replies (None when there were none):
    clean, repaired (read after an unambiguous repair), reasked (unusable, asked again) and
    unscored (unusable, and no re-ask left)."""
    outcomes = ("clean", "repaired", "reasked", "unscored")
    total = sum(counts[o] for o in outcomes)
    return {
        "total": total,
        **{o: counts[o] for o in outcomes},
        "shares": {o: (round(counts[o] / total, 4) if total else None) for o in outcomes},
    }


def reply_tokens(questions: int) -> int:
    """The reply tokens allowed by default to a call answering `questions` questions."""
    return FRAME_TOKENS + ANSWER_TOKENS * questions


def reasons(model: str) -> bool:
    """Whether litellm's price map says `model` is a reasoning model (as given, or without
    its provider prefix); False when it does not know the model."""
    entry = priced_entry([model, model.partition("/")[2] or None])
    return bool(entry and entry.get("supports_reasoning"))


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """The tokens a request is booked at before it is sent (`--tpm`, `--max-cost`, a batch's
    budget): its text's characters / 4, and `COMPLETION_ALLOWANCE` for the reply."""
    return sum(len(_text(m.get("content"))) for m in messages) // 4 + COMPLETION_ALLOWANCE


def _text(content: Any) -> str:
    """A message's text, whether its content is a string or a list of content blocks."""
    if isinstance(content, list):
        return "".join(str(block.get("text") or "") for block in content)
    return content or ""


def supports_logprobs(model: str) -> bool:
    """Whether litellm knows `model`'s provider to return token log-probabilities (OpenAI and
    OpenAI-compatible servers do; Anthropic does not)."""
    litellm = import_litellm()
    try:
        provider = litellm.get_llm_provider(model)[1]
        params = litellm.get_supported_openai_params(model=model, custom_llm_provider=provider)
    except Exception:  # a model string litellm cannot place: do not ask
        return False
    return bool(params) and "logprobs" in params


def _provider_words(words: str) -> str:
    """The provider's words on one line, shortened (mask the key first: `mask_secret`)."""
    return " ".join(words.split())[:300]


def _add_usage(total: Usage, reply: Reply) -> None:
    total.prompt_tokens = (total.prompt_tokens or 0) + (reply.prompt_tokens or 0)
    total.completion_tokens = (total.completion_tokens or 0) + (reply.completion_tokens or 0)
    if reply.cached_tokens is not None:
        total.cached_tokens = (total.cached_tokens or 0) + reply.cached_tokens
    if reply.cache_write_tokens is not None:
        total.cache_write_tokens = (total.cache_write_tokens or 0) + reply.cache_write_tokens
    cost = reply.cost
    total.cost_usd = None if cost is None or total.cost_usd is None else total.cost_usd + cost
