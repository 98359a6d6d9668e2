"""Where the CPU time of a judgment goes (provider wait excluded), and what a call costs the
whole process at 5 to 100 in flight.

    python benchmarks/cpu_profile.py [N_SUBMISSIONS] [--client auto|litellm|openai]
        [--model MODEL] [--granularity dimension|submission] [--json PATH]
    python benchmarks/cpu_profile.py --in-flight 5,20,50,100 [--latency 0.2] [--rounds 160]
        [--code DIR ...] [--repeats 1] [--json PATH] [--profile PATH]

With `--in-flight`, whole `judge eval` commands (defaults: one call per submission, the
`openai` client, a store) run against the fake provider in its own process with latency L;
each in-flight limit K gets `--rounds` x K submissions, so every row's physical limit
(N / K x L) is the same. Printed per row and per `--code` checkout (the checkouts taken in
turn, so a loaded machine weighs on each alike): the command's CPU (user + system, from
`getrusage` of the child) per call, the same beyond start-up (less a run of K submissions),
wall / the physical limit, and the provider's requests. `--profile PATH` adds, after them, one
run of the last checkout at the last in-flight limit under cProfile on the thread-CPU clock
(time the event loop's thread spends descheduled, say inside a socket send that woke the
provider, is not charged), writes its stats to PATH (`pstats`) and prints the run's CPU by
package and the functions of most own and most cumulative CPU. cProfile slows Python code:
read its shares, not its milliseconds.

Without `--in-flight`:

1. A real run through the judge's client (`--client`; `auto` is the `openai` SDK for the
   default model) to the fake provider (its own process, no latency). Its CPU is split into
   the event loop's thread and the worker threads (`litellm.acompletion` runs the synchronous
   `litellm.completion`, its request building, in the loop's default thread pool on every
   call; the openai client uses none). The loop's thread is then profiled (cProfile on a
   thread-CPU clock, so time the worker threads burn while the loop waits for the interpreter
   lock is not charged to whatever the loop was calling) and its own time summed by package;
   with litellm, the cumulative time of litellm's phases on the loop is listed too.
2. The same run with the client's `complete` replaced by a stub returning the recorded reply:
   the CPU this project adds per judgment (engine, prompt, gate, store, parsing).
Unprofiled figures are the least of 3 runs (the machine's other load only adds to them).
`--json PATH` writes {"cpu_ms_per_call", "own_ms_per_call", "calls",
"worker_threads_ms_per_call"} there.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from benchmarks.provider import provider_process  # noqa: E402

GROUPS = [
    ("litellm", "/litellm/"),
    ("openai+httpx+aiohttp", "/openai/"),
    ("openai+httpx+aiohttp", "/httpx"),
    ("openai+httpx+aiohttp", "/httpcore"),
    ("openai+httpx+aiohttp", "/aiohttp/"),
    ("openai+httpx+aiohttp", "/h11/"),
    ("openai+httpx+aiohttp", "/anyio/"),
    ("openai+httpx+aiohttp", "/sniffio/"),
    ("pydantic", "/pydantic"),
    ("HTTP (judges/clients/pool)", "/judge/judges/clients/pool.py"),
    ("this project", "/judge/"),
    ("this project", "/ground_truth/"),
    ("jinja2", "/jinja2/"),
    ("asyncio", "/asyncio/"),
    ("tenacity", "/tenacity/"),
]

PHASES = [
    ("all of litellm.acompletion on the loop", "/chat_completions/dispatch.py", "acompletion"),
    ("  call setup, Logging object (function_setup)", "/litellm/utils.py", "function_setup"),
    ("  HTTP via the openai SDK: build, send, parse", "/openai/openai.py",
     "make_openai_chat_completion_request"),
    ("  reply to ModelResponse", "/convert_dict_to_response.py",
     "convert_to_model_response_object"),
    ("  cost + hidden params (update_response_metadata)", "/response_metadata.py",
     "update_response_metadata"),
    ("    of which the cost (response_cost_calculator)", "/litellm/cost_calculator.py",
     "response_cost_calculator"),
    ("success logging (logging-worker task on our loop)", "/litellm_logging.py",
     "async_success_handler"),
]  # fmt: skip
"""litellm's phases as (label, file suffix, function): their cumulative time on the loop."""


GRANULARITY = ["dimension"]
"""The run's granularity (`--granularity`); calls per submission follow from it."""


