"""How many requests `judge eval` pays for before it stops when no reply can be used (issue 35).

    python benchmarks/unusable.py [--submissions 1000] [--fault malformed] [--code DIR] [--json PATH]

The fake provider (its own process, no latency) answers every request with the fault given
(`malformed`: not JSON; `refusal`: a refusal message), and `judge eval` scores N synthetic
submissions (`synth.py`) against it with its defaults (5 in flight, two re-asks, no store).
Printed: the requests the provider served, the exit code, the wall time and the exit line.
`--code DIR` runs the `judge` of another checkout (e.g. main before the change) from DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.provider import provider_process  # noqa: E402
from benchmarks.synth import GROUND_TRUTH, write_submissions  # noqa: E402


def measure(submissions: int, fault: str, code: Path) -> dict[str, object]:
    with (
        tempfile.TemporaryDirectory() as tmp,
        provider_process("--fault-rate", f"{fault}=1.0") as (url, log),
    ):
        outputs = write_submissions(submissions, Path(tmp))
        result = Path(tmp) / "r.json"
        command = [
            sys.executable, "-m", "judge", "eval", "--ground-truth", str(GROUND_TRUTH),
            "--outputs", str(outputs), "--result-file", str(result), "--judge-model",
            "openai/fake-judge", "--api-base", url, "--no-progress", "--no-store",
        ]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(code)}
        start = time.perf_counter()
        done = subprocess.run(command, cwd=code, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        time.sleep(0.2)  # the provider's log is written as each request ends
        requests = sum(1 for _ in log.open()) if log.exists() else 0
        reason = json.loads(result.read_text()).get("exit_reason") if result.exists() else None
    return {
        "submissions": submissions,
        "fault": fault,
        "requests": requests,
        "exit_code": done.returncode,
        "wall_s": round(wall, 2),
        "exit_reason": reason,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--fault", default="malformed", choices=["malformed", "refusal"])
    parser.add_argument("--code", type=Path, default=REPO, help="the checkout whose judge runs")
    parser.add_argument("--json", type=Path, help="also write the row as JSON here")
    args = parser.parse_args()
    row = measure(args.submissions, args.fault, args.code.resolve())
    print(
        f"{row['submissions']} submissions, every reply {row['fault']}: {row['requests']} "
        f"requests, exit {row['exit_code']}, {row['wall_s']} s\n  {row['exit_reason']}"
    )
    if args.json:
        args.json.write_text(json.dumps(row, indent=2) + "\n")


if __name__ == "__main__":
    main()
