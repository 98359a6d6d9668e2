"""Requests, prompt tokens and cached tokens per submission at each `--granularity`.

    python benchmarks/granularity.py [--submissions 200] [--concurrency 5] [--json PATH]

N synthetic submissions (`synth.py`) through the `llm` judge against the fake provider, once
per granularity, each against a fresh provider (an empty prompt cache). The fake provider
counts one token per four characters and reports `prompt_tokens_details.cached_tokens` for the
start of a prompt it has seen before, in 16-token blocks from 128 tokens on
(`judge.testing.prefix_cache`), as a provider with automatic prefix caching does.

Billing rule for "billed prompt tokens": uncached prompt tokens at the full price plus cached
ones at the provider's discount (litellm's price map: x0.5 for gpt-4o's cached input, x0.25 for
gpt-4.1's, x0.1 for gpt-5's and for Anthropic's cache reads), and only where the call's cached start reaches the provider's minimum: OpenAI caches
from 1,024 prompt tokens, Anthropic a marked block of at least 1,024 tokens (Sonnet 4.x; 2,048
or 4,096 for Haiku and some Opus models). Below it nothing is cached and every call pays in
full. Anthropic's surcharge for writing the cache (x1.25 on the marked start, once per
submission and 5 minutes) is not included. Each is reported against the prompt of the single
call `--granularity submission` makes (its full prompt tokens, uncached).

Two sets of submissions: the example's own diagnoses (a few hundred characters: the shared
start of a submission's prompts is ~600 tokens, under both minimums) and the same diagnoses
padded to `--long-chars` with their own text repeated (an agent that writes several paragraphs
of evidence, ITBench-style), where the shared start passes 1,024 tokens.
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

DISCOUNTS = {
    "x0.5 (gpt-4o)": (0.5, 1024),
    "x0.25 (gpt-4.1)": (0.25, 1024),
    "x0.1 (gpt-5, Claude)": (0.1, 1024),
}
"""Per provider: the price of a cached prompt token against an uncached one, and the fewest
cached tokens the provider caches at all (its documented minimum prompt / block length)."""


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
    calls = [
        (c.usage.prompt_tokens or 0, c.usage.cached_tokens or 0) for c in result.calls if c.usage
    ]
    for name, (rate, minimum) in DISCOUNTS.items():
        billed = sum(p - c + c * rate if c >= minimum else p for p, c in calls)
        row[name] = billed / n
    return row


def padded(path: Path, chars: int) -> Path:
    """The submissions at `path` with each diagnosis its own text repeated to `chars`."""
    target = path.with_name(f"long-{path.name}")
    with path.open(encoding="utf-8") as source, target.open("w", encoding="utf-8") as out:
        for line in source:
            row = json.loads(line)
            text = row["diagnosis"]
            row["diagnosis"] = (text + " ") * (chars // (len(text) + 1) + 1)
            out.write(json.dumps(row) + "\n")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=5)
    parser.add_argument(
        "--long-chars", type=int, default=4000, help="length of a padded diagnosis (default 4000)"
    )
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    args = parser.parse_args()
    from ground_truth import load_specs, load_submissions

    with tempfile.TemporaryDirectory() as tmp:
        path = write_submissions(args.submissions, Path(tmp))
        specs = load_specs(GROUND_TRUTH)
        sets = {"example": path, "long": padded(path, args.long_chars)}
        measured = {
            name: {
                g: measure(g, specs, load_submissions(source), args.concurrency)
                for g in ("dimension", "submission")
            }
            for name, source in sets.items()
        }
    for name, rows in measured.items():
        print_table(name, rows, args)
    if args.json:
        args.json.write_text(json.dumps(as_json(measured, args), indent=2) + "\n")


def print_table(name: str, rows: dict[str, dict[str, float]], args: argparse.Namespace) -> None:
    single = rows["submission"]["prompt"]
    what = (
        "the example's diagnoses"
        if name == "example"
        else f"diagnoses of {args.long_chars:,} chars"
    )
    print(
        f"\n{args.submissions} submissions x 3 dimensions, {what}, fake provider, "
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


def as_json(measured: dict[str, dict[str, dict[str, float]]], args: argparse.Namespace) -> dict:
    """Per set and granularity its per-submission numbers; billed prompt tokens against the
    single call (the example set's at the top level, as the benchmark driver reads them)."""

    def billed(rows: dict[str, dict[str, float]]) -> dict[str, float]:
        single = rows["submission"]["prompt"]
        return {name: rows["dimension"][name] / single for name in DISCOUNTS}

    return {
        "submissions": args.submissions,
        "concurrency": args.concurrency,
        "long_chars": args.long_chars,
        "per_submission": measured["example"],
        "billed_vs_single_call": billed(measured["example"]),
        "long": {
            "per_submission": measured["long"],
            "billed_vs_single_call": billed(measured["long"]),
        },
    }


if __name__ == "__main__":
    main()
