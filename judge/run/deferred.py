"""A judge's task whose prompt is rendered only when a judge reads it.

Rendering a prompt (jinja2) is a good part of a call's own CPU, and most judges do not need
every prompt: the rules judge reads the case, never the prompt, and a call the store answers
needs only the prompt's hash, which planning already computed. A `DeferredTask` is a
`JudgeTask` to every judge; its prompt is rendered the first time `task.prompt` is read.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ground_truth.models import IncidentSpec, Submission

from ..checklist.prompts import Prompt
from ..checklist.rubric import Dimension
from ..judges.base import JudgeTask


class DeferredTask(JudgeTask):
    """A `JudgeTask` that renders its prompt on first use (`render`), and knows the prompt's
    hash without rendering when `prompt_hash` was computed before (by planning)."""

    _render: Callable[[], Prompt]
    _hash: str | None
    _inputs: Callable[[], str] | None

    def __init__(
        self,
        spec: IncidentSpec,
        submission: Submission,
        dimension: Dimension,
        render: Callable[[], Prompt],
        prompt_hash: str | None = None,
        inputs: Callable[[], str] | None = None,
    ) -> None:
        """`inputs`: the key of what the prompt is rendered from (`PromptRenderer.inputs_key`),
        under which a store remembers the prompt's hash."""
        # JudgeTask is a frozen dataclass: its fields are set the way its own __init__ does
        for name, value in (("spec", spec), ("submission", submission), ("dimension", dimension)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_render", render)
        object.__setattr__(self, "_hash", prompt_hash)
        object.__setattr__(self, "_inputs", inputs)

    @functools.cached_property
    def prompt(self) -> Prompt:
        return self._render()

    @property
    def prompt_hash(self) -> str:
        """The prompt's hash, rendering the prompt only when planning did not compute it."""
        return self._hash if self._hash is not None else self.prompt.hash


def inputs_key_of(task: JudgeTask) -> str | None:
    """The key of what a deferred task's prompt is rendered from; None for any other task."""
    if isinstance(task, DeferredTask) and task._inputs is not None:
        return task._inputs()
    return None


def prompt_hash_of(task: JudgeTask) -> str:
    """`task.prompt.hash`, without rendering a deferred task's prompt when its hash is known."""
    return task.prompt_hash if isinstance(task, DeferredTask) else task.prompt.hash
