"""The batch phase: submit the calls, resume open batches, poll, collect each line into the
store as a live reply would be, and ask the lost, unusable and format-refused calls again
(the steps are in `judge.run.batch`)."""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ...checklist.judgment import DimensionVerdict, JudgeIdentity, Usage, unscored
from ...judges.repair import UnparseableReply, parse_reply
from ...judges.structured import MODES, FormatRefused, Mode, is_format_refusal
from ...store import CaseRef, KeyParts, Store, StoredBatch
from ..control import Gate
from ..validation import checked_verdict
from . import cost
from .budget import BatchBudget, completion_cap
from .lines import BatchRequestFailed, LineFailure, batch_failure, line_error, reply_text
from .report import BatchReport

if TYPE_CHECKING:
    from ...judges.llm import LLMJudge

TERMINAL = {"completed", "expired", "failed", "cancelled"}
LOST_KINDS = {"rate_limit", "server", "timeout", "batch_expired", "batch_cancelled", "batch_failed"}
"""Line errors a live call would have retried: those calls are asked again in a new batch."""

ENDPOINT = "/v1/chat/completions"
UNNAMED = "unnamed:"
"""The id a batch is recorded under between its file's upload and its creation."""
NO_BATCH_LOGGING = {"batch_ignore_default_logging": True}
"""Without it litellm's logging downloads a finished batch's output file again and prices
every line on the event loop (about 10 s of CPU for 3,000 lines); we read and price it once."""
BACKOFF = 1.5


@dataclass
class BatchOptions:
    """How batch mode polls: the first wait between status checks (`poll`, growing by half at
    each check up to `max_poll` seconds: a batch that ends is seen at most about a third of its
    run time late) and how many new batches may ask again calls that were lost."""

    poll: float = 5.0
    max_poll: float = 60.0
    rounds: int = 2


def batch_provider(judge: object) -> str:
    """The litellm provider a batch goes to; ValueError saying why `judge` cannot batch."""
    from ...judges.clients.litellm_client import import_litellm
    from ...judges.llm import LLMJudge

    if not isinstance(judge, LLMJudge):
        kind = getattr(judge, "name", type(judge).__name__)
        raise ValueError(
            f"--batch needs one LLM judge (--judge-model PROVIDER/MODEL); {kind} makes no "
            "provider calls to batch (rules, replay, a panel or --repeat are not batched)"
        )
    litellm = import_litellm()
    from litellm.types.utils import OPENAI_COMPATIBLE_BATCH_AND_FILES_PROVIDERS

    try:
        _, provider, _, _ = litellm.get_llm_provider(model=judge.model, api_base=judge.api_base)
    except Exception as exc:
        raise ValueError(f"--batch: litellm does not know model {judge.model!r}: {exc}") from None
    if provider not in OPENAI_COMPATIBLE_BATCH_AND_FILES_PROVIDERS:
        supported = ", ".join(sorted(OPENAI_COMPATIBLE_BATCH_AND_FILES_PROVIDERS))
        raise ValueError(
            f"--batch: {judge.model!r} goes to provider {provider!r}; batch jobs go to "
            f"OpenAI-compatible providers ({supported}; --api-base for your own server)"
        )
    return str(provider)


@dataclass
class Call:
    """One call to batch: its store key, where its answer is stored, what it asks."""

    key: str
    parts: KeyParts
    case: CaseRef
    question_ids: list[str]
    messages: list[dict[str, str]] | None = None
    attempt: int = 1
    """2 and more: asked again after an unusable reply (`messages` then holds that chat)."""
    mode: Mode | None = None
    """The reply format its batch line asked for (set when the line is built)."""

    def record(self) -> dict[str, Any]:
        return {
            "parts": {c: getattr(self.parts, c) for c in _PARTS},
            "case": [self.case.incident_id, self.case.trial, self.case.dimension_id],
            "question_ids": self.question_ids,
            "attempt": self.attempt,
            "mode": self.mode,
        }

    @classmethod
    def from_record(cls, key: str, data: dict[str, Any]) -> Call:
        parts, case = KeyParts(**data["parts"]), CaseRef(*data["case"])
        call = cls(key, parts, case, data["question_ids"], attempt=data.get("attempt", 1))
        call.mode = next((m for m in MODES if m == data.get("mode")), None)
        return call


