"""How far a few labels correct the rules judge's pass rate on real agents' text (issue 23).

    python benchmarks/ppi_validity.py [--split test] [--budget N ...] [--draws D] [--no-cache]

The rules judge scores the real-agent set's split (`benchmarks/validity/real/`); labeller a's
labels (written by the project from GUIDE.md, every case of the set) give the reference: the
pass rate the labels say over all of the split's cases with text. For each label budget N,
D simple random samples of N cases keep only their labels, and `judge.estimate_with_labels`
(what `judge estimate` runs) gives the labels-only and the PPI++ pass rate with their 95%
intervals, clustered by incident. Printed: the judge alone against the reference, and per
budget each interval's mean width and how often it covers the reference.

Texts of unlicensed sources come from the cache `extract.py` fills; `--no-cache` uses only the
committed and corpus texts (47 of the test split's 107 cases); `--cache DIR` names another.
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import benchmarks.validity as V  # noqa: E402
import benchmarks.validity_real as real  # noqa: E402
from judge import estimate_with_labels, load_rubric  # noqa: E402
from judge.judges.rules import RulesJudge  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus"


def label_rows(run: V.RealRun, who: str = "a") -> dict[tuple[str, str], list[dict[str, str]]]:
    """Labeller `who`'s rows by case (incident id, case id), for the cases judged."""
    judged = {(s.incident_id, s.trial) for s in run.submissions}
    rows: dict[tuple[str, str], list[dict[str, str]]] = {}
    for by_who in run.sheets.values():
        if who not in by_who:
            continue
        with by_who[who].open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                key = (row["incident_id"], row["trial"])
                if key in judged:
                    rows.setdefault(key, []).append(row)
    return rows


def write_sheet(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--split", default="test", choices=["tune", "test", "all"])
    p.add_argument("--budget", type=int, action="append", help="labels per draw (repeatable)")
    p.add_argument("--draws", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cache", type=Path, default=real.REAL / ".cache", help="extract.py's texts")
    p.add_argument("--no-cache", action="store_true", help="committed and corpus texts only")
    args = p.parse_args()
    rubric = load_rubric("sregym-v3")
    cache = None if args.no_cache else args.cache
    splits = ["tune", "test"] if args.split == "all" else [args.split]
    run = V.prepare_real(real.REAL, splits, None, cache, CORPUS, rubric)
    result = V.run_judge(run.specs, run.submissions, RulesJudge(), 5)
    rows = label_rows(run)
    cases = sorted(rows)
    with tempfile.TemporaryDirectory() as folder:
        every = estimate_with_labels(
            result,
            write_sheet(Path(folder) / "all.csv", [r for case in rows.values() for r in case]),
        )
        reference = every.pass_rate.labels_only.value
        judge_only = every.pass_rate.judge_only
        print(f"rules judge on the real set's {args.split} split: {len(cases)} cases labelled by "
              f"labeller a (the project's)")  # fmt: skip
        print(f"reference (all labels): pass rate {reference:.3f}")
        covers = judge_only.ci_low <= reference <= judge_only.ci_high
        print(f"judge alone: {judge_only.text()}; covers the reference: {covers}")
        draw = random.Random(args.seed)
        print(
            "| labels | draws | labels-only width | covers | PPI++ width | covers | labels worth |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for budget in args.budget or [20, 40]:
            widths = {"labels_only": [], "ppi": []}
            covered = {"labels_only": 0, "ppi": 0}
            worth = []
            for i in range(args.draws):
                chosen = draw.sample(cases, budget)
                sheet = write_sheet(
                    Path(folder) / f"d{i}.csv", [r for c in chosen for r in rows[c]]
                )
                est = estimate_with_labels(result, sheet).pass_rate
                for name in widths:
                    interval = getattr(est, name)
                    widths[name].append(interval.ci_high - interval.ci_low)
                    covered[name] += interval.ci_low <= reference <= interval.ci_high
                worth.append(est.effective_labels or 0.0)
            n = args.draws
            print(f"| {budget} | {n} | {sum(widths['labels_only']) / n:.3f} | "
                  f"{covered['labels_only'] / n:.2f} | {sum(widths['ppi']) / n:.3f} | "
                  f"{covered['ppi'] / n:.2f} | {sum(worth) / n:.1f} |")  # fmt: skip


if __name__ == "__main__":
    main()
