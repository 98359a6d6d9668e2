"""`judge eval` against ITBench's own evaluator, side by side on one fake provider (issue 26).

    python benchmarks/anchors.py [--itbench DIR --itbench-venv VENV] [--submissions 200,1000]
        [--latency 0.5,0.2] [--in-flight 5,20] [--repeats 3] [--variants dimension,litellm]
        [--baseline CHECKOUT] [--json PATH]

Fetches nothing at run time. `--itbench DIR` is a checkout of ITBench-Evaluations
(github.com/itbench-hub/ITBench-Evaluations) and `--itbench-venv VENV` a virtual environment
holding its dependencies; its code runs from DIR with VENV's Python. Without them only our
half runs, and the table says so.

For every (submissions, latency, in flight) both tools get:
- the same inputs: N submissions, the bundled example's 32 diagnoses cycled (each marked
  "(copy i)", so no two prompts are equal), in ITBench's layout
  `<outputs>/<incident>/<trial>/agent_output.json`, and one `ground_truths.json` holding the 13
  example specs, which both tools read;
- the same fake provider (`python -m judge.testing.fake_provider` in its own process) with
  latency L: our prompts get checklist answers, ITBench's prompt gets `ITBENCH_REPLY`, a
  well-formed ITBench score object with calculator expressions to evaluate;
- the same environment (`JUDGE_MODEL=fake-judge`, `JUDGE_BASE_URL`, `JUDGE_API_KEY`) and the
  same flags (`--ground-truth`, `--outputs`, `--result-file`, `--max-concurrent N`), each tool
  otherwise with its defaults (ours: one call per submission, the `openai` client).
Runs alternate (ITBench, ours, ITBench, ours, ...) and the table shows the median of
`--repeats` whole commands (launch to exit), each tool's overhead above the physical limit
(median wall - calls / in flight x latency) and ours as a ratio of ITBench's, and, from the
provider's call log, where that overhead is: how long after launch the first request arrived,
the mean time between a reply and the next request on the slot it freed (the i-th request
after the first `in flight` took the slot of the (i - in flight)-th reply), and the time from
the last reply to the command's exit. A run whose results are not all scored is reported as
failed. `--variants` adds our runs with `--granularity dimension` and/or `--client litellm`;
`--baseline DIR` our default run from another checkout (before/after in one session).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.provider import provider_process  # noqa: E402

EXAMPLE = REPO / "examples" / "sregym-mini"
ITBENCH_REPLY = json.dumps(
    [
        {
            "scenario_index": 0,
            "scores": {
                "root_cause_entity": {
                    "gt_entities": ["deployment/product-catalog"],
                    "predicted_entities": [
                        {
                            "entity": "product-catalog",
                            "matches_gt": True,
                            "matched_to": "deployment/product-catalog",
                        },
                        {"entity": "checkout", "matches_gt": False},
                    ],
                    "calculation_precision": "calculator_tool(expression='1 / 2')",
                    "calculation_recall": "calculator_tool(expression='1 / 1')",
                    "calculation_f1": "calculator_tool(expression='2 * (0.5 * 1.0) / (0.5 + 1.0)')",
                    "justification": "The response names the faulty deployment and one "
                    "component the ground truth does not list.",
                },
                "root_cause_reasoning": {
                    "calculation": "calculator_tool(expression='1')",
                    "justification": "The stated mechanism is the injected fault.",
                },
                "fault_localization_component_identification": {
                    "calculation": 1,
                    "justification": "The first impacted component is on the model's path.",
                },
            },
        }
    ]
)
"""The fake's reply to ITBench's prompt (which asks no question ids): about as long as our nine
answers, with three calculator expressions for ITBench to evaluate."""


@dataclass
class Run:
    tool: str
    wall: float
    first_request: float | None
    requests: int
    scored: int
    expected: int
    gap: float | None = None
    """Mean seconds between a reply and the next request on the slot it freed."""
    tail: float | None = None
    """Seconds from the last reply to the command's exit."""

    @property
    def ok(self) -> bool:
        return self.scored == self.expected