_PARTS = ("judge", "model", "params", "prompt", "schema", "rubric")


class BatchPhase:
    """One run's batches: submit, resume, poll, collect, ask the lost calls again."""

    def __init__(
        self,
        judge: LLMJudge,
        store: Store,
        options: BatchOptions,
        gate: Gate,
    ):
        self.judge = judge
        self.store = store
        self.options = options
        self.gate = gate
        self.note = gate.note
        self.provider = batch_provider(judge)
        self.litellm = cost._litellm()
        self.model_name = self.litellm.get_llm_provider(model=judge.model)[0]
        self.report = BatchReport(self.provider, cost.batch_discount(judge.model, self.provider))
        self.answered: dict[str, str] = {}
        """The batch id of each call this phase's batches answered (the answer is in the store)."""
        self.failed: dict[str, DimensionVerdict] = {}
        """The calls that failed for good in them, or were refused before any batch."""
        self.calls: dict[str, Call] = {}
        self.reasks: dict[str, Call] = {}
        self.refused: dict[str, Call] = {}
        """Calls whose line the server refused for its reply format: asked again in the
        weaker mode the negotiation stepped down to."""
        self.budget = self._budget(gate.max_cost)
        self.left_out: set[str] = set()
        """Calls not submitted because their batch's worst case would pass `--max-cost`."""

    # ------------------------------------------------------------------ the phase

    async def run(self, calls: dict[str, Call]) -> None:
        """Submit, follow, and ask again: lost calls and unusable replies in at most `rounds`
        new batches, calls refused for their reply format in at most one new batch per weaker
        mode (so at most as many batches as there are modes)."""
        started = time.monotonic()
        self.calls = calls
        todo = dict(calls)
        following = await self._resume(todo)
        rounds, steps = self.options.rounds, len(MODES) - 1
        while True:
            if todo and self.gate.stopped is None and (submitting := self._affordable(todo)):
                try:
                    following.append(await self._submit(submitting))
                except BatchRequestFailed as failed:
                    self._not_submitted(submitting, failed)
            if not following:
                break
            lost = await self._follow_all(following)
            following, todo, again = [], {}, []
            if rounds > 0 and (lost or self.reasks):
                rounds -= 1
                todo = {key: calls[key] for key in lost if key in calls}
                again = [f"the {len(todo)} lost calls"] if todo else []
                if self.reasks:
                    again.append(f"{len(self.reasks)} calls whose reply was unusable")
                    todo.update(self.reasks)
            if steps > 0 and self.refused:
                steps -= 1
                again.append(
                    f"{len(self.refused)} calls refused for their reply format "
                    f"(now {self.judge.negotiation.mode!r})"
                )
                todo.update(self.refused)
            self.reasks, self.refused = {}, {}
            if todo:
                self._event(f"asking {' and '.join(again)} again in a new batch")
        self.report.wall_seconds = time.monotonic() - started

    def _budget(self, limit: float | None) -> BatchBudget | None:
        if limit is None:
            return None
        model, provider, judge = self.judge.model, self.provider, self.judge
        params, info = judge.extra_params, cost._model_info(model)
        return BatchBudget(
            limit,
            price=lambda prompt, completion: cost.batch_cost(model, provider, prompt, completion),
            cap=lambda questions: completion_cap(params, info, judge.token_cap(list(questions))),
        )

    def budget_stop(self) -> str:
        """Why the run stops after its batches: the calls `--max-cost` left out."""
        reason = self.budget.exhausted if self.budget is not None else None
        return (
            f"{len(self.left_out)} of {len(self.calls)} calls were left out of the batch, "
            f"not asked: {reason}"
        )

    def _affordable(self, todo: dict[str, Call]) -> list[Call]:
        """The calls, in order, whose batch's worst case fits in what is left of `--max-cost`;
        the others are left out (not asked) and no later batch is submitted."""
        calls = list(todo.values())
        if self.budget is None:
            return calls
        fit = self.budget.fit([(c.key, c.messages or [], c.question_ids) for c in calls])
        if fit.count < len(calls):
            self.left_out.update(call.key for call in calls[fit.count :])
            self._event(
                f"--max-cost: submitting {fit.count} of {len(calls)} calls (worst case "
                f"${fit.worst:.4f}); {len(calls) - fit.count} calls left out, not asked: "
                f"{fit.reason}"
            )
        return calls[: fit.count]

    async def _resume(self, todo: dict[str, Call]) -> list[StoredBatch]:
        """The open batches in the store that hold any of `todo` (a run killed while it
        polled, or while it created the batch): their calls leave `todo`; they are polled."""
        following = []
        for batch in [b for b in self.store.open_batches(todo) if self._ours(b)]:
            held = [key for key, _, state in self.store.batch_calls(batch.id) if state == "pending"]
            for key in held:
                todo.pop(key, None)
                if self.budget is not None and key in self.calls:
                    call = self.calls[key]
                    self.budget.hold(key, call.messages or [], call.question_ids)
            try:
                named = await self._adopt(batch) if batch.id.startswith(UNNAMED) else batch
            except BatchRequestFailed as failed:
                self.gate.stop("provider", f"{failed}; the batch's calls stay recorded")
                continue
            self.note(
                f"batch {named.id}: resuming ({len(held)} calls still out, status "
                f"{named.status}); these calls are not submitted again"
            )
            self.report.resumed.append(named.id)
            following.append(named)
        return following

    def _not_submitted(self, calls: list[Call], failed: BatchRequestFailed) -> None:
        """The provider refused the batch: each call is a failed call (stored as an error,
        unscored, never No; `judge eval` exits 3 when they all failed or the key was refused)."""
        self._event(f"{len(calls)} calls not submitted: {failed}")
        for call in calls:
            verdict = unscored(call.question_ids, str(failed), failed.kind)
            self.store.put(call.parts, call.case, verdict)
            self.failed[call.key] = verdict
            self.report.errors += 1

    def _event(self, message: str) -> None:
        """A note that also goes into the result (`usage.batch.reports`)."""
        self.report.reports.append(message)
        self.note(message)

    def _ours(self, batch: StoredBatch) -> bool:
        return (
            batch.provider == self.provider
            and batch.model == self.judge.model
            and (batch.api_base or None) == (self.judge.api_base or None)
        )

    async def _follow_all(self, batches: list[StoredBatch]) -> set[str]:
        lost: set[str] = set()
        for found in await asyncio.gather(*(self._follow(b) for b in batches)):
            lost |= found
        return lost

    # ------------------------------------------------------------------ submitting

    async def _submit(self, calls: list[Call]) -> StoredBatch:
        started = time.monotonic()
        lines = [self._line(call) for call in calls]
        content = "".join(json.dumps(line) + "\n" for line in lines).encode()
        connection = self._connection()
        file = await self._request(
            "uploading the batch file",
            lambda: self.litellm.acreate_file(
                file=("diagnosis-judge-batch.jsonl", io.BytesIO(content), "application/jsonl"),
                purpose="batch",
                **connection,
            ),
        )
        pending = StoredBatch(
            id=UNNAMED + file.id,
            provider=self.provider,
            model=self.judge.model,
            api_base=self.judge.api_base,
            input_file_id=file.id,
            status="submitting",
            calls=len(calls),
        )
        self.store.add_batch(pending, [(call.key, call.record()) for call in calls])
        batch = await self._create(pending)
        self.report.submitted.append(batch.id)
        self.report.lines += len(calls)
        self.note(f"batch {batch.id}: submitted {len(calls)} calls to {self.provider}")
        self.report.seconds["submit"] += time.monotonic() - started
        return batch

    async def _create(self, pending: StoredBatch) -> StoredBatch:
        """Create the batch for an uploaded file the store already records, and record its id.

        The calls are in the store before the batch is created, under `UNNAMED` + file id: a
        run killed between the two finds the batch by its input file (`_adopt`), so the same
        calls are never submitted twice."""
        created = await self._request(
            "creating the batch",
            lambda: self.litellm.acreate_batch(
                completion_window="24h",
                endpoint=ENDPOINT,
                input_file_id=pending.input_file_id,
                metadata={"tool": "diagnosis-judge"},
                **self._connection(),
            ),
        )
        self.store.rename_batch(pending.id, created.id, str(created.status))
        return replace(pending, id=created.id, status=str(created.status))

    async def _adopt(self, pending: StoredBatch) -> StoredBatch:
        """A batch recorded but not named (the run was killed while creating it): the
        provider's batch for its input file if there is one, else it is created now."""
        page = await self._request(
            "listing batches",
            lambda: self.litellm.alist_batches(limit=100, **self._connection()),
        )
        for found in getattr(page, "data", None) or []:
            if getattr(found, "input_file_id", None) == pending.input_file_id:
                self.store.rename_batch(pending.id, found.id, str(found.status))
                return replace(pending, id=found.id, status=str(found.status))
        return await self._create(pending)

    def _line(self, call: Call) -> dict[str, Any]:
        assert call.messages is not None
        call.mode = self.judge.negotiation.mode
        body = self.judge.request(call.messages, call.mode, call.question_ids)
        body["model"] = self.model_name
        return {"custom_id": call.key, "method": "POST", "url": ENDPOINT, "body": body}

    def _connection(self) -> dict[str, Any]:
        return {"custom_llm_provider": self.provider, **self.judge.endpoint()}

    # ------------------------------------------------------------------ polling

    async def _follow(self, batch: StoredBatch) -> set[str]:
        """Poll until the batch ends (or the run stops), then collect it; the lost keys."""
        wait = self.options.poll
        started = time.monotonic()
        while True:
            try:
                current = await self._request(
                    f"checking batch {batch.id}",
                    lambda: self.litellm.aretrieve_batch(
                        batch_id=batch.id, litellm_metadata=NO_BATCH_LOGGING, **self._connection()
                    ),
                )
                self._progress(batch, current)
                if str(current.status) in TERMINAL:
                    ended = time.monotonic()
                    self.report.seconds["wait"] += ended - started
                    lost = await self._collect(batch, current)
                    self.report.seconds["collect"] += time.monotonic() - ended
                    return lost
            except BatchRequestFailed as refused:
                self.gate.stop("provider", f"{refused}; batch {batch.id} is left open")
                self._event(f"batch {batch.id}: left open; rerun with --batch to pick it up")
                return set()
            await self.gate.sleep(wait)
            if self.gate.stopped is not None:
                self._event(f"batch {batch.id}: left open; rerun with --batch to pick it up")
                return set()
            wait = min(wait * BACKOFF, self.options.max_poll)

    def _progress(self, batch: StoredBatch, current: Any) -> None:
        status = str(current.status)
        counts = current.request_counts
        completed = getattr(counts, "completed", 0) or 0
        failed = getattr(counts, "failed", 0) or 0
        total = getattr(counts, "total", 0) or batch.calls
        self.store.update_batch(batch.id, status, completed, failed)
        self.note(f"batch {batch.id}: {status}, {completed}/{total} completed, {failed} failed")

    async def _request(self, what: str, send: Callable[[], Awaitable[Any]]) -> Any:
        """One Files/Batches request; transient failures (429, 5xx, timeouts, connection) are
        retried `max_retries` times with the poll's backoff, others raise `BatchRequestFailed`
        at once."""
        from ...judges.clients.errors import TRANSIENT, error_kind

        wait = self.options.poll
        for attempt in range(1, self.judge.max_retries + 2):
            self.report.http_requests += 1
            try:
                return await send()
            except Exception as exc:
                kind = error_kind(exc)
                words = self.judge.secrets.mask(str(exc))
                words = " ".join(words.split())[:300]
                if kind not in TRANSIENT or attempt > self.judge.max_retries:
                    reason = f"{kind} from {self.judge.model} while {what}: {words}"
                    raise BatchRequestFailed(kind, reason) from exc
                self.note(f"{what} failed ({kind}: {words}); retrying")
                await self.gate.sleep(wait)
                wait = min(wait * BACKOFF, self.options.max_poll)
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------ collecting

    async def _collect(self, batch: StoredBatch, current: Any) -> set[str]:
        pending = {
            key: Call.from_record(key, data)
            for key, data, state in self.store.batch_calls(batch.id)
            if state == "pending"
        }
        keys = list(pending)
        lines = await self._lines(current.output_file_id) + await self._lines(current.error_file_id)
        kinds: Counter[str] = Counter()
        lost: set[str] = set()
        for line in lines:
            call = pending.pop(str(line.get("custom_id")), None)
            if call is not None:
                kind = self._store_line(batch.id, call, line)
                if kind is not None:
                    kinds[kind] += 1
                    lost |= {call.key} if kind in LOST_KINDS else set()
        missing = batch_failure(current)
        for call in pending.values():  # no line at all: the batch failed before running it
            verdict = unscored(call.question_ids, missing, "batch_failed")
            self._put(batch.id, call, "lost", verdict.model_copy(update={"batch_id": batch.id}))
            kinds["batch_failed"] += 1
            lost.add(call.key)
        self._close(batch, current, kinds, lost)
        if self.budget is not None:
            self.budget.settled(keys)
        return lost

    async def _lines(self, file_id: str | None) -> list[dict[str, Any]]:
        if not file_id:
            return []
        content = await self._request(
            f"reading file {file_id}",
            lambda: self.litellm.afile_content(file_id=file_id, **self._connection()),
        )
        text = self.judge.secrets.mask(content.content.decode("utf-8", "replace"))
        return [json.loads(raw) for raw in text.splitlines() if raw.strip()]

    def _store_line(self, batch_id: str, call: Call, line: dict[str, Any]) -> str | None:
        """Store one output or error line; its error kind, None for an answer."""
        response = line.get("response") or {}
        status = response.get("status_code")
        if status != 200 and self._format_refused(batch_id, call, response):
            return "format_refused"
        if line.get("error") or status != 200:
            kind, reason = line_error(line, batch_id)
            verdict = unscored(call.question_ids, reason, kind).model_copy(
                update={"batch_id": batch_id, "requests": 1, "attempt_errors": {kind: 1}}
            )
            self._put(batch_id, call, "lost" if kind in LOST_KINDS else "error", verdict)
            return kind
        body = response.get("body") or {}
        if call.mode == self.judge.negotiation.mode:  # the server took the format: keep it
            self.judge.negotiation.confirmed = True
        verdict = self._verdict(batch_id, call, body)
        if verdict.error_kind != "unparseable":
            self._put(batch_id, call, "error" if verdict.error else "answered", verdict)
        elif self._reask(call, body, verdict):
            self.judge.replies["reasked"] += 1
            self._put(batch_id, call, "reask", verdict)
        else:
            self.judge.replies["unscored"] += 1
            self._put(batch_id, call, "error", verdict)
        return verdict.error_kind

    def _format_refused(self, batch_id: str, call: Call, response: dict[str, Any]) -> bool:
        """Whether the line is the server refusing its reply format (the live call's detector,
        `is_format_refusal`): the negotiation steps down as for a live call, and the call is
        asked again in the weaker mode. A mode the user forced is an error, as live."""
        mode = call.mode or self.judge.negotiation.mode
        failure = LineFailure(response)
        if mode == "prompt" or not is_format_refusal(failure):
            return False
        before = self.judge.negotiation.mode
        weaker = self.judge.negotiation.step_down(mode)
        if weaker is None:
            reason = self.judge._refused_reason(FormatRefused(mode, failure))
            verdict = unscored(call.question_ids, f"{reason} (batch {batch_id})", "bad_request")
            update = {"batch_id": batch_id, "requests": 1, "attempt_errors": {"format_refused": 1}}
            self._put(batch_id, call, "error", verdict.model_copy(update=update))
            return True
        if weaker != before:
            where = self.judge.api_base or "its default endpoint"
            self._event(
                f"{self.judge.model} at {where} refused response_format {mode!r} in batch "
                f"{batch_id}; asking with {weaker!r} from now on"
            )
        self.store.mark_batch_call(batch_id, call.key, "refused")
        self.report.refused += 1
        original = self.calls.get(call.key)
        if original is not None and original.messages is not None:
            messages = call.messages or original.messages
            self.refused[call.key] = replace(original, messages=messages, attempt=call.attempt)
        return True

    def _reask(self, call: Call, body: dict[str, Any], verdict: DimensionVerdict) -> bool:
        """Ask again after an unusable reply, like a live call does (at most `max_reasks`
        times, with the same words); False when no re-ask is left or the prompt is unknown
        (a batch resumed for calls this run does not make)."""
        from ...judges.reply_format import reask_messages

        original = self.calls.get(call.key)
        if original is None or original.messages is None or call.attempt > self.judge.max_reasks:
            return False
        try:
            text = reply_text(body)
        except (KeyError, IndexError, TypeError):
            text = None
        problem = (verdict.error or "").split(": ", 1)[-1]
        messages = reask_messages(original.messages, text, problem, call.question_ids)
        self.reasks[call.key] = Call(
            call.key, call.parts, call.case, call.question_ids, messages, call.attempt + 1
        )
        return True

    def _verdict(self, batch_id: str, call: Call, body: dict[str, Any]) -> DimensionVerdict:
        """A reply read like a live one: repairs, validation, the batch price."""
        usage = self._usage(body.get("usage") or {})
        common: dict[str, Any] = {
            "batch_id": batch_id,
            "requests": 1,
            "usage": usage,
            "attempts": call.attempt,
        }
        try:
            parsed = parse_reply(reply_text(body), call.question_ids)
        except (KeyError, IndexError, TypeError, UnparseableReply) as exc:
            problem = str(exc) if isinstance(exc, UnparseableReply) else "no message in the reply"
            reason = f"unparseable reply in batch {batch_id}: {problem}"
            verdict = unscored(call.question_ids, reason, "unparseable")
            return verdict.model_copy(update={**common, "attempt_errors": {"unparseable": 1}})
        self.judge.replies["repaired" if parsed.repairs else "clean"] += 1
        self.judge.repairs.update(parsed.repairs)
        identity = JudgeIdentity.of(
            _text(body.get("model")), _text(body.get("system_fingerprint")), self.judge.seed
        )
        verdict = DimensionVerdict(answers=parsed.answers, identity=identity, **common)
        return checked_verdict(verdict, call.question_ids, self.judge.name)

    def _usage(self, usage: dict[str, Any]) -> Usage:
        prompt = usage.get("prompt_tokens")
        completion = usage.get("completion_tokens")
        price = cost.batch_cost(self.judge.model, self.provider, prompt or 0, completion or 0)
        if self.budget is not None:
            self.budget.spend(price)
        return Usage(prompt_tokens=prompt, completion_tokens=completion, cost_usd=price)

    def _put(self, batch_id: str, call: Call, state: str, verdict: DimensionVerdict) -> None:
        self.store.put_batch_result(batch_id, call.key, state, (call.parts, call.case, verdict))
        if verdict.error is None:  # a lost call's error is dropped once a new batch answers it
            self.answered[call.key] = batch_id
            self.failed.pop(call.key, None)
        else:
            self.failed[call.key] = verdict
        self.report.answered += state == "answered"
        self.report.errors += state == "error"

    def _close(self, batch: StoredBatch, current: Any, kinds: Counter[str], lost: set[str]) -> None:
        counts = current.request_counts
        summary = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "no errors"
        self.store.update_batch(
            batch.id,
            str(current.status),
            getattr(counts, "completed", 0) or 0,
            getattr(counts, "failed", 0) or 0,
            closed=1,
            lost=len(lost),
            note=summary,
        )
        for kind in kinds:
            if kind in LOST_KINDS:
                self.report.lost[kind] += kinds[kind]
        if lost:
            self._event(
                f"batch {batch.id} {current.status}: {len(lost)} of {batch.calls} calls lost "
                f"({summary})"
            )
        else:
            self.note(f"batch {batch.id} {current.status}: {summary}")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
