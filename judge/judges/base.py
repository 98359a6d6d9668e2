"""The interface every judge implements, and the optional capabilities a judge may add.

A judge is any object with a `name`, a `describe()` and a `judge(task)` (see `Judge`). The
engine asks nothing else of it. Three optional capabilities are small protocols of their own,
which the engine looks for with `isinstance`:

- `Cacheable`: `cache_identity()`; the run stores its answers and serves them again;
- `Gated`: a `gate` attribute the run sets; every provider request waits at it for the run's
  pause file, cooldown, rate limits, concurrency and stop, and reports its tokens and cost
  there (`--max-cost`, the result's `usage` block);
- `RequestGate`: what such a judge's `gate` offers (the run's `Gate`, or `NullGate` outside a run);
- `Composite`: a judge that asks other judges (a panel, a cascade); the run wraps each of them
  for the store, so each one's calls are cached under its own name.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol, cast, runtime_checkable

from ground_truth.models import IncidentSpec, Submission

from ..checklist.judgment import DimensionVerdict
from ..checklist.prompts import Prompt
from ..checklist.rubric import Dimension


@dataclass(frozen=True)
class JudgeTask:
    """One (submission, dimension) to answer, with the prompt already rendered.

    `prompt.messages` is the chat an LLM judge sends; `spec`, `submission` and `dimension`
    (its `questions`, each with `id`, `text` and `hint`) are there for judges that read the
    case directly.
    """

    spec: IncidentSpec
    submission: Submission
    dimension: Dimension
    prompt: Prompt

    @property
    def question_ids(self) -> list[str]:
        """The ids the verdict must answer, each exactly once, in the rubric's order."""
        return [q.id for q in self.dimension.questions]


@runtime_checkable
class Judge(Protocol):
    """What a judge is: a name, a description, and an answer per question of one dimension.

    `judge()` may be `async def` or a plain `def`; the engine runs a plain one in a worker
    thread (`asyncio.to_thread`), so a blocking client is fine. Its verdict answers each of
    `task.question_ids` once: `answer` "Yes" or "No" with `evidence` (a quote from the
    diagnosis) and `confidence`, or `answer=None` with an `unscored_reason` when it cannot tell
    (never a No). A missing, unknown or duplicated question id, a non-verdict return value or
    an exception costs that call's questions (unscored, with the reason), never the run.

    The engine checks a judge when it is built (`make_judge`, `evaluate`, a panel), so a judge
    without `describe()` or `judge()` fails at once with a `TypeError`, before any call.

    A complete judge, usable as `evaluate(specs, submissions, judge=OriginJudge())`, or from
    the CLI once registered (`register_judge("origin", OriginJudge)`, then
    `judge eval --judge-model origin ...`)::

        from judge import DimensionVerdict, JudgeTask, QuestionAnswer

        class OriginJudge:
            name = "origin"

            def describe(self) -> dict:
                return {"name": "origin", "model": None, "params": {}}

            def judge(self, task: JudgeTask) -> DimensionVerdict:
                text = task.submission.diagnosis.lower()
                named = [c.name for c in task.spec.fault_origin if c.name.lower() in text]
                answer = "Yes" if named else "No"
                return DimensionVerdict(answers=[
                    QuestionAnswer(question_id=q, answer=answer, evidence=", ".join(named))
                    for q in task.question_ids
                ])
    """

    name: str
    """Short name recorded with every judgment (`rules`, `llm:openai/gpt-4o`, ...)."""

    def describe(self) -> dict[str, Any]:
        """The judge's configuration for the result file: kind, model, parameters, never a key."""
        ...

    def judge(self, task: JudgeTask) -> DimensionVerdict | Awaitable[DimensionVerdict]:
        """Answer every question of `task.dimension` for `task.submission`."""
        ...


