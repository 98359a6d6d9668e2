"""Rubric goldens and the Python API: the shipped goldens load against their rubric, a bad
goldens file is refused naming the field (exit 2), `judge rubric list` does not take them for
a rubric, and `judge.selftest_judge` gives the typed report the command prints."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import yaml
from helpers import EXAMPLE

from ground_truth import InputError, load_specs
from judge import SelftestReport, load_rubric, selftest_judge
from judge.checklist.rubric import available_rubrics, rubrics_dir
from judge.cli import main
from judge.selftest.goldens import goldens_path, load_goldens

RUBRIC = load_rubric("sregym-v3")
SHIPPED = rubrics_dir() / "sregym-v3.goldens.yaml"


def test_the_shipped_goldens_load_against_their_rubric() -> None:
    assert goldens_path(RUBRIC) == SHIPPED
    specs, probes = load_goldens(SHIPPED, RUBRIC)
    assert len(specs) >= 4 and len(probes) >= 12
    kinds = {p.kind for p in probes}
    assert kinds == {"golden-pass", "golden-fail"}
    assert all(p.expected and p.note for p in probes), "each case checks something, says why"
    must_fail = [p for p in probes if p.kind == "golden-fail"]
    assert all(p.verdict == "fail" and "No" in p.expected.values() for p in must_fail)


def test_goldens_are_not_listed_as_rubrics(capsys) -> None:
    assert available_rubrics() == ["sregym-v3"]
    assert main(["rubric", "list"]) == 0
    assert "goldens" not in capsys.readouterr().out


def _bad(tmp_path: Path, change) -> Path:
    data = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "bad.goldens.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda d: d["cases"][0]["expected"].update({"D9-Q9": "Yes"}), "cases[0].expected"),
        (lambda d: d["cases"][1].update({"spec": "nope"}), "cases[1].spec"),
        (lambda d: d["cases"][2].update({"id": d["cases"][0]["id"]}), "cases[2].id"),
        (lambda d: d["cases"][0].update({"must": "maybe"}), "cases.0.must"),
        (lambda d: d["cases"][0]["expected"].update({"D1-Q1": "yes please"}), "cases.0.expected"),
        (lambda d: d.update({"schema_version": 2}), "schema_version"),
    ],
)
def test_a_bad_goldens_file_exits_2_naming_the_field(capsys, tmp_path, change, says) -> None:
    path = _bad(tmp_path, change)
    code = main(["selftest", "--goldens", str(path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and str(path) in err and says in err


def test_a_missing_goldens_file_exits_2(capsys, tmp_path) -> None:
    code = main(["selftest", "--goldens", str(tmp_path / "none.yaml"), "--no-progress"])
    assert code == 2 and "no such goldens file" in capsys.readouterr().err


def test_the_api_gives_the_report_and_says_the_plan_first() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        specs = load_specs(EXAMPLE / "ground_truth" / "incorrect_image.yaml")
    plans = []
    report = selftest_judge(specs, goldens=False, on_plan=plans.append)
    assert isinstance(report, SelftestReport) and report.judge == "rules"
    assert [p.offline for p in plans] == [True] and plans[0].cases == len(report.probes)
    assert report.goldens is None and {p.spec_id for p in report.probes} == {"incorrect_image"}
    assert report.run_result is not None and len(report.run_result.cases) == len(report.probes)
    assert "run_result" not in report.model_dump()


def test_the_api_runs_the_goldens_alone_and_refuses_nothing_to_check() -> None:
    report = selftest_judge()
    assert report.goldens == str(SHIPPED)
    assert {k.kind for k in report.kinds} == {"golden-pass", "golden-fail"}
    with pytest.raises(InputError, match="nothing to check"):
        selftest_judge(goldens=False)


def test_a_golden_spec_with_a_benchmark_specs_id_is_kept_apart() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        specs = load_specs(EXAMPLE / "ground_truth" / "incorrect_port_assignment.yaml")
    report = selftest_judge(specs)
    golden = {p.spec_id for p in report.probes if p.kind.startswith("golden")}
    assert "goldens:incorrect_port_assignment" in golden
    assert "incorrect_port_assignment" not in golden
