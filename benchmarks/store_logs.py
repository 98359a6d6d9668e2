"""How much the reply log (issue 24) grows a store, what it costs a run, and how many bytes a
run writes per answer.

    python benchmarks/store_logs.py [--json PATH] [--diagnosis-chars C] [N ...]   # N: 10000
    python benchmarks/store_logs.py --writes [--code DIR ...] [--json PATH] [N ...]

`--writes`: for each N and each checkout (`--code`, taken in turn), `judge eval` on N synthetic
submissions (20 in flight, no latency) with its store (the reply log on, as by default) and
with `--no-store`. Each run's `/proc/self/io` counts are read as this script's own before and
after it waits for the run (a child's are added to its parent's when it is reaped), so what
the run does as it exits counts too. Per answer (one call's answer, a `judgments` row):
- `write_bytes`: pages the run dirtied, counted when a clean page is made dirty (a page
  rewritten while still dirty counts once; rewritten after the kernel wrote it back, again);
- `cancelled_write_bytes`: dirty pages of files cut short or deleted before they were written
  back (the run's anonymous spill file, freed as the process ends, the store's WAL deleted
  at close): they never reach the disk;
- `net` = `write_bytes` - `cancelled_write_bytes`: the bytes that reached or will reach the
  storage device (the filesystem's own journal aside). Issue 38's goal is measured with it;
- `wchar`: every byte handed to `write`;
of the whole command and of the store alone (with store less without: the result file and
the run's spill file are written either way); the store's size once closed and the result
file's. The kernel writes a dirty page back once it has waited ~30 s
(`vm.dirty_expire_centisecs`), so a run shorter than that has its spill file cancelled
whole, and a longer one has most of it reach the disk. In WAL mode every page the store keeps
is written at least twice (to the WAL, then by a checkpoint to the file), so the store's
`net` cannot fall below about twice what it keeps.

For each N, two runs of `judge eval --judge-model openai/fake-judge` on N synthetic
submissions (`synth.py`: the example's 32 diagnoses cycled, every prompt unique) against the
fake provider in its own process (no latency), store on as the CLI has it:
- `log`: the default, every request logged with its prompt and reply text;
- `no text`: with `--no-log-text` (each request's latency, tokens and cost, no text).

With `--diagnosis-chars C` each diagnosis is made about C characters long from the next
examples' diagnoses in turn (not its own text repeated, which compresses to nothing): each
submission's case is kept once in the log, and the store held no diagnosis before, so longer
diagnoses grow it more.

Each store is checkpointed and vacuumed before it is measured. The baseline, measured in the
same run, is the `log` store with the reply log's tables dropped (and vacuumed): the answers,
failed calls and params the store held before the log existed. Sizes are reported as ratios
to it (issue 24's goal: under 2x at 10,000 submissions), with bytes per call; walls as the
`log` run's against the `no text` run's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.provider import provider_process  # noqa: E402
from benchmarks.synth import GROUND_TRUTH, write_submissions  # noqa: E402

LOG_TABLES = ("replies", "reply_texts")


def run(outputs: Path, store: Path, url: str, *extra: str) -> float:
    """Wall seconds of one `judge eval` writing `store`."""
    command = [
        sys.executable, "-m", "judge", "eval", "--ground-truth", str(GROUND_TRUTH),
        "--outputs", str(outputs), "--result-file", str(store.with_suffix(".json")),
        "--store", str(store), "--judge-model", "openai/fake-judge", "--api-base", url,
        "--max-concurrent", "20", "--no-progress", "--json", *extra,
    ]  # fmt: skip
    start = time.perf_counter()
    subprocess.run(command, cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def compacted(path: Path, drop: tuple[str, ...] = ()) -> int:
    """Bytes of the store at `path` once its WAL is folded in, `drop` dropped and vacuumed."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for table in drop:
            db.execute(f"DROP TABLE IF EXISTS {table}")
        db.execute("PRAGMA journal_mode = DELETE")  # in WAL mode VACUUM's pages stay in the WAL
        db.execute("VACUUM")
    finally:
        db.close()
    return path.stat().st_size


