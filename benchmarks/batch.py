"""Batch mode against live calls: provider requests per submission, and the batch's wall time
against the fake provider's stated processing time.

    python benchmarks/batch.py [--submissions 200] [--batch-delay 20] [--batch-poll 1] [--json PATH]

The fake provider runs in this process (its batch work is a few ms per line, done when a
status check finds the batch over); `judge eval` runs as a command, once live
(`--max-concurrent 5`) and once with `--batch`, each on a fresh store. Requests are counted
by the provider: HTTP requests it received (chat completions for the live run; Files and
Batches requests for the batch run) and the chat-completion lines a batch held. The batch's
wall time is the batch phase (first upload to last answer stored, from the result's
`usage.batch.wall_seconds`) against `--batch-delay`, the time the provider takes, and its parts:
submit (build the file, upload, create), wait (created until a status check sees it end:
`--batch-delay` plus the polling's lateness), collect (read, parse and store every line).

With `--refuse-json-schema` the provider is a llama-cpp-python server (it refuses the
`json_schema` reply format with its HTTP 500): the first batch's lines are refused, and their
calls go out again in `json_object+schema` in a second batch; a rerun on the same store
(`--refresh`) starts from the remembered mode and needs one batch. Printed: the batches and
wall time of both runs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.synth import GROUND_TRUTH, write_submissions  # noqa: E402
from judge.testing import FakeProvider, FakeProviderConfig  # noqa: E402
from judge.testing.formats import LLAMA_CPP_PYTHON_FORMATS  # noqa: E402


def judge_eval(outputs: Path, result: Path, url: str, *extra: str) -> float:
    """Run `judge eval`; its wall time."""
    command = [
        sys.executable, "-m", "judge", "eval", "--ground-truth", str(GROUND_TRUTH),
        "--outputs", str(outputs), "--result-file", str(result), "--judge-model",
        "openai/fake-judge", "--api-base", url, "--no-progress", "--json", *extra,
    ]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"judge eval failed ({done.returncode}): {done.stderr[-2000:]}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--submissions", type=int, default=200)
    parser.add_argument("--batch-delay", type=float, default=20.0)
    parser.add_argument("--batch-poll", type=float, default=1.0)
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    parser.add_argument(
        "--refuse-json-schema",
        action="store_true",
        help="a llama-cpp-python server: measure the batch rounds reply-format negotiation costs",
    )
    args = parser.parse_args()
    if args.refuse_json_schema:
        negotiation(args)
        return
    n = args.submissions
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        outputs = write_submissions(n, folder / "subs.jsonl")
        with FakeProvider(FakeProviderConfig(batch_delay=args.batch_delay)) as server:
            live_wall = judge_eval(outputs, folder / "live.json", server.url)
            live_requests = len(server.calls)
            batch_wall = judge_eval(
                outputs, folder / "batch.json", server.url, "--batch",
                "--batch-poll", str(args.batch_poll),
            )  # fmt: skip
            lines = len(server.calls) - live_requests
            ops = dict(server.batches.ops)
            serving = server.batches.finish_seconds
        usage = json.loads((folder / "batch.json").read_text())["usage"]
        live = json.loads((folder / "live.json").read_text())
    batch = usage["batch"]
    http = sum(ops.values())
    same = usage["calls_made"] == live["usage"]["calls_made"] == 3 * n
    print(f"{n} submissions, {3 * n} calls; batch delay {args.batch_delay:g} s, "
          f"first poll {args.batch_poll:g} s")  # fmt: skip
    print("| mode | HTTP requests | per submission | chat completions | command wall |")
    print("|---|---:|---:|---:|---:|")
    print(f"| live | {live_requests} | {live_requests / n:.2f} | {live_requests} | "
          f"{live_wall:.1f} s |")  # fmt: skip
    print(f"| `--batch` | {http} | {http / n:.3f} | {lines} (in {len(batch['batches'])} "
          f"batch) | {batch_wall:.1f} s |")  # fmt: skip
    print(f"batch HTTP requests by kind: {ops}")
    print(
        f"batch phase {batch['wall_seconds']:.1f} s against the provider's "
        f"{args.batch_delay:g} s: ratio {batch['wall_seconds'] / args.batch_delay:.2f}"
    )
    parts = batch["seconds"]
    print(
        f"of which submit {parts['submit']:.1f} s, wait {parts['wait']:.1f} s "
        f"(ratio {parts['wait'] / args.batch_delay:.2f}), collect {parts['collect']:.1f} s"
    )
    polling = (parts["wait"] - serving) / args.batch_delay
    print(
        f"the fake provider answered the lines in {serving:.1f} s, inside the status check "
        f"that saw the batch end; wait without it against the delay: {polling:.2f}"
    )
    print(f"every call answered in both runs: {same}")
    if args.json:
        numbers = {
            "submissions": n,
            "calls": 3 * n,
            "batch_delay": args.batch_delay,
            "live": {"http_requests_per_submission": live_requests / n, "wall": live_wall},
            "batch": {
                "http_requests_per_submission": http / n,
                "http_requests_by_kind": ops,
                "chat_completion_lines": lines,
                "wall": batch_wall,
                "phase_seconds": parts,
                "phase_vs_delay": batch["wall_seconds"] / args.batch_delay,
                "wait_less_answering_vs_delay": polling,
            },
            "every_call_answered": same,
        }
        args.json.write_text(json.dumps(numbers, indent=2) + "\n")


def negotiation(args: argparse.Namespace) -> None:
    """A server that refuses `json_schema`: batches and wall time of a first batch run and of
    a rerun on the same store, which starts from the mode the first one found."""
    n = args.submissions
    config = FakeProviderConfig(
        batch_delay=args.batch_delay,
        response_formats=LLAMA_CPP_PYTHON_FORMATS,
        format_refusal="llama-cpp-python",
    )
    poll = ("--batch", "--batch-poll", str(args.batch_poll))
    rows = []
    with tempfile.TemporaryDirectory() as tmp, FakeProvider(config) as server:
        outputs = write_submissions(n, Path(tmp) / "subs.jsonl")
        result = Path(tmp) / "batch.json"
        for name, extra in (("first run", poll), ("rerun, same store", (*poll, "--refresh"))):
            before = dict(server.batches.ops)
            wall = judge_eval(outputs, result, server.url, *extra)
            ops = {k: v - before.get(k, 0) for k, v in server.batches.ops.items()}
            data = json.loads(result.read_text())
            batch = data["usage"]["batch"]
            mode = data["config"]["judge"]["structured_output"]
            rows.append((name, ops.get("batch_create", 0), batch, mode, wall, data))
    print(f"{n} submissions, {3 * n} calls; llama-cpp-python refusals; batch delay "
          f"{args.batch_delay:g} s, first poll {args.batch_poll:g} s")  # fmt: skip
    print("| run | batches | lines refused | mode | batch phase | vs delay | command wall "
          "| all answered |")  # fmt: skip
    print("|---|---:|---:|---|---:|---:|---:|---|")
    for name, created, batch, mode, wall, data in rows:
        phase = batch["wall_seconds"]
        answered = data["usage"]["calls_made"] == 3 * n and data["complete"]
        print(f"| {name} | {created} | {batch['format_refused']} | {mode} | {phase:.1f} s | "
              f"{phase / args.batch_delay:.2f} | {wall:.1f} s | {answered} |")  # fmt: skip


if __name__ == "__main__":
    main()
