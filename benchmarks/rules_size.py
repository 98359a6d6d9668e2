"""Time and peak memory of the rules judge on one huge diagnosis (issue 24: "a 5 MB diagnosis ran
for over 25 minutes").

    python benchmarks/rules_size.py [--json PATH] [SIZE ...]
    # default SIZE (characters): 10000 100000 1000000 10000000

Each size runs in a fresh process: it builds the diagnosis (`long_diagnosis`: a claim, then
pasted log lines, kubectl tables, propagation paths, prose and a run of text with no full stop
and unclosed parentheses, repeated), parses the spec, then times the rules judge answering all
nine questions of the default rubric, reading the whole text (`SizePolicy(max_chars=None)`: the
work must be linear in the length) and, in a second process, with the default size policy (what
`judge eval` does). Printed per size: seconds, microseconds per character, the ratio of time per
character to the smallest size's (same run; linear work keeps it near 1, the goal is within 2x)
and the peak resident set size of the process (getrusage, after the judge's imports).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from ground_truth.models import IncidentSpec  # noqa: E402
from judge.judges.rules.size import SizePolicy  # noqa: E402
from judge.judges.rules.truth import Truth  # noqa: E402

SIZES = (10_000, 100_000, 1_000_000, 10_000_000)
SPEC = IncidentSpec(
    id="size",
    ground_truth=(
        "[fault_spec] component=deployment/checkout; namespace=astronomy-shop || The "
        "PRODUCT_CATALOG_ADDR environment variable points to the wrong backend port (8082 instead "
        "of 8080), so checkout cannot reach product-catalog and related requests fail."
    ),
)
OPENING = (
    "The root cause is checkout: its PRODUCT_CATALOG_ADDR points to port 8082 instead of 8080, "
    "so requests to product-catalog fail with connection refused. frontend and cart are healthy.\n"
)
BLOCK = (
    "2024-05-01T10:00:{s:02d}Z checkout-7d9f8-x2k1p ERROR dial tcp product-catalog:8082: "
    "connect: connection refused (retry {i})\n"
    "kubectl get pods -n astronomy-shop: cart Running, frontend Running, checkout 0/1 "
    "restarts {i}, currency Running, email Running\n"
    "Propagation path: checkout --(calls)--> product-catalog --(hosted_on)--> node-{n}\n"
    "The frontend pods restarted only because of a startup race; payment looks fine. Most likely "
    "the cart cache is not the problem, since its latency is normal at {i} ms.\n"
    "raw dump ( shipping ( quote ( ad ( recommendation retries {i} and checkout waits for "
    "product-catalog while frontend ( cart ( email "
)
CHILD = """
import json, resource, sys, time
sys.path.insert(0, {repo!r})
from benchmarks.rules_size import SPEC, answer_all, long_diagnosis, questions
from judge.judges.rules import SizePolicy
from judge.judges.rules.truth import parse_truth
text, truth, asked = long_diagnosis({size}), parse_truth(SPEC), questions()
policy = SizePolicy() if {default!r} else SizePolicy(max_chars=None)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
answers = answer_all(text, truth, policy, asked)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"seconds": seconds, "peak_mb": peak / 1024, "base_mb": before / 1024,
                  "answered": answers}}))
"""


def long_diagnosis(size: int) -> str:
    """A diagnosis of exactly `size` characters: the opening claim, then pasted blocks."""
    parts, length, i = [OPENING], len(OPENING), 0
    while length < size:
        block = BLOCK.format(s=i % 60, i=i, n=i % 6 + 1)
        parts.append(block)
        length += len(block)
        i += 1
    return "".join(parts)[:size]


def questions() -> list[tuple[str, str]]:
    """(id, rule name) of every question of the default rubric."""
    from judge import load_rubric
    from judge.judges.rules import bind

    return [
        (q.id, bind(q.rule, q.text) or "") for d in load_rubric().dimensions for q in d.questions
    ]


def answer_all(text: str, truth: Truth, policy: SizePolicy, asked: list[tuple[str, str]]) -> int:
    """Parse `text` and answer every question in `asked`; the number answered."""
    from judge.judges.rules import RULES, Case

    case = Case.build(SPEC, text, truth, policy)
    return sum(RULES[rule](qid, case).answer.answer is not None for qid, rule in asked)


def run(size: int, default_policy: bool) -> dict[str, float]:
    code = CHILD.format(repo=str(REPO), size=size, default=default_policy)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sizes", nargs="*", type=int, default=list(SIZES))
    p.add_argument("--json", type=Path, help="also write the table as JSON here")
    args = p.parse_args(argv)
    rows = []
    for size in args.sizes:
        whole, default = run(size, False), run(size, True)
        rows.append({"chars": size, "whole": whole, "default_policy": default})
    base = rows[0]["whole"]["seconds"] / rows[0]["chars"]
    print(
        "| characters | read whole: s | µs/char | ratio to first | peak MB | default policy: s | peak MB |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        whole, default = row["whole"], row["default_policy"]
        per_char = whole["seconds"] / row["chars"]
        row["ratio"] = per_char / base
        print(
            f"| {row['chars']:,} | {whole['seconds']:.2f} | {per_char * 1e6:.2f} | "
            f"{row['ratio']:.2f} | {whole['peak_mb']:.0f} | {default['seconds']:.2f} | "
            f"{default['peak_mb']:.0f} |"
        )
    worst = max(row["ratio"] for row in rows)
    print(f"\nworst ratio of time per character to the first size: {worst:.2f} (goal: within 2)")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "worst_ratio": worst}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
