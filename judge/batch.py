"""`judge eval --batch`: the calls the store cannot answer go to the provider as one batch job.

OpenAI-compatible Batch API (`/v1/files` + `/v1/batches`, litellm's `acreate_file`,
`acreate_batch`, `aretrieve_batch`, `afile_content`), for the providers litellm runs it for
(`openai`, `hosted_vllm`, `litellm_proxy`; any `--api-base` of theirs). The phase runs before the
run's workers start:

1. every unit's store key is computed; the ones the store answers are left to it;
2. open batches in the store that hold any of the other keys (a run that was killed while it
   polled) are polled again instead of submitting their calls a second time;
3. the rest go out as ONE batch: a JSONL file whose lines carry `custom_id` = the store key and
   the request the live call would send (`LLMJudge.request`); the batch id and the calls it holds
   are written to the store at once, before the first poll;
4. the batch is polled with backoff and a progress line (status, completed, failed); when it
   ends, each line's reply is read like a live reply (`parse_reply`, `checked_verdict`) and its
   answer, or its error, is written to the store with the call's state in one transaction;
5. calls lost to an expired, failed or cancelled batch, or to a failed line that a live call
   would have retried (429, 5xx, timeout), are reported (how many, and why) and asked again in
   a new batch, at most `rounds` times; so are unusable replies, with the live call's re-ask
   chat (`reask_messages`, at most `max_reasks` times). A line's other errors (400) are errors.
6. reply format: lines ask in the judge's negotiated mode (the one the store remembers for the
   endpoint, else `json_schema`). A line the server refused for its format (the live call's
   detector, `is_format_refusal`) steps the negotiation down, and exactly those calls are asked
   again in the weaker mode, in a new batch (at most one per mode); a line answered in the
   current mode confirms it, so it is remembered and named in the result as a live run's is.

Then the run's workers serve every unit from what the phase found (`BatchServed`): answers from
this run's batches count as calls made (the result's calls and usage say which batch), others
as store hits.

Cost: the provider's batch price. litellm's `*_batches` prices when it has them, else the
regular price less the provider's documented batch discount (`BATCH_DISCOUNT`).
"""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .batch_budget import BatchBudget, completion_cap
from .judges.base import JudgeTask
from .judges.mask import mask_secret
from .judges.repair import UnparseableReply, parse_reply
from .judges.structured import MODES, FormatRefused, Mode, is_format_refusal
from .judgment import DimensionVerdict, Usage, unscored
from .run.cache import NOT_JUDGED, KeyMaker, LeafCall, case_ref
from .run.control import Gate
from .run.progress import RunStats
from .run.validation import checked_verdict
from .store import CaseRef, KeyParts, Store, StoredBatch

if TYPE_CHECKING:
    from .judges.llm import LLMJudge

BATCH_DISCOUNT = {"openai": 0.5, "litellm_proxy": 0.5, "hosted_vllm": 0.0}
"""The share of the regular price a provider takes off for batch jobs, used when litellm has no
batch price for the model: OpenAI's Batch API costs 50% less (openai.com/api/pricing); a
litellm proxy forwards to such providers; a self-hosted vLLM server has no price to discount."""

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
    from .judges.llm import LLMJudge, import_litellm

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
class _Call:
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
    def from_record(cls, key: str, data: dict[str, Any]) -> _Call:
        parts, case = KeyParts(**data["parts"]), CaseRef(*data["case"])
        call = cls(key, parts, case, data["question_ids"], attempt=data.get("attempt", 1))
        call.mode = next((m for m in MODES if m == data.get("mode")), None)
        return call


_PARTS = ("judge", "model", "params", "prompt", "schema", "rubric")


@dataclass
class BatchReport:
    """What the batch phase did, for the result's `usage.batch` and `config.batch`."""

    provider: str
    discount: float | None
    submitted: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    lines: int = 0
    answered: int = 0
    errors: int = 0
    refused: int = 0
    """Lines the server refused for their reply format (asked again in a weaker one)."""
    lost: Counter[str] = field(default_factory=Counter)
    http_requests: int = 0
    wall_seconds: float = 0.0
    seconds: dict[str, float] = field(
        default_factory=lambda: {"submit": 0.0, "wait": 0.0, "collect": 0.0}
    )
    """Summed over batches: `submit` (build, upload, create), `wait` (created until its end
    was seen), `collect` (read, parse, store)."""
    reports: list[str] = field(default_factory=list)

    def usage(self) -> dict[str, Any]:
        return {
            "batches": self.submitted,
            "resumed": self.resumed,
            "lines": self.lines,
            "answered": self.answered,
            "errors": self.errors,
            "format_refused": self.refused,
            "lost": dict(self.lost),
            "http_requests": self.http_requests,
            "wall_seconds": round(self.wall_seconds, 3),
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
            "discount": self.discount,
            "reports": self.reports,
        }


