"""Speed of the offline rules judge: submissions per CPU-second, before and after, side by side.

    python benchmarks/rules_speed.py [--code DIR ...] [--runs R] [--no-real] [--json PATH] [N ...]
    # default N: 1000 10000; --code: the checkouts to compare (default: this one)

For each input and each checkout (`--code`, taken in turn, `--runs` times, interleaved so that
the machine's load falls on all alike; the best run is kept):
- `eval`: `judge eval` with the rules judge, no store, in a fresh process; its CPU (user + system)
  is the whole process's, the rules judge's child process included (getrusage of a wrapper that
  runs nothing else), printed as submissions per CPU-second, and split into the run's own
  process (`parent`) and the rules judge's (`child`), as CPU milliseconds per submission (read
  by the run's process as it exits: its own usage, and its children's, which the run reaps);
- `judge`: the rules judge alone, `RulesJudge.answer` on every submission in one process with
  the specs already parsed (per-spec work aside), as CPU milliseconds per submission.

Inputs: N synthetic submissions (`synth.py`: 32 example diagnoses cycled, each made distinct;
the repeats flatter any cache keyed by text, which is why) and, unless `--no-real`, the
real-agent validity set (`validity/real/`, every text distinct; the unlicensed sources' texts
come from `real/extract.py`'s cache: run it first), written out as the native specs and
submissions `judge eval` reads. The same files go to every checkout. Answers are not compared
here: `judge eval`'s result files are, by hand (see the brief's check).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for _path in (REPO, REPO / "benchmarks"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from synth import GROUND_TRUTH, write_submissions  # noqa: E402

WRAPPER = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(done.stderr.decode().strip().splitlines()[-1], usage.ru_utime + usage.ru_stime)
"""
SPLIT = """
import atexit, resource, runpy, sys
def cpu(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime
atexit.register(lambda: print(cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN), file=sys.stderr))
sys.argv[0] = "judge"
runpy.run_module("judge", run_name="__main__")
"""
JUDGE_ONLY = """
import sys, time
from ground_truth import load_specs, load_submissions
from judge.checklist.prompts import Prompt
from judge.checklist.rubric import load_rubric, whole_submission
from judge.judges.base import JudgeTask
from judge.judges.rules import RulesJudge
specs = {s.id: s for s in load_specs(sys.argv[1])}
subs = load_submissions(sys.argv[2])
whole = whole_submission(load_rubric().dimensions)
judge = RulesJudge()
for spec in specs.values():
    judge.answer(JudgeTask(spec, subs[0].model_copy(update={"diagnosis": ""}), whole,
                           Prompt(messages=[], hash="")))
start = time.process_time()
for sub in subs:
    judge.answer(JudgeTask(specs[sub.incident_id], sub, whole, Prompt(messages=[], hash="")))
print(time.process_time() - start)
"""


def eval_cpu(code: Path, ground_truth: Path, outputs: Path, result: Path) -> tuple[float, ...]:
    """CPU seconds of one `judge eval` from `code`: the whole, its child processes included,
    then its own process's and its children's."""
    command = [
        sys.executable, "-c", WRAPPER, sys.executable, "-c", SPLIT, "eval",
        "--ground-truth", str(ground_truth), "--outputs", str(outputs),
        "--result-file", str(result), "--no-store", "--no-progress", "--json",
    ]  # fmt: skip
    parent, child, whole = map(float, _run(code, command).split())
    return whole, parent, child


def judge_cpu(code: Path, ground_truth: Path, outputs: Path) -> float:
    """CPU seconds of the rules judge alone on every submission (specs parsed beforehand)."""
    command = [sys.executable, "-c", JUDGE_ONLY, str(ground_truth), str(outputs)]
    return float(_run(code, command))


