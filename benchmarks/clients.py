"""The llm judge's two clients side by side (issue 26): import time, memory, CPU per call.

    python benchmarks/clients.py [--runs 5] [--submissions 100] [--json PATH]

1. Import: the lean client's module and its library (`httpx`), the `openai` SDK it used
   before, and `import litellm` (with its bundled price map), each in a fresh interpreter
   `--runs` times;
   median seconds beyond `python -c pass` and the peak resident set size the import leaves.
2. CPU per call: `benchmarks/cpu_profile.py --client openai|litellm` on the same
   `--submissions`, one call per submission against the fake provider in its own process (no
   latency): the process's CPU per judgment, and this project's own share (the client's call
   replaced by the recorded reply).
Ratios are litellm's figure over the openai client's, measured in the same run.
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

IMPORTS = {
    "nothing (python -c pass)": "pass",
    "openai client": "import judge.judges.clients.openai_client as c; c.import_httpx()",
    "openai SDK (what the openai client used before)": "import openai",
    "litellm client": "import judge.judges.clients.litellm_client as c; c.import_litellm()",
}
PROBE = (
    "import resource, sys, time; t = time.perf_counter(); {code}; "
    "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
)


def one_import(code: str) -> tuple[float, float, float]:
    """(wall seconds of the whole interpreter, seconds of the import, peak RSS in MB)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(code=code)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    seconds, rss = (float(v) for v in done.stdout.split())
    return wall, seconds, rss


def imports(runs: int) -> dict[str, dict[str, float]]:
    samples: dict[str, list[tuple[float, float, float]]] = {k: [] for k in IMPORTS}
    for _ in range(runs):  # interleaved, so the machine's load falls on each alike
        for label, code in IMPORTS.items():
            samples[label].append(one_import(code))
    return {
        label: {
            "wall_s": statistics.median(s[0] for s in rows),
            "import_s": statistics.median(s[1] for s in rows),
            "rss_mb": statistics.median(s[2] for s in rows),
        }
        for label, rows in samples.items()
    }


def cpu_per_call(client: str, submissions: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cpu.json"
        subprocess.run(
            [
                sys.executable, str(REPO / "benchmarks" / "cpu_profile.py"), str(submissions),
                "--client", client, "--granularity", "submission", "--json", str(out),
            ],
            cwd=REPO, check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--submissions", type=int, default=100)
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    found = imports(args.runs)
    base = found["nothing (python -c pass)"]
    print(f"load average {load:.1f}, {os.cpu_count()} CPUs; medians of {args.runs} runs")
    print("| import | seconds | whole interpreter | peak RSS | RSS beyond python |")
    print("|---|---|---|---|---|")
    for label, row in found.items():
        print(
            f"| {label} | {row['import_s']:.3f} s | {row['wall_s']:.3f} s | "
            f"{row['rss_mb']:.0f} MB | {row['rss_mb'] - base['rss_mb']:.0f} MB |"
        )
    lean, heavy = found["openai client"], found["litellm client"]
    print(
        f"litellm / openai: import {heavy['import_s'] / lean['import_s']:.1f}x, memory beyond "
        f"python {(heavy['rss_mb'] - base['rss_mb']) / (lean['rss_mb'] - base['rss_mb']):.1f}x"
    )
    cpu = {name: cpu_per_call(name, args.submissions) for name in ("openai", "litellm")}
    print("| client | CPU per call | of which this project's own | calls |")
    print("|---|---|---|---|")
    for name, row in cpu.items():
        print(
            f"| {name} | {row['cpu_ms_per_call']:.2f} ms | {row['own_ms_per_call']:.2f} ms | "
            f"{row['calls']} |"
        )
    ratio = cpu["litellm"]["cpu_ms_per_call"] / cpu["openai"]["cpu_ms_per_call"]
    print(f"litellm / openai: CPU per call {ratio:.1f}x")
    if args.json:
        args.json.write_text(json.dumps({"load": load, "imports": found, "cpu": cpu}, indent=2))


if __name__ == "__main__":
    main()