@dataclass
class Scenario:
    submissions: int
    latency: float
    in_flight: int
    runs: dict[str, list[Run]] = field(default_factory=dict)

    def median(self, tool: str) -> float | None:
        walls = [r.wall for r in self.runs.get(tool, []) if r.ok]
        return statistics.median(walls) if walls else None

    def limit(self, tool: str) -> float:
        """The physical limit of `tool`'s run: its calls / in flight x latency (the dimension
        variant makes a call per dimension, three per submission)."""
        calls = self.submissions * (3 if tool.endswith("dimension") else 1)
        return calls / self.in_flight * self.latency

    def overhead(self, tool: str) -> float | None:
        """Seconds of the median wall above the physical limit."""
        wall = self.median(tool)
        return None if wall is None else wall - self.limit(tool)

    def overhead_ratio(self, tool: str) -> float | None:
        """`tool`'s overhead over ITBench's (None when either is missing or ITBench's is not
        above the limit)."""
        mine, base = self.overhead(tool), self.overhead("ITBench")
        return None if mine is None or base is None or base <= 0 else mine / base

    def first(self, tool: str) -> float | None:
        return self._median_of(tool, "first_request")

    def _median_of(self, tool: str, name: str) -> float | None:
        values = [v for r in self.runs.get(tool, []) if (v := getattr(r, name)) is not None]
        return statistics.median(values) if values else None


def write_inputs(n: int, target: Path) -> tuple[Path, Path]:
    """`ground_truths.json` (the 13 example specs) and N submissions in ITBench's layout."""
    from ground_truth import load_specs, load_submissions

    specs = load_specs(EXAMPLE / "ground_truth")
    examples = load_submissions(EXAMPLE / "outputs")
    target.mkdir(parents=True, exist_ok=True)
    truths = target / "ground_truths.json"
    rows = [s.model_dump(mode="json", exclude_none=True, exclude={"source"}) for s in specs]
    truths.write_text(json.dumps(rows, indent=2))
    outputs = target / "outputs"
    trials: dict[str, int] = {}
    for i in range(n):
        base = examples[i % len(examples)]
        trial = trials[base.incident_id] = trials.get(base.incident_id, 0) + 1
        folder = outputs / base.incident_id / str(trial)
        folder.mkdir(parents=True)
        answer = {"agent": "example-agent", "diagnosis": f"{base.diagnosis} (copy {i})"}
        (folder / "agent_output.json").write_text(json.dumps(answer))
    return truths, outputs


def requests_since(log: Path, seen: int) -> list[tuple[float, float]]:
    """(arrival, reply) times of the provider's requests from the `seen`-th on: the reply
    leaves its latency after the request arrived."""
    lines = log.read_text().splitlines() if log.exists() else []
    records = [json.loads(line) for line in lines[seen:]]
    return [(r["timestamp"], r["timestamp"] + (r.get("latency") or 0.0)) for r in records]


@dataclass
class Timing:
    wall: float
    first_request: float | None
    requests: int
    gap: float | None
    tail: float | None


def timed(command: list[str], env: dict[str, str], cwd: Path, log: Path, in_flight: int) -> Timing:
    """Wall seconds of `command` and, from the provider's log of its requests: seconds from
    launch to the first, the mean gap between a reply and the request that took its slot,
    and seconds from the last reply to the exit."""
    seen = len(requests_since(log, 0))
    launched = time.time()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    ended = time.time()
    if done.returncode != 0:
        raise RuntimeError(f"{command[:4]} exited {done.returncode}: {done.stderr[-2000:]}")
    requests = requests_since(log, seen)
    arrivals = sorted(a for a, _ in requests)
    replies = sorted(r for _, r in requests)
    gaps = [arrivals[i] - replies[i - in_flight] for i in range(in_flight, len(arrivals))]
    return Timing(
        wall=ended - launched,
        first_request=arrivals[0] - launched if arrivals else None,
        requests=len(requests),
        gap=statistics.mean(gaps) if gaps else None,
        tail=ended - replies[-1] if replies else None,
    )