class Cpu(NamedTuple):
    process: float
    loop_thread: float

    @property
    def workers(self) -> float:
        """CPU of the process's other threads (litellm's request building, in the loop's
        default thread pool)."""
        return max(0.0, self.process - self.loop_thread)


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


def phase_times(profile: cProfile.Profile) -> list[tuple[str, float]]:
    stats = pstats.Stats(profile).stats
    return [
        (
            label,
            sum(row[3] for (f, _l, fn), row in stats.items() if fn == name and f.endswith(tail)),
        )
        for label, tail, name in PHASES
    ]


def setup(n: int, tmp: Path):
    from benchmarks.synth import EXAMPLE, write_submissions
    from ground_truth import load_specs, load_submissions

    specs = load_specs(EXAMPLE / "ground_truth")
    return specs, load_submissions(write_submissions(n, tmp))


def run(judge, specs, subs, store: Path, profile: cProfile.Profile | None = None) -> Cpu:
    from judge import EvalOptions, evaluate_async, load_rubric
    from judge.api import run_sync

    options = EvalOptions(max_concurrent=8, store=store, granularity=GRANULARITY[0])
    cpu, loop_thread = time.process_time(), time.thread_time()
    if profile is not None:
        profile.enable()
    run_sync(evaluate_async(specs, subs, load_rubric(), judge, options=options))
    if profile is not None:
        profile.disable()
    return Cpu(time.process_time() - cpu, time.thread_time() - loop_thread)


def least(judge, specs, subs, stem: Path, runs: int = 3) -> Cpu:
    """The run of least CPU time of `runs` runs, each with a fresh store: other processes on a
    busy machine only ever add to a run's CPU time (cache misses, frequency), never take from
    it."""
    return min(run(judge, specs, subs, stem.with_suffix(f".{i}.sqlite")) for i in range(runs))


def report(title: str, calls: int, plain: Cpu, profile: cProfile.Profile) -> None:
    """Shares of the profiled loop thread, as ms per judgment of the unprofiled run's loop
    thread (cProfile slows Python code ~5x, so its own ms are not comparable)."""
    groups = by_group(profile)
    total = sum(groups.values())
    scale = 1000 * plain.loop_thread / calls / total
    print(f"\n{title}: {1000 * plain.process / calls:.2f} ms CPU per judgment, of which "
          f"{1000 * plain.workers / calls:.2f} ms in worker threads "
          f"and {1000 * plain.loop_thread / calls:.2f} ms on the event loop's thread "
          f"({calls} judgments). The loop's thread by package (own time):")  # fmt: skip
    for name, seconds in sorted(groups.items(), key=lambda kv: -kv[1]):
        print(f"  {name:28} {100 * seconds / total:5.1f}%  {seconds * scale:6.2f} ms")
    phases = [(label, t) for label, t in phase_times(profile) if t > 0]
    if phases:
        print("  litellm's phases on the loop's thread (cumulative):")
        for label, seconds in phases:
            print(f"    {label:52} {100 * seconds / total:5.1f}%  {seconds * scale:6.2f} ms")
    top = sorted(pstats.Stats(profile).stats.items(), key=lambda kv: -kv[1][2])[:8]
    print("  top functions by own time:")
    for (filename, line, function), row in top:
        where = f"{Path(filename).parent.name}/{Path(filename).name}:{line}" if line else ""
        print(f"    {row[2] * scale:6.3f} ms  {function} {where}")


def profiled(judge, specs, subs, store: Path) -> cProfile.Profile:
    profile = cProfile.Profile(time.thread_time)
    run(judge, specs, subs, store, profile)
    return profile


class Row(NamedTuple):
    code: str
    in_flight: int
    calls: int
    wall: float
    cpu: float
    cpu_small: float
    requests: int
    latency: float

    @property
    def limit(self) -> float:
        return self.calls / self.in_flight * self.latency

    @property
    def ms_per_call(self) -> float:
        return 1000 * self.cpu / self.calls

    @property
    def marginal_ms(self) -> float:
        """CPU per call beyond start-up: less a run of `in_flight` submissions."""
        return 1000 * (self.cpu - self.cpu_small) / (self.calls - self.in_flight)


PROFILED = """
import cProfile, runpy, sys, time
out, sys.argv = sys.argv[1], ["judge", *sys.argv[2:]]
profile = cProfile.Profile(time.thread_time)
profile.enable()
try:
    runpy.run_module("judge", run_name="__main__", alter_sys=True)
finally:
    profile.disable()
    profile.dump_stats(out)
"""
"""`python -c PROFILED STATS ARGS...`: `python -m judge ARGS...` under cProfile on the
thread-CPU clock, its stats written to STATS."""


