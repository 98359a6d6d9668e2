"""Requests, prompt tokens and cached tokens per submission at each `--granularity`.

    python benchmarks/granularity.py [--submissions 200] [--concurrency 5] [--json PATH]

N synthetic submissions (`synth.py`) through the `llm` judge against the fake provider, once
per granularity, each against a fresh provider (an empty prompt cache). The fake provider
counts one token per four characters and reports `prompt_tokens_details.cached_tokens` for the
start of a prompt it has seen before, in 16-token blocks from 128 tokens on
(`judge.testing.prefix_cache`), as a provider with automatic prefix caching does.

Billing rule for "billed prompt tokens": uncached prompt tokens at the full price plus cached
ones at the provider's discount: x0.5 (OpenAI's cached input) and x0.1 (Anthropic's cache
reads). Anthropic's surcharge for writing the cache (x1.25 on the marked start, once per
submission and 5 minutes) is not included. Each is reported against the prompt of the single
call `--granularity submission` makes (its full prompt tokens, uncached).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.synth import GROUND_TRUTH, write_submissions  # noqa: E402

DISCOUNTS = {"OpenAI x0.5": 0.5, "Anthropic x0.1": 0.1}


def measure(granularity: str, specs, submissions, concurrency: int) -> dict[str, float]:
    """Per-submission requests and tokens of one run at `granularity`."""
    from judge import EvalOptions, evaluate, load_rubric
    from judge.judges.llm import LLMJudge
    from judge.testing import FakeProvider, FakeProviderConfig

    with FakeProvider(FakeProviderConfig(seed=1)) as server:
        judge = LLMJudge("openai/fake-judge", api_base=server.url, retry_wait=0.01)
        options = EvalOptions(max_concurrent=concurrency, granularity=granularity)  # type: ignore[arg-type]
        result = evaluate(specs, submissions, load_rubric(), judge, options=options)
    usage = result.usage
    assert usage is not None and result.overall.n_failed_questions == 0
    n = len(result.cases)
    prompt, cached = usage.prompt_tokens / n, usage.cached_tokens / n
    row = {
        "requests": usage.requests / n,
        "prompt": prompt,
        "cached": cached,
        "completion": usage.completion_tokens / n,
    }
    for name, rate in DISCOUNTS.items():
        row[name] = prompt - cached + cached * rate
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    args = parser.parse_args()
    from ground_truth import load_specs, load_submissions

    with tempfile.TemporaryDirectory() as tmp:
        path = write_submissions(args.submissions, Path(tmp))
        specs, submissions = load_specs(GROUND_TRUTH), load_submissions(path)
        rows = {
            g: measure(g, specs, submissions, args.concurrency) for g in ("dimension", "submission")
        }
    single = rows["submission"]["prompt"]
    print(
        f"{args.submissions} submissions x 3 dimensions, fake provider, "
        f"{args.concurrency} in flight; per submission:\n"
    )
    print(
        "| granularity | requests | prompt tokens | cached | completion | "
        + " | ".join(f"billed, {name} (vs single call)" for name in DISCOUNTS)
        + " |"
    )
    print("|---|---:|---:|---:|---:|" + "---:|" * len(DISCOUNTS))
    for granularity, row in rows.items():
        billed = " | ".join(f"{row[name]:,.0f} ({row[name] / single:.2f}x)" for name in DISCOUNTS)
        print(
            f"| {granularity} | {row['requests']:.2f} | {row['prompt']:,.0f} "
            f"| {row['cached']:,.0f} | {row['completion']:,.0f} | {billed} |"
        )
    dimension = rows["dimension"]
    print(
        f"\nrequests: {dimension['requests'] / rows['submission']['requests']:.2f}x; "
        f"prompt tokens uncached: {dimension['prompt'] / single:.2f}x the single call"
    )
    if args.json:
        args.json.write_text(json.dumps(as_json(rows, args), indent=2) + "\n")


def as_json(rows: dict[str, dict[str, float]], args: argparse.Namespace) -> dict:
    """Per granularity its per-submission numbers; billed prompt tokens against the single call."""
    single = rows["submission"]["prompt"]
    return {
        "submissions": args.submissions,
        "concurrency": args.concurrency,
        "per_submission": rows,
        "billed_vs_single_call": {name: rows["dimension"][name] / single for name in DISCOUNTS},
    }


if __name__ == "__main__":
    main()