def run_itbench(
    args, truths: Path, outputs: Path, url: str, in_flight: int, log: Path, n: int
) -> Run:
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "evaluation_results.json"
        command = [
            str(args.itbench_venv / "bin" / "python"), "-m", "itbench_evaluations",
            "--ground-truth", str(truths), "--outputs", str(outputs),
            "--result-file", str(result), "--max-concurrent", str(in_flight),
        ]  # fmt: skip
        env = judge_env(url, PYTHONPATH=str(args.itbench))
        took = timed(command, env, Path(tmp), log, in_flight)
        raw = json.loads(result.read_text())["raw_results"]
        scored = sum(1 for r in raw if "error" not in r and r.get("scores"))
    return run_of("ITBench", took, scored, n)


def run_of(tool: str, took: Timing, scored: int, expected: int) -> Run:
    return Run(
        tool, took.wall, took.first_request, took.requests, scored, expected, took.gap, took.tail
    )


def run_ours(
    variant: str,
    truths: Path,
    outputs: Path,
    url: str,
    in_flight: int,
    log: Path,
    n: int,
    code: Path = REPO,
) -> Run:
    """Our `judge eval` (from the checkout `code`: the `baseline` variant's is another)."""
    extra = {"default": [], "dimension": ["--granularity", "dimension"], "baseline": []}.get(
        variant
    )
    if extra is None:
        extra = ["--client", "litellm"]
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "evaluation_results.json"
        command = [
            sys.executable, "-m", "judge", "eval", "--ground-truth", str(truths),
            "--outputs", str(outputs), "--result-file", str(result),
            "--max-concurrent", str(in_flight), *extra,
        ]  # fmt: skip
        env = judge_env(url, PYTHONPATH=str(code))
        took = timed(command, env, Path(tmp), log, in_flight)
        cases = json.loads(result.read_text())["cases"]
        scored = sum(1 for c in cases if c["complete"])
    return run_of(f"ours, {variant}", took, scored, n)


