"""Sample collector C2's real-agent diagnoses (issue 22) into `cases/<source>.yaml`.

    python benchmarks/validity/real/sample_c2.py [--corpus DIR] [--mirrors DIR] [--out DIR]

Reads the published runs from the shared corpus (`--corpus`, default as extract.py's) and
from git mirrors of the forks that publish OpenRCA runs (`--mirrors`, a folder in
the layout `fetch` leaves: `<owner>+<name>/repo`), and writes one YAML file per source (agent x
benchmark). Every draw is seeded by `random.Random(f"c2:{source}")`, so a rerun writes the same
files. How each source is stratified is in SOURCES-c2.md; in short: each source's runs are split
by the benchmark's own outcome (or, for FORGE, which publishes none outside the reserved judge
files, by whether the top-1 location names the ground-truth entity), a quota is drawn from each
stratum, and inside a stratum the draw goes round-robin over fault types / task types while
preferring incidents no earlier source of the same benchmark took.

AIOpsLab sessions (github.com/n1k0ver3E/ai_sre_data) carry no licence: their cases are written
with `diagnosis: null` and the sha256 of the text (read from that repository's mirror under
`--mirrors`); extract.py rebuilds the text from the public source.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from extract import default_corpus  # the script's own folder

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
FORGE_LABELS = "tests/fixtures/formats/forge/label_Online-Boutique-cloudbed-1.csv"
FORGE_COMMIT = "235902c2a846551f121138fd12faffe674bfe40e"
OPENRCA_COMMIT = "c1bd4af7f635171a1c31cdd567c07d698dff6abc"
AI_SRE_COMMIT = "784f14139504d60c048b98168e8b20f7aa3fb9d6"
GPT4O = ("biqibaomiaomiaowu/openrca_rca100", "62d826bc3874d4715eb276135c4a3704b6ad7846")
GPT4O_PATH = "test/result/Bank/agent-rca-gpt-4o.csv"
AURORA = ("IP-Michael/OpenRCA", "1a02904c7ea5b4ca09ac5bebd75b8baed61b3b92")
AURORA_PATH = "test/result/Aurora/agent-baseline-qwen3:32b.csv"
AURORA_SPEC = "benchmarks/validity/real/specs/openrca-aurora/agent-Aurora.csv"
OPENRCA_SPECS = {
    "Bank": "corpus:openrca/agent-Bank.csv",
    "Telecom": "tests/fixtures/formats/openrca/agent-Telecom.csv",
    "Market-cloudbed-1": "corpus:openrca/agent-Market-cloudbed-1.csv",
    "Market-cloudbed-2": "corpus:openrca/agent-Market-cloudbed-2.csv",
}


@dataclass
class Candidate:
    """One published run that may become a case."""

    incident: str
    stratum: str
    group: str
    case: dict[str, Any]
    first: bool = False  # drawn before the others of its stratum (prose beside a bare answer)


def natural(key: str) -> list[Any]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", key)]


def draw(
    candidates: list[Candidate], quotas: dict[str, int], seed: str, avoid: set[str]
) -> list[Candidate]:
    """`quotas[stratum]` candidates per stratum (a shortfall is taken from the next strata, then
    from any), one per incident, round-robin over groups, first the candidates marked `first`,
    then incidents not in `avoid`; the draw adds its incidents to `avoid`."""
    rng = random.Random(seed)
    pool = list(candidates)
    rng.shuffle(pool)
    chosen: list[Candidate] = []
    short = 0
    for stratum, quota in [*quotas.items(), ("", 0)]:
        want = quota + short
        for tier in _tiers([c for c in pool if not stratum or c.stratum == stratum], avoid):
            taken = {c.incident for c in chosen}
            got = _round_robin([c for c in tier if c.incident not in taken], want)
            chosen.extend(got)
            want -= len(got)
        short = want
    avoid.update(c.incident for c in chosen)
    return sorted(chosen, key=lambda c: natural(c.incident))


def _tiers(pool: list[Candidate], avoid: set[str]) -> list[list[Candidate]]:
    def rank(c: Candidate) -> int:
        return (0 if c.first else 2) + (1 if c.incident in avoid else 0)

    return [[c for c in pool if rank(c) == r] for r in range(4)]


def _round_robin(pool: list[Candidate], n: int) -> list[Candidate]:
    """Up to `n` candidates of distinct incidents, one group after another in turn."""
    groups: dict[str, list[Candidate]] = {}
    for c in pool:
        groups.setdefault(c.group, []).append(c)
    out: list[Candidate] = []
    seen: set[str] = set()
    while len(out) < n and any(groups.values()):
        for queue in groups.values():
            while queue and queue[0].incident in seen:
                queue.pop(0)
            if queue and len(out) < n:
                pick = queue.pop(0)
                out.append(pick)
                seen.add(pick.incident)
    return out


# ---------------------------------------------------------------- FORGE


def _forge_location(text: str) -> str:
    return re.sub(r"\s*\(.*\)$", "", str(text or "")).strip().lower()


def forge_hit(record: dict[str, Any]) -> bool:
    """Top-1 location names the ground-truth entity (a pod `<service>-<n>` counts for a
    service-level fault). Only used to stratify; FORGE's own judgments are reserved."""
    top = _forge_location(record["root_causes"][0].get("location"))
    entity = record["ground_truth"]["fault_entity"].lower()
    return top == entity or re.sub(r"-\d+$", "", top) == entity


