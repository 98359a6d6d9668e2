"""Every corpus format on the small files in tests/fixtures/formats: what a fresh clone checks.

Twins of the `corpus` tests in test_formats_*.py. The real ITBench-Evaluations / SRE-Agent /
leaderboard files and AIOpsLab sessions have no license: their fixtures are hand-written in the
same shapes (READMEs beside them), with values worked out by hand below. The MIT/Apache files are
excerpts of the corpus files, record for record (ATTRIBUTION.md).
"""

from __future__ import annotations

import pytest
from helpers import FORMATS, quiet

from ground_truth.formats.aiopslab import (
    cross_check_aiopslab,
    load_aiopslab_specs,
    load_aiopslab_submissions,
    load_aiopslab_verdicts,
)
from ground_truth.formats.forge import load_forge_specs, load_forge_submissions
from ground_truth.formats.itbench import (
    load_itbench_judge_results,
    load_itbench_specs,
    load_itbench_submissions,
    looks_like_itbench_submissions,
)
from ground_truth.formats.openrca import load_openrca_specs
from ground_truth.formats.sregym import load_sregym_specs

ITBENCH = FORMATS / "itbench" / "synthetic"
AIOPSLAB = FORMATS / "aiopslab"
SESSIONS = AIOPSLAB / "sessions"
FORGE = FORMATS / "forge"
AGENT = "00000000-0000-4000-8000-00000000beef"


def by_id(specs):
    return {s.id: s for s in specs}


# ---------------------------------------------------------------- ITBench


def test_consolidated_ground_truths_list_and_its_problems():
    path = ITBENCH / "ground_truths.json"
    specs, found = quiet(load_itbench_specs, path)
    assert [s.id for s in specs] == ["1", "2", "17", "38", "99"]
    fields = {w.field: w.message for w in found}
    assert fields["[4].propagations[1].target"] == "'web-service-1' is not a defined group"
    assert "3 groups have root_cause: true" in fields["[4].groups"]
    assert fields["[4].fault[0].entity"] == "names group 'cache-pod-1' but group_id is 'db-pod-1'"
    assert "'*.*' is not a valid regex" in fields["[3].groups[1].filter[0]"]
    assert fields["[2].alerts[8].group_id"] == "'frontend-proxy-service' is not a defined group"
    assert len(by_id(specs)["99"].fault_origin) == 3
    # items 1, 2, 17, 38 are the scenario files' bodies: the same specs but for where they came from
    scenarios = by_id(quiet(load_itbench_specs, FORMATS / "itbench" / "scenarios")[0])
    for spec in specs[:4]:
        assert spec.model_dump(exclude={"source"}) == scenarios[spec.id].model_dump(
            exclude={"source"}
        )
        assert spec.source["file"] == str(path)


def test_legacy_agent_outputs_layout():
    root = ITBENCH / "agent_outputs"
    assert looks_like_itbench_submissions(root)
    subs, _ = quiet(load_itbench_submissions, root)
    assert sorted(s.key for s in subs) == [("1", "1"), ("1", "2"), ("2", "1"), ("2", "2")]
    sub = next(s for s in subs if s.key == ("2", "2"))
    assert sub.source["schema"] == "legacy"
    first = sub.entities[0]
    assert (first.name, first.kind, first.contributing_factor) == ("flagd", "Service", True)
    assert first.id == "0101010101010101"
    assert "- flagd-config ConfigMap -> flagd Service: flag file edited;" in sub.diagnosis
    # 1/2 names its propagation's ends by id only: they are written with the entities' names
    by_ids = next(s for s in subs if s.key == ("1", "2"))
    assert "- frontend Pod -> load-generator Service: frontend slow;" in by_ids.diagnosis
    summary = next(s for s in subs if s.key == ("1", "1"))
    assert summary.diagnosis.startswith("Summary: Frontend errors under a request flood")


def test_current_agent_output_schema_builds_text_from_entities():
    path = ITBENCH / "agent_outputs_current" / "2" / "1" / "agent_output.json"
    (sub,), _ = quiet(load_itbench_submissions, path)
    assert sub.key == ("2", "1") and sub.source["schema"] == "current"
    entity = sub.entities[0]
    assert (entity.namespace, entity.kind, entity.name) == (
        "otel-demo",
        "ConfigMap",
        "flagd-config",
    )
    assert entity.raw == "otel-demo/ConfigMap/flagd-config"
    assert (
        "- otel-demo/ConfigMap/flagd-config: The cartFailure flag was switched on here. "
        "Evidence: Flag file changed shortly before the first cart error."
    ) in sub.diagnosis
    assert "Other entities examined (not contributing):\n- otel-demo/Deployment/currency:" in (
        sub.diagnosis
    )
    assert "- KubePodCrashLooping: not related to this incident (not explained)" in sub.diagnosis


