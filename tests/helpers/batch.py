"""Batch-mode runs (`EvalOptions.batch`, `judge eval --batch`) against the fake provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judge import EvalOptions, EvalResult, evaluate
from judge.run.batch import BatchOptions
from judge.testing import CallRecord, FakeProvider, FakeProviderConfig

from . import EXAMPLE_GT
from .fake_runs import EXAMPLE_SPECS, llm_judge, submissions, write_submissions

FAST_BATCH = BatchOptions(poll=0.02, max_poll=0.05)
"""Polls a batch often, so a test's batch ends as soon as the fake provider finishes it."""


def batch_provider(**config: Any) -> FakeProvider:
    """A fake provider whose batches finish after 0.05 s (`config`: the rest of its settings)."""
    return FakeProvider(FakeProviderConfig(batch_delay=0.05, **config))


def batch_run(
    provider: FakeProvider, store: Path, n: int = 4, **options: Any
) -> tuple[EvalResult, list[str]]:
    """`submissions(n)` judged per dimension in batch mode with `store`: the result and the
    run's notes."""
    notes: list[str] = []
    batch = options.pop("batch", FAST_BATCH)
    result = evaluate(
        EXAMPLE_SPECS,
        submissions(n),
        judge=llm_judge(provider),
        options=EvalOptions(
            granularity="dimension", store=store, batch=batch, note=notes.append, **options
        ),
    )
    return result, notes


def batch_lines(provider: FakeProvider) -> list[CallRecord]:
    """The requests the provider served as lines of a batch."""
    return [c for c in provider.calls if c.path.startswith("batch ")]


def batch_command(tmp_path: Path, url: str, *extra: str) -> list[str]:
    """`judge eval --batch` arguments over three submissions written to `tmp_path`."""
    outputs = tmp_path / "subs.jsonl"
    if not outputs.exists():
        write_submissions(outputs, 3)
    return [
        "eval", "--ground-truth", str(EXAMPLE_GT), "--outputs", str(outputs),
        "--result-file", str(tmp_path / "r.json"), "--api-base", url, "--no-progress",
        "--batch", "--batch-poll", "0.05", "--granularity", "dimension", *extra,
    ]  # fmt: skip
