"""Synthetic inputs for the benchmarks: N submissions cycled from the example set.

    python benchmarks/synth.py 10000 /tmp/synth      # writes /tmp/synth/submissions.jsonl

The ground truth is the example set's own directory (`examples/sregym-mini/ground_truth`);
submission i repeats example i mod 32 as trial `s<i>`, with "(copy i)" appended to the
diagnosis: every (incident, trial) and every prompt is unique, so no judgment is a cache hit
of another.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "sregym-mini"
GROUND_TRUTH = EXAMPLE / "ground_truth"


def write_submissions(n: int, target: Path) -> Path:
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from ground_truth import load_submissions

    examples = load_submissions(EXAMPLE / "outputs")
    target.mkdir(parents=True, exist_ok=True)
    path = target / "submissions.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            base = examples[i % len(examples)]
            diagnosis = f"{base.diagnosis} (copy {i})"
            row = {"incident_id": base.incident_id, "trial": f"s{i}", "diagnosis": diagnosis}
            handle.write(json.dumps(row) + "\n")
    return path


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("/tmp/judge-synth")
    print(write_submissions(count, out))