def test_leaderboard_file_holds_agent_outputs():
    path = ITBENCH / "judge_results" / "leaderboard_run.json"
    assert looks_like_itbench_submissions(path)
    subs, _ = quiet(load_itbench_submissions, path)
    assert sorted(s.key for s in subs) == [("1", "1"), ("2", "1")]
    assert {s.agent for s in subs} == {AGENT}


def test_judge_results_are_read_for_comparison():
    rows = load_itbench_judge_results(ITBENCH / "judge_results" / "evaluation_results.json")
    assert [(r["incident_id"], r["trial"]) for r in rows] == [
        ("1", "1"),
        ("1", "2"),
        ("2", "1"),
        ("2", "2"),
    ]
    row = rows[3]
    assert row["gt_entities"] == ["flagd-config"]
    assert [p["matches_gt"] for p in row["predicted"]] == [False, False, True]
    assert row["metrics"]["root_cause_entity_precision"] == pytest.approx(1 / 3)
    assert row["metrics"]["root_cause_entity_k@3_f1"] == pytest.approx(0.5)
    wrapped = load_itbench_judge_results(ITBENCH / "judge_results" / "leaderboard_run.json")
    assert [(r["incident_id"], r["trial"]) for r in wrapped] == [("1", "2"), ("2", "1")]
    failed = load_itbench_judge_results(ITBENCH / "judge_results" / "leaderboard_failed_run.json")
    assert [r["error"] for r in failed] == ["judge unreachable", "judge unreachable"]
    assert all(value is None for r in failed for value in r["metrics"].values())


# ---------------------------------------------------------------- AIOpsLab


def test_problem_excerpt_and_missing_components():
    specs, found = quiet(load_aiopslab_specs, AIOPSLAB / "ground_truth.excerpt.yaml")
    assert len(specs) == 8
    assert {w.field for w in found} == {
        "problems[6].faulty_component",
        "problems[7].faulty_component",
    }


def test_sessions_bundle_and_raw_dump_merge():
    subs, found = quiet(load_aiopslab_submissions, SESSIONS)
    keys = [s.key for s in subs]
    assert len(keys) == len(set(keys)) == 6  # 7 sessions - 1 mitigation; the raw dump merges in
    messages = [str(w) for w in found]
    assert any("1 mitigation session(s) skipped" in m for m in messages)
    assert any("1 session(s) never called submit()" in m for m in messages)
    assert sum("also appears in" in m for m in messages) == 1
    merged = next(s for s in subs if s.trial == "c-0002")
    assert merged.agent == "model-c"
    assert [a.tool for a in merged.trajectory.actions] == ["exec_shell", "get_logs", "submit"]
    assert merged.diagnosis == (
        "Every pod runs and the logs are clean.\nNo faulty component identified."
    )
    prose = next(s for s in subs if s.trial == "b-0001")
    assert prose.diagnosis == (
        "The geo database no longer knows the admin user, so logins fail.\n"
        "System level: Application. Fault type: Authentication Issue."
    )
    assert next(s for s in subs if s.trial == "b-0003").diagnosis == ""


def test_fork_scoring_difference_is_reported():
    """a-0002 answers auth_miss_mongodb-analysis-1 with Application / Misconfiguration, which
    upstream accepts and the fork's `success: false` rejects; every other verdict agrees (b-0001's
    Authentication Issue is wrong for both, c-0002's empty localization too)."""
    specs, _ = quiet(load_aiopslab_specs, AIOPSLAB / "ground_truth.excerpt.yaml")
    subs, _ = quiet(load_aiopslab_submissions, SESSIONS / "ai_sre_data_sessions.json")
    disagreements, found = quiet(cross_check_aiopslab, specs, subs)
    assert disagreements == [
        {
            "incident_id": "auth_miss_mongodb-analysis-1",
            "trial": "a-0002",
            "fork": False,
            "upstream": True,
        }
    ]
    assert any(
        "not registered upstream" in str(w) and "container_kill-analysis" in str(w) for w in found
    )
    assert sum("the fork scored" in str(w) for w in found) == 1


def test_fork_verdicts_as_rater_tables():
    rows = load_aiopslab_verdicts(SESSIONS / "detailed_results_model-a.csv")
    assert rows[0] == {
        "incident_id": "revoke_auth_mongodb-localization-2",
        "trial": "a-0001",
        "verdict": True,
        "task_type": "localization",
    }
    assert [r["verdict"] for r in rows] == [True, False, None]
    sessions = load_aiopslab_verdicts(SESSIONS / "ai_sre_data_sessions.json")
    assert [(r["trial"], r["verdict"]) for r in sessions] == [
        ("a-0001", True),
        ("a-0002", False),
        ("b-0001", False),
        ("b-0002", True),
        ("b-0003", None),  # "Detection Accuracy": "Invalid Format" decides nothing
        ("c-0001", True),
        ("c-0002", False),
    ]


