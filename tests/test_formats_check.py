"""`judge check` on each upstream layout says which format, schema and layout it read, and how
many specs and submissions it loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.cli import main

FORMATS = Path(__file__).parent / "fixtures" / "formats"

CASES = [
    (["itbench/scenarios"], "5 specs read as itbench", "itbench v1, scenario folders: 5"),
    (["itbench/ground_truths_flat"], "2 specs read as itbench", "itbench v1, flat folder: 2"),
    (["itbench/roles"], "2 specs read as itbench", "itbench v1, role variables: 2"),
    (["itbench/silver_truths"], "2 specs read as itbench", "itbench silvertruth, flat folder: 2"),
    (["openrca/test/result"], "3 specs read as openrca", "openrca run: 3"),
    (["forge/fault-alerts"], "5 specs read as forge", "forge label: 5"),
    (["cloud-opsbench-cases/benchmark"], "2 specs read as cloud-opsbench", "cloud-opsbench: 2"),
    (
        ["forge/fault-alerts", "--outputs", "forge/results"],
        "3 submissions read as forge",
        "forge responses: 3",
    ),
    (
        ["openrca/test/result", "--outputs", "openrca/test/result"],
        "4 submissions read as openrca",
        "openrca run: 4",
    ),
]


@pytest.mark.parametrize(("args", "count", "layout"), CASES, ids=[c[0][0] for c in CASES])
def test_check_names_the_format_layout_and_counts(args, count, layout, capsys):
    paths = [str(FORMATS / a) if not a.startswith("--") else a for a in args]
    assert main(["check", "--ground-truth", *paths]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    assert f"{count} from " in out and f"({layout})" in out, out


def test_check_json_carries_the_layout_counts(capsys):
    assert main(["check", "--ground-truth", str(FORMATS / "itbench" / "roles"), "--json"]) == 0
    findings = json.loads(capsys.readouterr().out)
    assert findings["ground_truth"]["layouts"] == {"itbench v1, role variables": 2}