def merge_batch_usage(blocks: Iterable[dict[str, Any] | None]) -> dict[str, Any] | None:
    """Shards' `usage.batch` blocks as one (`judge merge`): lists joined, counts added, the
    wall time the longest shard's (they ran side by side), the discount the first known."""
    present = [b for b in blocks if b]
    if not present:
        return None
    merged: dict[str, Any] = {}
    for block in present:
        for name, value in block.items():
            if name == "wall_seconds":
                merged[name] = max(merged.get(name, 0.0), value)
            elif name == "discount":
                merged[name] = merged.get(name) if merged.get(name) is not None else value
            elif isinstance(value, list):
                merged[name] = [*merged.get(name, []), *value]
            elif isinstance(value, dict):
                total = Counter(merged.get(name, {}))
                total.update(value)
                merged[name] = dict(total)
            else:
                merged[name] = merged.get(name, 0) + value
    return merged


class BatchPhase:
    """One run's batches: submit, resume, poll, collect, ask the lost calls again."""

    def __init__(
        self,
        judge: LLMJudge,
        store: Store,
        options: BatchOptions,
        gate: Gate,
        note: Callable[[str], None],
    ):
        self.judge = judge
        self.store = store
        self.options = options
        self.gate = gate
        self.note = note
        self.provider = batch_provider(judge)
        self.litellm = _litellm()
        self.model_name = self.litellm.get_llm_provider(model=judge.model)[0]
        self.report = BatchReport(self.provider, batch_discount(judge.model, self.provider))
        self.results: dict[str, DimensionVerdict] = {}
        self.calls: dict[str, _Call] = {}
        self.reasks: dict[str, _Call] = {}
        self.refused: dict[str, _Call] = {}
        """Calls whose line the server refused for its reply format: asked again in the
        weaker mode the negotiation stepped down to."""
        self.budget = self._budget(gate.max_cost)
        self.left_out: set[str] = set()
        """Calls not submitted because their batch's worst case would pass `--max-cost`."""

    # ------------------------------------------------------------------ the phase

    async def run(self, calls: dict[str, _Call]) -> None:
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
        model, provider = self.judge.model, self.provider
        return BatchBudget(
            limit,
            price=lambda prompt, completion: batch_cost(model, provider, prompt, completion),
            cap=completion_cap(self.judge.extra_params, _model_info(model)),
        )

    def budget_stop(self) -> str:
        """Why the run stops after its batches: the calls `--max-cost` left out."""
        reason = self.budget.exhausted if self.budget is not None else None
        return (
            f"{len(self.left_out)} of {len(self.calls)} calls were left out of the batch, "
            f"not asked: {reason}"
        )

    def _affordable(self, todo: dict[str, _Call]) -> list[_Call]:
        """The calls, in order, whose batch's worst case fits in what is left of `--max-cost`;
        the others are left out (not asked) and no later batch is submitted."""
        calls = list(todo.values())
        if self.budget is None:
            return calls
        fit = self.budget.fit([(call.key, call.messages or []) for call in calls])
        if fit.count < len(calls):
            self.left_out.update(call.key for call in calls[fit.count :])
            self._event(
                f"--max-cost: submitting {fit.count} of {len(calls)} calls (worst case "
                f"${fit.worst:.4f}); {len(calls) - fit.count} calls left out, not asked: "
                f"{fit.reason}"
            )
        return calls[: fit.count]

    async def _resume(self, todo: dict[str, _Call]) -> list[StoredBatch]:
        """The open batches in the store that hold any of `todo` (a run killed while it
        polled, or while it created the batch): their calls leave `todo`; they are polled."""
        following = []
        for batch in [b for b in self.store.open_batches(todo) if self._ours(b)]:
            held = [key for key, _, state in self.store.batch_calls(batch.id) if state == "pending"]
            for key in held:
                todo.pop(key, None)
                if self.budget is not None and key in self.calls:
                    self.budget.hold(key, self.calls[key].messages or [])
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

    def _not_submitted(self, calls: list[_Call], failed: BatchRequestFailed) -> None:
        """The provider refused the batch: each call is a failed call (stored as an error,
        unscored, never No; `judge eval` exits 3 when they all failed or the key was refused)."""
        self._event(f"{len(calls)} calls not submitted: {failed}")
        for call in calls:
            verdict = unscored(call.question_ids, str(failed), failed.kind)
            self.store.put(call.parts, call.case, verdict)
            self.results[call.key] = verdict
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

    async def _submit(self, calls: list[_Call]) -> StoredBatch:
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

    def _line(self, call: _Call) -> dict[str, Any]:
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
        from .judges.llm import TRANSIENT, error_kind

        wait = self.options.poll
        for attempt in range(1, self.judge.max_retries + 2):
            self.report.http_requests += 1
            try:
                return await send()
            except Exception as exc:
                kind = error_kind(exc)
                words = mask_secret(str(exc), self.judge.endpoint().get("api_key"))
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
            key: _Call.from_record(key, data)
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
        missing = _batch_failure(current)
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
        text = content.content.decode("utf-8", "replace")
        return [json.loads(raw) for raw in text.splitlines() if raw.strip()]

    def _store_line(self, batch_id: str, call: _Call, line: dict[str, Any]) -> str | None:
        """Store one output or error line; its error kind, None for an answer."""
        response = line.get("response") or {}
        status = response.get("status_code")
        if status != 200 and self._format_refused(batch_id, call, response):
            return "format_refused"
        if line.get("error") or status != 200:
            kind, reason = _line_error(line, batch_id)
            reason = mask_secret(reason, self.judge.endpoint().get("api_key"))
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

    def _format_refused(self, batch_id: str, call: _Call, response: dict[str, Any]) -> bool:
        """Whether the line is the server refusing its reply format (the live call's detector,
        `is_format_refusal`): the negotiation steps down as for a live call, and the call is
        asked again in the weaker mode. A mode the user forced is an error, as live."""
        mode = call.mode or self.judge.negotiation.mode
        failure = _LineFailure(response)
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

    def _reask(self, call: _Call, body: dict[str, Any], verdict: DimensionVerdict) -> bool:
        """Ask again after an unusable reply, like a live call does (at most `max_reasks`
        times, with the same words); False when no re-ask is left or the prompt is unknown
        (a batch resumed for calls this run does not make)."""
        from .judges.llm import reask_messages

        original = self.calls.get(call.key)
        if original is None or original.messages is None or call.attempt > self.judge.max_reasks:
            return False
        try:
            content = _content(body)
        except (KeyError, IndexError, TypeError):
            content = None
        problem = (verdict.error or "").split(": ", 1)[-1]
        messages = reask_messages(original.messages, content, problem, call.question_ids)
        self.reasks[call.key] = _Call(
            call.key, call.parts, call.case, call.question_ids, messages, call.attempt + 1
        )
        return True

    def _verdict(self, batch_id: str, call: _Call, body: dict[str, Any]) -> DimensionVerdict:
        """A reply read like a live one: repairs, validation, the batch price."""
        usage = self._usage(body.get("usage") or {})
        common: dict[str, Any] = {
            "batch_id": batch_id,
            "requests": 1,
            "usage": usage,
            "attempts": call.attempt,
        }
        try:
            parsed = parse_reply(_content(body), call.question_ids)
        except (KeyError, IndexError, TypeError, UnparseableReply) as exc:
            problem = str(exc) if isinstance(exc, UnparseableReply) else "no message in the reply"
            reason = f"unparseable reply in batch {batch_id}: {problem}"
            verdict = unscored(call.question_ids, reason, "unparseable")
            return verdict.model_copy(update={**common, "attempt_errors": {"unparseable": 1}})
        self.judge.replies["repaired" if parsed.repairs else "clean"] += 1
        self.judge.repairs.update(parsed.repairs)
        verdict = DimensionVerdict(answers=parsed.answers, **common)
        return checked_verdict(verdict, call.question_ids, self.judge.name)

    def _usage(self, usage: dict[str, Any]) -> Usage:
        prompt = usage.get("prompt_tokens")
        completion = usage.get("completion_tokens")
        cost = batch_cost(self.judge.model, self.provider, prompt or 0, completion or 0)
        if self.budget is not None:
            self.budget.spend(cost)
        return Usage(prompt_tokens=prompt, completion_tokens=completion, cost_usd=cost)

    def _put(self, batch_id: str, call: _Call, state: str, verdict: DimensionVerdict) -> None:
        self.store.put_batch_result(batch_id, call.key, state, (call.parts, call.case, verdict))
        self.results[call.key] = verdict  # a lost call's is replaced if a new batch answers it
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


