"""Issue 16's benchmark table, measured side by side in one run.

    python benchmarks/issue16.py [--quick] [--only NAME,...] [--out TABLE.md] [--json RUN.json]

Runs each benchmark script in turn, each in its own process with `--json PATH` (so one
script's imports and memory do not disturb the next one's), then prints the table "goal |
measured | met?" as markdown on stdout (the scripts' own tables go to stderr as they run).
`--json` keeps everything: each script's numbers, its command, wall time and load average
before and after, and the machine (cores, load average at start and end, Python and litellm
versions, date, commit). "met?" is computed from `ROWS` (each goal a value and a direction),
never typed: a measurement that did not run is shown as "not run", never as met.
`real_model.py` needs a real model and is not run here; its row says so.

Default sizes (the whole run should take about 35 min on the 2-core development machine when
it is otherwise idle: the sum of each script's earlier run times at these sizes):
- granularity 200 submissions: requests and tokens per submission are counts, the same for
  every run; 200 cycles the 32 example submissions six times.
- throughput: 30 rounds of calls at 5, 20 and 50 in flight (L = 1 s; 30 s each after a
  warm-up, litellm's import excluded): the ramp-up and the last round are ~3% of a run.
- cpu_profile 100 submissions: 300 calls per run, the least of 3 runs.
- shards 400 submissions (1,200 calls, L = 1 s, 5 in flight per process): one run's limit is
  240 s, the four shards' 60 s, so four processes' start-up (mostly `import litellm`, 3-4 s
  of CPU each, ~8 s of wall on 2 cores when idle) is not most of the shards' wall; its share
  is reported on its own row part rather than hidden in the ratio.
- shared_store 160 submissions (480 calls, L = 0.5 s): start-up is excluded (every process
  waits on a pause file), and 4 processes still share 24 rounds of calls.
- cooldown 100 submissions (300 calls, 8 in flight): ~38 rounds at no fault; at 150 calls the
  few slowest retried calls moved the ratios by several points between runs.
- batch 1,000 submissions, a 30 s batch: 3,000 lines, so collecting them is measured at scale
  and the polling's lateness is small against the batch's time.
- rerun 1,000 submissions: the rules run is several seconds long, not just its start-up.
- startup 15 runs of each command (medians), 3 of the first-request run.
- memory 1,000 and 10,000 submissions: the issue's goal is stated at 10,000 (most of the run:
  the llm mode at 10,000 is 30,000 calls).
`--quick` (about 10 min when idle) cuts every size to a third or less and skips memory at 10,000: it
shows the driver works; start-up and ramp-up then weigh more, so its ratios are worse.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

REPO = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
TIMEOUT = 3600.0
"""Seconds one script may take before it is stopped and reported as failed."""


@dataclass(frozen=True)
class Measurement:
    """One script and its arguments (besides `--json`) for a full and a quick run."""

    name: str
    full: tuple[str, ...]
    quick: tuple[str, ...]


IN_FLIGHT = "in flight"  # throughput.py's --only: its three latency-bound scenarios

MEASUREMENTS = (
    Measurement("granularity", ("--submissions", "200"), ("--submissions", "50")),
    Measurement("throughput", ("--only", IN_FLIGHT), ("--only", IN_FLIGHT, "--quick")),
    Measurement("cpu_profile", ("100",), ("30",)),
    Measurement("shards", ("--submissions", "400"), ("--submissions", "100")),
    Measurement("shared_store", ("--submissions", "160"), ("--submissions", "40")),
    Measurement("cooldown", ("--submissions", "100"), ("--submissions", "30")),
    Measurement(
        "batch",
        ("--submissions", "1000", "--batch-delay", "30"),
        ("--submissions", "200", "--batch-delay", "10"),
    ),
    Measurement("rerun", ("--submissions", "1000"), ("--submissions", "200")),
    Measurement("startup", ("15",), ("5",)),
    Measurement("memory", ("1000", "10000"), ("1000",)),
)
NAMES = tuple(m.name for m in MEASUREMENTS)


@dataclass(frozen=True)
class Check:
    """One number of a row: where it is in the scripts' JSON (`path[0]` names the script), how
    to show it, and its goal (`op` and `target`) if it has one."""

    label: str
    path: tuple[str, ...]
    unit: str = ""
    digits: int = 2
    op: Literal["<=", ">=", "=="] | None = None
    target: float | bool | None = None


@dataclass(frozen=True)
class Row:
    measure: str
    checks: tuple[Check, ...]
    note: str = ""
    """Shown instead of values when the row has no checks (a measurement this driver skips)."""


def _ratio(scenario: str) -> tuple[str, ...]:
    return ("throughput", "scenarios", f"latency-bound, L=1 s, {scenario} {IN_FLIGHT}", "ratio")


RANDOM_429 = "50% 429, Retry-After 1"  # cooldown.py's scenario names
FAST_429 = "50% 429 at once, Retry-After 1"
PROVIDER_QUOTA = "quota 20 per 5 s"
ROWS = (
    Row(
        "requests per submission, `--granularity dimension` / `submission` (`granularity.py`)",
        (
            Check("dimension", ("granularity", "per_submission", "dimension", "requests"),
                  op="==", target=3),
            Check("submission", ("granularity", "per_submission", "submission", "requests"),
                  op="==", target=1),
        ),
    ),
    Row(
        "prompt tokens billed per submission, per-dimension calls with prefix caching vs the "
        "single call's prompt, the example's diagnoses (a shared start under the providers' "
        "1,024-token minimum: nothing cached), cached price x0.1 / x0.5 (`granularity.py`)",
        (
            Check("x0.1", ("granularity", "billed_vs_single_call", "x0.1 (gpt-5, Claude)"), "x",
                  op="<=", target=1.2),
            Check("x0.5", ("granularity", "billed_vs_single_call", "x0.5 (gpt-4o)"), "x",
                  op="<=", target=1.2),
        ),
    ),
    Row(
        "same, diagnoses of 4,000 characters (the shared start passes 1,024 tokens)",
        (
            Check("x0.1", ("granularity", "long", "billed_vs_single_call",
                           "x0.1 (gpt-5, Claude)"), "x", op="<=", target=1.2),
            Check("x0.25", ("granularity", "long", "billed_vs_single_call",
                            "x0.25 (gpt-4.1)"), "x", op="<=", target=1.2),
            Check("x0.5", ("granularity", "long", "billed_vs_single_call", "x0.5 (gpt-4o)"),
                  "x", op="<=", target=1.2),
        ),
    ),
    Row(
        "both granularities with the real local model: kappa, calls and tokens (`real_model.py`)",
        (),
        note="not run by this driver: it needs a real model (see `real_model.py`)",
    ),
    Row(
        "wall / physical limit at 5, 20, 50 in flight (`throughput.py`)",
        tuple(Check(n, _ratio(n), op="<=", target=1.05) for n in ("5", "20", "50")),
    ),
    Row(
        "CPU per call: this package's own share; the whole call (`cpu_profile.py`)",
        (
            Check("own", ("cpu_profile", "own_ms_per_call"), " ms", op="<=", target=1.0),
            Check("whole", ("cpu_profile", "cpu_ms_per_call"), " ms"),
        ),
    ),
    Row(
        "4 shards merged vs one run (`shards.py`)",
        (
            Check("identical answers", ("shards", "identical"), op="==", target=True),
            Check("wall", ("shards", "wall_ratio"), "x", op="<=", target=0.3),
            Check("start-up share of the shards' wall", ("shards", "startup_share", "sharded")),
        ),
    ),
    Row(
        "duplicate provider calls with 2 and 4 processes on one store; wall vs one process "
        "(`shared_store.py`)",
        (
            Check("duplicates at 2", ("shared_store", "by_processes", "2", "duplicates"),
                  digits=0, op="==", target=0),
            Check("at 4", ("shared_store", "by_processes", "4", "duplicates"),
                  digits=0, op="==", target=0),
            Check("wall vs one at 2", ("shared_store", "by_processes", "2", "vs_one"), "x"),
            Check("at 4", ("shared_store", "by_processes", "4", "vs_one"), "x"),
        ),
    ),
    Row(
        "50% 429s with `Retry-After: 1`: throughput vs no fault, 429s answered at once (as "
        "providers do) / after an answer's latency (at most 0.5 there) (`cooldown.py`)",
        (
            Check("at once", ("cooldown", "scenarios", FAST_429, "vs_no_fault"),
                  op=">=", target=0.5),
            Check("after latency", ("cooldown", "scenarios", RANDOM_429, "vs_no_fault"),
                  op=">=", target=0.5),
            Check("failed calls", ("cooldown", "scenarios", FAST_429, "failed"), digits=0),
            Check("", ("cooldown", "scenarios", RANDOM_429, "failed"), digits=0),
        ),
    ),
    Row(
        "the provider's own quota, 20 requests in any 5 s (a quarter of what the run would "
        "send): wall vs the quota's pace, 429s per call (`cooldown.py`)",
        (
            Check("wall vs pace", ("cooldown", "scenarios", PROVIDER_QUOTA, "wall_vs_limit"), "x"),
            Check("429s per call",
                  ("cooldown", "scenarios", PROVIDER_QUOTA, "rate_limited_per_call")),
            Check("failed calls", ("cooldown", "scenarios", PROVIDER_QUOTA, "failed"), digits=0),
        ),
    ),
    Row(
        "batch mode: provider HTTP requests per submission, `--batch` / live (`batch.py`)",
        (
            Check("batch", ("batch", "batch", "http_requests_per_submission"), digits=3),
            Check("live", ("batch", "live", "http_requests_per_submission")),
        ),
    ),
    Row(
        "batch mode: batch phase vs the provider's stated processing time (`batch.py`)",
        (
            Check("", ("batch", "batch", "phase_vs_delay"), "x"),
            Check("less the fake's own time answering", ("batch", "batch",
                  "wait_less_answering_vs_delay"), "x"),
        ),
    ),
    Row(
        "a rerun answered from the store vs a rules run, wall / peak memory (`rerun.py`)",
        (
            Check("wall", ("rerun", "rerun_vs_rules", "wall"), "x", op="<=", target=1.5),
            Check("peak memory", ("rerun", "rerun_vs_rules", "peak_rss"), "x",
                  op="<=", target=1.5),
            Check("litellm imported", ("rerun", "rerun_imported_litellm"), op="==", target=False),
        ),
    ),
    Row(
        "launch to first provider request (`startup.py`)",
        (Check("", ("startup", "first_request_seconds"), " s", 1, op="<=", target=1.0),),
    ),
    Row(
        "peak memory at 10,000 submissions, eval rules / eval llm / report (`memory.py`)",
        tuple(
            Check(mode, ("memory", "by_submissions", "10000", mode, "peak_rss_mb"), " MB", 0,
                  op="<=", target=300)
            for mode in ("rules", "llm", "report")
        ),
    ),
    Row(
        "peak memory at 1,000 submissions, same three (`memory.py`)",
        tuple(
            Check(mode, ("memory", "by_submissions", "1000", mode, "peak_rss_mb"), " MB", 0)
            for mode in ("rules", "llm", "report")
        ),
    ),
)  # fmt: skip

NOT_RUN = "not run"


def lookup(numbers: dict[str, Any], path: tuple[str, ...]) -> Any:
    """The number (or yes/no) at `path` in the scripts' numbers; None where any step is missing
    or the value is something else, which a goal can never be met by."""
    value: Any = numbers
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value if isinstance(value, int | float) else None


def shown(check: Check, value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{value:,.{check.digits}f}{check.unit}"


def is_met(check: Check, value: Any) -> bool:
    """Whether `value` meets the check's goal (which it must have)."""
    if check.op == "<=":
        return bool(value <= check.target)
    if check.op == ">=":
        return bool(value >= check.target)
    if isinstance(check.target, bool) or isinstance(value, bool):
        return value is check.target
    return math.isclose(value, float(check.target or 0), rel_tol=1e-9, abs_tol=1e-9)