def eval_command(
    code: Path, outputs: Path, tmp: Path, url: str, in_flight: int, profile: Path | None = None
) -> float:
    """The CPU seconds (user + system) of one `judge eval` of `outputs` run from `code`
    (profiled into `profile` when given)."""
    from benchmarks.synth import GROUND_TRUTH

    result = tmp / f"r{time.monotonic_ns()}.json"
    python = [sys.executable, "-m", "judge"]
    if profile is not None:
        python = [sys.executable, "-c", PROFILED, str(profile)]
    command = [
        *python, "eval", "--ground-truth", str(GROUND_TRUTH),
        "--outputs", str(outputs), "--result-file", str(result),
        "--judge-model", "openai/fake-judge", "--api-base", url,
        "--max-concurrent", str(in_flight), "--no-progress",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(code)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=code, env=env, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    for path in tmp.glob("r*"):
        path.unlink()
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def concurrency(args: argparse.Namespace) -> list[Row]:
    """Whole commands at each in-flight limit, each checkout in turn."""
    from benchmarks.synth import write_submissions

    rows: list[Row] = []
    with (
        tempfile.TemporaryDirectory() as tmp_dir,
        provider_process("--latency", str(args.latency)) as (url, log),
    ):
        tmp = Path(tmp_dir)
        for k in args.in_flight:
            calls = args.rounds * k
            outputs = write_submissions(calls, tmp / f"n{k}")
            small = write_submissions(k, tmp / f"small{k}")
            for _ in range(args.repeats):
                for code in args.code:
                    cpu_small = eval_command(code, small, tmp, url, k)
                    seen = sum(1 for _ in log.open()) if log.exists() else 0
                    start = time.perf_counter()
                    cpu = eval_command(code, outputs, tmp, url, k)
                    wall = time.perf_counter() - start
                    time.sleep(0.3)  # the provider logs each request as it ends
                    requests = sum(1 for _ in log.open()) - seen
                    row = Row(str(code), k, calls, wall, cpu, cpu_small, requests, args.latency)
                    rows.append(row)
                    print(
                        f"  {k} in flight, {calls} calls, {code}: wall {wall:.1f} s "
                        f"({wall / row.limit:.3f}x the limit), {row.ms_per_call:.2f} ms CPU a "
                        f"call ({row.marginal_ms:.2f} beyond start-up), {requests} requests; "
                        f"load {os.getloadavg()[0]:.1f}",
                        file=sys.stderr,
                        flush=True,
                    )
        if args.profile:  # the last limit's submissions
            eval_command(args.code[-1], outputs, tmp, url, k, args.profile.resolve())
    return rows


def whole_run_profile(path: Path, top: int = 25) -> None:
    """A profiled command's CPU by package, and its functions of most own and most
    cumulative CPU (this project's, for the cumulative list: where its own code spends)."""
    stats = pstats.Stats(str(path)).stats
    groups: dict[str, float] = defaultdict(float)
    for (filename, _line, function), row in stats.items():
        groups[group_of(filename, function)] += row[2]
    total = sum(groups.values())
    print(f"\nprofile ({path}): {total:.1f} s of thread CPU under cProfile, by package (own):")
    for name, seconds in sorted(groups.items(), key=lambda kv: -kv[1]):
        print(f"  {name:28} {100 * seconds / total:5.1f}%")

    def where(key: tuple[str, int, str]) -> str:
        filename, line, function = key
        place = f"{Path(filename).parent.name}/{Path(filename).name}:{line}" if line else ""
        return f"{function} {place}"

    print("  most own CPU:")
    for key, row in sorted(stats.items(), key=lambda kv: -kv[1][2])[:top]:
        print(f"    {100 * row[2] / total:5.1f}%  {where(key)}")
    print("  most cumulative CPU in this project's functions:")
    own = [(k, r) for k, r in stats.items() if "/judge/" in k[0]]
    for key, row in sorted(own, key=lambda kv: -kv[1][3])[:top]:
        print(f"    {100 * row[3] / total:5.1f}%  {where(key)}")


def concurrency_table(rows: list[Row]) -> str:
    """One line per (checkout, in flight): the least CPU and wall of its repeats."""
    lines = [
        "| code | in flight | calls | wall / limit | CPU ms per call | beyond start-up |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    keys = sorted({(r.code, r.in_flight) for r in rows}, key=lambda kv: (kv[1], kv[0]))
    for code, k in keys:
        mine = [r for r in rows if r.code == code and r.in_flight == k]
        best = min(mine, key=lambda r: r.cpu)
        wall = min(r.wall for r in mine)
        lines.append(
            f"| {code} | {k} | {best.calls} | {wall / best.limit:.3f} | "
            f"{best.ms_per_call:.2f} | {best.marginal_ms:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    from judge.judges.llm import LLMJudge

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--in-flight",
        type=lambda v: [int(x) for x in v.split(",") if x],
        help="whole commands at these in-flight limits (e.g. 5,20,50,100)",
    )
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--rounds", type=int, default=160, help="submissions per in-flight slot")
    parser.add_argument(
        "--code", type=Path, action="append", help="a checkout whose judge runs (repeatable)"
    )
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--profile",
        type=Path,
        help="with --in-flight: also profile one run of the last --code at the last limit, "
        "stats to this file",
    )
    parser.add_argument("submissions", nargs="?", type=int, default=100)
    parser.add_argument(
        "--model",
        default="openai/fake-judge",
        help="the model string sent (default: one litellm has no price for, as a self-hosted "
        "model; openai/gpt-4o-mini takes the priced path, same fake provider)",
    )
    parser.add_argument("--client", choices=("auto", "litellm", "openai"), default="auto")
    parser.add_argument(
        "--granularity", choices=("dimension", "submission"), default=GRANULARITY[0]
    )
    parser.add_argument("--json", type=Path, help="write the headline numbers to this file")
    args = parser.parse_args()
    if args.in_flight:
        args.code = [c.resolve() for c in args.code or [REPO]]
        load = os.getloadavg()[0]
        rows = concurrency(args)
        print(
            f"{os.cpu_count()} CPUs, load average {load:.1f} at the start and "
            f"{os.getloadavg()[0]:.1f} at the end; latency {args.latency} s, "
            f"{args.rounds} rounds; least of {args.repeats}"
        )
        print(concurrency_table(rows))
        if args.json:
            args.json.write_text(json.dumps([r._asdict() for r in rows], indent=2) + "\n")
        if args.profile:
            whole_run_profile(args.profile)
        return
    GRANULARITY[0] = args.granularity
    n = args.submissions
    calls = n * (3 if args.granularity == "dimension" else 1)
    with tempfile.TemporaryDirectory() as tmp_dir, provider_process() as (url, _log):
        tmp = Path(tmp_dir)
        specs, subs = setup(n, tmp)
        judge = LLMJudge(args.model, api_base=url, api_key="sk-bench", client=args.client)
        client = judge.client.name
        run(judge, specs, subs[:2], tmp / "warm.sqlite")
        plain = least(judge, specs, subs, tmp / "plain")
        print(f"real run, no profiler: {1000 * plain.process / calls:.2f} ms CPU per judgment")
        report(f"real run through {client}", calls, plain, profiled(judge, specs, subs, tmp / "p"))

        recorded: dict[str, object] = {}
        original = judge.client.complete

        async def stub(request, timeout, logprobs=None):
            key = str(request["messages"][-1]["content"])[-200:]
            if key not in recorded:
                recorded[key] = await original(request, timeout, logprobs)
            return recorded[key]

        judge.client.complete = stub  # type: ignore[method-assign]
        try:
            run(judge, specs, subs, tmp / "fill.sqlite")  # record every reply
            ours = least(judge, specs, subs, tmp / "ours")
            print(f"\nstubbed provider call, no profiler: {1000 * ours.process / calls:.2f} ms "
                  "CPU per judgment")  # fmt: skip
            print(
                f"{client}'s share of a real call: {100 * (1 - ours.process / plain.process):.0f}%"
            )
            own_profile = profiled(judge, specs, subs, tmp / "ours-prof")
            report("stubbed provider call (this project's own share)", calls, ours, own_profile)
        finally:
            judge.client.complete = original  # type: ignore[method-assign]
    if args.json:
        numbers = {
            "client": client,
            "granularity": args.granularity,
            "cpu_ms_per_call": round(1000 * plain.process / calls, 3),
            "own_ms_per_call": round(1000 * ours.process / calls, 3),
            "calls": calls,
            "worker_threads_ms_per_call": round(1000 * plain.workers / calls, 3),
        }
        args.json.write_text(json.dumps(numbers, indent=2) + "\n")


if __name__ == "__main__":
    main()
