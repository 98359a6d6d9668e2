"""Throughput under faults: 50% 429s with `Retry-After: 1`, 30% 500s, a provider's own quota,
against no fault.

    python benchmarks/cooldown.py [--submissions 50] [--latency 0.5] [--concurrency 8]
                                  [--json PATH]

The fake provider runs in its own process; N submissions x 3 dimensions go through the llm
judge with the CLI's defaults (`--max-retries 5`, `--cooldown 60`, `--cooldown-after` as many as
`--max-concurrent`) at the same `--max-concurrent`. We report judgments per minute and their ratio to the fault-free run
(goal at 50% 429s: >= 0.5), and the run's wall time against its physical limit: the provider
requests it made x latency / concurrency, or under the quota the calls / the quota's rate,
whichever is longer. The fake answers an injected 429 or 500 after the same latency as an
answer, so at 50% 429s a call costs two requests on average and 0.5 is also the most any client
can reach there; providers decide a 429 before doing any work and answer it at once, which the
`--fast-429` scenario does (its limit counts only the requests that were answered: a client
that keeps its slots busy while calls wait out their Retry-After reaches 1.0 there). The quota scenario (the fake's own limiter: QUOTA requests in any WINDOW
seconds, a quarter of what 8 in flight would send, 429 at once with the wait until a request is allowed
as Retry-After) shows what a real rate limit costs: 429s per call, and whether the run keeps
to the quota's pace.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from benchmarks.provider import provider_process  # noqa: E402

FAST_429 = "50% 429 at once, Retry-After 1"
QUOTA, WINDOW = 20, 5.0
QUOTA_SCENARIO = f"quota {QUOTA} per {WINDOW:g} s"
SCENARIOS = [
    ("no fault", []),
    ("50% 429, Retry-After 1", ["--fault-rate", "429=0.5", "--retry-after", "1"]),
    (FAST_429, ["--fault-rate", "429=0.5", "--retry-after", "1", "--fast-429"]),
    ("30% 500", ["--fault-rate", "500=0.3"]),
    (QUOTA_SCENARIO, ["--rpm", str(QUOTA), "--rate-window", str(WINDOW)]),
]


def run(args: argparse.Namespace, faults: list[str]) -> dict[str, float]:
    from benchmarks.synth import EXAMPLE, write_submissions
    from ground_truth import load_specs, load_submissions
    from judge import EvalOptions, evaluate_async, load_rubric
    from judge.api import run_sync
    from judge.judges.llm import LLMJudge
    from judge.testing import read_call_log

    with tempfile.TemporaryDirectory() as tmp:
        specs = load_specs(EXAMPLE / "ground_truth")
        subs = load_submissions(write_submissions(args.submissions, Path(tmp)))
        provider = ["--latency", str(args.latency), "--seed", "3", *faults]
        with provider_process(*provider) as (url, log):
            judge = LLMJudge("openai/fake-judge", api_base=url, api_key="sk-bench")
            options = EvalOptions(max_concurrent=args.concurrency)
            wall, cpu = time.perf_counter(), time.process_time()
            result = run_sync(evaluate_async(specs, subs, load_rubric(), judge, options=options))
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            requests = len(read_call_log(log))
    calls = len(result.calls)
    rate_limited = result.attempt_errors.get("rate_limit", 0)
    in_slot = requests - rate_limited if "--fast-429" in faults else requests
    quota_limit = calls / (QUOTA / WINDOW) if "--rpm" in faults else 0.0
    return {
        "wall": wall,
        "cpu": cpu,
        "per_min": 60 * calls / wall,
        "requests": requests,
        "rate_limited_per_call": rate_limited / calls,
        "failed": sum(1 for c in result.calls if c.error_kind),
        "limit": max(in_slot * args.latency / args.concurrency, quota_limit),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    args = parser.parse_args()
    from judge.judges.clients.litellm_client import import_litellm

    import_litellm()
    print(f"{args.submissions * 3} calls, latency {args.latency} s, --max-concurrent "
          f"{args.concurrency}")  # fmt: skip
    print(f"{'faults':31} {'wall s':>7} {'calls/min':>9} {'vs none':>7} {'requests':>8} "
          f"{'429/call':>8} {'failed':>6} {'wall/limit':>10} {'CPU s':>6}")  # fmt: skip
    base = None
    measured = {}
    for name, faults in SCENARIOS:
        r = run(args, faults)
        base = base or r["per_min"]
        measured[name] = {
            **r,
            "vs_no_fault": r["per_min"] / base,
            "wall_vs_limit": r["wall"] / r["limit"],
        }
        print(
            f"{name:31} {r['wall']:7.1f} {r['per_min']:9.0f} {r['per_min'] / base:7.2f} "
            f"{r['requests']:8d} {r['rate_limited_per_call']:8.2f} {r['failed']:6d} "
            f"{r['wall'] / r['limit']:10.2f} {r['cpu']:6.1f}",
            flush=True,
        )
    if args.json:
        numbers = {
            "calls": 3 * args.submissions, "latency": args.latency,
            "concurrency": args.concurrency, "scenarios": measured,
        }  # fmt: skip
        args.json.write_text(json.dumps(numbers, indent=2) + "\n")


if __name__ == "__main__":
    main()
