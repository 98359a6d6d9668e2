"""RCAEval's case folders as specs and its ranked results as entities: entity @k is its AC@k."""

from __future__ import annotations

import json

import pytest
from helpers import FIXTURES, quiet

from ground_truth import InputError, load_specs, load_submissions, match_submissions
from ground_truth.entities import score_entities
from ground_truth.errors import collecting_bad_files
from ground_truth.formats.registry import detect

RCAEVAL = FIXTURES / "formats" / "rcaeval"


def test_case_folders_are_specs_named_as_their_result_files():
    assert detect(RCAEVAL / "cases", "specs").name == "rcaeval"
    specs, _ = quiet(load_specs, RCAEVAL / "cases")
    by_id = {s.id: s for s in specs}
    assert sorted(by_id) == ["cartservice_cpu_3", "checkoutservice_delay_2", "emailservice_mem_1"]
    email = by_id["emailservice_mem_1"]
    assert (email.fault_origin[0].name, email.fault_origin[0].kind) == ("emailservice", "Service")
    assert (email.mechanism, email.problem_class) == ("memory leak", "mem")
    assert email.parameters == {"inject_time": 1692569339, "fault": "mem", "dataset": "RE2-OB"}
    assert "2023-08-20 22:08:59 UTC" in email.ground_truth


def test_one_case_folder_alone_and_the_dataset_parent_load_the_same(tmp_path):
    specs, _ = quiet(load_specs, RCAEVAL / "cases" / "RE2-OB" / "emailservice_mem" / "1")
    assert [s.id for s in specs] == ["emailservice_mem_1"]
    parent, _ = quiet(load_specs, RCAEVAL)  # one level above cases/, as downloads nest them
    assert len(parent) == 3


def test_rankings_are_service_entities_and_give_ac_at_k():
    assert detect(RCAEVAL / "results", "submissions").name == "rcaeval"
    specs, _ = quiet(load_specs, RCAEVAL / "cases")
    subs, found = quiet(load_submissions, RCAEVAL / "results")
    pairs = dict(
        ((s.incident_id, s.trial), (spec, s)) for spec, s in match_submissions(specs, subs).pairs
    )
    spec, email = pairs[("emailservice_mem_1", "baro")]
    assert [e.name for e in email.entities][:3] == [
        "emailservice",
        "recommendationservice",
        "cartservice",
    ]
    assert email.entities[0].fault_type == "mem" and email.entities[0].raw == "emailservice_mem"
    score = score_entities(spec, email)
    assert score.top_is_origin and score.at(1).recall == 1.0  # AC@1 = 1
    spec, checkout = pairs[("checkoutservice_delay_2", "baro")]
    # redis-db_mem and redis_cpu are one service; checkoutservice comes third
    assert [e.name for e in checkout.entities][:3] == ["redis", "cartservice", "checkoutservice"]
    score = score_entities(spec, checkout)
    assert [score.at(k).recall for k in (1, 2, 3, 5)] == [0.0, 0.0, 1.0, 1.0]
    spec, failed = pairs[("cartservice_cpu_3", "baro")]
    assert failed.diagnosis == "" and failed.entities == []
    assert score_entities(spec, failed).at(5).recall == 0.0  # a failed run is a miss
    assert any("singular matrix" in str(w) for w in found)


def test_a_result_whose_name_does_not_say_its_case_is_skipped_with_a_warning(tmp_path):
    (tmp_path / "ranking.json").write_text(json.dumps({"0": ["a_cpu", "b_mem"]}))
    (tmp_path / "emailservice_mem_1.json").write_text(json.dumps({"0": ["emailservice_mem"]}))
    subs, found = quiet(load_submissions, tmp_path)
    assert [(s.incident_id, s.trial) for s in subs] == [("emailservice_mem_1", "1")]
    (warning,) = found
    assert warning.path.endswith("ranking.json") and "<service>_<fault>_<case>.json" in str(warning)


def test_an_injection_time_that_is_not_a_number_is_a_bad_file(tmp_path):
    case = tmp_path / "cart_cpu" / "1"
    case.mkdir(parents=True)
    (case / "inject_time.txt").write_text("soon\n")
    good = tmp_path / "cart_mem" / "1"
    good.mkdir(parents=True)
    (good / "inject_time.txt").write_text("1692569339\n")
    with collecting_bad_files() as bad:
        specs = load_specs(tmp_path, "rcaeval")
    assert [s.id for s in specs] == ["cart_mem_1"]
    assert [(e.path.endswith("inject_time.txt"), e.message) for e in bad] == [
        (True, "expected the injection time as Unix seconds")
    ]
    with pytest.raises(InputError, match="expected the injection time"):
        load_specs(tmp_path, "rcaeval")
