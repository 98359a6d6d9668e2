"""`judge --help` start-up time as a ratio to `python -c pass` (goal <= 5x), and how soon
`judge eval` with an LLM judge sends its first request (goal <= 1 s).

    python benchmarks/startup.py [RUNS] [--json PATH]

Each command runs RUNS times (default 15) in a fresh interpreter; the medians are compared.
Also shows `judge eval --help` and `import litellm`, which `judge --help` must never pay.
First request: `judge eval` on the bundled example (32 submissions, an empty store) against
the fake provider in its own process; seconds from launching the command to the provider
receiving the first request, and to the command's end (median of 3).
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
    options = parser.parse_args()
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


if __name__ == "__main__":
    main()