def _content(body: dict[str, Any]) -> Any:
    """The reply's text (KeyError, IndexError or TypeError when the body has none)."""
    return body["choices"][0]["message"]["content"]


class _LineFailure(Exception):
    """A failed batch line as the live call's exception would look: its HTTP status and its
    body, for `is_format_refusal`."""

    def __init__(self, response: dict[str, Any]):
        body = response.get("body")
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        self.status_code = response.get("status_code")
        self.body = json.dumps(body) if body is not None else ""
        super().__init__(str(message or self.body))


class BatchRequestFailed(Exception):
    """A Files/Batches request failed for good; `kind` as a live call's error kinds."""

    def __init__(self, kind: str, reason: str):
        super().__init__(reason)
        self.kind = kind


def _line_error(line: dict[str, Any], batch_id: str) -> tuple[str, str]:
    """A failed line's error kind and reason."""
    error = line.get("error") or {}
    response = line.get("response") or {}
    status = response.get("status_code")
    body_error = (response.get("body") or {}).get("error") or {}
    code = str(error.get("code") or body_error.get("code") or "")
    message = str(error.get("message") or body_error.get("message") or "")
    kind = code if code in {"batch_expired", "batch_cancelled"} else _status_kind(status)
    words = " ".join(message.split())[:300]
    return kind, f"{kind} in batch {batch_id}" + (f" (HTTP {status})" if status else "") + (
        f": {words}" if words else ""
    )