def goal_text(row: Row) -> str:
    goals = [c for c in row.checks if c.op]
    if not goals:
        return "-"
    alike = len({(c.op, c.target) for c in goals}) == 1 and (len(goals) > 1 or not goals[0].label)
    if alike and not isinstance(goals[0].target, bool):
        return _target(goals[0])
    return "; ".join(_one_goal(c) for c in goals)


def _one_goal(check: Check) -> str:
    if isinstance(check.target, bool):
        return f"{check.label}: {'yes' if check.target else 'no'}"
    return f"{check.label} {_target(check)}".strip()


def _target(check: Check) -> str:
    return f"{'=' if check.op == '==' else check.op} {check.target:g}{check.unit}"


def measured_text(row: Row, numbers: dict[str, Any]) -> str:
    if not row.checks:
        return row.note
    parts = []
    for check in row.checks:
        value = lookup(numbers, check.path)
        text = NOT_RUN if value is None else shown(check, value)
        parts.append(f"{check.label}: {text}" if check.label else text)
    return "; ".join(parts)


def met_text(row: Row, numbers: dict[str, Any]) -> str:
    """Yes only when every goal's value is there and meets it; a missing value is "not run", a
    row without goals "-"; "no" names the checks that missed."""
    values = [lookup(numbers, c.path) for c in row.checks]
    missed = [
        c for c, v in zip(row.checks, values, strict=True)
        if c.op and v is not None and not is_met(c, v)
    ]  # fmt: skip
    if missed:
        labels = [c.label for c in missed if c.label]
        return "no: " + ", ".join(labels) if labels else "no"
    if not row.checks or any(v is None for v in values):
        return NOT_RUN
    return "yes" if any(c.op for c in row.checks) else "-"