def forge_candidates(corpus: Path, name: str, source: str, agent: str) -> list[Candidate]:
    data = json.loads((corpus / "rca-llm-reasoning" / name).read_text())
    about = data["_about"]
    out = []
    for i, record in enumerate(data["records"]):
        if record.get("had_error") or not record.get("root_causes"):
            continue
        truth = record["ground_truth"]
        text = json.dumps({"root_causes": record["root_causes"]}, indent=2, ensure_ascii=False)
        case = {
            "source": source,
            "agent": agent,
            "benchmark": "forge",
            "format": "forge",
            "incident_id": f"Online-Boutique-cloudbed-1-{record['fault_id']}",
            "spec_path": FORGE_LABELS,
            "diagnosis": text,
            "cut": (
                "final_response of the run ({root_causes: [...]}, the agent's structured"
                " answer) re-serialised as JSON (indent 2) from the corpus extraction, values"
                " verbatim; the chat messages and past steps are not in the corpus"
            ),
            "benchmark_outcome": None,
            "origin": {
                "repo": "boerste/rca-llm-reasoning",
                "commit": FORGE_COMMIT,
                "path": about["source_path"],
                "locator": (
                    f"line with fault_id {record['fault_id']} (records[{i}] of"
                    f" corpus:rca-llm-reasoning/{name})"
                ),
                "licence": "MIT",
            },
        }
        out.append(
            Candidate(
                incident=case["incident_id"],
                stratum="hit" if forge_hit(record) else "miss",
                group=truth["fault_type"],
                case=case,
            )
        )
    return out


# ---------------------------------------------------------------- OpenRCA


def _score_stratum(score: str) -> str:
    value = float(score)
    return "full" if value == 1.0 else ("partial" if value > 0 else "zero")


def openrca_case(
    source: str,
    agent: str,
    benchmark: str,
    system: str,
    row: dict[str, str],
    spec_path: str,
    origin: dict[str, str],
    cut: str | None,
) -> Candidate:
    row_id = str(int(float(row["row_id"])))
    case = {
        "source": source,
        "agent": agent,
        "benchmark": benchmark,
        "format": "openrca",
        "incident_id": f"{system}-{row_id}",
        "spec_path": spec_path,
        "diagnosis": row["prediction"],
        "cut": cut,
        "benchmark_outcome": f"OpenRCA score {row['score']} ({row['task_index']})",
        "origin": {**origin, "locator": f"row_id {row['row_id']}"},
    }
    return Candidate(
        incident=case["incident_id"],
        stratum=_score_stratum(row["score"]),
        group=row["task_index"],
        case=case,
    )


