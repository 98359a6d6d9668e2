"""How far the root-cause entity metrics computed in code differ from ITBench's LLM-judged ones.

    python benchmarks/itbench_entities.py [--corpus DIR] [--ground-truth FILE] [RESULT ...]

ITBench-Evaluations asks an LLM which predicted entities match the ground truth and to compute
precision, recall and F1 (and @k from its matches); `judge eval` computes the same in code
(`ground_truth.entities`). This reads published ITBench judge results (`evaluation_results.json`,
or AgentBeats leaderboard files wrapping it), and for every case the LLM scored, scores the same
case in code: from the agent output when the file publishes it (`agent_outputs`), else from the
entity names the LLM listed as the agent's predictions. It prints, per file and over all, the
number of cases and the mean absolute difference per metric, and how many cases had a match
decision that differs.

By default it reads the shared corpus (`$DIAGNOSIS_JUDGE_CORPUS`, else `../shared/corpus` beside
the checkout): the five judge result files under `itbench/judge_results/` against
`itbench/ground_truth/itbench-evaluations_data/ground_truths.json` (see that folder's
SOURCE.md for the commits). Those files carry no licence: they are read, never copied.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ground_truth.entities import K_VALUES, score_entities  # noqa: E402
from ground_truth.formats.itbench import (  # noqa: E402
    load_itbench_judge_results,
    load_itbench_specs,
    load_itbench_submissions,
)
from ground_truth.models import Entity, Submission  # noqa: E402

METRICS = ["root_cause_entity_precision", "root_cause_entity_recall", "root_cause_entity_f1"] + [
    f"root_cause_entity_k@{k}_{m}" for k in K_VALUES for m in ("precision", "recall", "f1")
]
SHOWN = METRICS[:3] + [f"root_cause_entity_k@{k}_f1" for k in (1, 3, 5)]


def default_corpus() -> Path:
    found = os.environ.get("DIAGNOSIS_JUDGE_CORPUS")
    return Path(found) if found else REPO.parent / "shared" / "corpus"


def published_outputs(path: Path) -> dict[tuple[str, str], Submission]:
    """The agent outputs a judge result file publishes beside its verdicts, if any."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return {s.key: s for s in load_itbench_submissions(path)}
    except ValueError:
        return {}


def from_listed(case: dict[str, Any]) -> Submission:
    """A submission of the entity names the LLM listed as the agent's predictions."""
    names = [str(p["entity"]) for p in case["predicted"] if p.get("entity")]
    return Submission(
        incident_id=case["incident_id"],
        trial=case["trial"],
        diagnosis="",
        entities=[Entity(name=n, contributing_factor=True) for n in names],
    )


def compare(path: Path, specs: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per case the LLM scored: its metrics, ours, and where ours came from."""
    outputs = published_outputs(path)
    rows = []
    for case in load_itbench_judge_results(path):
        if case["error"] or case["metrics"]["root_cause_entity_f1"] is None:
            continue
        spec = specs.get(case["incident_id"])
        if spec is None:
            continue
        published = outputs.get((case["incident_id"], case["trial"]))
        sub = published or from_listed(case)
        score = score_entities(spec, sub)
        if score is None:
            continue
        ours = score.flat()
        theirs = case["metrics"]
        decisions = [m.matched_to is not None for m in score.matches]
        listed = [bool(p.get("matches_gt")) for p in case["predicted"]]
        rows.append(
            {
                "case": f"{case['incident_id']}/{case['trial']}",
                "from": "agent output" if published else "LLM's entity list",
                "diff": {m: abs(ours[m] - theirs[m]) for m in METRICS if theirs[m] is not None},
                "same_decisions": decisions == listed,
            }
        )
    return rows


def summary(rows: list[dict[str, Any]]) -> str:
    n = len(rows)
    if not n:
        return "no case with LLM-judged entity metrics"
    parts = []
    for metric in SHOWN:
        values = [r["diff"][metric] for r in rows if metric in r["diff"]]
        label = metric.removeprefix("root_cause_entity_")
        parts.append(f"{label} {sum(values) / len(values):.3f}" if values else f"{label} n/a")
    differing = sum(not r["same_decisions"] for r in rows)
    return (
        f"n={n}; mean |ours - ITBench LLM|: "
        + ", ".join(parts)
        + f"; {differing} case(s) with a different match decision"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "results", nargs="*", type=Path, help="judge result files (default: the corpus's)"
    )
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument(
        "--ground-truth",
        type=Path,
        help="ITBench ground truth (default: the corpus's ground_truths.json)",
    )
    args = parser.parse_args()
    gt = (
        args.ground_truth
        or args.corpus / "itbench/ground_truth/itbench-evaluations_data/ground_truths.json"
    )
    if not gt.is_file():
        parser.error(f"{gt}: no such file (give --corpus DIR or set DIAGNOSIS_JUDGE_CORPUS)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        specs = {s.id: s for s in load_itbench_specs(gt)}
    files = args.results or sorted((args.corpus / "itbench/judge_results").rglob("*.json"))
    every = []
    for path in files:
        rows = compare(path, specs)
        every += rows
        sources = sorted({r["from"] for r in rows})
        print(f"{path.name} ({', '.join(sources) or '-'}): {summary(rows)}")
        for row in rows:
            worst = max(row["diff"].items(), key=lambda kv: kv[1])
            if worst[1] > 0:
                print(f"  {row['case']}: largest difference {worst[0]} {worst[1]:.3f}")
    print(f"all: {summary(every)}")


if __name__ == "__main__":
    main()
