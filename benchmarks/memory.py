"""Peak memory (and time) of `judge eval` with the rules judge on N synthetic submissions.

    python benchmarks/memory.py [N ...]        # default: 10 1000 10000

Each run is a fresh `python -m judge eval` (rules judge, no store); its peak resident set
size comes from getrusage in a wrapper process that runs nothing else.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.synth import GROUND_TRUTH, write_submissions  # noqa: E402

WRAPPER = """
import resource, subprocess, sys, time
start = time.perf_counter()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(usage.ru_maxrss, time.perf_counter() - start, usage.ru_utime + usage.ru_stime)
"""


def measure(n: int, tmp: Path) -> dict[str, float]:
    outputs = write_submissions(n, tmp / str(n))
    result = tmp / f"r{n}.json"
    command = [
        sys.executable, "-c", WRAPPER, sys.executable, "-m", "judge", "eval",
        "--ground-truth", str(GROUND_TRUTH), "--outputs", str(outputs),
        "--result-file", str(result), "--no-progress", "--json",
    ]  # fmt: skip
    out = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=True).stdout
    rss_kb, wall, cpu = (float(x) for x in out.split())
    judgments = len(json.loads(result.read_text())["judgments"])
    return {
        "rss_mb": rss_kb / 1024,
        "wall": wall,
        "cpu": cpu,
        "result_mb": result.stat().st_size / 2**20,
        "judgments": judgments,
    }


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [10, 1000, 10_000]
    print(f"{'submissions':>11} {'peak RSS MB':>11} {'result MB':>9} {'KB/subm':>8} "
          f"{'wall s':>7} {'CPU ms/subm':>11}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        base = None
        for n in sizes:
            m = measure(n, Path(tmp))
            base = base or m
            extra = (m["rss_mb"] - base["rss_mb"]) * 1024 / max(n - sizes[0], 1)
            print(
                f"{n:11d} {m['rss_mb']:11.0f} {m['result_mb']:9.1f} {extra:8.1f} "
                f"{m['wall']:7.1f} {1000 * m['cpu'] / n:11.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
