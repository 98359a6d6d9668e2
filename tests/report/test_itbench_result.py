"""`judge eval --result-format itbench` and `judge report --itbench`: ITBench-Evaluations'
`evaluation_results.json`, read back the way ITBench users' scripts read it.

ITBench-Evaluations has no licence, so its statistics code is not copied here. `itbench_reader`
below is written from the shape its README documents and its published result files show:
`raw_results[].scores.<metric>.calculation_{precision,recall,f1}`; `statistics.per_incident
[<incident>][<metric>_<part>] = {mean, stderr, n}` over the incident's trials (stderr: the
population standard deviation over sqrt(n)); `statistics.overall[<metric>_<part>] = {mean,
stderr, n_incidents}`, the mean of the incidents' means (stderr: their sample standard error,
None for one incident), and `statistics.overall.total_bad_runs`.
"""

from __future__ import annotations

import json
import math
import statistics as stats
from collections import defaultdict
from pathlib import Path

import pytest
from helpers import FIXTURES

from judge import load_result
from judge.cli import main

SYNTHETIC = FIXTURES / "formats" / "itbench" / "synthetic"
GT = SYNTHETIC / "ground_truths.json"
OUTPUTS = SYNTHETIC / "agent_outputs"
ENTITY_KEYS = [f"root_cause_entity_{m}" for m in ("precision", "recall", "f1")]


def itbench_reader(path: Path) -> dict[str, dict[str, float]]:
    """What a script written for ITBench's file computes from its raw results: per metric key,
    the macro mean and its sample standard error over incidents."""
    data = json.loads(path.read_text())
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for raw in data["raw_results"]:
        for metric in ("root_cause_entity", "root_cause_entity_k"):
            block = raw["scores"].get(metric) or {}
            for part in ("precision", "recall", "f1"):
                value = block.get(f"calculation_{part}")
                if value is not None:
                    per[f"{metric}_{part}"][raw["incident_id"]].append(value)
    out = {}
    for key, incidents in per.items():
        means = [stats.fmean(v) for v in incidents.values()]
        sem = stats.stdev(means) / math.sqrt(len(means)) if len(means) > 1 else None
        out[key] = {"mean": stats.fmean(means), "stderr": sem, "n_incidents": len(means)}
    return out


@pytest.fixture()
def itbench_run(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    code = main(
        [
            "eval",
            "-g",
            str(GT),
            "-o",
            str(OUTPUTS),
            "--result-format",
            "itbench",
            "-e",
            "ROOT_CAUSE_ENTITY",
            "--domain",
            "sre",
            "--no-progress",
        ]
    )
    assert code == 0
    return tmp_path


def test_the_file_has_itbench_s_keys_and_its_statistics_agree(itbench_run):
    path = itbench_run / "evaluation_results.json"  # ITBench's default name
    data = json.loads(path.read_text())
    assert set(data) >= {"raw_results", "statistics", "config"}
    overall = data["statistics"]["overall"]
    assert isinstance(overall["root_cause_entity_f1"]["mean"], float)
    expected = itbench_reader(path)
    for key in [*ENTITY_KEYS, "root_cause_entity_k_recall"]:
        assert overall[key]["mean"] == pytest.approx(expected[key]["mean"])
        assert overall[key]["stderr"] == pytest.approx(expected[key]["stderr"])
        assert overall[key]["n_incidents"] == expected[key]["n_incidents"] == 2
    assert overall["total_bad_runs"] == 0
    incident = data["statistics"]["per_incident"]["2"]["root_cause_entity_f1"]
    assert set(incident) == {"mean", "stderr", "n"} and incident["n"] == 2
    assert data["config"]["domain"] == "sre" and data["config"]["eval_criteria"] == [
        "ROOT_CAUSE_ENTITY"
    ]
    assert data["config"]["ground_truth_path"] == str(GT) and data["config"]["k"] == 3


def test_raw_results_carry_the_entity_matches_and_the_checklist_under_its_own_name(itbench_run):
    data = json.loads((itbench_run / "evaluation_results.json").read_text())
    raw = {(r["incident_id"], r["trial_id"]): r for r in data["raw_results"]}
    entity = raw[("2", "1")]["scores"]["root_cause_entity"]
    assert entity["gt_entities"] == ["flagd-config"]
    assert [p["matches_gt"] for p in entity["predicted_entities"]] == [False, True, False, False]
    assert (entity["calculation_precision"], entity["calculation_recall"]) == (0.25, 1.0)
    assert raw[("2", "1")]["scores"]["root_cause_entity_k@2"]["calculation_precision"] == 0.5
    checklist = raw[("2", "1")]["scores"]["checklist"]
    assert 0.0 <= checklist["composite"] <= 1.0 and isinstance(checklist["passed"], bool)
    assert set(data["statistics"]["overall"]) >= {"checklist_composite", "checklist_pass"}
    # nothing under a name that means something else in ITBench
    names = {k for r in data["raw_results"] for k in r["scores"]}
    assert not names & {"root_cause_reasoning", "propagation_chain", "root_cause_proximity_no_fp"}


def test_the_full_result_and_store_names_follow_itbench_s_file(itbench_run):
    full = load_result(itbench_run / "evaluation_results.judge.json")
    assert full.entities is not None and len(full.cases) == 4
    data = json.loads((itbench_run / "evaluation_results.json").read_text())
    assert data["diagnosis_judge"]["result_file"] == "evaluation_results.judge.json"
    assert "ROOT_CAUSE_REASONING" in data["diagnosis_judge"]["not_computed"]


def test_judge_report_writes_the_same_file_from_an_existing_result(itbench_run, tmp_path):
    out = tmp_path / "again.json"
    assert (
        main(["report", str(itbench_run / "evaluation_results.judge.json"), "--itbench", str(out)])
        == 0
    )
    again, first = (
        json.loads(out.read_text()),
        json.loads((itbench_run / "evaluation_results.json").read_text()),
    )
    assert (
        again["statistics"] == first["statistics"] and again["raw_results"] == first["raw_results"]
    )
    assert not (itbench_run / "evaluation_results.judge.html").exists()  # --itbench alone: no HTML


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["-e", "ROOT_CAUSE_REASONING"], "'ROOT_CAUSE_REASONING' is judged by ITBench's LLM judge"),
        (
            ["--eval-criteria", "ROOT_CAUSE_ENTITY", "PROPAGATION_CHAIN"],
            "'PROPAGATION_CHAIN' is judged",
        ),
        (["-e", "NOT_A_THING"], "expected one of ROOT_CAUSE_ENTITY"),
        (["--domain", "finops"], "ITBench's finops domain is not judged here"),
    ],
)
def test_criteria_and_domains_not_computed_are_refused_by_name(tmp_path, capsys, flags, said):
    with pytest.raises(SystemExit) as done:
        main(["eval", "-g", str(GT), "-o", str(OUTPUTS), "-r", str(tmp_path / "r.json"), *flags])
    assert done.value.code == 2
    assert said in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_verbose_and_the_default_result_name_without_the_flag(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "-g", str(GT), "-o", str(OUTPUTS), "-v", "--no-progress"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]