def _status_kind(status: Any) -> str:
    if status == 429:
        return "rate_limit"
    if status in {408, 504}:
        return "timeout"
    if status in {401, 403}:
        return "auth"
    if isinstance(status, int) and status >= 500:
        return "server"
    if isinstance(status, int) and status >= 400:
        return "bad_request"
    return "batch_failed"


def _batch_failure(current: Any) -> str:
    errors = getattr(current, "errors", None)
    data = getattr(errors, "data", None) or []
    words = "; ".join(str(getattr(e, "message", e)) for e in data[:3])
    return f"batch {current.id} {current.status} before answering this call" + (
        f": {words}" if words else ""
    )


# ------------------------------------------------------------------ prices


def _litellm() -> Any:
    from .judges.llm import import_litellm

    return import_litellm()


def _model_info(model: str) -> dict[str, Any] | None:
    try:
        return dict(_litellm().get_model_info(model=model))
    except Exception:  # no price known for the model
        return None


def batch_cost(model: str, provider: str, prompt: int, completion: int) -> float | None:
    """What `prompt` + `completion` tokens cost in a batch: litellm's batch prices when it has
    them, else its regular prices less `BATCH_DISCOUNT`; None when the model has no price."""
    info = _model_info(model)
    if info is None:
        return None
    batch_in, batch_out = (
        info.get("input_cost_per_token_batches"),
        info.get("output_cost_per_token_batches"),
    )
    if batch_in is not None and batch_out is not None:
        return prompt * batch_in + completion * batch_out
    regular_in, regular_out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if regular_in is None or regular_out is None:
        return None
    return (prompt * regular_in + completion * regular_out) * (
        1 - BATCH_DISCOUNT.get(provider, 0.0)
    )


def batch_discount(model: str, provider: str) -> float | None:
    """The share taken off the regular input price for a batch: litellm's, else ours."""
    info = _model_info(model) or {}
    batch_in, regular_in = (
        info.get("input_cost_per_token_batches"),
        info.get("input_cost_per_token"),
    )
    if batch_in is not None and regular_in:
        return round(1 - batch_in / regular_in, 4)
    return BATCH_DISCOUNT.get(provider)


