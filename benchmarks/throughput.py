"""Throughput against the physical limit, and CPU time per judgment.

    python benchmarks/throughput.py [--quick] [--only TEXT] [--json PATH]

For each scenario the fake provider runs in its own process with latency L and its own rate
limit R (requests per second; beyond it it answers 429). N submissions x 3 dimensions go
through the llm judge with `--max-concurrent C` and the client-side limiter set to R. The
physical limit is max(calls / R, calls x L / C): no client can beat it. The latency-bound
scenarios run 30 rounds of C calls each at C = 5, 20 and 50. We report

    ratio = wall time of the run / physical limit          (goal <= 1.05)
    CPU ms per judgment = this process's CPU time / calls  (provider wait excluded: the
                          provider is another process, and waiting costs no CPU)

The wall time starts after litellm is imported and one warm-up call is made (start-up is
measured by startup.py). The store is on (a fresh file), as in `judge eval`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from benchmarks.provider import provider_process  # noqa: E402


@dataclass
class Scenario:
    name: str
    submissions: int
    latency: float
    rate: float | None
    concurrency: int
    faults: str | None = None
    client_share: float = 1.0

    @property
    def calls(self) -> int:
        return 3 * self.submissions

    def limit(self) -> float:
        by_latency = self.calls * self.latency / self.concurrency
        by_rate = self.calls / self.rate if self.rate else 0.0
        return max(by_latency, by_rate)


SCENARIOS = [
    Scenario("latency-bound, L=1 s, 5 in flight", submissions=50, latency=1.0, rate=None,
             concurrency=5),
    Scenario("latency-bound, L=1 s, 20 in flight", submissions=200, latency=1.0, rate=None,
             concurrency=20),
    Scenario("latency-bound, L=1 s, 50 in flight", submissions=500, latency=1.0, rate=None,
             concurrency=50),
    Scenario(
        "rate-bound, client at 0.98 R", submissions=100, latency=0.2, rate=20.0, concurrency=8,
        client_share=0.98,
    ),
    Scenario(
        "latency-bound, 10% 500s (info)", submissions=100, latency=1.0, rate=None,
        concurrency=10, faults="500=0.1",
    ),
]  # fmt: skip


def provider_args(s: Scenario) -> list[str]:
    args = ["--latency", str(s.latency)]
    if s.rate:
        args += ["--rpm", str(int(s.rate)), "--rate-window", "1"]
    if s.faults:
        args += ["--fault-rate", s.faults, "--seed", "1"]
    return args


def run(s: Scenario) -> dict[str, float]:
    from benchmarks.synth import EXAMPLE, write_submissions
    from ground_truth import load_specs, load_submissions
    from judge import EvalOptions, evaluate_async, load_rubric
    from judge.api import run_sync
    from judge.judges.llm import LLMJudge
    from judge.testing import read_call_log

    with tempfile.TemporaryDirectory() as tmp:
        specs = load_specs(EXAMPLE / "ground_truth")
        subs = load_submissions(write_submissions(s.submissions, Path(tmp)))
        with provider_process(*provider_args(s)) as (url, log):
            judge = LLMJudge("openai/fake-judge", api_base=url, api_key="sk-bench", retry_wait=0.05)
            warm = EvalOptions(max_concurrent=1)
            run_sync(evaluate_async(specs, subs[:1], load_rubric(), judge, options=warm))
            options = EvalOptions(
                max_concurrent=s.concurrency,
                rpm=s.rate * 60 * s.client_share if s.rate else None,
                store=Path(tmp) / "bench.sqlite",
            )
            wall, cpu = time.perf_counter(), time.process_time()
            result = run_sync(evaluate_async(specs, subs, load_rubric(), judge, options=options))
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            requests = len(read_call_log(log)) - 3
    assert len(result.calls) == s.calls
    return {
        "wall": wall,
        "limit": s.limit(),
        "ratio": wall / s.limit(),
        "cpu_ms_per_call": 1000 * cpu / s.calls,
        "cpu_share": cpu / wall,
        "requests": requests,
        "prompt_tokens_per_submission": result.usage.prompt_tokens / s.submissions,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a fifth of the submissions")
    parser.add_argument("--only", help="run only the scenarios whose name contains this")
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    args = parser.parse_args()
    from judge.judges.clients.litellm_client import import_litellm

    import_litellm()
    print(
        f"{'scenario':36} {'calls':>5} {'wall s':>7} {'limit s':>7} {'ratio':>6} "
        f"{'CPU ms/call':>11} {'CPU/wall':>8}"
    )
    measured = {}
    for s in SCENARIOS:
        if args.only and args.only not in s.name:
            continue
        if args.quick:
            s.submissions //= 5
        r = run(s)
        measured[s.name] = {**asdict(s), "calls": s.calls, **r}
        print(
            f"{s.name:36} {s.calls:5d} {r['wall']:7.2f} {r['limit']:7.2f} {r['ratio']:6.3f} "
            f"{r['cpu_ms_per_call']:11.1f} {r['cpu_share']:8.2f}   (requests {r['requests']}, "
            f"prompt tokens/submission {r['prompt_tokens_per_submission']:.0f})",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps({"scenarios": measured}, indent=2) + "\n")


if __name__ == "__main__":
    main()