def table_rows(numbers: dict[str, Any], rows: tuple[Row, ...] = ROWS) -> list[dict[str, str]]:
    """Each row's measure, goal, measured values and whether the goal is met."""
    return [
        {
            "measure": row.measure,
            "goal": goal_text(row),
            "measured": measured_text(row, numbers),
            "met": met_text(row, numbers),
        }
        for row in rows
    ]


def markdown(cells: list[dict[str, str]]) -> str:
    lines = ["| measure (script) | goal | measured | met? |", "|---|---|---|---|"]
    lines += [f"| {c['measure']} | {c['goal']} | {c['measured']} | {c['met']} |" for c in cells]
    return "\n".join(lines) + "\n"


def machine() -> dict[str, Any]:
    """The facts a reader needs to compare two runs' numbers."""
    try:
        litellm: str | None = metadata.version("litellm")
    except metadata.PackageNotFoundError:
        litellm = None
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "litellm": litellm,
        "platform": platform.platform(),
        "commit": _git("rev-parse", "HEAD"),
        "uncommitted_changes": bool(_git("status", "--porcelain")),
    }


def _git(*args: str) -> str | None:
    done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def run_script(command: list[str], timeout: float) -> int:
    """Run one benchmark script, its output on our stderr; its exit code (-1: timed out)."""
    try:
        done = subprocess.run(command, cwd=REPO, stdout=sys.stderr, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1
    return done.returncode


def measure(m: Measurement, quick: bool, folder: Path) -> dict[str, Any]:
    """Run `m`'s script once; its command, wall time, load average around it, and its numbers
    (or why there are none)."""
    out = folder / f"{m.name}.json"
    command = [sys.executable, str(HERE / f"{m.name}.py"), *(m.quick if quick else m.full)]
    command += ["--json", str(out)]
    print(f"\n## {m.name}: {' '.join(command[1:])}", file=sys.stderr, flush=True)
    load, start = os.getloadavg()[0], time.perf_counter()
    code = run_script(command, TIMEOUT)
    record: dict[str, Any] = {
        "command": command[1:],
        "seconds": time.perf_counter() - start,
        "exit_code": code,
        "load_average_before": load,
        "load_average_after": os.getloadavg()[0],
        "numbers": None,
        "error": None,
    }
    if code != 0:
        record["error"] = f"timed out after {TIMEOUT:.0f} s" if code < 0 else f"exit code {code}"
    elif not out.exists():
        record["error"] = "exit code 0 but no --json file written"
    else:
        record["numbers"] = json.loads(out.read_text())
    return record


def run_all(names: list[str], quick: bool) -> tuple[dict[str, Any], bool]:
    """Every named measurement in turn; their records, and whether the run was interrupted."""
    records: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="issue16-") as tmp:
        for m in MEASUREMENTS:
            if m.name not in names:
                continue
            try:
                records[m.name] = measure(m, quick, Path(tmp))
            except KeyboardInterrupt:
                return records, True
    return records, False


