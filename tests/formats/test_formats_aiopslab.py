"""AIOpsLab: problem ground truth, sessions (bundle and raw dumps), fork verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import corpus, quiet

from ground_truth.entities import score_entities
from ground_truth.formats.aiopslab import (
    cross_check_aiopslab,
    load_aiopslab_specs,
    load_aiopslab_submissions,
    load_aiopslab_verdicts,
    looks_like_aiopslab_specs,
    looks_like_aiopslab_submissions,
    parse_submission,
    task_type_of,
)

PROBLEMS = """
problems:
- problem_id: revoke_auth_mongodb-localization-1
  task_type: localization
  application: HotelReservation (namespace test-hotel-reservation)
  faulty_component: mongodb-geo
  fault_type: revoke_auth
  injector: ApplicationFaultInjector
  parameters: {db: geo-db}
  description: The admin user's readWrite role on the geo database is revoked.
  expected_localization: [mongodb-geo]
- problem_id: revoke_auth_mongodb-analysis-1
  task_type: analysis
  application: HotelReservation (namespace test-hotel-reservation)
  faulty_component: mongodb-geo
  fault_type: revoke_auth
  description: The admin user's readWrite role on the geo database is revoked.
  expected_system_level: Application
  expected_fault_type: Authentication Issue
- problem_id: noop_detection_hotel_reservation-1
  task_type: detection
  faulty_component: null
  fault_type: no_op
  description: No fault is injected.
  expected_detection: 'No'