# ------------------------------------------------------------------ serving the run


class BatchServed:
    """The run's judge once the batch phase is over: every unit's verdict comes from this
    run's batches (a call made), else from the store (a hit), else it was not judged (the run
    stopped with its batch still open, or `--max-cost` left the call out).

    Calls left out by `--max-cost` stop the run (`max_cost`, as a live run past its budget)
    once the last of the `asked` units is served: the run's workers start no unit after a
    stop, and the units the batches answered must still be served first."""

    def __init__(
        self,
        phase: BatchPhase,
        keys: KeyMaker,
        sink: Callable[[LeafCall], None],
        stats: RunStats,
        asked: int = 0,
    ):
        self.phase = phase
        self.inner = phase.judge
        self.name = phase.judge.name
        self.keys = keys
        self.sink = sink
        self.stats = stats
        self._served: set[str] = set()
        self._unserved = asked

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        try:
            return self._serve(task)
        finally:
            self._unserved -= 1
            if self._unserved <= 0 and self.phase.left_out:
                self.phase.gate.stop("max_cost", self.phase.budget_stop())

    def _serve(self, task: JudgeTask) -> DimensionVerdict:
        parts = self.keys.parts(task)
        verdict = self.phase.results.get(parts.key)
        if verdict is not None:
            return self._from_batch(task, parts.key, verdict)
        hit = self.phase.store.get(parts)
        if hit is not None:
            hit.requests = 0
            self.sink(LeafCall(task, self.name, hit, cached=True))
            return hit
        reason = self.phase.gate.stopped.message if self.phase.gate.stopped else "no answer"
        if parts.key in self.phase.left_out:
            reason = self.phase.budget_stop()
        verdict = unscored(task.question_ids, f"not judged: {reason}", NOT_JUDGED, attempts=0)
        self.sink(LeafCall(task, self.name, verdict, judged=False))
        return verdict

    def _from_batch(self, task: JudgeTask, key: str, verdict: DimensionVerdict) -> DimensionVerdict:
        if key in self._served:  # the same call for another unit: one line answered both
            shared = verdict.model_copy(
                update={"cached": verdict.error is None, "requests": 0, "usage": None}
            )
            self.sink(LeafCall(task, self.name, shared, cached=shared.cached, shared=True))
            return shared
        self._served.add(key)
        usage = verdict.usage or Usage()
        self.stats.requests += verdict.requests  # the batch line
        self.stats.add_usage(usage.prompt_tokens, usage.completion_tokens, usage.cost_usd)
        self.sink(LeafCall(task, self.name, verdict))
        return verdict


def pending_calls(
    tasks: Iterable[JudgeTask], keys: KeyMaker, store: Store, refresh: bool
) -> dict[str, _Call]:
    """The calls the store cannot answer, one per key, with their messages (looked up 500 at
    a time so that only the misses' prompts are held)."""
    found: dict[str, _Call] = {}
    chunk: list[_Call] = []

    def flush() -> None:
        present = set() if refresh else store.keys_present(c.key for c in chunk)
        found.update((c.key, c) for c in chunk if c.key not in present)
        chunk.clear()

    for task in tasks:
        parts = keys.parts(task)
        call = _Call(parts.key, parts, case_ref(task), task.question_ids, task.prompt.messages)
        chunk.append(call)
        if len(chunk) >= 500:
            flush()
    flush()
    return found


async def batch_phase(
    judge: LLMJudge,
    tasks: Iterable[JudgeTask],
    store: Store,
    options: BatchOptions,
    gate: Gate,
    sink: Callable[[LeafCall], None],
    note: Callable[[str], None],
    refresh: bool = False,
) -> tuple[BatchServed, BatchReport]:
    """Run the batches for every call `store` cannot answer; the judge that serves the run."""
    phase = BatchPhase(judge, store, options, gate, note)
    keys = KeyMaker(judge)
    store.remember_params(keys.params_hash, keys.params)
    asked = 0

    def counted() -> Iterator[JudgeTask]:  # the tasks' prompts are not all held at once
        nonlocal asked
        for task in tasks:
            asked += 1
            yield task

    await phase.run(pending_calls(counted(), keys, store, refresh))
    return BatchServed(phase, keys, sink, gate.stats, asked), phase.report
