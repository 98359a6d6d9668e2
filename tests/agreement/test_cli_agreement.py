"""`judge agreement`, `judge calibrate`, `judge labels`, end to end on real SREGym labels."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from helpers import EXAMPLE, FIXTURES, one_incident_args

from judge.cli import main

BENCH = FIXTURES / "agreement" / "judge_bench_data.96a9057e.yaml"


@pytest.fixture(scope="module")
def sregym_bench_result(tmp_path_factory) -> Path:
    """SREGym's 29 labelled diagnoses, converted and scored by the rules judge."""
    out = tmp_path_factory.mktemp("bench")
    assert main(["labels", "import-sregym-bench", str(BENCH), "-o", str(out)]) == 0
    assert (
        main(
            [
                "eval",
                "--ground-truth",
                str(out / "specs.json"),
                "--outputs",
                str(out / "submissions.jsonl"),
                "--result-file",
                str(out / "rules.json"),
            ]
        )
        == 0
    )
    return out


def test_calibrate_reports_verdict_kappa_and_threshold_sweep(sregym_bench_result: Path) -> None:
    report_file = sregym_bench_result / "calibration.json"
    code = main(
        [
            "calibrate",
            str(sregym_bench_result / "rules.json"),
            "--human",
            str(sregym_bench_result / "labels.csv"),
            "--bootstrap",
            "200",
            "-o",
            str(report_file),
        ]
    )
    assert code == 0
    report = json.loads(report_file.read_text())
    text = json.dumps(report)
    assert "0.7" in text and "kappa" in text.lower()


def test_agreement_between_two_judges_and_people(
    sregym_bench_result: Path, tmp_path: Path, capsys
) -> None:
    second = tmp_path / "rules-again.json"
    main(
        [
            "eval",
            "--ground-truth",
            str(sregym_bench_result / "specs.json"),
            "--outputs",
            str(sregym_bench_result / "submissions.jsonl"),
            "--result-file",
            str(second),
        ]
    )
    out = tmp_path / "agreement.json"
    code = main(
        [
            "agreement",
            str(sregym_bench_result / "rules.json"),
            str(second),
            str(sregym_bench_result / "labels.csv"),
            "--bootstrap",
            "100",
            "--table2",
            "-o",
            str(out),
        ]
    )
    assert code == 0
    report = json.loads(out.read_text())
    assert report["kind"] == "agreement" and len(report["raters"]) == 3
    assert "|" in capsys.readouterr().out


def test_labels_template_lists_every_question_and_verdict(tmp_path: Path) -> None:
    result = tmp_path / "r.json"
    main(one_incident_args(result))
    sheet = tmp_path / "labels.csv"
    code = main(
        [
            "labels",
            "template",
            str(result),
            "-o",
            str(sheet),
            "--ground-truth",
            str(EXAMPLE / "ground_truth"),
            "--outputs",
            str(EXAMPLE / "outputs"),
        ]
    )
    assert code == 0
    rows = list(csv.DictReader(sheet.read_text(encoding="utf-8-sig").splitlines()))
    assert len(rows) == 3 * (9 + 1)
    assert {r["answer"] for r in rows} == {""}
    assert all(r["diagnosis"] and r["ground_truth"] for r in rows)
    assert any(r["question_id"] == "verdict" for r in rows)


def test_bad_label_file_exits_2_naming_file_and_row(
    sregym_bench_result: Path, tmp_path: Path, capsys
) -> None:
    bad = tmp_path / "bad.csv"
    lines = (sregym_bench_result / "labels.csv").read_text(encoding="utf-8-sig").splitlines()
    header = next(csv.reader([lines[0]]))
    row = next(csv.reader([lines[1]]))
    row[header.index("answer")] = "perhaps"
    with bad.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([header, row])
    code = main(["agreement", str(sregym_bench_result / "rules.json"), str(bad)])
    assert code == 2
    err = capsys.readouterr().err
    assert "bad.csv" in err and "perhaps" in err


def _copy_result(
    sregym_bench_result: Path, tmp_path: Path, name: str, rubric_hash: str | None = None
) -> Path:
    data = json.loads((sregym_bench_result / "rules.json").read_text())
    if rubric_hash is not None:
        data["config"]["rubric"]["hash"] = rubric_hash
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_agreement_refuses_results_of_different_rubrics(
    sregym_bench_result: Path, tmp_path: Path, capsys
) -> None:
    other = _copy_result(sregym_bench_result, tmp_path, "other-rubric.json", rubric_hash="0" * 64)
    args = ["agreement", str(sregym_bench_result / "rules.json"), str(other), "--bootstrap", "20"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert str(other) in err and "different rubrics" in err and "--allow-rubric-mismatch" in err
    assert main([*args, "--allow-rubric-mismatch"]) == 0


def test_two_result_files_sharing_a_judge_name_are_not_self_consistency(
    sregym_bench_result: Path, tmp_path: Path
) -> None:
    again = _copy_result(sregym_bench_result, tmp_path, "again.json")
    out = tmp_path / "agreement.json"
    args = ["agreement", str(sregym_bench_result / "rules.json"), str(again), "--bootstrap", "20"]
    assert main([*args, "-o", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["self_consistency"] == []
    names = [r["name"] for r in report["raters"]]
    assert len(set(names)) == 2 and any("again.json" in n for n in names)
