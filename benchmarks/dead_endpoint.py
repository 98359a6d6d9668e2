"""How long `judge eval` takes to stop when the provider is gone (issue 24: within 10 s).

    python benchmarks/dead_endpoint.py [--runs 3] [--json PATH]

The bundled example (32 submissions, 96 calls) with `--judge-model openai/fake-judge`, as a
user whose server is down would run it, default settings otherwise. Three ways to be gone:
- `refused`: `--api-base` at a port nothing listens on;
- `dropped`: the fake provider (its own process) closing every connection unanswered;
- `timeouts`: the fake provider holding every request 5 s, with `--timeout 1`.
Each is timed from launch to exit (the median of `--runs`), with its exit code and the
requests the server saw. The baseline, measured in the same run: `python -c "import
litellm"`, which every run that calls a provider pays before its first request; a stop
costs that, the breaker's wait before its probe (2 s), and the failed requests' own time.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.provider import provider_process  # noqa: E402

EXAMPLE = REPO / "examples" / "sregym-mini"
SCENARIOS = {
    "refused": None,
    "dropped": ("--fault-rate", "hang=1", "--hang-seconds", "0"),
    "timeouts": ("--fault-rate", "hang=1", "--hang-seconds", "5"),
}


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def timed(command: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, done.returncode


def eval_command(url: str, result: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "judge", "eval",
        "--ground-truth", str(EXAMPLE / "ground_truth"), "--outputs", str(EXAMPLE / "outputs"),
        "--result-file", str(result), "--judge-model", "openai/fake-judge", "--api-base", url,
        "--no-progress", *extra,
    ]  # fmt: skip


def scenario(name: str, runs: int, tmp: Path) -> dict[str, object]:
    walls, codes, requests = [], set(), []
    extra = ("--timeout", "1") if name == "timeouts" else ()
    for n in range(runs):
        result = tmp / f"{name}{n}.json"
        if SCENARIOS[name] is None:
            wall, code = timed(eval_command(closed_port(), result, *extra))
            seen = json.loads(result.read_text())["usage"]["requests"]
        else:
            with provider_process(*SCENARIOS[name]) as (url, log):
                wall, code = timed(eval_command(url, result, *extra))
                seen = len(log.read_text().splitlines()) if log.exists() else 0
        walls.append(wall)
        codes.add(code)
        requests.append(seen)
    stop = json.loads((tmp / f"{name}0.json").read_text()).get("stopped") or {}
    return {
        "scenario": name,
        "wall_s": round(statistics.median(walls), 2),
        "walls_s": [round(w, 2) for w in walls],
        "exit_codes": sorted(codes),
        "requests": requests,
        "stop": stop.get("message"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    imports = [
        timed([sys.executable, "-c", "import judge.judges.llm as l; l.import_litellm()"])[0]
        for _ in range(args.runs)
    ]
    baseline = statistics.median(imports)
    print(f"baseline: importing litellm {baseline:.2f} s (median of {args.runs})")
    print(f"{'scenario':>9} {'wall s':>7} {'x import':>8} {'exit':>5} {'requests':>9}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in SCENARIOS:
            row = scenario(name, args.runs, Path(tmp))
            row["vs_import"] = round(float(row["wall_s"]) / baseline, 2)  # type: ignore[arg-type]
            rows.append(row)
            print(
                f"{name:>9} {row['wall_s']:7.2f} {row['vs_import']:8.2f} "
                f"{','.join(map(str, row['exit_codes'])):>5} {row['requests']!s:>9}",
                flush=True,
            )
    load = {"start": load_start, "end": os.getloadavg()[0]}
    print(f"stop message: {rows[0]['stop']}")
    print(f"load average (1 min): {load['start']:.1f} at start, {load['end']:.1f} at end")
    if args.json:
        payload = {"import_litellm_s": baseline, "rows": rows, "load_average": load}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
