"""FORGE rca-llm-reasoning: fault labels and ranked multi-hypothesis diagnoses."""

from __future__ import annotations

import json

import pytest
from helpers import FIXTURES, corpus, quiet

from ground_truth.formats.forge import (
    load_forge_specs,
    load_forge_submissions,
    looks_like_forge_specs,
    looks_like_forge_submissions,
)

LABELS = FIXTURES / "formats" / "forge" / "label_Online-Boutique-cloudbed-1.csv"


def test_label_csv_specs():
    assert looks_like_forge_specs(LABELS) and not looks_like_forge_submissions(LABELS)
    specs = load_forge_specs(LABELS)
    assert len(specs) == 70
    first, third = specs[0], specs[2]
    assert first.id == "Online-Boutique-cloudbed-1-0"
    assert [(o.name, o.kind) for o in first.fault_origin] == [("cartservice", "Service")]
    assert first.mechanism == "container network latency"
    assert first.ground_truth == (
        "A container network latency fault was injected into the service "
        "cartservice at 2022-03-20 08:39:11 (Online-Boutique-cloudbed-1)."
    )
    assert [(o.name, o.kind) for o in third.fault_origin] == [("shippingservice-1", "Pod")]
    assert third.parameters["fault_duration"] == "540"


@pytest.mark.corpus
def test_diagnoses_become_ranked_submissions():
    folder = corpus("rca-llm-reasoning")
    subs, _ = quiet(load_forge_submissions, folder)
    assert len(subs) == 210
    assert {s.trial for s in subs} == {
        "qwen3:32b/react",
        "llama3.3/straight-shot",
        "deepseek-r1:70b/straight-shot",
    }
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


@pytest.mark.corpus
def test_joined_ground_truth_equals_the_labels():
    path = corpus("rca-llm-reasoning", "diagnoses_qwen3-32b_react_Online-Boutique-cloudbed-1.json")
    joined = {s.id: s for s in load_forge_specs(path)}
    labels = {s.id: s for s in load_forge_specs(LABELS)}
    assert joined.keys() == labels.keys()
    for key, spec in labels.items():
        assert joined[key].fault_origin == spec.fault_origin
        assert joined[key].mechanism == spec.mechanism


def test_failed_run_warns(tmp_path):
    path = tmp_path / "diagnoses.json"
    path.write_text(
        json.dumps(
            {
                "_about": {"model": "m", "workflow": "w"},
                "records": [
                    {
                        "fault_id": "3",
                        "kg_id": "Sys-KG",
                        "had_error": True,
                        "root_causes": [],
                        "ground_truth": {
                            "fault_level": "node",
                            "fault_entity": "node-1",
                            "fault_type": "cpu",
                        },
                    }
                ],
            }
        )
    )
    (sub,), found = quiet(load_forge_submissions, path)
    assert sub.key == ("Sys-3", "m/w") and sub.diagnosis == "" and sub.entities == []
    assert found[0].field == "records[0]"
    (spec,) = load_forge_specs(path)
    assert (spec.id, spec.fault_origin[0].kind) == ("Sys-3", "Node")


def test_hypothesis_fields_of_any_json_type_load_as_text(tmp_path):
    """An LLM may write `propagation_path` as a list or `justification` as an object: the entity
    keeps them as JSON text (they used to fail Entity validation, a crash rather than a load)."""
    path = tmp_path / "diagnoses.json"
    hypothesis = {
        "type": ["cpu", "load"],
        "location": "node-1",
        "justification": {"metric": "cpu", "value": 97},
        "propagation_path": ["node-1", "cartservice-0"],
    }
    record = {"fault_id": "3", "kg_id": "Sys-KG", "root_causes": [hypothesis]}
    path.write_text(json.dumps({"_about": {"model": "m", "workflow": "w"}, "records": [record]}))
    (sub,) = load_forge_submissions(path)
    (entity,) = sub.entities
    assert (entity.name, entity.rank) == ("node-1", 1)
    assert entity.fault_type == '["cpu", "load"]'
    assert entity.reasoning == '{"metric": "cpu", "value": 97}'
    assert entity.evidence == '["node-1", "cartservice-0"]'
