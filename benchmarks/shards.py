"""4 shards in 4 processes, merged, against one run: same answers, and the wall time ratio.

    python benchmarks/shards.py [--submissions 200] [--latency 1.0] [--concurrency 5] [--shards 4]
                                [--json PATH]

The fake provider runs in its own process with a fixed latency (latency-bound: it serves any
number of requests at once). One `judge eval` process judges N submissions x 3 dimensions with
`--max-concurrent C`; then `--shards` processes run `judge eval --shard I/N` at once, each with
the same `--max-concurrent C`, and `judge merge` puts their results together. Both walls are
whole commands (start-up, litellm's import, writing results); the shards' wall includes the
merge. The merged result must equal the single run's (judgments, cases, incidents, overall).
Start-up, a cost each process pays once whatever the run's size, is shown on its own: seconds
from launching a command to the provider's first request for one of that command's calls.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.provider import provider_process  # noqa: E402
from benchmarks.synth import GROUND_TRUTH, write_submissions  # noqa: E402
from judge.testing import CallRecord, read_call_log  # noqa: E402

SAME = ("judgments", "cases", "incidents", "overall", "by_agent")


def eval_command(outputs: Path, result: Path, url: str, concurrency: int) -> list[str]:
    return [
        sys.executable, "-m", "judge", "eval", "--ground-truth", str(GROUND_TRUTH),
        "--outputs", str(outputs), "--result-file", str(result), "--judge-model",
        "openai/fake-judge", "--api-base", url, "--max-concurrent", str(concurrency),
        "--no-progress", "--json",
    ]  # fmt: skip


def timed(commands: list[list[str]]) -> tuple[float, float, float]:
    """Wall time of the commands run at once, the CPU seconds they used, and when (epoch
    seconds, the provider log's clock) they were launched."""
    launched, start, cpu = time.time(), time.perf_counter(), _children_cpu()
    runs = [
        subprocess.Popen(c, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for c in commands
    ]
    if any(run.wait() != 0 for run in runs):
        raise SystemExit("a judge command failed")
    return time.perf_counter() - start, _children_cpu() - cpu, launched


def startup(result: Path, log: list[CallRecord], launched: float) -> float:
    """Seconds from launching the command that wrote `result` to the provider's first request
    for one of its calls (the single run and the shards send the same prompts: only requests
    after the launch count)."""
    hashes = {call["prompt_hash"] for call in json.loads(result.read_text())["calls"]}
    return (
        min(r.timestamp for r in log if r.timestamp >= launched and r.messages_hash in hashes)
        - launched
    )


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=200)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=5)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    args = parser.parse_args()
    n = args.shards
    with (
        tempfile.TemporaryDirectory() as tmp,
        provider_process("--latency", str(args.latency)) as (url, log_path),
    ):
        folder = Path(tmp)
        outputs = write_submissions(args.submissions, folder)
        one = folder / "one.json"
        load = os.getloadavg()[0]
        single, single_cpu, single_launch = timed(
            [eval_command(outputs, one, url, args.concurrency)]
        )
        parts = [folder / f"shard{i}.json" for i in range(1, n + 1)]
        commands = [
            [*eval_command(outputs, p, url, args.concurrency), "--shard", f"{i}/{n}"]
            for i, p in enumerate(parts, 1)
        ]
        merged = folder / "merged.json"
        merge = [sys.executable, "-m", "judge", "merge", *map(str, parts), "-o", str(merged)]
        shards, shards_cpu, shards_launch = timed(commands)
        merging, merge_cpu, _ = timed([merge])
        sharded = shards + merging
        log = read_call_log(log_path)
        single_start = startup(one, log, single_launch)
        shard_starts = [startup(p, log, shards_launch) for p in parts]
        a, b = json.loads(one.read_text()), json.loads(merged.read_text())
        identical = all(a[k] == b[k] for k in SAME)
    calls = 3 * args.submissions
    limit = calls * args.latency / args.concurrency
    print(f"{calls} calls, latency {args.latency} s, --max-concurrent {args.concurrency}")
    print(f"load average at start {load:.1f} on {os.cpu_count()} CPUs")
    print(
        f"one run:            {single:7.1f} s  (physical limit {limit:.1f} s; CPU {single_cpu:.1f} s)"
    )
    print(
        f"{n} shards at once:   {shards:7.1f} s  (physical limit {limit / n:.1f} s; CPU {shards_cpu:.1f} s)"
    )
    print(f"merge:              {merging:7.1f} s  (CPU {merge_cpu:.1f} s)")
    print(f"wall ratio:         {sharded / single:7.2f}  (goal <= 0.3)")
    print(f"identical answers:  {identical}  ({len(b['judgments'])} judgments)")
    print(
        f"start-up to the first request: one run {single_start:.1f} s "
        f"({single_start / single:.0%} of its wall); shards "
        + ", ".join(f"{s:.1f}" for s in shard_starts)
        + f" s (the last {max(shard_starts) / sharded:.0%} of their wall)"
    )
    if args.json:
        numbers = {
            "submissions": args.submissions,
            "calls": calls,
            "latency": args.latency,
            "concurrency": args.concurrency,
            "shards": n,
            "load_average_at_start": load,
            "identical": identical,
            "judgments": len(b["judgments"]),
            "single": {"wall": single, "cpu": single_cpu, "limit": limit, "startup": single_start},
            "sharded": {
                "wall": sharded,
                "shards_wall": shards,
                "merge_wall": merging,
                "cpu": shards_cpu + merge_cpu,
                "limit": limit / n,
                "startup": shard_starts,
            },
            "wall_ratio": sharded / single,
            "startup_share": {
                "single": single_start / single,
                "sharded": max(shard_starts) / sharded,
            },
        }
        args.json.write_text(json.dumps(numbers, indent=2) + "\n")


if __name__ == "__main__":
    main()
