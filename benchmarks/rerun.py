"""A rerun answered entirely from the store against a rules run of the same size (issue 16).

    python benchmarks/rerun.py [--submissions 1000] [--code DIR] [--json PATH]

Three whole `judge eval` commands on N synthetic submissions, each in a fresh interpreter:
1. the rules judge (no store);
2. the llm judge against the fake provider (its own process, no latency), filling a store;
3. the same llm command again: every answer comes from the store.
For each: wall time, CPU, peak resident set size, provider requests, and whether the process
imported litellm. Goals: the rerun's wall and peak memory <= 1.5x the rules run's (issue 16),
and the rerun's wall beyond Python's start under 1 s (issue 26): the command's wall from
launch to exit less that of `python -c pass` (median of 5, measured in the same run); the
rerun is run `--repeats` times (default 3) and its median shown.
`--code DIR` runs another checkout's code (e.g. the commit before a change) the same way.
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

from benchmarks.provider import provider_process  # noqa: E402
from benchmarks.synth import GROUND_TRUTH, write_submissions  # noqa: E402

WRAPPER = """
import json, resource, sys, time
start, cpu = time.perf_counter(), time.process_time()
from judge.cli import main
code = main(sys.argv[1:])
print(json.dumps({
    "code": code, "wall": time.perf_counter() - start, "cpu": time.process_time() - cpu,
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "litellm": "litellm" in sys.modules,
}))
"""


def judge_eval(code: Path, outputs: Path, result: Path, *extra: str) -> dict:
    command = [
        sys.executable, "-c", WRAPPER, "eval", "--ground-truth", str(GROUND_TRUTH),
        "--outputs", str(outputs), "--result-file", str(result), "--no-progress", "--json",
        *extra,
    ]  # fmt: skip
    launched = time.perf_counter()
    done = subprocess.run(command, cwd=code, env=_env(code), capture_output=True, text=True)
    outer = time.perf_counter() - launched
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "outer": outer}


def _env(code: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(code), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def python_start(code: Path, runs: int = 5) -> float:
    """Median wall of `python -c pass`, launched the way the commands are."""
    walls = []
    for _ in range(runs):
        launched = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], cwd=code, env=_env(code), check=True)
        walls.append(time.perf_counter() - launched)
    return statistics.median(walls)


def requests(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--code", type=Path, default=REPO, help="the checkout whose code runs")
    parser.add_argument("--repeats", type=int, default=3, help="reruns (the median is shown)")
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_dir, provider_process() as (url, log):
        tmp = Path(tmp_dir)
        outputs = write_submissions(args.submissions, tmp / "outputs")
        llm = ["--judge-model", "openai/fake-judge", "--api-base", url, "--max-concurrent", "20"]
        runs = {}
        runs["rules judge"] = judge_eval(args.code, outputs, tmp / "rules.json")
        runs["llm judge, store empty"] = judge_eval(args.code, outputs, tmp / "llm.json", *llm)
        runs["llm judge, store empty"]["requests"] = asked = requests(log)
        reruns = []
        for _ in range(max(1, args.repeats)):
            reruns.append(judge_eval(args.code, outputs, tmp / "llm.json", *llm))
            reruns[-1]["requests"] = requests(log) - asked
        runs["llm rerun from the store"] = sorted(reruns, key=lambda r: r["outer"])[
            len(reruns) // 2
        ]
        start = python_start(args.code)
    rules = runs["rules judge"]
    print(f"{args.submissions} submissions, code from {args.code}; python -c pass {start:.3f} s")
    print(f"{'run':26} {'wall s':>7} {'beyond start':>12} {'CPU s':>6} {'peak MB':>7} "
          f"{'requests':>8} {'litellm':>7} {'wall/rules':>10} {'peak/rules':>10}")  # fmt: skip
    for name, r in runs.items():
        print(
            f"{name:26} {r['outer']:7.2f} {r['outer'] - start:12.2f} {r['cpu']:6.2f} "
            f"{r['rss_mb']:7.0f} {r.get('requests', 0):8d} {'yes' if r['litellm'] else 'no':>7} "
            f"{r['outer'] / rules['outer']:10.2f} {r['rss_mb'] / rules['rss_mb']:10.2f}"
        )
    if args.json:
        args.json.write_text(json.dumps(as_json(runs, args.submissions, start), indent=2) + "\n")


def as_json(runs: dict[str, dict], submissions: int, python_start: float) -> dict:
    """Each run's numbers, the rerun's wall and peak memory against the rules run's, and its
    wall beyond Python's start. `wall` in each run is measured inside the process, `outer`
    from launch to exit."""
    rules, rerun = runs["rules judge"], runs["llm rerun from the store"]
    return {
        "submissions": submissions,
        "runs": runs,
        "python_start_seconds": python_start,
        "rerun_beyond_python_start_seconds": rerun["outer"] - python_start,
        "rerun_vs_rules": {
            "wall": rerun["outer"] / rules["outer"],
            "peak_rss": rerun["rss_mb"] / rules["rss_mb"],
        },
        "rerun_imported_litellm": rerun["litellm"],
        "rerun_requests": rerun["requests"],
    }


if __name__ == "__main__":
    main()
