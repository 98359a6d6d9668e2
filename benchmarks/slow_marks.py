"""Which tests the `slow` mark gets wrong, from the durations pytest printed.

The fast lane (`pytest -m "not slow"`) is every test but those marked `slow`, and a test is
marked `slow` when it takes over about 2 s on an idle machine. This reads the durations of one
or more runs of the suite and lists the tests over the threshold that lack the mark, and the
marked ones well under it. A test's time is its setup, call and teardown together (a
module-scoped fixture counts on the first test that asks for it); with several runs, its least
time, since a loaded machine only ever makes a test slower.

    python -m pytest -m "not realmodel" --durations=0 --durations-min=0 > run1.txt
    python -m pytest -m "not realmodel" --durations=0 --durations-min=0 > run2.txt
    python benchmarks/slow_marks.py run1.txt run2.txt [--threshold 2] [--well-under 0.5]

It asks pytest which tests are marked (`--collect-only -m slow`, nothing runs) and exits 1 when
a test over the threshold lacks the mark. A test that is not in every run is left out.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s+(setup|call|teardown)\s+(\S+::\S.*?)\s*$")


def durations(text: str) -> dict[str, float]:
    """Seconds per test id (setup + call + teardown) in one run's `--durations` lines."""
    total: dict[str, float] = defaultdict(float)
    for line in text.splitlines():
        found = DURATION.match(line)
        if found:
            total[found.group(3)] += float(found.group(1))
    return dict(total)


def least(runs: Iterable[dict[str, float]]) -> dict[str, float]:
    """Each test's least time over the runs, for the tests every run has."""
    runs = list(runs)
    common = set.intersection(*(set(run) for run in runs)) if runs else set()
    return {test: min(run[test] for run in runs) for test in common}


def marked_slow() -> set[str]:
    """The ids of the tests marked `slow`, opt-in ones included (conftest.py deselects the
    opt-in tests unless the -m expression names an opt-in marker, so this one names them)."""
    expression = "slow or (slow and (corpus or browser or realmodel))"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            expression,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 5):  # 5: nothing collected
        raise SystemExit(f"pytest --collect-only failed:\n{done.stdout}{done.stderr}")
    return {line.strip() for line in done.stdout.splitlines() if "::" in line}


def report(
    times: dict[str, float], slow: set[str], threshold: float, well_under: float
) -> tuple[list[str], list[str]]:
    """(tests over `threshold` without the mark, marked tests under `well_under`), slowest
    first, each as `seconds  test id`."""
    unmarked = sorted(
        ((t, test) for test, t in times.items() if t > threshold and test not in slow),
        reverse=True,
    )
    idle = sorted(((t, test) for test, t in times.items() if t < well_under and test in slow))
    return [f"{t:7.2f}s  {test}" for t, test in unmarked], [
        f"{t:7.2f}s  {test}" for t, test in idle
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="files of `pytest --durations=0` output")
    parser.add_argument("--threshold", type=float, default=2.0, help="seconds (default 2)")
    parser.add_argument("--well-under", type=float, default=0.5, help="seconds (default 0.5)")
    args = parser.parse_args(argv)
    for path in args.runs:
        if not path.is_file():
            parser.error(f"{path}: no such file (expected the output of pytest --durations=0)")
    runs = [durations(path.read_text(encoding="utf-8")) for path in args.runs]
    if not all(runs):
        parser.error(
            "a file has no duration lines: run pytest with --durations=0 --durations-min=0"
        )
    times = least(runs)
    slow = marked_slow()
    unmarked, idle = report(times, slow, args.threshold, args.well_under)
    print(f"{len(times)} tests timed in {len(runs)} run(s); {len(slow)} marked slow")
    print(f"over {args.threshold:g} s without the slow mark: {len(unmarked)}")
    print("\n".join(unmarked))
    print(f"marked slow but under {args.well_under:g} s: {len(idle)}")
    print("\n".join(idle))
    return 1 if unmarked else 0


if __name__ == "__main__":
    sys.exit(main())
