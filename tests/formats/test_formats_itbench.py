"""ITBench ground truth (v1 bare / envelope, v2, consolidated list) and agent outputs."""

from __future__ import annotations

import json
import shutil

import pytest
from helpers import BENCHMARKS, FIXTURES, corpus, quiet

from ground_truth import InputError
from ground_truth.formats.itbench import (
    canonical_incident_id,
    load_itbench_judge_results,
    load_itbench_specs,
    load_itbench_submissions,
    looks_like_itbench_specs,
    looks_like_itbench_submissions,
)

SCENARIOS = FIXTURES / "formats" / "itbench" / "scenarios"


def by_id(specs):
    return {s.id: s for s in specs}


@pytest.fixture(scope="module")
def scenarios():
    specs, found = quiet(load_itbench_specs, SCENARIOS)
    return by_id(specs), found


def test_folder_of_scenario_folders_loads_v1_and_says_so(scenarios):
    specs, found = scenarios
    assert set(specs) == {"1", "2", "17", "38", "102"}
    (preferred,) = [w for w in found if "using groundtruth_v1.yaml" in str(w)]
    assert "5 scenario folder(s)" in str(preferred)
    assert all(s.source["schema"] == "v1" for s in specs.values())


def test_bare_v1_scenario_2_maps_every_part(scenarios):
    spec = scenarios[0]["2"]
    assert spec.source["shape"] == "bare"
    (origin,) = spec.fault_origin
    assert (origin.name, origin.kind, origin.namespace) == (
        "flagd-config",
        "ConfigMap",
        "otel-demo",
    )
    assert [c.name for c in spec.contributing_components] == ["cart", "frontend"]
    assert [c.name for c in spec.affected_components] == ["frontend-proxy", "checkout"]
    assert spec.mechanism == "cartFailure feature flag set"
    assert spec.problem_class == "Configuration Setting"
    assert len(spec.symptoms) == 4
    assert spec.symptoms[0].startswith("HighRequestErrorRate on Service cart: Cart service")
    assert spec.expected_fix == "any of: (1) Disable cartFailure flag | (2) Restart cart service"
    faults = spec.parameters["faults"]
    assert faults[2]["entity"] == "ConfigMap flagd-config"
    assert faults[2]["changed"]["element"] == r"data.demo\.flagd\.json"
    assert spec.ground_truth.startswith(
        "Root cause: ConfigMap flagd-config in namespace otel-demo."
    )
    assert "- ConfigMap flagd-config -> Service cart: Feature flag causes" in spec.ground_truth
    assert '"defaultVariant": "on"' in spec.ground_truth
    assert {g["id"] for g in spec.extra["itbench"]["groups"]} >= {"flagd-config", "cart-service-1"}


def test_envelope_v1_with_camelcase_actions(scenarios):
    spec = scenarios[0]["102"]
    assert spec.source["shape"] == "envelope"
    assert [(o.name, o.kind) for o in spec.fault_origin] == [("otel-demo", "Namespace")]
    assert spec.expected_fix.startswith("Evaluate current namespace memory usage")
    assert spec.mechanism == "Memory quota imposed on namespace preventing pod scheduling"


def test_scenario_38_two_root_causes_and_invalid_regex_warn():
    path = SCENARIOS / "scenario_38" / "groundtruth_v1.yaml"
    (spec,), found = quiet(load_itbench_specs, path)
    assert spec.id == "38"
    assert [(o.name, o.kind) for o in spec.fault_origin] == [
        ("accounting", "HorizontalPodAutoscaler"),
        ("ad", "HorizontalPodAutoscaler"),
    ]
    fields = {w.field: w for w in found}
    assert "'*.*' is not a valid regex" in fields["spec.groups[1].filter[0]"].message
    assert "spec.groups[2].filter[0]" in fields
    assert "2 groups have root_cause: true" in fields["spec.groups"].message
    assert all(w.path == str(path) for w in found)


def test_scenario_17_alerts_pointing_at_missing_groups_warn():
    (spec,), found = quiet(load_itbench_specs, SCENARIOS / "scenario_17" / "groundtruth_v1.yaml")
    missing = {w.field: w.message for w in found}
    assert missing == {
        "alerts[8].group_id": "'frontend-proxy-service' is not a defined group",
        "alerts[9].group_id": "'product-catalog-service' is not a defined group",
    }
    (origin,) = spec.fault_origin
    assert (origin.kind, origin.namespace) == ("NetworkChaos", "chaos-mesh")
    # the fault's condition is "To Be Specified": the root cause's propagation says what happened
    assert spec.mechanism.startswith("delay-otel-demo-productcatalogservice networkchaos")
    assert spec.symptoms[-1].startswith("HighRequestErrorRate on product-catalog-service")


