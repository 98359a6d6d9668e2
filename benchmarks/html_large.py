"""`judge eval --html` on one huge diagnosis: time and peak memory against the same run without
`--html` (issue 35: the evidence highlighter).

    python benchmarks/html_large.py [--mb 50] [--runs 1] [--code DIR] [--json PATH]

One submission of the example's incident `incorrect_image`, its diagnosis the example's own
repeated (each copy numbered) to `--mb` megabytes; the rules judge (the default) scores it,
once without and once with `--html`, each a fresh process whose peak resident set size
comes from getrusage in a wrapper process that runs nothing else (as `memory.py` does).
Printed: wall time and peak memory of each, and `--html`'s as ratios to the run without it.
`--code DIR` runs the `judge` of another checkout (e.g. main before the change).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "sregym-mini"
SPEC = EXAMPLE / "ground_truth" / "incorrect_image.yaml"
WRAPPER = """
import resource, subprocess, sys, time
start = time.perf_counter()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(usage.ru_maxrss, time.perf_counter() - start)
"""


def write_diagnosis(megabytes: float, folder: Path) -> Path:
    """One submission whose diagnosis is the example's, copied to `megabytes` MB."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from ground_truth import load_submissions

    base = next(
        s for s in load_submissions(EXAMPLE / "outputs") if s.incident_id == "incorrect_image"
    )
    pieces, size, i = [], 0, 0
    while size < megabytes * 1_000_000:
        piece = f"{base.diagnosis} (copy {i})\n"
        pieces.append(piece)
        size += len(piece.encode())
        i += 1
    path = folder / "submissions.jsonl"
    row = {"incident_id": "incorrect_image", "trial": "1", "diagnosis": "".join(pieces)}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


def measured(command: list[str], code: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    wrapped = [sys.executable, "-c", WRAPPER, *command]
    out = subprocess.run(wrapped, cwd=code, env=env, capture_output=True, text=True, check=True)
    rss_kb, wall = (float(x) for x in out.stdout.split())
    return {"peak_mb": round(rss_kb / 1024, 1), "wall_s": round(wall, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0)
    parser.add_argument(
        "--runs", type=int, default=1, help="each measured this many times (median)"
    )
    parser.add_argument("--code", type=Path, default=REPO)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    code = args.code.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        outputs = write_diagnosis(args.mb, Path(tmp))
        base = [
            sys.executable, "-m", "judge", "eval", "--ground-truth", str(SPEC),
            "--outputs", str(outputs), "--result-file", str(Path(tmp) / "r.json"),
            "--no-progress", "--max-input-mb", str(max(100.0, 3 * args.mb)),
        ]  # fmt: skip
        rows: dict[str, list[dict[str, float]]] = {"plain": [], "html": []}
        for _ in range(args.runs):  # interleaved: the machine's load falls on both alike
            rows["plain"].append(measured(base, code))
            rows["html"].append(measured([*base, "--html", str(Path(tmp) / "r.html")], code))
            html_mb = (Path(tmp) / "r.html").stat().st_size / 1e6
    median = {k: {m: sorted(r[m] for r in v)[len(v) // 2] for m in v[0]} for k, v in rows.items()}
    plain, html = median["plain"], median["html"]
    table = {
        "diagnosis_mb": args.mb,
        "without_html": plain,
        "with_html": html,
        "html_file_mb": round(html_mb, 1),
        "time_ratio": round(html["wall_s"] / plain["wall_s"], 2),
        "memory_ratio": round(html["peak_mb"] / plain["peak_mb"], 2),
    }
    print(
        f"one {args.mb:g} MB diagnosis, rules judge: without --html {plain['wall_s']} s, "
        f"{plain['peak_mb']} MB; with --html {html['wall_s']} s, {html['peak_mb']} MB "
        f"(HTML {table['html_file_mb']} MB): time x{table['time_ratio']}, "
        f"memory x{table['memory_ratio']}"
    )
    if args.json:
        args.json.write_text(json.dumps(table, indent=2) + "\n")


if __name__ == "__main__":
    main()