def report(run: dict[str, Any]) -> str:
    """The markdown: what was run where, the table, and which scripts did not run and why."""
    facts = run["machine"]
    lines = [
        f"Measured in one run of `benchmarks/issue16.py{' --quick' if run['quick'] else ''}`, "
        f"{run['started']} to {run['ended']}, commit {(facts['commit'] or '?')[:10]}"
        f"{' (with uncommitted changes)' if facts['uncommitted_changes'] else ''}: "
        f"{facts['cpus']} CPUs, load average {run['load_average_start'][0]:.1f} at the start "
        f"and {run['load_average_end'][0]:.1f} at the end; Python {facts['python']}, "
        f"litellm {facts['litellm']}.",
        "",
        markdown(run["table"]),
    ]
    skipped = "not selected or interrupted" if run["interrupted"] else "not selected"
    for name in NAMES:
        record = run["measurements"].get(name)
        if record is None:
            lines.append(f"- `{name}.py`: not run ({skipped})")
        elif record["error"]:
            lines.append(f"- `{name}.py`: not run ({record['error']})")
    return "\n".join(lines).rstrip() + "\n"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (~10 min), to try it")
    parser.add_argument("--only", help="comma-separated measurements: " + ",".join(NAMES))
    parser.add_argument("--out", type=Path, help="also write the markdown to this file")
    parser.add_argument("--json", type=Path, help="write every number and the machine's facts")
    args = parser.parse_args(argv)
    names = [n.strip() for n in (args.only or ",".join(NAMES)).split(",") if n.strip()]
    unknown = [n for n in names if n not in NAMES]
    if unknown or not names:
        wrong = ", ".join(unknown) or "an empty list"
        parser.error(f"--only: unknown {wrong}; expected some of {','.join(NAMES)}")
    args.names = names
    for option, path in (("--out", args.out), ("--json", args.json)):
        if path is not None and not path.parent.is_dir():
            parser.error(f"{option} {path}: the folder {path.parent} does not exist")
    return args


def write(path: Path, text: str) -> None:
    """Replace `path` only once the whole text is written."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run: dict[str, Any] = {
        "quick": args.quick,
        "started": now(),
        "load_average_start": list(os.getloadavg()),
        "machine": machine(),
    }
    records, interrupted = run_all(args.names, args.quick)
    run |= {"ended": now(), "load_average_end": list(os.getloadavg())}
    run |= {"interrupted": interrupted, "measurements": records}
    numbers = {name: r["numbers"] for name, r in records.items() if r["numbers"] is not None}
    run["table"] = table_rows(numbers)
    text = report(run)
    print(text)
    if args.out:
        write(args.out, text)
    if args.json:
        write(args.json, json.dumps(run, indent=2) + "\n")
    if interrupted:
        return 130
    return 1 if any(r["error"] for r in records.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