def test_scenario_1_alias_group_merging_cause_and_symptom_warns():
    (spec,), found = quiet(load_itbench_specs, SCENARIOS / "scenario_1" / "groundtruth_v1.yaml")
    (warning,) = [w for w in found if w.field == "spec.aliases"]
    assert (
        "merges root cause 'load-generator-pod-1' with symptom 'frontend-proxy-service-1'"
        in str(warning)
    )
    assert spec.fault_origin[0].name == "load-generator"
    assert "frontend-proxy" not in spec.fault_origin[0].aliases


def test_scenario_folder_names_are_normalised(tmp_path):
    for name in ("Scenario-2", "scenario_17"):
        folder = tmp_path / name
        folder.mkdir()
        source = SCENARIOS / name.lower().replace("-", "_") / "groundtruth_v1.yaml"
        shutil.copy(source, folder / "ground_truth.yaml")
    specs, _ = quiet(load_itbench_specs, tmp_path)
    assert sorted(s.id for s in specs) == ["17", "2"]
    assert looks_like_itbench_specs(tmp_path)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("Scenario-2", "2"),
        ("scenario_2", "2"),
        ("scenario2", "2"),
        ("incident-7", "7"),
        ("102", "102"),
        ("scenario-38", "38"),
        ("weird", "weird"),
    ],
)
def test_canonical_incident_id(name, expected):
    assert canonical_incident_id(name) == expected


def test_v2_alone_is_loaded_from_entities_and_solutions(tmp_path):
    folder = tmp_path / "Scenario-2"
    folder.mkdir()
    shutil.copy(SCENARIOS / "scenario_2" / "groundtruth.yaml", folder / "groundtruth.yaml")
    (spec,), found = quiet(load_itbench_specs, tmp_path)
    assert spec.id == "2" and spec.source["schema"] == "v2"
    assert [(o.name, o.kind, o.namespace) for o in spec.fault_origin] == [
        ("flagd-config", "ConfigMap", "otel-demo")
    ]
    assert "kubectl -n otel-demo edit configmap flagd-config" in spec.expected_fix
    assert any("in ITBench v2 form" in str(w) for w in found)


@pytest.mark.corpus
def test_consolidated_ground_truths_json_and_its_problems():
    path = corpus("itbench", "ground_truth", "itbench-evaluations_data", "ground_truths.json")
    specs, found = quiet(load_itbench_specs, path.parent)
    assert len(specs) == 44 and len(by_id(specs)) == 44
    fields = {w.field: w.message for w in found}
    assert fields["[15].propagations[2].target"] == "'frontend-proxy-1' is not a defined group"
    assert "3 groups have root_cause: true" in fields["[33].groups"]
    assert (
        fields["[0].fault[0].entity"]
        == "names group 'productcatalog-pod-1' but group_id is 'checkout-pod-1'"
    )
    assert len(by_id(specs)["38"].fault_origin) == 3


@pytest.mark.corpus
def test_legacy_agent_outputs_layout():
    root = corpus("itbench", "agent_outputs", "itbench-evaluations_data")
    assert looks_like_itbench_submissions(root)
    subs, _ = quiet(load_itbench_submissions, root)
    assert sorted(s.key for s in subs) == [("1", "1"), ("1", "2"), ("2", "1"), ("2", "2")]
    sub = next(s for s in subs if s.key == ("2", "2"))
    assert sub.source["schema"] == "legacy"
    first = sub.entities[0]
    assert (first.name, first.kind, first.contributing_factor) == ("flagd", "Service", True)
    assert first.id == "ea79fbb1195e1d3f"
    # propagations by id are written with the entities' names
    assert "- flagd-config ConfigMap -> flagd Service:" in sub.diagnosis
    summary = next(s for s in subs if s.key == ("1", "1"))
    assert summary.diagnosis.startswith("Summary: Cascading Failures in E-Commerce Checkout Flow")


@pytest.mark.corpus
def test_current_agent_output_schema_builds_text_from_entities():
    path = corpus(
        "itbench", "agent_outputs", "itbench-sre-agent_pr11", "2", "1", "agent_output.json"
    )
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
        "- otel-demo/ConfigMap/flagd-config: ConfigMap modified to enable cartFailure, root cause "
        "of the service errors. Evidence: Updated at 17:46:18Z"
    ) in sub.diagnosis
    assert "Other entities examined (not contributing):" in sub.diagnosis
    assert "- RequestErrorRate: Caused by flagd failure injection" in sub.diagnosis


@pytest.mark.corpus
def test_leaderboard_file_holds_agent_outputs():
    path = corpus(
        "itbench", "judge_results", "agentbeats-leaderboard-v2", "itbench-hub-20260130-214037.json"
    )
    assert looks_like_itbench_submissions(path)
    subs, _ = quiet(load_itbench_submissions, path)
    assert sorted(s.key for s in subs) == [("1", "1"), ("23", "1")]
    assert {s.agent for s in subs} == {"019c100a-630f-71d0-aeff-cb5811bf6de4"}


