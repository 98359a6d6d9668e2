"""Peak memory (and time) of `judge eval` and `judge report` on N synthetic submissions.

    python benchmarks/memory.py [--modes rules,llm,report] [--code DIR ...] [--json PATH] [N ...]
    # default N: 1000 10000; the scale row: ... --modes rules,report 1000 10000 100000
    # (100,000 takes minutes: the eval alone is ~7 min of CPU)
    # before/after in one run: --code <a checkout of main> --code .

Modes, each a fresh process whose peak resident set size comes from getrusage in a wrapper
process that runs nothing else:
- `rules`: `judge eval` with the offline rules judge, no store;
- `llm`: `judge eval --judge-model openai/fake-judge` against the fake provider (no latency,
  in its own process), store on as the CLI does by default;
- `report`: `judge report` of the rules run's result with texts (`--ground-truth`,
  `--outputs`), writing the HTML report and the CSV, JSONL and JUnit exports.

`size MB` is the result file for eval and everything `judge report` wrote for report.
`KB/subm` is the growth of the peak per submission from the mode's first (smallest) row: flat
memory is a growth near 0 however far N goes, the process's own working set aside.
`--code DIR` (repeatable): the checkouts to measure, each size's inputs given to each in turn
(default: this one); `judge` is run from the checkout's folder, so that it imports that code.
`--json PATH` also writes the table as `{"by_submissions": {"N": {"MODE": {"mode",
"submissions", "peak_rss_mb", "size_mb", "wall_s", "cpu_ms_per_submission",
"growth_kb_per_submission"}}}, "load_average": {"start", "end"}}` (`issue16.py` reads it), for
the first checkout, and every checkout's `by_submissions` under `by_code` by its folder.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.provider import provider_process  # noqa: E402
from benchmarks.synth import GROUND_TRUTH, write_submissions  # noqa: E402

MODES = ("rules", "llm", "report")
WRAPPER = """
import resource, subprocess, sys, time
start = time.perf_counter()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(usage.ru_maxrss, time.perf_counter() - start, usage.ru_utime + usage.ru_stime)
"""


def measured(command: list[str], code: Path = REPO) -> dict[str, float]:
    """Peak RSS (MB), wall and CPU seconds of `command` run from `code` in a fresh wrapper
    process."""
    wrapped = [sys.executable, "-c", WRAPPER, *command]
    out = subprocess.run(wrapped, cwd=code, capture_output=True, text=True, check=True).stdout
    rss_kb, wall, cpu = (float(x) for x in out.split())
    return {"rss_mb": rss_kb / 1024, "wall": wall, "cpu": cpu}


def judge(*args: str) -> list[str]:
    return [sys.executable, "-m", "judge", *args]


def eval_args(outputs: Path, result: Path) -> list[str]:
    return [
        "eval", "--ground-truth", str(GROUND_TRUTH), "--outputs", str(outputs),
        "--result-file", str(result), "--no-progress", "--json",
    ]  # fmt: skip


def measure_size(
    n: int, outputs: Path, modes: list[str], tmp: Path, url: str | None, code: Path = REPO
) -> dict[str, dict]:
    rules = tmp / f"rules{n}.json"
    rows: dict[str, dict] = {}
    if "rules" in modes or "report" in modes:
        rows["rules"] = {**measured(judge(*eval_args(outputs, rules)), code), "files": [rules]}
    if "llm" in modes and url:
        result = tmp / f"llm{n}.json"
        command = judge(
            *eval_args(outputs, result), "--judge-model", "openai/fake-judge",
            "--api-base", url, "--max-concurrent", "20", "--store", str(tmp / f"llm{n}.sqlite"),
        )  # fmt: skip
        rows["llm"] = {**measured(command, code), "files": [result]}
    if "report" in modes:
        out = tmp / f"report{n}"
        out.mkdir()
        command = judge(
            "report", str(rules), "--ground-truth", str(GROUND_TRUTH), "--outputs", str(outputs),
            "-o", str(out / "report.html"), "--csv", str(out / "cases.csv"),
            "--jsonl", str(out / "judgments.jsonl"), "--junit", str(out / "junit.xml"),
        )  # fmt: skip
        rows["report"] = {**measured(command, code), "files": [out]}
    return {mode: row for mode, row in rows.items() if mode in modes}


def size_mb(paths: list[Path]) -> float:
    files = [f for p in paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file()]
    return sum(f.stat().st_size for f in files) / 2**20


def row_of(
    mode: str, n: int, measured: dict, first: dict | None = None
) -> dict[str, str | int | float | None]:
    """One line of the table, as `--json` writes it under `by_submissions[N][mode]`; `first`
    is the mode's row at the smallest N, from which the growth per submission is counted."""
    growth = None
    if first is not None and n > first["submissions"]:
        growth = 1024 * (measured["rss_mb"] - first["rss_mb"]) / (n - first["submissions"])
    return {
        "mode": mode,
        "submissions": n,
        "peak_rss_mb": round(measured["rss_mb"], 1),
        "size_mb": round(size_mb(measured["files"]), 1),
        "wall_s": round(measured["wall"], 1),
        "cpu_ms_per_submission": round(1000 * measured["cpu"] / n, 2),
        "growth_kb_per_submission": None if growth is None else round(growth, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[1000, 10_000])
    parser.add_argument(
        "--modes", default=",".join(MODES), help="comma-separated " + ", ".join(MODES)
    )
    parser.add_argument("--code", type=Path, action="append", help="a checkout (repeatable)")
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    codes = [c.resolve() for c in args.code or [REPO]]
    load_start = os.getloadavg()[0]
    print(f"{'code':>24} {'mode':>6} {'submissions':>11} {'peak RSS MB':>11} {'size MB':>8} "
          f"{'wall s':>7} {'CPU ms/subm':>11} {'KB/subm':>8}")  # fmt: skip
    provider = provider_process() if "llm" in modes else contextlib.nullcontext((None, None))
    by_code: dict[str, dict[str, dict[str, dict]]] = {str(c): {} for c in codes}
    first: dict[tuple[Path, str], dict] = {}
    with tempfile.TemporaryDirectory() as tmp_name, provider as (url, _):
        tmp = Path(tmp_name)
        for n in sorted(args.sizes):
            outputs = write_submissions(n, tmp / str(n))
            for number, code in enumerate(codes):
                work = tmp / f"{n}-{number}"
                work.mkdir()
                for mode, m in measure_size(n, outputs, modes, work, url, code).items():
                    row = by_code[str(code)].setdefault(str(n), {})[mode] = row_of(
                        mode, n, m, first.get((code, mode))
                    )
                    first.setdefault((code, mode), {"submissions": n, "rss_mb": m["rss_mb"]})
                    growth = row["growth_kb_per_submission"]
                    print(
                        f"{str(code)[-24:]:>24} {mode:>6} {n:11d} {row['peak_rss_mb']:11.0f} "
                        f"{row['size_mb']:8.1f} {row['wall_s']:7.1f} "
                        f"{row['cpu_ms_per_submission']:11.2f} "
                        f"{'' if growth is None else f'{growth:.2f}':>8}",
                        flush=True,
                    )
    load = {"start": load_start, "end": os.getloadavg()[0]}
    print(f"load average (1 min): {load['start']:.1f} at start, {load['end']:.1f} at end")
    if args.json:
        data = {"by_submissions": by_code[str(codes[0])], "by_code": by_code, "load_average": load}
        args.json.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