@runtime_checkable
class Cacheable(Protocol):
    """A judge whose answers the run's store keeps and serves again (the `llm` judge).

    The store key is a hash of the judge's `name`, this identity, the rendered prompt and the
    dimension's questions, so anything that changes answers belongs in it and nothing else.
    """

    name: str

    def cache_identity(self) -> dict[str, Any]:
        """`model`, `params` (only those that change answers; never a key) and `schema`."""
        ...


class RequestGate(Protocol):
    """What a `Gated` judge's `gate` offers (`judge.run.control.Gate` in a run, else `NullGate`)."""

    def slot(self, tokens: int = 0) -> AbstractAsyncContextManager[None]:
        """Hold it while a request is in flight: `async with self.gate.slot(tokens): ...`.
        Raises `RunStopped` once the run has stopped; let it propagate."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait between retries, waking early when the run stops."""
        ...

    def succeeded(
        self,
        estimated: int,
        prompt: int | None,
        completion: int | None,
        cost: float | None,
        cached: int | None = None,
        written: int | None = None,
    ) -> None:
        """A request answered: its tokens and price in USD (None when unknown); `cached` and
        `written`: prompt tokens read from and written to the provider's prompt cache."""
        ...

    def failed(self, kind: str, message: str, retry_after: float | None) -> None:
        """A request failed (`rate_limit`, `timeout`, `server`, `auth`, ...)."""
        ...

    def retrying(self) -> None:
        """A request is about to be sent again."""
        ...


class RunStopped(Exception):
    """Raised instead of starting a request once the run has stopped."""


class NullGate:
    """No limits, no stop: the `RequestGate` of a judge outside a run (`judge.judge(task)`)."""

    @asynccontextmanager
    async def slot(self, tokens: int = 0) -> AsyncIterator[None]:
        yield

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def succeeded(
        self,
        estimated: int,
        prompt: int | None,
        completion: int | None,
        cost: float | None,
        cached: int | None = None,
        written: int | None = None,
    ) -> None:
        pass

    def failed(self, kind: str, message: str, retry_after: float | None) -> None:
        pass

    def retrying(self) -> None:
        pass


@runtime_checkable
class Gated(Protocol):
    """A judge that sends provider requests through the run's gate (the `llm` judge).

    The run sets `gate` before its first call and puts back a `NullGate` after its last one.
    """

    gate: RequestGate


@runtime_checkable
class Composite(Protocol):
    """A judge made of other judges (`PanelJudge`, `CascadeJudge`). The run replaces each of
    them with a wrapper that serves and records its calls (`with_judges`), so a composite
    must ask its judges only through the list it was built with."""

    name: str

    def judges(self) -> list[Judge]:
        """The judges it asks, in order."""
        ...

    def with_judges(self, judges: list[Judge]) -> Judge:
        """The same composite asking `judges` (one for each of `judges()`, in order)."""
        ...


async def ask(judge: Judge, task: JudgeTask) -> DimensionVerdict:
    """`judge.judge(task)`, awaited when it is async, in a worker thread when it is not."""
    if inspect.iscoroutinefunction(judge.judge):
        return await judge.judge(task)
    reply: Any = await asyncio.to_thread(judge.judge, task)
    if inspect.isawaitable(reply):
        reply = await reply
    return reply


def check_judge(judge: object, what: str = "the judge") -> Judge:
    """`judge` when it has what `Judge` requires; a `TypeError` naming what is missing."""
    missing = [
        member for member in ("describe", "judge") if not callable(getattr(judge, member, None))
    ]
    if not isinstance(getattr(judge, "name", None), str):
        missing.insert(0, "name (a str)")
    if missing:
        raise TypeError(
            f"{what} ({type(judge).__name__}) is not a Judge: it has no "
            f"{', '.join(missing)}; a judge has `name: str`, `describe() -> dict` and "
            "`judge(task) -> DimensionVerdict` (async or not); see help(judge.Judge)"
        )
    return cast(Judge, judge)