def counts(path: Path) -> dict[str, int]:
    db = sqlite3.connect(path)
    try:
        one = db.execute
        return {
            "calls": one("SELECT count(*) FROM judgments").fetchone()[0]
            + one("SELECT count(*) FROM errors").fetchone()[0],
            "requests": one("SELECT count(*) FROM replies").fetchone()[0],
            "texts": one("SELECT count(*) FROM reply_texts WHERE part = 0").fetchone()[0],
        }
    finally:
        db.close()


def lengthened(path: Path, chars: int) -> Path:
    """The submissions at `path`, each diagnosis followed by the next ones' until `chars`."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    texts = [row["diagnosis"] for row in rows[:32]]
    target = path.with_name(f"long-{path.name}")
    with target.open("w", encoding="utf-8") as out:
        for i, row in enumerate(rows):
            text, k = row["diagnosis"], i
            while len(text) < chars:
                k += 1
                text += "\n\n" + texts[k % len(texts)]
            out.write(json.dumps({**row, "diagnosis": text[:chars]}) + "\n")
    return target


def measure(n: int, tmp: Path, url: str, chars: int | None) -> dict[str, float | int]:
    outputs = write_submissions(n, tmp / f"in{n}")
    if chars:
        outputs = lengthened(outputs, chars)
    logged, plain = tmp / f"log{n}.sqlite", tmp / f"notext{n}.sqlite"
    wall_log = run(outputs, logged, url)
    wall_plain = run(outputs, plain, url, "--no-log-text")
    found = counts(logged)
    size_log = compacted(logged)
    size_plain = compacted(plain)
    baseline = tmp / f"base{n}.sqlite"
    shutil.copy(logged, baseline)
    size_base = compacted(baseline, LOG_TABLES)
    calls = max(1, found["calls"])
    return {
        "submissions": n,
        "diagnosis_chars": chars,
        **found,
        "baseline_mb": round(size_base / 2**20, 2),
        "log_mb": round(size_log / 2**20, 2),
        "no_text_mb": round(size_plain / 2**20, 2),
        "log_ratio": round(size_log / size_base, 3),
        "no_text_ratio": round(size_plain / size_base, 3),
        "baseline_bytes_per_call": round(size_base / calls),
        "log_bytes_per_call": round((size_log - size_base) / calls),
        "wall_log_s": round(wall_log, 1),
        "wall_no_text_s": round(wall_plain, 1),
        "wall_ratio": round(wall_log / wall_plain, 3),
    }


IO_FIELDS = ("write_bytes", "cancelled_write_bytes", "wchar")


def io_counts() -> dict[str, int]:
    """This process's `/proc/self/io`, which includes every child it has waited for."""
    with open("/proc/self/io") as f:
        return {k: int(v) for k, v in (ln.split(": ") for ln in f.read().splitlines())}


def written(code: Path, outputs: Path, tmp: Path, url: str, *extra: str) -> dict[str, int]:
    """What one `judge eval` run from `code` wrote: its `/proc/self/io` counts, taken as this
    process's own before and after waiting for it (a child's counts are added to its
    parent's when it is reaped), so that what the run does as it exits is counted too: its
    anonymous spill file, freed when the process ends, cancels the pages not yet written."""
    command = [
        sys.executable, "-m", "judge", "eval",
        "--ground-truth", str(GROUND_TRUTH), "--outputs", str(outputs),
        "--result-file", str(tmp / "w.json"), "--judge-model", "openai/fake-judge",
        "--api-base", url, "--max-concurrent", "20", "--no-progress", *extra,
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(code)}
    before = io_counts()
    subprocess.run(command, cwd=code, env=env, check=True, stdout=subprocess.DEVNULL)
    after = io_counts()
    fields = {k: after[k] - before[k] for k in IO_FIELDS}
    store = tmp / "w.sqlite"
    fields["kept"] = store.stat().st_size if store.exists() else 0
    fields["result"] = (tmp / "w.json").stat().st_size
    for path in tmp.glob("w.*"):
        path.unlink()
    return fields


