"""SREGym: [fault_spec] strings, agent submissions, results CSVs and their judge verdicts."""

from __future__ import annotations

import pytest
from helpers import FORMATS, corpus, quiet

from ground_truth import InputError, parse_fault_spec
from ground_truth.formats.sregym import (
    load_sregym_checklist,
    load_sregym_specs,
    load_sregym_submissions,
    load_sregym_verdicts,
    looks_like_sregym_specs,
    looks_like_sregym_submissions,
    parse_cell,
)

SREGYM = FORMATS / "sregym"
SUBMISSIONS = SREGYM / "service_port_conflict_hotel_reservation_submissions.json"


def test_parse_fault_spec_multi_component_list():
    text = (
        "[fault_spec] component=deployments/frontend, geo, profile; namespace=hotel-reservation"
        " || A correlated bad rollout."
    )
    components, namespace, description = parse_fault_spec(text)
    assert [(c.kind, c.name, c.namespace) for c in components] == [
        ("deployment", "frontend", "hotel-reservation"),
        ("deployment", "geo", "hotel-reservation"),
        ("deployment", "profile", "hotel-reservation"),
    ]
    assert (namespace, description) == ("hotel-reservation", "A correlated bad rollout.")
    assert parse_fault_spec("Disk read/write operations hit latent sector errors.") is None


def test_submissions_file_one_submission_per_agent():
    assert looks_like_sregym_submissions(SUBMISSIONS)
    subs, found = quiet(load_sregym_submissions, SUBMISSIONS)
    assert [s.trial for s in subs] == [
        "claudecode",
        "codex",
        "copilot",
        "geminicli",
        "opencode",
        "stratus",
        "stratus-2",
    ]
    assert {s.incident_id for s in subs} == {"service_port_conflict_hotel_reservation"}
    claude = subs[0]
    assert claude.agent == "claudecode (Claude Code CLI)"
    assert claude.diagnosis.startswith(
        "The recommendation service pod is stuck in Pending state and"
    )
    assert len(claude.source["later_submissions"]) == 1
    assert sorted(w.field for w in found) == [
        "diagnoses[0].non_empty_submissions_in_order",
        "diagnoses[6].non_empty_submissions_in_order",
    ]


def test_submissions_file_also_gives_its_spec():
    assert looks_like_sregym_specs(SUBMISSIONS)
    (spec,), _ = quiet(load_sregym_specs, SUBMISSIONS)
    assert spec.ground_truth.startswith("[fault_spec] component=deployment/recommendation;")
    assert [(c.kind, c.name, c.namespace) for c in spec.fault_origin] == [
        ("deployment", "recommendation", "hotel-reservation")
    ]
    assert (
        spec.mechanism
        == "The pod template binds hostPort 9100, which collides with the prometheus-node-exporter."
    )


@pytest.mark.corpus
def test_ground_truth_40_keeps_the_exact_judge_string():
    path = corpus("sregym", "problems", "ground_truth_40.json")
    specs, found = quiet(load_sregym_specs, path)
    assert len(specs) == 40
    assert [(w.field, "{self.faulty_service}" in w.message) for w in found] == [
        ("problems[29].root_cause_text", True)
    ]
    spec = next(s for s in specs if s.id == "edge_request_filter_cpu_saturation")
    assert spec.ground_truth.startswith(
        "[fault_spec] component=frontend-proxy; namespace=astronomy-shop || "
    )
    assert spec.problem_class == "System/Application Software Failure"
    assert spec.parameters["regex_env"] == "WAF_RULE_REGEX"
    assert spec.expected_fix.startswith("The fix is to roll back or disable the bad rule")
    assert spec.extra["sregym"]["in_sregym_lite"] is True


@pytest.mark.corpus
def test_registry_known_problems_warn():
    path = corpus("sregym-registry", "root_causes_all_123.yaml")
    specs, found = quiet(load_sregym_specs, path.parent)
    by_id = {s.id: s for s in specs}
    assert len(by_id) == 123
    fields = {w.field: w.message for w in found}
    assert "'{self.faulty_service}'" in fields["problems[23].root_cause_text"]
    assert "no `[fault_spec]" in fields["problems[99].root_cause_text"]
    assert "'<worker node picked at run time>'" in fields["problems[115].root_cause_text"]
    assert by_id["latent_sector_error"].fault_origin == []
    assert len(by_id["faulty_image_correlated"].fault_origin) == 8


def test_results_csv_with_diagnosis_text_becomes_submissions():
    path = SREGYM / "results_with_text.csv"
    assert looks_like_sregym_submissions(path) and not looks_like_sregym_specs(path)
    subs, _ = quiet(load_sregym_submissions, path)
    assert [s.key for s in subs] == [
        ("service_port_conflict_hotel_reservation", "1"),
        ("service_port_conflict_hotel_reservation", "2"),
    ]
    first = subs[0]
    assert first.diagnosis.startswith("The recommendation deployment binds hostPort 9100")
    assert first.trajectory.final_state["success"] is True
    assert first.trajectory.final_state["pods"] == [
        {"name": "recommendation-1", "phase": "Running"}
    ]
    assert first.trajectory.metrics["TTL"] == 120.5
    assert first.trajectory.metrics["Diagnosis.dimensions"]["D1"]["score"] == 1.0


def test_results_csv_without_text_is_refused_with_a_pointer():
    with pytest.raises(InputError, match="load_sregym_verdicts"):
        load_sregym_submissions(SREGYM / "results_judged.csv")


def test_judge_verdicts_as_a_rater_table():
    verdicts = load_sregym_verdicts(SREGYM / "results_judged.csv")
    assert verdicts == [
        {"incident_id": "service_port_conflict_hotel_reservation", "trial": "1", "verdict": True},
        {"incident_id": "service_port_conflict_hotel_reservation", "trial": "2", "verdict": False},
        {"incident_id": "incorrect_image", "trial": "1", "verdict": None},
        {"incident_id": "incorrect_image", "trial": "2", "verdict": None},
    ]
    answers = load_sregym_checklist(SREGYM / "results_judged.csv")
    assert [(a["trial"], a["question_id"], a["answer"]) for a in answers] == [
        ("1", "D1-Q1", "Yes"),
        ("1", "D2-Q1", "No"),
        ("2", "D1-Q1", "No"),
    ]


def test_legacy_results_csv_has_no_verdicts():
    path = SREGYM / "legacy_09-10_18-40_arena_results.csv"
    assert looks_like_sregym_submissions(path)
    verdicts, found = quiet(load_sregym_verdicts, path)
    assert verdicts == [
        {"incident_id": "operator_non_existent_storage", "trial": "1", "verdict": None}
    ]
    assert any("no Diagnosis.* columns" in str(w) for w in found)


@pytest.mark.parametrize(
    "cell, value",
    [
        ("True", True),
        ("None", None),
        ("", None),
        ("12.5", 12.5),
        ("{'a': [1, None]}", {"a": [1, None]}),
        ("hostPort conflict", "hostPort conflict"),
        (
            "__import__('os').system('touch /tmp/pwned')",
            "__import__('os').system('touch /tmp/pwned')",
        ),
    ],
)
def test_cells_are_literals_never_code(cell, value):
    assert parse_cell(cell) == value


def test_mapping_of_problem_ids_to_strings(tmp_path):
    path = tmp_path / "gt.yaml"
    path.write_text("p1: '[fault_spec] component=service/geo; namespace=hr || Geo is down.'\n")
    (spec,), _ = quiet(load_sregym_specs, path)
    assert spec.id == "p1" and spec.fault_origin[0].name == "geo"
