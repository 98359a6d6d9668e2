"""`judge --help` start-up time as a ratio to `python -c pass` (goal <= 5x), and how soon
`judge eval` with an LLM judge sends its first request (goal <= 1 s).

    python benchmarks/startup.py [RUNS] [--json PATH]

Each command runs RUNS times (default 15) in a fresh interpreter; the medians are compared.
Also shows `judge eval --help` and `import litellm`, which `judge --help` must never pay.
First request: `judge eval` on the bundled example (32 submissions, an empty store) against
the fake provider in its own process; seconds from launching the command to the provider
receiving the first request, and to the command's end (median of 3).

    python benchmarks/startup.py --sizes 10 1000 [--repeats 3]

measures only how soon `judge eval` sends its first request on N submissions in the ITBench
layout (`benchmarks.anchors.write_inputs`), no store, the fake provider in its own process,
the sizes interleaved, medians of `--repeats` (issue 26: the same at 1,000 as at 10).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
EXAMPLE = REPO / "examples" / "sregym-mini"


def median_seconds(command: list[str], runs: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="?", type=int, default=15)
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    parser.add_argument("--sizes", type=int, nargs="+", help="only: first request at N submissions")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each size (--sizes)")
    options = parser.parse_args()
    if options.sizes:
        by_size = first_request_by_size(options.sizes, options.repeats)
        for n, seconds in by_size.items():
            print(f"{n:6d} submissions: first request {seconds:.2f} s after launch (median)")
        if options.json:
            options.json.write_text(json.dumps({"first_request_seconds": by_size}, indent=2))
        return
    runs = options.runs
    base = median_seconds([sys.executable, "-c", "pass"], runs)
    print(f"python -c pass          {1000 * base:7.1f} ms   1.00x")
    ratios = {}
    for label, args in [
        ("judge --help", ["-m", "judge", "--help"]),
        ("judge eval --help", ["-m", "judge", "eval", "--help"]),
        ("import litellm", ["-c", "import litellm"]),
    ]:
        seconds = median_seconds([sys.executable, *args], 3 if "litellm" in label else runs)
        print(f"{label:22} {1000 * seconds:7.1f} ms {seconds / base:6.2f}x")
        ratios[label] = seconds / base
    first, whole = zip(*(first_request() for _ in range(3)), strict=True)
    print(
        f"judge eval, llm judge: first request {statistics.median(first):.2f} s after launch, "
        f"whole command {statistics.median(whole):.2f} s (96 calls, no latency)"
    )
    if options.json:
        numbers = {
            "runs": runs,
            "python_pass_seconds": base,
            "vs_python_pass": ratios,
            "first_request_seconds": statistics.median(first),
            "whole_command_seconds": statistics.median(whole),
        }
        options.json.write_text(json.dumps(numbers, indent=2) + "\n")


def first_request() -> tuple[float, float]:
    """Seconds from launching `judge eval` to the provider's first request, and to its end."""
    from benchmarks.provider import provider_process
    from judge.testing import read_call_log

    env = {**os.environ, "PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with tempfile.TemporaryDirectory() as tmp, provider_process() as (url, log):
        command = [
            sys.executable, "-m", "judge", "eval", "--ground-truth",
            str(EXAMPLE / "ground_truth"), "--outputs", str(EXAMPLE / "outputs"),
            "--result-file", str(Path(tmp) / "r.json"), "--judge-model", "openai/fake-judge",
            "--api-base", url, "--no-progress", "--max-concurrent", "8",
        ]  # fmt: skip
        launched = time.time()
        subprocess.run(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, check=True)
        ended = time.time()
        first = min(call.timestamp for call in read_call_log(log))
    return first - launched, ended - launched


def first_request_by_size(sizes: list[int], repeats: int) -> dict[int, float]:
    """Median seconds from launching `judge eval` to its first request, at each size."""
    from benchmarks.anchors import write_inputs
    from benchmarks.provider import provider_process

    env = {**os.environ, "PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    firsts: dict[int, list[float]] = {n: [] for n in sizes}
    with tempfile.TemporaryDirectory() as tmp, provider_process() as (url, log):
        inputs = {n: write_inputs(n, Path(tmp) / str(n)) for n in sizes}
        for _ in range(repeats):
            for n in sizes:
                truths, outputs = inputs[n]
                seen = len(log.read_text().splitlines()) if log.exists() else 0
                command = [
                    sys.executable, "-m", "judge", "eval", "--ground-truth", str(truths),
                    "--outputs", str(outputs), "--result-file", str(Path(tmp) / f"r{n}.json"),
                    "--no-store", "--judge-model", "openai/fake-judge", "--api-base", url,
                    "--no-progress", "--max-concurrent", "20",
                ]  # fmt: skip
                launched = time.time()
                subprocess.run(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, check=True)
                stamps = [json.loads(line)["timestamp"] for line in log.read_text().splitlines()]
                firsts[n].append(min(stamps[seen:]) - launched)
    return {n: statistics.median(values) for n, values in firsts.items()}


if __name__ == "__main__":
    main()
