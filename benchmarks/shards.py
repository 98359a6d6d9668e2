"""4 shards in 4 processes, merged, against one run: same answers, and the wall time ratio.

    python benchmarks/shards.py [--submissions 200] [--latency 1.0] [--concurrency 5] [--shards 4]

The fake provider runs in its own process with a fixed latency (latency-bound: it serves any
number of requests at once). One `judge eval` process judges N submissions x 3 dimensions with
`--max-concurrent C`; then `--shards` processes run `judge eval --shard I/N` at once, each with
the same `--max-concurrent C`, and `judge merge` puts their results together. Both walls are
whole commands (start-up, litellm's import, writing results); the shards' wall includes the
merge. The merged result must equal the single run's (judgments, cases, incidents, overall).
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

SAME = ("judgments", "cases", "incidents", "overall", "by_agent")


def eval_command(outputs: Path, result: Path, url: str, concurrency: int) -> list[str]:
    return [
        sys.executable, "-m", "judge", "eval", "--ground-truth", str(GROUND_TRUTH),
        "--outputs", str(outputs), "--result-file", str(result), "--judge-model",
        "openai/fake-judge", "--api-base", url, "--max-concurrent", str(concurrency),
        "--no-progress", "--json",
    ]  # fmt: skip


def timed(commands: list[list[str]]) -> tuple[float, float]:
    """Wall time of the commands run at once, and the CPU seconds they used."""
    start, cpu = time.perf_counter(), _children_cpu()
    runs = [
        subprocess.Popen(c, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for c in commands
    ]
    if any(run.wait() != 0 for run in runs):
        raise SystemExit("a judge command failed")
    return time.perf_counter() - start, _children_cpu() - cpu


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=200)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=5)
    parser.add_argument("--shards", type=int, default=4)
    args = parser.parse_args()
    n = args.shards
    with (
        tempfile.TemporaryDirectory() as tmp,
        provider_process("--latency", str(args.latency)) as (url, _log),
    ):
        folder = Path(tmp)
        outputs = write_submissions(args.submissions, folder)
        one = folder / "one.json"
        load = os.getloadavg()[0]
        single, single_cpu = timed([eval_command(outputs, one, url, args.concurrency)])
        parts = [folder / f"shard{i}.json" for i in range(1, n + 1)]
        commands = [
            [*eval_command(outputs, p, url, args.concurrency), "--shard", f"{i}/{n}"]
            for i, p in enumerate(parts, 1)
        ]
        merged = folder / "merged.json"
        merge = [sys.executable, "-m", "judge", "merge", *map(str, parts), "-o", str(merged)]
        (shards, shards_cpu), (merging, merge_cpu) = timed(commands), timed([merge])
        sharded = shards + merging
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


if __name__ == "__main__":
    main()
