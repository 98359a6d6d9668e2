"""Runs of the llm judge against the fake provider (`judge.testing`) on the bundled example."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ground_truth import Submission, load_specs, load_submissions
from judge import Judge, make_judge
from judge.testing import FakeProvider

from . import EXAMPLE_GT, EXAMPLE_OUTPUTS

EXAMPLE_SPECS = load_specs(EXAMPLE_GT)
EXAMPLE_SUBS = load_submissions(EXAMPLE_OUTPUTS)


def llm_judge(provider: FakeProvider, model: str = "openai/fake-judge", **options: Any) -> Judge:
    """The llm judge on `provider`, with a short timeout and retry wait (`options` override)."""
    settings = {"timeout": 5.0, "retry_wait": 0.01, **options}
    return make_judge(model, api_base=provider.url, api_key="sk-test", **settings)


def submissions(n: int) -> list[Submission]:
    """n submissions cycled from the example set (trial s0, s1, ...), every prompt distinct."""
    return [
        Submission(
            incident_id=EXAMPLE_SUBS[i % len(EXAMPLE_SUBS)].incident_id,
            trial=f"s{i}",
            diagnosis=f"{EXAMPLE_SUBS[i % len(EXAMPLE_SUBS)].diagnosis} (copy {i})",
        )
        for i in range(n)
    ]


def write_submissions(path: Path, n: int) -> Path:
    """`submissions(n)` as a JSONL file `judge eval --outputs` reads."""
    lines = [
        s.model_dump_json(include={"incident_id", "trial", "diagnosis"}) for s in submissions(n)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path