def claude_candidates(corpus: Path) -> dict[str, list[Candidate]]:
    agent = "RCA-agent (OpenRCA's baseline) with Claude 3.5 Sonnet: OpenRCA's archived run"
    out: dict[str, list[Candidate]] = {}
    for system, spec in OPENRCA_SPECS.items():
        origin = {
            "repo": "microsoft/OpenRCA",
            "commit": OPENRCA_COMMIT,
            "path": f"rca/archive/agent-{system}.csv",
            "licence": "MIT",
        }
        rows = read_csv(corpus / "openrca" / f"agent-{system}.csv")
        out[system] = [
            openrca_case(
                "openrca-claude35-rcaagent", agent, "openrca", system, r, spec, origin, None
            )
            for r in rows
            if r["prediction"].strip()
        ]
    return out


def read_csv(file: Path) -> list[dict[str, str]]:
    with file.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def git_show(mirrors: Path, repo: str, commit: str, path: str) -> str:
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def gpt4o_candidates(mirrors: Path) -> list[Candidate]:
    repo, commit = GPT4O
    rows = list(csv.DictReader(io.StringIO(git_show(mirrors, repo, commit, GPT4O_PATH))))
    repeated = {r["row_id"] for r in rows if sum(x["row_id"] == r["row_id"] for x in rows) > 1}
    origin = {"repo": repo, "commit": commit, "path": GPT4O_PATH, "licence": "MIT"}
    agent = (
        "RCA-agent (OpenRCA's baseline, run in fork biqibaomiaomiaowu/openrca_rca100) with gpt-4o"
    )
    cut = "prediction column (the agent's final answer); the trajectory under test/monitor/ dropped"
    return [
        openrca_case(
            "openrca-gpt-4o-rcaagent-bank", agent, "openrca", "Bank", r,
            OPENRCA_SPECS["Bank"], origin, cut,
        )
        for r in rows
        if r["row_id"] not in repeated and r["prediction"].strip()
    ]  # fmt: skip


def aurora_candidates(mirrors: Path) -> tuple[list[Candidate], str]:
    repo, commit = AURORA
    raw = git_show(mirrors, repo, commit, AURORA_PATH)
    rows = list(csv.DictReader(io.StringIO(raw, newline="")))
    origin = {"repo": repo, "commit": commit, "path": AURORA_PATH, "licence": "MIT"}
    agent = (
        "RCA-agent (OpenRCA's baseline with the Aurora 5G-RAN adapter of fork"
        " IP-Michael/OpenRCA) with qwen3:32b served by Ollama"
    )
    cut = "prediction column (the agent's final answer); the trajectory under test/monitor/ dropped"
    return [
        openrca_case(
            "openrca-qwen3-32b-rcaagent-aurora", agent, "openrca-aurora", "Aurora", r,
            AURORA_SPEC, origin, cut,
        )
        for r in rows
        if r["prediction"].strip()
    ], raw  # fmt: skip


def write_aurora_excerpt(raw: str, row_ids: Iterable[str], out: Path) -> None:
    """The header and the chosen rows of the Aurora result CSV, unchanged (the file re-serialises
    byte for byte with csv's defaults and `\\n`, checked here)."""
    rows = list(csv.reader(io.StringIO(raw, newline="")))
    if _csv_text(rows) != raw:
        raise SystemExit("the Aurora CSV does not re-serialise byte for byte")
    keep = set(row_ids)
    index = rows[0].index("row_id")
    picked = [rows[0]] + [r for r in rows[1:] if str(int(float(r[index]))) in keep]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(_csv_text(picked), encoding="utf-8", newline="")


def _csv_text(rows: list[list[str]]) -> str:
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


# ---------------------------------------------------------------- AIOpsLab