def writes(args: argparse.Namespace) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp_dir, provider_process() as (url, _):
        tmp = Path(tmp_dir)
        for n in args.sizes:
            outputs = write_submissions(n, tmp / f"in{n}")
            for code in args.code:
                store = tmp / "w.sqlite"
                stored = written(code, outputs, tmp, url, "--store", str(store))
                bare = written(code, outputs, tmp, url, "--no-store")
                row: dict[str, object] = {"code": str(code), "submissions": n, "answers": n}
                for run_io, prefix in ((stored, ""), (bare, "bare_")):
                    run_io["net"] = run_io["write_bytes"] - run_io["cancelled_write_bytes"]
                    for field in ("net", *IO_FIELDS):
                        row[f"{prefix}{field}_per_answer"] = round(run_io[field] / n)
                for field in ("net", *IO_FIELDS):
                    row[f"store_{field}_per_answer"] = round((stored[field] - bare[field]) / n)
                row["store_kept_per_answer"] = round(stored["kept"] / n)
                row["result_per_answer"] = round(stored["result"] / n)
                rows.append(row)
                print(
                    f"  {n} answers, {code}: per answer net {row['net_per_answer']} (write_bytes"
                    f" {row['write_bytes_per_answer']} - cancelled"
                    f" {row['cancelled_write_bytes_per_answer']}), store's share net"
                    f" {row['store_net_per_answer']}, without a store net"
                    f" {row['bare_net_per_answer']}, wchar {row['wchar_per_answer']}; kept"
                    f" {row['store_kept_per_answer']}, result file {row['result_per_answer']};"
                    f" load {os.getloadavg()[0]:.1f}",
                    file=sys.stderr,
                    flush=True,
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10_000])
    parser.add_argument("--writes", action="store_true", help="bytes written per answer")
    parser.add_argument(
        "--code", type=Path, action="append", help="a checkout whose judge runs (repeatable)"
    )
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    parser.add_argument(
        "--diagnosis-chars", type=int, help="make each diagnosis this long (default: as is)"
    )
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    if args.writes:
        args.code = [c.resolve() for c in args.code or [REPO]]
        found = writes(args)
        print(f"load average (1 min): {load_start:.1f} at start, {os.getloadavg()[0]:.1f} at end")
        print(
            "| code | answers | net / answer (store's share) | write_bytes | cancelled "
            "| without a store: net | wchar / answer | store kept / answer | result / answer |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in found:
            print(
                f"| {r['code']} | {r['answers']} | {r['net_per_answer']}"
                f" ({r['store_net_per_answer']}) | {r['write_bytes_per_answer']}"
                f" | {r['cancelled_write_bytes_per_answer']} | {r['bare_net_per_answer']}"
                f" | {r['wchar_per_answer']} | {r['store_kept_per_answer']}"
                f" | {r['result_per_answer']} |"
            )
        if args.json:
            args.json.write_text(json.dumps(found, indent=2) + "\n")
        return
    rows = []
    print(
        f"{'submissions':>11} {'calls':>6} {'requests':>8} {'texts':>6} {'base MB':>8} "
        f"{'log MB':>7} {'log x':>6} {'no-text x':>9} {'B/call base':>11} {'+B/call log':>11} "
        f"{'wall log/no-text':>16}"
    )
    with tempfile.TemporaryDirectory() as tmp, provider_process() as (url, _):
        for n in args.sizes:
            row = measure(n, Path(tmp), url, args.diagnosis_chars)
            rows.append(row)
            print(
                f"{n:11d} {row['calls']:6d} {row['requests']:8d} {row['texts']:6d} "
                f"{row['baseline_mb']:8.2f} {row['log_mb']:7.2f} {row['log_ratio']:6.2f} "
                f"{row['no_text_ratio']:9.2f} {row['baseline_bytes_per_call']:11d} "
                f"{row['log_bytes_per_call']:11d} {row['wall_ratio']:16.2f}",
                flush=True,
            )
    load = {"start": load_start, "end": os.getloadavg()[0]}
    print(f"load average (1 min): {load['start']:.1f} at start, {load['end']:.1f} at end")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "load_average": load}, indent=2) + "\n")


if __name__ == "__main__":
    main()