# ---------------------------------------------------------------- OpenRCA, FORGE, SREGym


def test_second_failures_are_recovered_from_the_bank_excerpt():
    specs, found = quiet(load_openrca_specs, FORMATS / "openrca" / "agent-Bank.csv")
    assert [(s.id, len(s.parameters["failures"])) for s in specs] == [
        ("Bank-0", 1),
        ("Bank-11", 2),
        ("Bank-27", 2),
    ]
    assert [w.field for w in found] == ["groundtruth"]
    assert by_id(specs)["Bank-27"].parameters["failures"][1] == {
        "component": "apache02",
        "reason": "network latency",
        "datetime": None,
        "level": None,
    }
    assert by_id(specs)["Bank-11"].parameters["failures"][1]["datetime"] == "2021-03-07 16:29:00"


def test_diagnoses_become_ranked_submissions():
    subs, _ = quiet(load_forge_submissions, FORGE)
    assert len(subs) == 6
    assert {s.trial for s in subs} == {"qwen3:32b/react", "llama3.3/straight-shot"}
    sub = next(
        s for s in subs if s.key == ("Online-Boutique-cloudbed-1-0", "llama3.3/straight-shot")
    )
    assert [e.name for e in sub.entities] == ["cartservice-0", "node-6", "redis-cart-0"]
    assert [e.rank for e in sub.entities] == [1, 2, 3]
    assert sub.entities[0].fault_type == "Container network packet latency"
    assert sub.diagnosis.startswith(
        "Hypothesis 1: Container network packet latency at cartservice-0.\n"
        "  Description: Increased latency"
    )
    assert "Hypothesis 3: Container memory load at redis-cart-0." in sub.diagnosis


def test_joined_ground_truth_equals_the_labels():
    path = FORGE / "diagnoses_qwen3-32b_react_Online-Boutique-cloudbed-1.excerpt.json"
    joined = by_id(load_forge_specs(path))
    labels = by_id(load_forge_specs(FORGE / "label_Online-Boutique-cloudbed-1.csv"))
    assert sorted(joined) == [f"Online-Boutique-cloudbed-1-{n}" for n in range(3)]
    for key, spec in joined.items():
        assert spec.fault_origin == labels[key].fault_origin
        assert spec.mechanism == labels[key].mechanism


def test_ground_truth_40_excerpt_keeps_the_exact_judge_string():
    path = FORMATS / "sregym" / "problems" / "ground_truth_40.excerpt.json"
    specs, found = quiet(load_sregym_specs, path)
    assert len(specs) == 3
    assert [(w.field, "{self.faulty_service}" in w.message) for w in found] == [
        ("problems[1].root_cause_text", True)
    ]
    spec = by_id(specs)["edge_request_filter_cpu_saturation"]
    assert spec.ground_truth.startswith(
        "[fault_spec] component=frontend-proxy; namespace=astronomy-shop || "
    )
    assert spec.problem_class == "System/Application Software Failure"
    assert spec.parameters["regex_env"] == "WAF_RULE_REGEX"
    assert spec.expected_fix.startswith("The fix is to roll back or disable the bad rule")
    assert spec.extra["sregym"]["in_sregym_lite"] is True


def test_registry_excerpt_known_problems_warn():
    specs, found = quiet(load_sregym_specs, FORMATS / "sregym-registry")
    fields = {w.field: w.message for w in found}
    assert "'{self.faulty_service}'" in fields["problems[1].root_cause_text"]
    assert "no `[fault_spec]" in fields["problems[2].root_cause_text"]
    assert "'<worker node picked at run time>'" in fields["problems[3].root_cause_text"]
    assert by_id(specs)["latent_sector_error"].fault_origin == []
    assert len(by_id(specs)["faulty_image_correlated"].fault_origin) == 8


def test_every_fixture_is_documented():
    """Each file is named in ATTRIBUTION.md, or lies in a folder whose README says it is ours."""
    attribution = (FORMATS / "ATTRIBUTION.md").read_text(encoding="utf-8")
    hand_written = [ITBENCH, SESSIONS, FORMATS / "cloud-opsbench"]
    for folder in hand_written:
        assert "written by hand" in (folder / "README.md").read_text(encoding="utf-8"), folder
    for file in sorted(FORMATS.rglob("*")):
        if file.is_file() and not any(folder in file.parents for folder in hand_written):
            assert file.name == "ATTRIBUTION.md" or file.name in attribution, file