def judge_env(url: str, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUDGE_", "OPENAI_"))}
    return {
        **env,
        "JUDGE_MODEL": "fake-judge",
        "JUDGE_BASE_URL": url,
        "JUDGE_API_KEY": "sk-anchors",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        **more,
    }


def measure(args) -> list[Scenario]:
    scenarios = [
        Scenario(n, latency, in_flight)
        for n in args.submissions
        for latency in args.latency
        for in_flight in args.in_flight
    ]
    tools = (["ITBench"] if args.itbench else []) + ["default", *args.variants]
    tools += ["baseline"] if args.baseline else []
    with tempfile.TemporaryDirectory() as tmp_dir:
        inputs = {n: write_inputs(n, Path(tmp_dir) / str(n)) for n in args.submissions}
        for latency in args.latency:
            provider_args = ("--latency", str(latency), "--plain-reply", ITBENCH_REPLY)
            with provider_process(*provider_args) as (url, log):
                for scenario in (s for s in scenarios if s.latency == latency):
                    truths, outputs = inputs[scenario.submissions]
                    for _ in range(args.repeats):
                        for tool in tools:
                            run = (
                                run_itbench(args, truths, outputs, url, scenario.in_flight, log, scenario.submissions)
                                if tool == "ITBench"
                                else run_ours(tool, truths, outputs, url, scenario.in_flight, log, scenario.submissions, args.baseline if tool == "baseline" else REPO)
                            )  # fmt: skip
                            scenario.runs.setdefault(run.tool, []).append(run)
                            print(
                                f"  {scenario.submissions} submissions, {latency} s, "
                                f"{scenario.in_flight} in flight: {run.tool} {run.wall:.1f} s, "
                                f"first request {fmt(run.first_request)} s, "
                                f"gap {fmt(ms(run.gap), 1)} ms, tail {fmt(run.tail)} s, "
                                f"{run.scored}/{run.expected} scored",
                                file=sys.stderr,
                                flush=True,
                            )
    return scenarios


def fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


def table(scenarios: list[Scenario], itbench: bool) -> str:
    ours = [t for t in scenarios[0].runs if t != "ITBench"]
    head = ["submissions", "latency, in flight", "ITBench"] + [
        f"{t} (vs ITBench)" if itbench else t for t in ours
    ]
    head += [f"overhead: {t}" + (" (vs ITBench)" if itbench else "") for t in ours]
    head += [
        "first request: ITBench / ours",
        "gap reply → request: ITBench / ours",
        "last reply → exit: ITBench / ours",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in scenarios:
        base = s.median("ITBench")
        row = [str(s.submissions), f"{s.latency:g} s, {s.in_flight}"]
        row.append(f"{base:.1f} s" if base is not None else "not run")
        for tool in ours:
            mine = s.median(tool)
            ratio = f" ({mine / base:.2f}x)" if mine is not None and base else ""
            row.append(f"{mine:.1f} s{ratio}" if mine is not None else "failed")
        for tool in ours:
            over, vs = s.overhead(tool), s.overhead_ratio(tool)
            shown = "-" if over is None else f"{over:.1f} s"
            row.append(shown + (f" ({vs:.2f}x)" if vs is not None else ""))
        row.append(f"{fmt(s.first('ITBench'))} / {fmt(s.first(ours[0]))} s")
        gaps = [ms(s._median_of(tool, "gap")) for tool in ("ITBench", ours[0])]
        row.append(f"{fmt(gaps[0], 1)} / {fmt(gaps[1], 1)} ms")
        tails = [s._median_of(tool, "tail") for tool in ("ITBench", ours[0])]
        row.append(f"{fmt(tails[0])} / {fmt(tails[1])} s")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def numbers(value: str, kind=float) -> list:
    return [kind(v) for v in value.split(",") if v.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--itbench", type=Path, help="ITBench-Evaluations' checkout")
    parser.add_argument("--itbench-venv", type=Path, help="a venv with its dependencies")
    parser.add_argument("--submissions", type=lambda v: numbers(v, int), default=[200, 1000])
    parser.add_argument("--latency", type=numbers, default=[0.5, 0.2])
    parser.add_argument("--in-flight", type=lambda v: numbers(v, int), default=[5, 20])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--variants",
        type=lambda v: [x for x in v.split(",") if x],
        default=[],
        help="more runs of ours: dimension (--granularity dimension), litellm (--client litellm)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="also run our judge from this checkout (another commit), in turn with the others",
    )
    parser.add_argument("--json", type=Path, help="also write every run to this file")
    args = parser.parse_args()
    if bool(args.itbench) != bool(args.itbench_venv):
        parser.error("--itbench and --itbench-venv go together")
    if args.itbench and not (args.itbench / "itbench_evaluations").is_dir():
        parser.error(f"--itbench {args.itbench}: no itbench_evaluations package there")
    if args.baseline:
        args.baseline = args.baseline.resolve()
        if not (args.baseline / "judge" / "__main__.py").is_file():
            parser.error(f"--baseline {args.baseline}: no judge package there")
    unknown = set(args.variants) - {"dimension", "litellm"}
    if unknown:
        parser.error(
            f"--variants: unknown {', '.join(sorted(unknown))}; expected dimension, litellm"
        )
    started, load_start = time.strftime("%Y-%m-%dT%H:%M:%S%z"), os.getloadavg()
    scenarios = measure(args)
    load_end = os.getloadavg()
    print(
        f"Measured {started} to {time.strftime('%Y-%m-%dT%H:%M:%S%z')}: {os.cpu_count()} CPUs, "
        f"load average {load_start[0]:.1f} at the start and {load_end[0]:.1f} at the end; "
        f"Python {platform.python_version()}; medians of {args.repeats} interleaved runs."
    )
    if not args.itbench:
        print("ITBench-Evaluations not given (--itbench, --itbench-venv): our half only.")
    print(table(scenarios, bool(args.itbench)))
    if args.json:
        runs = [
            {
                **asdict(s),
                "runs": {t: [asdict(r) for r in rs] for t, rs in s.runs.items()},
                "limit": {t: s.limit(t) for t in s.runs},
                "overhead": {t: s.overhead(t) for t in s.runs},
                "overhead_vs_itbench": {t: s.overhead_ratio(t) for t in s.runs if t != "ITBench"},
            }
            for s in scenarios
        ]
        meta = {"load_start": load_start, "load_end": load_end, "cpus": os.cpu_count()}
        args.json.write_text(json.dumps({"meta": meta, "scenarios": runs}, indent=2) + "\n")


if __name__ == "__main__":
    main()
