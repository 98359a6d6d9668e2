"""Sample collector C3's real-agent diagnoses (issue 22) into `cases/<source>.yaml`.

    python benchmarks/validity/real/sample_c3.py [--mirror GIT_DIR] [--corpus DIR] [--out DIR]

Reads the run reports of github.com/martinimarcello00/SRE-agent (folder `Results/`) from a git
mirror as `fetch` leaves it (`--mirror`, e.g. MIRRORS/martinimarcello00+SRE-agent/repo)
at the commit `COMMIT`. Each report is one run of the author's multi-agent SRE system (gpt-5-mini)
on a fault that AIOpsLab injected; its `final_report.root_cause` is the diagnosis, and its
`evaluation` holds the author's own scores (an LLM judge's `rca_score` 1-5 with a reason, and
detection/localization flags). The repository has no licence, so the cases are written with
`diagnosis: null` and a `diagnosis_sha256`; extract.py rebuilds the text.

Runs are deduplicated by `stats.run_id` (the `aggregate-results/` folder repeats other folders),
kept when the run succeeded, gave a root cause (not "No analysis data available"), its fault maps to an AIOpsLab problem whose facts agree with the
author's own ground truth (`FAULTS`), and it carries a score. They are grouped into sources by
agent configuration (`SOURCES`). Each source's draw is seeded by `random.Random(f"c3:{source}")`:
a quota per author's score (`QUOTAS`; a shortfall moves to the next score, then to any), and inside
a score round-robin over faults, preferring faults this source drew least, then faults earlier
sources drew least. Every incident id is checked against the `aiopslab` adapter's specs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from extract import default_corpus  # the script's own folder

HERE = Path(__file__).resolve().parent
REPO = "martinimarcello00/SRE-agent"
COMMIT = "8d0182858d8ae6b7ca62545def13aa1b4ddab589"
SPEC_PATH = "corpus:aiopslab/ground_truth.yaml"
SCENARIOS = "sre-agent/experiments_runner/fault-scenarios"

# fault name in the report's `testbed` -> (AIOpsLab problem id the run injected, the author's
# scenario file holding `RCA_gt`). Left out: "No fault" (nothing to diagnose), "Container Kill" and
# "Pod kill" (the author's ground truth blames frontend / recommendation, AIOpsLab's upstream
# problem geo / user), "Pod failure" (the author says HTTP 500s, upstream an unavailable pod) and
# "Redeploy Without PV" (no faulty component in the adapter's spec).
FAULTS: dict[str, tuple[str, str]] = {
    "Port missmatch geo": ("misconfig_app_hotel_res-detection-1", "misconfig_app_hotel_res"),
    "Revoke auth MongoDB (Geo)": ("revoke_auth_mongodb-detection-1", "revoke_auth_mongoDB_geo_hotel_res"),
    "Revoke auth MongoDB (Rate)": ("revoke_auth_mongodb-detection-2", "revoke_auth_mongoDB_rate_hotel_res"),
    "User unregistered MongoDB (Geo)": ("user_unregistered_mongodb-detection-1", "user_unregistered_mongodb_geo_hotel_res"),
    "User unregistered MongoDB (Rate)": ("user_unregistered_mongodb-detection-2", "user_unregistered_mongodb_rate_hotel_res"),
    "Network delay": ("network_delay_hotel_res-detection-1", "network_delay_hotel_res"),
    "Network loss": ("network_loss_hotel_res-detection-1", "network_loss_hotel_res"),
    "Wrong bin usage": ("wrong_bin_usage-detection-1", "wrong_bin_usage_hotel_res"),
    "Assign Pod to Non-Existent Node": ("assign_to_non_existent_node_social_net-detection-1", "assign_to_non_existent_node_social_network"),
    "MongoDB url-shorten authentication missing": ("auth_miss_mongodb-detection-1", "auth_miss_mongoDB_social_network"),
    "Port misconfig user": ("k8s_target_port-misconfig-detection-1", "port_misconfig_user_social_network"),
    "Port misconfig text": ("k8s_target_port-misconfig-detection-2", "port_misconfig_text_social_network"),
    "Port misconfig post-storage": ("k8s_target_port-misconfig-detection-3", "port_misconfig_post_storage_social_network"),
    "Scale Pod to Zero": ("scale_pod_zero_social_net-detection-1", "scale_pod_zero_social_netscale_pod_zero_social_network"),
}  # fmt: skip

# source -> (configuration ids, a description of the agent configuration)
SOURCES: dict[str, tuple[tuple[str, ...], str]] = {
    "aiopslab-sreagent-gpt-5-mini-plain-react": (
        ("A", "B", "C", ""),
        "plain ReAct RCA workers (configurations A/B/C: 2, 3 or 5 RCA tasks per iteration, "
        "7 tool calls; runs without a configuration id, named Plain React P2/P3/P5 B7, are the "
        "same configurations before ids were given)",
    ),
    "aiopslab-sreagent-gpt-5-mini-toolfree-planning": (
        ("F", "G"),
        "ReAct RCA workers with a tool-free planner (configurations F/G: 2 or 3 RCA tasks per "
        "iteration, 7 tool calls)",
    ),
    "aiopslab-sreagent-gpt-5-mini-prompt-variants": (
        ("D", "E", "H", "I", "J", "K", "L"),
        "prompt variants (D/E conservative prompts, H/I a supervisor that must be certain, J/K/L "
        "improved plain ReAct with fallback tools; 2 or 3 RCA tasks per iteration, 7 or 15 tool "
        "calls)",
    ),
}
NO_ANSWER = (None, "", "No analysis data available")  # 87 runs whose workers produced nothing
QUOTAS = {1: 4, 2: 3, 3: 3, 4: 3, 5: 3}
AGENT = (
    "SRE-agent by martinimarcello00 (LangGraph: triage, planner, parallel ReAct RCA workers and "
    "a supervisor over an MCP observability server) with gpt-5-mini, {config}; configuration {name}"
)
CUT = (
    "final_report.root_cause of the run report, verbatim: the supervisor's root-cause statement, "
    "the field the author's judge scored; affected_resources, evidence_summary, "
    "investigation_summary, detection/localization and the whole trajectory dropped (rebuilt by "
    "extract_c3.py)"
)


@dataclass
class Run:
    path: str
    report: dict[str, Any]

    @property
    def config_id(self) -> str:
        return str(self.report.get("agent_id") or "")

    @property
    def fault(self) -> str:
        return str(self.report["testbed"]["fault_name"])

    @property
    def score(self) -> int:
        return int(self.report["evaluation"]["rca_score"])

    @property
    def root_cause(self) -> str:
        return str(self.report["final_report"]["root_cause"])


def git(mirror: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "--git-dir", str(mirror), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def load_runs(mirror: Path) -> list[Run]:
    """One run per `stats.run_id`, the copy outside `aggregate-results/` first."""
    paths = sorted(
        p
        for p in git(mirror, "ls-tree", "-r", "--name-only", COMMIT, "Results").splitlines()
        if p.endswith(".json")
    )
    paths.sort(key=lambda p: p.split("/")[1] == "aggregate-results")
    runs: dict[str, Run] = {}
    for path in paths:
        report = json.loads(git(mirror, "show", f"{COMMIT}:{path}"))
        run_id = (report.get("stats") or {}).get("run_id")
        if run_id and run_id not in runs:
            runs[run_id] = Run(path, report)
    return list(runs.values())


def usable(run: Run) -> bool:
    report = run.report
    evaluation = report.get("evaluation") or {}
    return (
        (report.get("stats") or {}).get("status") == "success"
        and (report.get("testbed") or {}).get("fault_name") in FAULTS
        and isinstance(evaluation.get("rca_score"), int)
        and (report.get("final_report") or {}).get("root_cause") not in NO_ANSWER
    )


def draw(runs: list[Run], seed: str, earlier: Counter[str]) -> list[Run]:
    rng = random.Random(seed)
    pool = sorted(runs, key=lambda r: r.path)
    rng.shuffle(pool)
    mine: Counter[str] = Counter()
    chosen: list[Run] = []
    carry = 0
    for score, quota in [*QUOTAS.items(), (0, 0)]:
        want = quota + carry
        stratum = [r for r in pool if r.score == score] if score else pool
        while want and (left := [r for r in stratum if r not in chosen]):
            pick = min(left, key=lambda r: (mine[r.fault], earlier[r.fault], pool.index(r)))
            chosen.append(pick)
            mine[pick.fault] += 1
            want -= 1
        carry = want
    earlier.update(mine)
    return chosen


def case(source: str, config: str, index: int, run: Run) -> dict[str, Any]:
    report, evaluation = run.report, run.report["evaluation"]
    problem, scenario = FAULTS[run.fault]
    text = run.root_cause
    return {
        "case": f"{source}-{index:03d}",
        "source": source,
        "agent": AGENT.format(config=config, name=report["agent_configuration_name"]),
        "benchmark": "aiopslab",
        "format": "aiopslab",
        "incident_id": problem,
        "spec_path": SPEC_PATH,
        "diagnosis": None,
        "diagnosis_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "cut": CUT,
        "benchmark_outcome": (
            f"the author's evaluation: rca_score {evaluation['rca_score']}/5 (LLM judge against "
            f"the author's own RCA_gt in {SCENARIOS}/{scenario}.json, not AIOpsLab's), "
            f"detection={evaluation.get('detection')}, localization="
            f"{evaluation.get('localization')} (the judge's written reason is in the report, "
            "evaluation.rca_motivation, not copied: the source has no licence)"
        ),
        "origin": {
            "repo": REPO,
            "commit": COMMIT,
            "path": run.path,
            "locator": f"json-string:final_report.root_cause (run {report['stats']['run_id']}, "
            f"fault {run.fault!r}, AIOpsLab problem {problem})",
            "licence": "none found",
        },
    }


def spec_ids(corpus: Path) -> set[str]:
    sys.path.insert(0, str(HERE.parents[2]))
    from ground_truth import load_specs

    specs = load_specs(corpus / SPEC_PATH.removeprefix("corpus:"), format="aiopslab")
    return {spec.id for spec in specs if spec.fault_origin}


def write(out: Path, source: str, cases: list[dict[str, Any]]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    header = f"# {source}: real agent diagnoses collected by C3 for issue 22 (SOURCES-c3.md)\n"
    text = yaml.safe_dump(cases, sort_keys=False, allow_unicode=True, width=100)
    (out / f"{source}.yaml").write_text(header + text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, required=True, help="the repository's git dir")
    parser.add_argument("--corpus", type=Path, default=default_corpus(), help="the shared corpus")
    parser.add_argument("--out", type=Path, default=HERE / "cases")
    args = parser.parse_args()
    if not args.mirror.is_dir():
        print(f"--mirror {args.mirror}: not a directory (expected a git dir)", file=sys.stderr)
        return 2
    known = spec_ids(args.corpus)
    runs = [r for r in load_runs(args.mirror) if usable(r)]
    earlier: Counter[str] = Counter()
    for source, (config_ids, config) in SOURCES.items():
        picked = draw([r for r in runs if r.config_id in config_ids], f"c3:{source}", earlier)
        cases = [case(source, config, i, r) for i, r in enumerate(picked, start=1)]
        if unknown := [c["case"] for c in cases if c["incident_id"] not in known]:
            print(f"{source}: incident id not in the adapter's specs: {unknown}", file=sys.stderr)
            return 1
        write(args.out, source, cases)
        scores = Counter(r.score for r in picked)
        print(f"{source}: {len(cases)} cases, scores {dict(sorted(scores.items()))}, "
              f"{len({r.fault for r in picked})} faults")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