def _run(code: Path, command: list[str]) -> str:
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(command, cwd=code, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip().splitlines()[-1]


def real_inputs(target: Path) -> tuple[Path, Path, int]:
    """The real-agent validity set as a native spec file and a submissions file."""
    import validity_real as real

    corpus = Path(os.environ.get("DIAGNOSIS_JUDGE_CORPUS", REPO.parent / "shared" / "corpus"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        selection = real.select_sources(real.read_split(real.REAL), list(real.SPLITS), None)
        cases = [
            case
            for names in selection.values()
            for source in names
            for case in real.load_source(real.REAL / "cases" / f"{source}.yaml")
        ]
        loaded, _ = real.find_texts(cases, real.REAL / ".cache", corpus)
        specs = real.build_specs([item.case for item in loaded], corpus)
        submissions, _ = real.build_submissions(loaded)
    target.mkdir(parents=True, exist_ok=True)
    (target / "ground_truth").mkdir(exist_ok=True)
    spec_rows = [s.model_dump(mode="json", exclude={"source"}) for s in specs]
    (target / "ground_truth" / "specs.json").write_text(json.dumps(spec_rows), encoding="utf-8")
    outputs = target / "submissions.jsonl"
    with outputs.open("w", encoding="utf-8") as handle:
        for sub in submissions:
            row = {"incident_id": sub.incident_id, "trial": sub.trial, "diagnosis": sub.diagnosis}
            handle.write(json.dumps(row) + "\n")
    return target / "ground_truth", outputs, len(submissions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[1000, 10_000])
    parser.add_argument("--code", type=Path, action="append", help="a checkout (repeatable)")
    parser.add_argument("--runs", type=int, default=3, help="runs per checkout (best kept)")
    parser.add_argument("--no-real", action="store_true", help="skip the real-agent set")
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    args = parser.parse_args()
    codes = [c.resolve() for c in args.code or [REPO]]
    load_start = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        inputs = [(f"synthetic {n}", GROUND_TRUTH, write_submissions(n, tmp / str(n)), n)
                  for n in args.sizes]  # fmt: skip
        if not args.no_real:
            inputs.append(("real-agent set", *real_inputs(tmp / "real")))
        print(f"{'input':>16} {'code':>40} {'eval subs/CPU-s':>16} {'parent ms/subm':>15} "
              f"{'child ms/subm':>14} {'judge CPU ms/subm':>18}")  # fmt: skip
        for name, ground_truth, outputs, n in inputs:
            best: dict[Path, dict[str, float]] = {}
            for _ in range(args.runs):
                for code in codes:
                    e, parent, child = eval_cpu(code, ground_truth, outputs, tmp / "result.json")
                    j = judge_cpu(code, ground_truth, outputs)
                    run = {"eval": e, "parent": parent, "child": child, "judge": j}
                    was = best.setdefault(code, run)
                    if e < was["eval"]:  # the best run's split
                        was.update(eval=e, parent=parent, child=child)
                    was["judge"] = min(was["judge"], j)
            for code, cpu in best.items():
                row = {
                    "input": name,
                    "code": str(code),
                    "submissions": n,
                    "eval_submissions_per_cpu_second": round(n / cpu["eval"], 1),
                    "eval_parent_cpu_ms_per_submission": round(1000 * cpu["parent"] / n, 3),
                    "eval_child_cpu_ms_per_submission": round(1000 * cpu["child"] / n, 3),
                    "judge_cpu_ms_per_submission": round(1000 * cpu["judge"] / n, 3),
                }
                rows.append(row)
                print(f"{name:>16} {str(code)[-40:]:>40} "
                      f"{row['eval_submissions_per_cpu_second']:16.1f} "
                      f"{row['eval_parent_cpu_ms_per_submission']:15.3f} "
                      f"{row['eval_child_cpu_ms_per_submission']:14.3f} "
                      f"{row['judge_cpu_ms_per_submission']:18.3f}", flush=True)  # fmt: skip
    load = {"start": load_start, "end": os.getloadavg()[0]}
    print(f"load average (1 min): {load['start']:.1f} at start, {load['end']:.1f} at end")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "load_average": load}, indent=2) + "\n")


if __name__ == "__main__":
    main()