"""


@pytest.fixture()
def problems(tmp_path):
    path = tmp_path / "ground_truth.yaml"
    path.write_text(PROBLEMS)
    return path


def raw_session(tmp_path: Path, problem_id: str, steps: list[str]) -> Path:
    trace = []
    for step in steps:
        trace += [{"role": "assistant", "content": step}, {"role": "env", "content": "ok"}]
    data = {
        "agent": "openrouter",
        "session_id": f"s-{problem_id}",
        "problem_id": problem_id,
        "start_time": 0,
        "end_time": 1,
        "trace": trace,
        "results": {"success": True},
    }
    path = tmp_path / f"{problem_id}.json"
    path.write_text(json.dumps(data))
    return path


def test_task_mapping_of_specs(problems):
    assert looks_like_aiopslab_specs(problems)
    specs, found = quiet(load_aiopslab_specs, problems)
    loc, analysis, noop = specs
    assert [(o.name, o.namespace) for o in loc.fault_origin] == [
        ("mongodb-geo", "test-hotel-reservation")
    ]
    assert loc.ground_truth.endswith("Expected localization: mongodb-geo.")
    assert loc.parameters == {"db": "geo-db", "injector": "ApplicationFaultInjector"}
    assert analysis.problem_class == "Authentication Issue"
    assert "system level Application, fault type Authentication Issue" in analysis.ground_truth
    assert noop.fault_origin == [] and noop.ground_truth.endswith("Expected detection answer: No.")
    assert noop.extra["aiopslab"]["task_type"] == "detection"
    assert not found  # a no-op detection problem has no faulty component by design


def test_raw_sessions_diagnosis_entities_and_trajectory(tmp_path):
    raw_session(
        tmp_path,
        "revoke_auth_mongodb-localization-1",
        [
            '```\nexec_shell("kubectl get pods -n test-hotel-reservation")\n```',
            'The geo database rejects the admin user.\n```\nsubmit(["mongodb-geo", "geo"])\n```',
        ],
    )
    raw_session(
        tmp_path,
        "revoke_auth_mongodb-analysis-1",
        ["```\nsubmit({'system_level': 'Application', 'fault_type': 'Authentication Issue'})\n```"],
    )
    raw_session(tmp_path, "noop_detection_hotel_reservation-1", ['```\nsubmit("No")\n```'])
    assert looks_like_aiopslab_submissions(tmp_path)
    subs = {s.incident_id: s for s in quiet(load_aiopslab_submissions, tmp_path)[0]}
    loc = subs["revoke_auth_mongodb-localization-1"]
    assert loc.diagnosis == (
        "The geo database rejects the admin user.\nFaulty component(s): mongodb-geo, geo."
    )
    assert [e.name for e in loc.entities] == ["mongodb-geo", "geo"]
    assert loc.trial == "s-revoke_auth_mongodb-localization-1" and loc.agent == "openrouter"
    assert [a.tool for a in loc.trajectory.actions] == ["exec_shell", "submit"]
    assert loc.trajectory.actions[0].observation == "ok"
    analysis = subs["revoke_auth_mongodb-analysis-1"]
    assert analysis.diagnosis == "System level: Application. Fault type: Authentication Issue."
    assert subs["noop_detection_hotel_reservation-1"].diagnosis == "Anomaly detected: No."


def test_localization_entities_are_scored(tmp_path, problems):
    raw_session(tmp_path, "revoke_auth_mongodb-localization-1", ['submit(["mongodb-geo", "geo"])'])
    (sub,), _ = quiet(
        load_aiopslab_submissions, tmp_path / "revoke_auth_mongodb-localization-1.json"
    )
    (spec, *_), _ = quiet(load_aiopslab_specs, problems)
    score = score_entities(spec, sub)
    assert (score.precision, score.recall, score.top_is_origin) == (0.5, 1.0, True)


def test_parse_submission_forms():
    assert parse_submission('["a", "b"]') == ["a", "b"]
    assert parse_submission("{'system_level': 'Hardware'}") == {"system_level": "Hardware"}
    assert parse_submission('"Yes"') == "Yes"
    assert parse_submission("Yes") == "Yes"
    assert parse_submission(None) is None
    assert task_type_of("network_delay_hotel_res-analysis-1") == "analysis"


@pytest.mark.corpus
def test_corpus_problems_and_missing_components():
    specs, found = quiet(load_aiopslab_specs, corpus("aiopslab", "ground_truth.yaml"))
    assert len(specs) == 89
    assert {w.field for w in found} == {
        "problems[81].faulty_component",
        "problems[82].faulty_component",
    }


@pytest.mark.corpus
def test_corpus_sessions_bundle_and_raw_dumps_merge():
    folder = corpus("aiopslab")
    subs, found = quiet(load_aiopslab_submissions, folder)
    keys = [s.key for s in subs]
    assert len(keys) == len(set(keys)) == 675  # 797 - 122 mitigation; 2 sessions in both files
    messages = [str(w) for w in found]
    assert any("122 mitigation session(s) skipped" in m for m in messages)
    assert any("104 session(s) never called submit()" in m for m in messages)
    assert sum("also appears in" in m for m in messages) == 2
    merged = next(s for s in subs if s.trial == "6ed6eded-6a7e-41a0-9a0a-1799ff516391")
    assert merged.agent == "qwen_qwen3-30b-a3b-instruct-2507" and merged.trajectory is not None
    assert merged.diagnosis.endswith("No faulty component identified.")
    prose = next(
        s
        for s in subs
        if s.incident_id == "user_unregistered_mongodb-analysis-1"
        and s.agent == "deepseek_deepseek-chat-v3.1"
        and "admin" in s.diagnosis
    )
    assert prose.diagnosis.startswith("Based on the analysis, I can see the issue:")
    assert (
        prose.diagnosis.splitlines()[-1]
        == "System level: Application. Fault type: Misconfiguration."
    )


@pytest.mark.corpus
def test_fork_scoring_difference_is_reported():
    folder = corpus("aiopslab")
    specs, _ = quiet(load_aiopslab_specs, folder / "ground_truth.yaml")
    subs, _ = quiet(load_aiopslab_submissions, folder / "ai_sre_data_sessions.json")
    disagreements, found = quiet(cross_check_aiopslab, specs, subs)
    assert {d["incident_id"] for d in disagreements} == {"auth_miss_mongodb-analysis-1"}
    assert len(disagreements) == 7 and all(
        d["fork"] is False and d["upstream"] is True for d in disagreements
    )
    assert any(
        "not registered upstream" in str(w) and "container_kill-analysis" in str(w) for w in found
    )
    assert sum("the fork scored" in str(w) for w in found) == 7


@pytest.mark.corpus
def test_fork_verdicts_as_rater_tables():
    folder = corpus("aiopslab")
    rows = load_aiopslab_verdicts(folder / "ai_sre_data_detailed_results_openai_gpt-5_0922.csv")
    assert rows[0] == {
        "incident_id": "revoke_auth_mongodb-localization-2",
        "trial": "432f337d-fd93-484d-82ce-6fff68319b67",
        "verdict": True,
        "task_type": "localization",
    }
    sessions = load_aiopslab_verdicts(folder / "ai_sre_data_sessions.json")
    assert len(sessions) == 797
    assert {r["verdict"] for r in sessions} == {True, False, None}
