"""Several `judge eval` processes on one store: provider requests, duplicates, wall time.

    python benchmarks/shared_store.py [--submissions 160] [--latency 0.5] [--concurrency 5]
                                      [--json PATH]

The fake provider runs in its own process and logs every request. One process judges N
submissions x 3 dimensions alone; then 2 and 4 processes run the same command at once on one
fresh `--store` (each with its own result file), all started and waiting on a pause file before
the first call. Duplicates are requests for a prompt the provider was already asked; before
leases, two processes paid for 752 duplicates of 960 calls. The wall time runs from the
pause file's removal to the last process's exit; `limit s` is calls x latency / (processes x
concurrency); CPU is the processes' own (start-up included).
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
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.provider import provider_process  # noqa: E402
from benchmarks.synth import GROUND_TRUTH, write_submissions  # noqa: E402


def command(outputs: Path, result: Path, store: Path, url: str, args, pause: Path) -> list[str]:
    return [
        sys.executable, "-m", "judge", "eval", "--ground-truth", str(GROUND_TRUTH),
        "--outputs", str(outputs), "--result-file", str(result), "--store", str(store),
        "--judge-model", "openai/fake-judge", "--api-base", url,
        "--max-concurrent", str(args.concurrency), "--pause-file", str(pause), "--no-progress",
    ]  # fmt: skip


def run(processes: int, folder: Path, outputs: Path, url: str, args) -> tuple[float, list[dict]]:
    """Wall time from the pause file's removal (every process started) to the last exit."""
    store, pause = folder / f"shared{processes}.sqlite", folder / f"PAUSE{processes}"
    pause.touch()
    results = [folder / f"r{processes}-{i}.json" for i in range(processes)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    runs = [
        subprocess.Popen(
            command(outputs, r, store, url, args, pause),
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for r in results
    ]
    for r in runs:
        assert r.stdout is not None
        r.stdout.readline()  # "Judge: ...": loaded, about to wait on the pause file
    start = time.perf_counter()
    pause.unlink()
    if any(r.wait() != 0 for r in runs):
        raise SystemExit("a judge command failed")
    wall = time.perf_counter() - start
    return wall, [json.loads(r.read_text()) for r in results]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def requests_since(log: Path, seen: int) -> list[str]:
    lines = log.read_text().splitlines()[seen:]
    return [json.loads(line)["messages_hash"] for line in lines]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=160)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    args = parser.parse_args()
    calls = 3 * args.submissions
    print(f"{calls} calls, latency {args.latency} s, --max-concurrent {args.concurrency} each")
    print(f"{'processes':>9} {'requests':>8} {'duplicates':>10} {'answers ok':>10} "
          f"{'wall s':>7} {'vs one':>6} {'limit s':>7} {'CPU s':>6}")  # fmt: skip
    with (
        tempfile.TemporaryDirectory() as tmp,
        provider_process("--latency", str(args.latency)) as (url, log),
    ):
        folder = Path(tmp)
        outputs = write_submissions(args.submissions, folder)
        seen, base = 0, None
        limit = calls * args.latency / args.concurrency
        measured = {}
        for processes in (1, 2, 4):
            cpu = children_cpu()
            wall, results = run(processes, folder, outputs, url, args)
            cpu = children_cpu() - cpu
            asked = requests_since(log, seen)
            seen += len(asked)
            duplicates = sum(n - 1 for n in Counter(asked).values())
            ok = all(r["complete"] and r["judgments"] == results[0]["judgments"] for r in results)
            base = base or wall
            measured[str(processes)] = {
                "requests": len(asked), "duplicates": duplicates, "answers_ok": ok,
                "wall": wall, "vs_one": wall / base, "limit": limit / processes, "cpu": cpu,
            }  # fmt: skip
            print(
                f"{processes:9d} {len(asked):8d} {duplicates:10d} {ok!s:>10} "
                f"{wall:7.1f} {wall / base:6.2f} {limit / processes:7.1f} {cpu:6.1f}",
                flush=True,
            )
    if args.json:
        numbers = {
            "calls": calls, "latency": args.latency, "concurrency": args.concurrency,
            "by_processes": measured,
        }  # fmt: skip
        args.json.write_text(json.dumps(numbers, indent=2) + "\n")


if __name__ == "__main__":
    main()
