"""Where the CPU time of a judgment goes (provider wait excluded).

    python benchmarks/cpu_profile.py [N_SUBMISSIONS]

1. A real run through litellm to the fake provider (its own process, no latency) under
   cProfile; own time is summed by package: litellm, openai/httpx (the HTTP client), pydantic,
   this project (judge, ground_truth), sqlite3, jinja2, asyncio and the rest.
2. The same run with `litellm.acompletion` replaced by a stub returning a recorded response:
   the CPU this project adds per judgment (engine, prompt, gate, store, parsing).
Unprofiled figures are the least of 3 runs (the machine's other load only adds to them).
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from benchmarks.provider import provider_process  # noqa: E402

GROUPS = [
    ("litellm", "/litellm/"),
    ("openai+httpx", "/openai/"),
    ("openai+httpx", "/httpx/"),
    ("openai+httpx", "/httpcore/"),
    ("pydantic", "/pydantic"),
    ("this project", "/judge/"),
    ("this project", "/ground_truth/"),
    ("jinja2", "/jinja2/"),
    ("asyncio", "/asyncio/"),
    ("tenacity", "/tenacity/"),
]


def group_of(filename: str, function: str) -> str:
    for group, marker in GROUPS:
        if marker in filename:
            return group
    if "sqlite3" in function or "sqlite3" in filename:
        return "sqlite3"
    return "other (stdlib, builtins)"


def by_group(profile: cProfile.Profile) -> dict[str, float]:
    totals: dict[str, float] = defaultdict(float)
    for (filename, _line, function), row in pstats.Stats(profile).stats.items():
        totals[group_of(filename, function)] += row[2]  # own time
    return dict(totals)


def setup(n: int, tmp: Path):
    from benchmarks.synth import EXAMPLE, write_submissions
    from ground_truth import load_specs, load_submissions

    specs = load_specs(EXAMPLE / "ground_truth")
    return specs, load_submissions(write_submissions(n, tmp))


def profiled_run(judge, specs, subs, store: Path) -> tuple[float, cProfile.Profile]:
    from judge import EvalOptions, evaluate_async, load_rubric
    from judge.engine import run_sync

    options = EvalOptions(max_concurrent=8, store=store)
    profile = cProfile.Profile(time.process_time)
    cpu = time.process_time()
    profile.enable()
    run_sync(evaluate_async(specs, subs, load_rubric(), judge, options=options))
    profile.disable()
    return time.process_time() - cpu, profile


def report(title: str, cpu: float, calls: int, profile: cProfile.Profile) -> None:
    groups = by_group(profile)
    total = sum(groups.values())
    top = sorted(pstats.Stats(profile).stats.items(), key=lambda kv: -kv[1][2])[:8]
    print(f"\n{title}: {1000 * cpu / calls:.2f} ms CPU per judgment ({calls} judgments, "
          "with cProfile's own overhead)")  # fmt: skip
    for name, seconds in sorted(groups.items(), key=lambda kv: -kv[1]):
        print(f"  {name:28} {100 * seconds / total:5.1f}%  {1000 * seconds / calls:6.2f} ms")
    print("  top functions by own time:")
    for (filename, line, function), row in top:
        where = f"{Path(filename).parent.name}/{Path(filename).name}:{line}" if line else ""
        print(f"    {1000 * row[2] / calls:6.3f} ms  {function} {where}")


def unprofiled(judge, specs, subs, store: Path) -> float:
    from judge import EvalOptions, evaluate_async, load_rubric
    from judge.engine import run_sync

    options = EvalOptions(max_concurrent=8, store=store)
    cpu = time.process_time()
    run_sync(evaluate_async(specs, subs, load_rubric(), judge, options=options))
    return time.process_time() - cpu


def least(judge, specs, subs, stem: Path, runs: int = 3) -> float:
    """The least CPU time of `runs` runs, each with a fresh store: other processes on a busy
    machine only ever add to a run's CPU time (cache misses, frequency), never take from it."""
    return min(
        unprofiled(judge, specs, subs, stem.with_suffix(f".{i}.sqlite")) for i in range(runs)
    )


def main() -> None:
    from judge.judges.llm import LLMJudge, import_litellm

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    litellm = import_litellm()
    with tempfile.TemporaryDirectory() as tmp_dir, provider_process() as (url, _log):
        tmp = Path(tmp_dir)
        specs, subs = setup(n, tmp)
        judge = LLMJudge("openai/fake-judge", api_base=url, api_key="sk-bench")
        unprofiled(judge, specs, subs[:2], tmp / "warm.sqlite")
        cpu_plain = least(judge, specs, subs, tmp / "plain")
        print(f"real run, no profiler: {1000 * cpu_plain / (3 * n):.2f} ms CPU per judgment")
        cpu, profile = profiled_run(judge, specs, subs, tmp / "real.sqlite")
        report("real run through litellm", cpu, 3 * n, profile)

        recorded = {}

        async def stub(**kwargs):
            key = kwargs["messages"][-1]["content"][-200:]
            if key not in recorded:
                recorded[key] = await original(**kwargs)
            return recorded[key]

        original = litellm.acompletion
        unprofiled(judge, specs, subs, tmp / "record.sqlite")  # nothing recorded yet: fill it
        litellm.acompletion = stub
        try:
            unprofiled(judge, specs, subs, tmp / "fill.sqlite")
            cpu_ours = least(judge, specs, subs, tmp / "ours")
            print(f"\nstubbed provider call, no profiler: {1000 * cpu_ours / (3 * n):.2f} ms "
                  "CPU per judgment")  # fmt: skip
            print(f"litellm's share of a real call: {100 * (1 - cpu_ours / cpu_plain):.0f}%")
            cpu, profile = profiled_run(judge, specs, subs, tmp / "ours-prof.sqlite")
            report("stubbed provider call (this project's own share)", cpu, 3 * n, profile)
        finally:
            litellm.acompletion = original


if __name__ == "__main__":
    main()