def test_bad_trials_are_skipped_with_warnings(tmp_path):
    good = tmp_path / "Scenario-3" / "1" / "outputs"
    good.mkdir(parents=True)
    (good / "agent_output.json").write_text(
        json.dumps(
            json.dumps(
                {
                    "entities": [
                        {
                            "name": "otel-demo/Deployment/ad",
                            "contributing_factor": True,
                            "reasoning": "OOM",
                        }
                    ]
                }
            )
        )
    )
    (tmp_path / "Scenario-3" / "2").mkdir()
    broken = tmp_path / "Scenario-3" / "3"
    broken.mkdir()
    (broken / "agent_output.json").write_text("{not json")
    subs, found = quiet(load_itbench_submissions, tmp_path)
    assert [s.key for s in subs] == [("3", "1")]
    assert subs[0].entities[0].kind == "Deployment"
    messages = [str(w) for w in found]
    assert any(
        "no agent output in this trial folder (expected agent_output.json" in m for m in messages
    )
    assert any("unreadable agent output" in m and "expected a JSON object" in m for m in messages)


def test_native_agent_outputs_are_not_claimed(tmp_path):
    trial = tmp_path / "1" / "1"
    trial.mkdir(parents=True)
    (trial / "agent_output.json").write_text(json.dumps({"diagnosis": "x", "entities": []}))
    assert not looks_like_itbench_submissions(tmp_path)


def test_missing_ground_truth_is_an_input_error(tmp_path):
    (tmp_path / "Scenario-1").mkdir()
    with pytest.raises(InputError, match="holds no ITBench ground truth"):
        load_itbench_specs(tmp_path)


@pytest.mark.corpus
def test_judge_results_are_read_for_comparison():
    path = corpus(
        "itbench", "judge_results", "itbench-evaluations_history", "evaluation_results.json"
    )
    rows = load_itbench_judge_results(path)
    assert [(r["incident_id"], r["trial"]) for r in rows] == [
        ("1", "1"),
        ("1", "2"),
        ("1", "3"),
        ("2", "1"),
        ("2", "2"),
        ("2", "3"),
    ]
    row = rows[2]
    assert row["gt_entities"] == ["load-generator-pod-1"]
    assert row["metrics"]["root_cause_entity_precision"] == pytest.approx(0.2)
    assert row["metrics"]["root_cause_entity_k@3_f1"] == pytest.approx(0.5)
    failed = load_itbench_judge_results(
        corpus(
            "itbench",
            "judge_results",
            "agentbeats-leaderboard-v2",
            "itbench-hub-20260130-211252.json",
        )
    )
    assert all(r["error"] == "model param not passed in." for r in failed)


def test_a_fault_entity_that_is_not_an_object_is_read_as_a_name(tmp_path):
    """`fault[].entity: cart` used to crash the loader (`str` has no `.get`); it loads, warns
    naming the field, and the text keeps the name."""
    folder = tmp_path / "Scenario-5"
    folder.mkdir()
    group = {"id": "cart", "kind": "Deployment", "namespace": "shop", "root_cause": True}
    (folder / "ground_truth.yaml").write_text(
        json.dumps({"groups": [group], "fault": [{"entity": "checkout-db"}]})
    )
    (spec,), found = quiet(load_itbench_specs, tmp_path)
    assert [o.name for o in spec.fault_origin] == ["cart"]
    assert "Fault in checkout-db: unspecified." in spec.ground_truth
    (warning,) = [w for w in found if "fault[0].entity" in str(w)]
    assert "read as a name" in str(warning)


LEADERBOARD = ("itbench", "judge_results", "agentbeats-leaderboard-v2")


@pytest.mark.corpus
def test_published_results_only_files_are_refused_saying_so():
    """AgentBeats leaderboard v2 at HEAD keeps only judge results; they were misread as one
    empty submission each under --format itbench."""
    from ground_truth import load_submissions

    for name in ("itbench-hub-20260130-221517.json", "itbench-hub-20260131-162603.json"):
        with pytest.raises(InputError, match="no agent outputs"):
            load_submissions(corpus(*LEADERBOARD, name), "itbench")
    subs, _ = quiet(load_submissions, corpus(*LEADERBOARD, "itbench-hub-20260130-214037.json"))
    assert sorted(s.incident_id for s in subs) == ["1", "23"]


@pytest.mark.corpus
def test_computed_entity_metrics_equal_the_llm_judged_ones_on_every_published_case():
    """`benchmarks/itbench_entities.py`'s measurement: 12 cases, no difference (see
    docs/formats.md for what that does and does not show)."""
    import sys

    sys.path.insert(0, str(BENCHMARKS))
    from itbench_entities import compare

    gt = corpus("itbench", "ground_truth", "itbench-evaluations_data", "ground_truths.json")
    specs = by_id(quiet(load_itbench_specs, gt)[0])
    rows = [
        row
        for path in sorted(corpus("itbench", "judge_results").rglob("*.json"))
        for row in compare(path, specs)
    ]
    assert len(rows) == 12
    assert sum(r["from"] == "agent output" for r in rows) == 2
    assert all(r["same_decisions"] for r in rows)
    assert max(v for r in rows for v in r["diff"].values()) == pytest.approx(0.0)