def aiopslab_candidates(corpus: Path, model_dir: str, source: str, agent: str) -> list[Candidate]:
    sessions = json.loads((corpus / "aiopslab" / "ai_sre_data_sessions.json").read_text())
    specs = yaml.safe_load((corpus / "aiopslab" / "ground_truth.yaml").read_text())
    known = {p["problem_id"] for p in specs["problems"]}
    out = []
    for s in sessions["sessions"]:
        if s["model_dir"] != model_dir or s["task_type"] not in ("localization", "analysis"):
            continue
        if s["problem_id"] not in known or s.get("submission_args") is None:
            continue
        results = s.get("results") or {}
        case = {
            "source": source,
            "agent": agent,
            "benchmark": "aiopslab",
            "format": "aiopslab",
            "incident_id": s["problem_id"],
            "spec_path": "corpus:aiopslab/ground_truth.yaml",
            "diagnosis": None,
            "cut": (
                "the last assistant message of the session's trace that calls submit(),"
                " verbatim; every earlier step dropped (rebuilt by extract_c2.py)"
            ),
            "benchmark_outcome": _aiopslab_outcome(s["task_type"], results),
            "origin": {
                "repo": "n1k0ver3E/ai_sre_data",
                "commit": AI_SRE_COMMIT,
                "path": s["source_file"],
                "locator": f"session {s['session_id']}: last assistant trace item calling submit(",
                "licence": "none found",
            },
        }
        out.append(
            Candidate(
                incident=s["problem_id"],
                stratum=f"{s['task_type']}-{'pass' if results.get('success') else 'fail'}",
                group=re.sub(r"-(localization|analysis).*$", "", s["problem_id"]),
                case=case,
                first=bool(s.get("submission_prose")),
            )
        )
    return out


def _aiopslab_outcome(task: str, results: dict[str, Any]) -> str:
    keys = ["success"]
    keys += ["Localization Accuracy"] if task == "localization" else []
    keys += ["system_level_correct", "fault_type_correct"] if task == "analysis" else []
    shown = ", ".join(f"{k}={results.get(k)}" for k in keys if k in results)
    return f"the fork's orchestrator: {shown}"


# ---------------------------------------------------------------- output


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)

ORDER = ("case", "source", "agent", "benchmark", "format", "incident_id", "spec_path")


