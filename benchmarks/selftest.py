"""`judge selftest` with the rules judge on every format the package reads (issue 33).

    python benchmarks/selftest.py [[NAME=]PATH ...] [--corpus DIR] [--seed N] [--json]

Runs the selftest's derived probes (no goldens) with the offline rules judge over each set
of the shared corpus (`../shared/corpus`, or `$DIAGNOSIS_JUDGE_CORPUS`, or `--corpus`), the
bundled example, and any extra spec file or folder given (an upstream snapshot, named
`NAME=PATH` in the table if given so; the format is detected as `judge eval` detects it). Prints per set the number of specs and the
pass rate (the case reaching the rubric's threshold) of each probe kind, with issue 33's
goals marked: the ground truth as the diagnosis passes >= 0.98, the fault origin swapped
<= 0.02, the mechanism swapped <= 0.05 (`ok` / `MISSED`). The victim-only and the
vague / empty / injection columns are must-fail too (goal: 0.00, not marked). `--json`
prints the rows as JSON instead.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CORPUS_SETS = [
    ("OpenRCA Bank (agent-Bank.csv)", "openrca/agent-Bank.csv"),
    ("OpenRCA Market cloudbed-1", "openrca/agent-Market-cloudbed-1.csv"),
    ("OpenRCA Market cloudbed-2", "openrca/agent-Market-cloudbed-2.csv"),
    ("OpenRCA Telecom", "openrca/agent-Telecom.csv"),
    ("FORGE labels (cloudbed-1)", "rca-llm-reasoning/label_Online-Boutique-cloudbed-1.csv"),
    ("AIOpsLab (ground_truth.yaml)", "aiopslab/ground_truth.yaml"),
    ("SREGym registry", "sregym-registry/root_causes_all_123.yaml"),
    ("SREGym problems (40)", "sregym/problems/ground_truth_40.json"),
    (
        "ITBench-Evaluations ground_truths.json",
        "itbench/ground_truth/itbench-evaluations_data/ground_truths.json",
    ),
    ("ITBench scenarios", "itbench/ground_truth/itbench_scenarios"),
    ("Cloud-OpsBench metadata", "cloud-opsbench/boutique_runtime_1_metadata.json"),
    ("SRE-Zero task configs", "sre-zero/task_configs_all_40.json"),
]
GOALS = {"truth": (">=", 0.98), "origin-swap": ("<=", 0.02), "mechanism-swap": ("<=", 0.05)}
COLUMNS = ["truth", "rewrite", "origin-swap", "mechanism-swap", "victim-only"]
NOTHING = ("vague", "empty", "injection")


def corpus_root(given: Path | None) -> Path:
    if given is not None:
        return given
    configured = os.environ.get("DIAGNOSIS_JUDGE_CORPUS")
    return Path(configured) if configured else REPO.parent / "shared" / "corpus"


def measure(name: str, path: Path, seed: int) -> dict[str, Any]:
    """One set's row: specs, pass rate and as-expected share per probe kind."""
    from ground_truth import load_specs
    from judge import selftest_judge

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        specs = load_specs(path)
    report = selftest_judge(specs, goldens=False, seed=seed)
    kinds = {k.kind: k for k in report.kinds}
    row: dict[str, Any] = {"set": name, "path": str(path), "specs": len(specs)}
    for kind in (*COLUMNS, *NOTHING):
        summary = kinds.get(kind)
        row[kind] = None if summary is None else summary.pass_rate
        row[f"{kind} n"] = 0 if summary is None else summary.probes
        row[f"{kind} as expected"] = None if summary is None else summary.share
    verdicts = [kinds[k] for k in NOTHING if k in kinds]
    passed, total = sum(k.passed for k in verdicts), sum(k.probes for k in verdicts)
    row["vague/empty/injection"] = passed / total if total else None
    row["goals met"] = all(_meets(kind, row[kind]) for kind in GOALS)
    return row


def _meets(kind: str, value: float | None) -> bool:
    if value is None:
        return True
    sign, bound = GOALS[kind]
    return value >= bound - 1e-12 if sign == ">=" else value <= bound + 1e-12


def _cell(row: dict[str, Any], kind: str) -> str:
    value = row[kind]
    if value is None:
        return "-"
    shown = f"{value:.2f}"
    if kind in GOALS:
        shown += " ok" if _meets(kind, value) else " **MISSED**"
    return shown


def markdown(rows: list[dict[str, Any]]) -> str:
    head = ["set", "specs", *COLUMNS, "vague/empty/injection"]
    goals = {k: f"{s} {b}" for k, (s, b) in GOALS.items()}
    lines = [
        "| " + " | ".join(f"{h} ({goals[h]})" if h in goals else h for h in head) + " |",
        "|" + "---|" * len(head),
    ]
    for row in rows:
        cells = [row["set"], str(row["specs"])]
        cells += [_cell(row, kind) for kind in (*COLUMNS, "vague/empty/injection")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="extra spec files or folders, [NAME=]PATH")
    parser.add_argument("--corpus", type=Path, help="the shared corpus (default ../shared/corpus)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    corpus = corpus_root(args.corpus)
    sets = [("bundled example (sregym-mini)", REPO / "examples" / "sregym-mini" / "ground_truth")]
    sets += [(name, corpus / relative) for name, relative in CORPUS_SETS]
    for given in args.paths:
        name, _, path = given.rpartition("=")
        sets.append((name or path, Path(path)))
    missing = [str(path) for _, path in sets if not path.exists()]
    if missing:
        print(f"not found: {', '.join(missing)}", file=sys.stderr)
        return 2
    rows = [measure(name, path, args.seed) for name, path in sets]
    print(json.dumps(rows, indent=2) if args.json else markdown(rows))
    return 0 if all(row["goals met"] for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
