"""`judge check` against loading the same files as `judge eval` does, on N synthetic specs.

    python benchmarks/check.py [N] [--dir DIR] [--runs R] [--code DIR]

Writes N spec files (the 13 example specs cycled, each with an id of its own, one YAML file
per spec in one folder) and N submissions (JSONL, one per spec), then times in turn, in fresh
processes, `R` times each and in turn (the best of each is reported, the machine being
shared):

- load: what `judge eval` does with its inputs before its first judge call: read the specs
  and the submissions (`judge.cli.common.load_inputs`) and pair them (`match_submissions`);
- check: `judge check --ground-truth DIR --outputs FILE --json` (stdout discarded);

and prints check / load: issue 27's goal is 1.0 or less (check was 3.5x eval at 20,000).
`--code DIR` runs both against the code in another checkout (for a before/after on one
machine: `git worktree add /tmp/base main`, then `--code /tmp/base`).
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
EXAMPLE = REPO / "examples" / "sregym-mini"

LOAD = (
    "import sys; from pathlib import Path; from judge.cli.common import load_inputs; "
    "from ground_truth import match_submissions; "
    "specs, subs, found = load_inputs(Path(sys.argv[1]), Path(sys.argv[2]), 'auto'); "
    "print(len(match_submissions(specs, subs).pairs))"
)
CHECK = (
    "import sys; from judge.cli import main; "
    "raise SystemExit(main(['check', '--ground-truth', sys.argv[1], '--outputs', sys.argv[2],"
    " '--json']))"
)


def write_inputs(n: int, target: Path) -> tuple[Path, Path]:
    """`target/gt/spec-<i>.yaml` for i < n and `target/submissions.jsonl`."""
    import yaml

    examples = sorted((EXAMPLE / "ground_truth").glob("*.yaml"))
    bases = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in examples]
    diagnoses = {}
    for file in sorted((EXAMPLE / "outputs").glob("*/*/agent_output.json")):
        diagnoses.setdefault(file.parts[-3], json.loads(file.read_text())["diagnosis"])
    gt = target / "gt"
    gt.mkdir(parents=True, exist_ok=True)
    with (target / "submissions.jsonl").open("w", encoding="utf-8") as rows:
        for i in range(n):
            base = bases[i % len(bases)]
            spec = {**base, "id": f"{base['id']}-{i}"}
            (gt / f"spec-{i:05d}.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
            row = {"incident_id": spec["id"], "trial": "1", "diagnosis": diagnoses[base["id"]]}
            rows.write(json.dumps(row) + "\n")
    return gt, target / "submissions.jsonl"


def timed(code: str, gt: Path, subs: Path, checkout: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code, str(gt), str(subs)],
        cwd=checkout,
        env=env,
        stdout=subprocess.DEVNULL,
        check=False,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=20_000)
    parser.add_argument("--dir", type=Path, help="where to write the inputs (default: a temp dir)")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--code", type=Path, default=REPO, help="the checkout to measure")
    args = parser.parse_args()
    folder = args.dir or Path(tempfile.mkdtemp(prefix="judge-check-bench-"))
    gt, subs = write_inputs(args.n, folder)
    loads, checks = [], []
    for _ in range(args.runs):  # taken in turn, so that a busy spell weighs on both
        loads.append(timed(LOAD, gt, subs, args.code))
        checks.append(timed(CHECK, gt, subs, args.code))
    load, check = min(loads), min(checks)
    print(f"{args.n} specs and submissions, code {args.code}, best of {args.runs}")
    print(f"load (as judge eval): {load:.1f} s")
    print(f"judge check --json:   {check:.1f} s")
    print(f"check / load: {check / load:.2f}x")


if __name__ == "__main__":
    main()
