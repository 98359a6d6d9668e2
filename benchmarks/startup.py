"""`judge --help` start-up time as a ratio to `python -c pass` (goal <= 5x).

    python benchmarks/startup.py [RUNS]

Each command runs RUNS times (default 15) in a fresh interpreter; the medians are compared.
Also shows `judge eval --help` and `import litellm`, which `judge --help` must never pay.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def median_seconds(command: list[str], runs: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    base = median_seconds([sys.executable, "-c", "pass"], runs)
    print(f"python -c pass          {1000 * base:7.1f} ms   1.00x")
    for label, args in [
        ("judge --help", ["-m", "judge", "--help"]),
        ("judge eval --help", ["-m", "judge", "eval", "--help"]),
        ("import litellm", ["-c", "import litellm"]),
    ]:
        seconds = median_seconds([sys.executable, *args], 3 if "litellm" in label else runs)
        print(f"{label:22} {1000 * seconds:7.1f} ms {seconds / base:6.2f}x")


if __name__ == "__main__":
    main()