def write_source(out: Path, source: str, picked: list[Candidate]) -> None:
    cases = []
    for n, c in enumerate(picked, 1):
        case = {"case": f"{source}-{n:03d}", **c.case}
        cases.append({k: case[k] for k in (*ORDER, *[k for k in case if k not in ORDER])})
    text = yaml.dump(cases, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    if yaml.safe_load(text) != cases:
        raise SystemExit(f"{source}: the YAML does not read back to the same cases")
    header = f"# {source}: real agent diagnoses collected by C2 for issue 22 (SOURCES-c2.md)\n"
    (out / "cases").mkdir(parents=True, exist_ok=True)
    (out / "cases" / f"{source}.yaml").write_text(header + text, encoding="utf-8")
    print(f"{source}: {len(cases)} cases, strata {_strata(picked)}")


def _strata(picked: list[Candidate]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for c in picked:
        counts[c.stratum] = counts.get(c.stratum, 0) + 1
    return counts


FORGE_RUNS = [  # corpus file stem, source, model and workflow, cases, of which top-1 hits
    ("qwen3-32b_react", "forge-qwen3-32b-react", "qwen3:32b, ReAct", 18, 8),
    ("llama3.3_straight-shot", "forge-llama3.3-straight-shot", "llama3.3, straight-shot", 16, 6),
    ("deepseek-r1-70b_straight-shot", "forge-deepseek-r1-70b-straight-shot",
     "deepseek-r1:70b, straight-shot", 16, 3),
]  # fmt: skip
CLAUDE_QUOTAS = {  # system: (full, partial, zero) by OpenRCA's own score
    "Bank": (2, 2, 2),
    "Telecom": (2, 1, 2),
    "Market-cloudbed-1": (1, 2, 3),
    "Market-cloudbed-2": (1, 2, 3),
}
AIOPSLAB_RUNS = [  # model folder in ai_sre_data, source, model
    ("openai_gpt-5", "aiopslab-gpt-5", "openai/gpt-5"),
    ("gpt-5-mini", "aiopslab-gpt-5-mini", "gpt-5-mini"),
    ("deepseek_deepseek-chat-v3.1", "aiopslab-deepseek-chat-v3.1", "deepseek/deepseek-chat-v3.1"),
    ("qwen_qwen3-Coder-480b-a35b", "aiopslab-qwen3-coder-480b", "qwen/qwen3-coder-480b-a35b"),
]
AIOPSLAB_QUOTAS = {
    "localization-pass": 2,
    "localization-fail": 2,
    "analysis-pass": 1,
    "analysis-fail": 1,
}


def sample_forge(corpus: Path, out: Path) -> None:
    avoid: set[str] = set()
    for stem, source, agent, n, hits in FORGE_RUNS:
        full = (
            f"{agent} workflow of FORGE 2026's rca-llm-reasoning (all modalities, list KG,"
            " alerts by time) on Online-Boutique cloudbed-1"
        )
        name = f"diagnoses_{stem}_Online-Boutique-cloudbed-1.json"
        pool = forge_candidates(corpus, name, source, full)
        write_source(
            out, source, draw(pool, {"hit": hits, "miss": n - hits}, f"c2:{source}", avoid)
        )


def sample_openrca(corpus: Path, mirrors: Path, out: Path) -> None:
    claude = claude_candidates(corpus)
    bank: set[str] = set()
    picked = []
    for system, (full, partial, zero) in CLAUDE_QUOTAS.items():
        quotas = {"full": full, "partial": partial, "zero": zero}
        seed = f"c2:openrca-claude35-rcaagent:{system}"
        picked += draw(claude[system], quotas, seed, bank if system == "Bank" else set())
    write_source(out, "openrca-claude35-rcaagent", picked)

    source = "openrca-gpt-4o-rcaagent-bank"
    quotas = {"full": 4, "partial": 4, "zero": 4}
    write_source(out, source, draw(gpt4o_candidates(mirrors), quotas, f"c2:{source}", bank))

    pool, raw = aurora_candidates(mirrors)
    picked = draw(pool, {"full": 4, "partial": 3, "zero": 3}, "c2:aurora", set())
    row_ids = [c.case["incident_id"].split("-")[-1] for c in picked]
    write_aurora_excerpt(raw, row_ids, ROOT / AURORA_SPEC)
    write_source(out, "openrca-qwen3-32b-rcaagent-aurora", picked)


def sample_aiopslab(corpus: Path, mirrors: Path, out: Path) -> None:
    avoid: set[str] = set()
    for model_dir, source, model in AIOPSLAB_RUNS:
        agent = (
            f"AIOpsLab's ReAct-style client (the fork used by n1k0ver3E/ai_sre_data) with {model}"
        )
        pool = aiopslab_candidates(corpus, model_dir, source, agent)
        picked = draw(pool, AIOPSLAB_QUOTAS, f"c2:{source}", avoid)
        for c in picked:
            _pin_text(c.case, mirrors)
        write_source(out, source, picked)


def _pin_text(case: dict[str, Any], mirrors: Path) -> None:
    """Add the sha256 of the case's text, right after `diagnosis`, so a rebuild is checked."""
    from extract import aiopslab_final_submit, sha256

    origin = case["origin"]
    text = aiopslab_final_submit(
        git_show(mirrors, origin["repo"], origin["commit"], origin["path"])
    )
    pinned = {}
    for key, value in case.items():
        pinned[key] = value
        if key == "diagnosis":
            pinned["diagnosis_sha256"] = sha256(text)
    case.clear()
    case.update(pinned)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus(), help="the shared corpus")
    parser.add_argument("--mirrors", type=Path, required=True, help="a folder of git mirrors")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    sample_forge(args.corpus, args.out)
    sample_openrca(args.corpus, args.mirrors, args.out)
    sample_aiopslab(args.corpus, args.mirrors, args.out)


if __name__ == "__main__":
    main()
