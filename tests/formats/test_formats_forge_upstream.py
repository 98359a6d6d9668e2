"""FORGE (rca-llm-reasoning) as published upstream: `fault-alerts/<system>/label.csv` and the
runs' `responses-<workflow>.txt` JSON lines, MicroSS labels, and runs that predicted nothing."""

from __future__ import annotations

import pytest
from helpers import FIXTURES, quiet

from ground_truth import load_specs, load_submissions
from ground_truth.entities import score_entities
from ground_truth.formats.registry import detect

FORGE = FIXTURES / "formats" / "forge"
RUN = "command-r-plus/model-only-full/all-modalities/list/by-time"


@pytest.fixture(scope="module")
def forge_specs():
    return {s.id: s for s in quiet(load_specs, FORGE / "fault-alerts")[0]}


@pytest.fixture(scope="module")
def runs():
    return quiet(load_submissions, FORGE / "results")


def test_the_fault_alerts_folder_is_detected_and_read_per_system(forge_specs):
    assert detect(FORGE / "fault-alerts", "specs").name == "forge"
    assert sorted(forge_specs) == [
        "MicroSS-0",
        "MicroSS-1",
        "MicroSS-4",
        "Online-Boutique-cloudbed-1-0",
        "Online-Boutique-cloudbed-1-1",
    ]
    assert forge_specs["Online-Boutique-cloudbed-1-0"].fault_origin[0].kind == "Service"


def test_micross_labels_keep_kind_type_and_message(forge_specs):
    spec = forge_specs["MicroSS-0"]
    (origin,) = spec.fault_origin
    assert (origin.name, origin.kind) == ("redisservice2", "ServiceInstance")
    assert spec.problem_class == spec.mechanism == "memory_anomalies"
    assert "trigger a high memory program" in spec.parameters["fault_message"]
    assert "trigger a high memory program" in spec.ground_truth
    assert spec.parameters["orig_fault_id"] == "106"


def test_upstream_responses_are_read_with_the_run_as_trial(runs):
    subs, found = runs
    assert detect(FORGE / "results", "submissions").name == "forge"
    assert [(s.incident_id, s.trial, s.agent) for s in subs] == [
        ("MicroSS-0", RUN, "command-r-plus/model-only-full"),
        ("MicroSS-1", RUN, "command-r-plus/model-only-full"),
        ("MicroSS-4", RUN, "command-r-plus/model-only-full"),
    ]
    failed, miss, hit = subs
    assert failed.entities == [] and failed.source["had_error"] is True
    assert miss.entities[0].name == "dbservice1" and hit.entities[0].name == "redisservice1"
    assert "Hypothesis 1:" in hit.diagnosis
    assert [w.field for w in found if "no hypotheses" in str(w)] == ["line 1"]


def test_a_run_without_prediction_is_a_top1_miss(forge_specs, runs):
    subs, _ = runs
    tops = [score_entities(forge_specs[s.incident_id], s).top_is_origin for s in subs]
    assert tops == [False, False, True]  # 1 of 3 runs, not 1 of the 2 that predicted


def test_a_python_literal_final_response_is_read_without_evaluating_code(tmp_path):
    folder = FORGE / "synthetic" / "results"
    subs, found = quiet(load_submissions, folder)
    literal, hostile = subs
    assert literal.entities[0].name == "redisservice2"
    assert literal.trial == "example-model/react/all-modalities/list/by-time"
    assert hostile.entities == []
    assert any(w.field == "line 2.final_response" for w in found)
