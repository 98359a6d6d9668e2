"""`judge check` on each upstream layout says which format, schema and layout it read, and how
many specs and submissions it loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import FORMATS

from judge.cli import main

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


NEW_LAYOUTS = [
    (["rca100/test/result/rca100"], "2 specs read as openrca", "openrca run: 2"),
    (["rcaeval/cases"], "3 specs read as rcaeval", "rcaeval case folder: 3"),
    (
        ["rcaeval/cases", "--outputs", "rcaeval/results"],
        "3 submissions read as rcaeval",
        "rcaeval ranked result: 3",
    ),
    (
        ["cloud-opsbench-cases", "--outputs", "cloud-opsbench-runs/results"],
        "3 submissions read as cloud-opsbench",
        "cloud-opsbench run result: 3",
    ),
    (
        ["sregym-registry/root_causes_all_123.excerpt.yaml", "--outputs", "sregym-traces"],
        "5 submissions read as sregym",
        "sregym agent trace: 5",
    ),
]


@pytest.mark.parametrize(
    ("args", "count", "layout"), NEW_LAYOUTS, ids=[c[0][-1] for c in NEW_LAYOUTS]
)
def test_check_reads_the_new_layouts(args, count, layout, capsys):
    test_check_names_the_format_layout_and_counts(args, count, layout, capsys)


def test_check_lists_every_missing_incident_and_counts_the_files_it_skipped(tmp_path, capsys):
    specs = [{"id": f"incident-{i:02d}", "ground_truth": f"fault {i}"} for i in range(25)]
    gt = tmp_path / "gt"
    gt.mkdir()
    (gt / "specs.json").write_text(json.dumps(specs))
    (gt / "README.txt").write_text("not a spec\n")
    (gt / "notes.csv").write_text("a,b\n1,2\n")
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text(json.dumps({"incident_id": "incident-00", "diagnosis": "x"}) + "\n")
    main(["check", "--ground-truth", str(gt), "--outputs", str(outputs)])
    out = " ".join(capsys.readouterr().out.split())
    assert "incidents with no submission (24): incident-01, incident-02," in out
    assert "incident-24" in out and "…" not in out
    assert "2 other data files under it not recognised and skipped" in out
    main(["check", "--ground-truth", str(gt), "--json"])
    findings = json.loads(capsys.readouterr().out)
    assert sorted(Path(f).name for f in findings["ground_truth"]["skipped_files"]) == [
        "README.txt",
        "notes.csv",
    ]


def test_check_names_every_bad_srezero_record_by_its_field(tmp_path, capsys):
    records = json.loads(
        (FORMATS.parent / "srezero" / "example_results_scripted_v0.5.json").read_text()
    )
    records["records"][1]["metrics"] = "bad"
    del records["records"][2]["task_id"]
    records["records"][3]["trajectory"][0] = ["not", "a", "step"]
    bad = tmp_path / "records.json"
    bad.write_text(json.dumps(records))
    gt = FORMATS.parent / "srezero" / "task_configs_all_40.json"
    assert main(["check", "--ground-truth", str(gt), "--outputs", str(bad), "--json"]) == 2
    errors = json.loads(capsys.readouterr().out)["errors"]
    assert [(e["field"], e["message"]) for e in errors] == [
        ("records[1].metrics", "expected an object of episode metrics"),
        ("records[2].task_id", "expected the task id as text"),
        ("records[3].trajectory[0]", "expected a step object"),
    ]


def test_check_names_every_bad_field_of_a_native_spec(tmp_path, capsys):
    (tmp_path / "spec.yaml").write_text("id: ''\nground_truth: ''\nfault_origin: 3\n")
    assert main(["check", "--ground-truth", str(tmp_path / "spec.yaml"), "--json"]) == 2
    error, _none_left = json.loads(capsys.readouterr().out)["errors"]
    assert "more)" not in error["message"]
    assert error["field"] == "id" and "; ground_truth:" in error["message"]
    assert "; fault_origin:" in error["message"]
