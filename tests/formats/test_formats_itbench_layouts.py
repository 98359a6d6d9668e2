"""ITBench layouts as published over time: ids from scenario folders, the flat
`ground_truths/incident_N.yaml` folder, `docs_incident_N` role variables, `SilverTruth`, and
paper-era agent outputs that name entities by topology id only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers import FIXTURES, quiet

from ground_truth.formats.itbench import load_itbench_specs, load_itbench_submissions
from ground_truth.formats.registry import detect

ITBENCH = FIXTURES / "formats" / "itbench"


def test_scenario_folder_name_wins_over_metadata_name_with_a_warning():
    (spec,), found = quiet(load_itbench_specs, ITBENCH / "scenario_61_mismatch")
    assert spec.id == "61"
    (mismatch,) = [w for w in found if "scenario-110" in str(w)]
    assert mismatch.field == "metadata.name" and "using '61'" in str(mismatch)


def test_a_lone_generic_file_takes_its_folders_id_too():
    file = ITBENCH / "scenario_61_mismatch" / "scenario_61" / "groundtruth_v1.yaml"
    (spec,), _ = quiet(load_itbench_specs, file)
    assert spec.id == "61"


def test_a_named_file_keeps_the_id_inside(tmp_path):
    file = tmp_path / "my_copy.yaml"
    shutil.copy(ITBENCH / "scenario_61_mismatch" / "scenario_61" / "groundtruth_v1.yaml", file)
    (spec,), found = quiet(load_itbench_specs, file)
    assert spec.id == "110" and not [w for w in found if "using" in str(w)]


def test_both_versions_in_many_folders_warn_once(tmp_path):
    for n in range(4):
        shutil.copytree(ITBENCH / "scenario_61_mismatch" / "scenario_61", tmp_path / f"s_{n}")
    specs, found = quiet(load_itbench_specs, tmp_path)
    assert sorted(s.id for s in specs) == ["0", "1", "2", "3"]
    (both,) = [w for w in found if "hold both" in str(w)]
    assert "4 scenario folder(s)" in str(both) and Path(both.path) == tmp_path


def test_flat_folder_of_incident_files():
    folder = ITBENCH / "ground_truths_flat"
    assert detect(folder, "specs").name == "itbench"
    specs, _ = quiet(load_itbench_specs, folder)
    assert {s.id: s.fault_origin[0].name for s in specs} == {
        "1": "load-generator",
        "23": "checkout",
    }
    assert all(s.source["schema"] == "v1" for s in specs)


def test_docs_incident_role_variables():
    roles = ITBENCH / "roles"
    assert detect(roles, "specs").name == "itbench"
    specs, _ = quiet(load_itbench_specs, roles)
    by_id = {s.id: s for s in specs}
    assert set(by_id) == {"23", "26"}
    assert by_id["23"].fault_origin[0].name == "checkoutservice"
    assert by_id["23"].source["file"].endswith("incident_23/vars/main.yaml")
    (one,), _ = quiet(load_itbench_specs, roles / "incident_26")
    assert one.id == "26"
    (lone,), _ = quiet(load_itbench_specs, roles / "incident_23" / "vars" / "main.yaml")
    assert lone.id == "23"


def test_silver_truth_loads_like_v2_and_warns_once():
    folder = ITBENCH / "silver_truths"
    assert detect(folder, "specs").name == "itbench"
    specs, found = quiet(load_itbench_specs, folder)
    by_id = {s.id: s for s in specs}
    assert set(by_id) == {"1", "102"}
    assert [o.name for o in by_id["102"].fault_origin] == ["ad", "strict-resource-quota"]
    assert by_id["102"].symptoms == ["KubePodNotReady"]
    assert all(s.source["schema"] == "silvertruth" for s in specs)
    (thin,) = [w for w in found if "silvertruth form" in str(w)]
    assert "2 ground truth(s)" in str(thin)


def test_paper_era_entities_are_kept_by_id_with_one_warning():
    (sub,), found = quiet(load_itbench_submissions, ITBENCH / "synthetic" / "agent_outputs_paper")
    assert sub.incident_id == "23" and sub.source["schema"] == "paper"
    assert [(e.name, e.contributing_factor) for e in sub.entities] == [
        ("5f0c2a9e7b41d3c8a6e2f19b0d7c4a31", True),
        ("a81e4d2c9f3b07e6d5c1b8a2f4e9d0c7", False),
    ]
    assert "5f0c2a9e7b41d3c8a6e2f19b0d7c4a31 -> a81e4d2c9f3b07e6d5c1b8a2f4e9d0c7" in sub.diagnosis
    (warning,) = [w for w in found if "topology id" in str(w)]
    assert "2 entities" in str(warning)


def test_entity_keys_are_typed_and_unknown_ones_kept(tmp_path):
    """A paper-era entity's free text of any JSON type loads as text (it used to be passed on
    unchecked and fail Entity validation); keys Entity declares but ITBench does not write
    (`rank`, `raw`) are not taken from the file; other keys are kept as extras."""
    trial = tmp_path / "Scenario-23" / "1" / "outputs"
    trial.mkdir(parents=True)
    entities = [
        {"id": "5f0c2a9e", "root_cause": True, "reasoning": {"why": "OOM"}, "rank": "first"},
        {"name": "otel-demo/Deployment/ad", "raw": "forged", "rank": 7, "score": 0.9},
    ]
    (trial / "agent_output.json").write_text(json.dumps({"entities": entities}))
    (sub,), _ = quiet(load_itbench_submissions, tmp_path)
    by_id, named = sub.entities
    assert (by_id.name, by_id.reasoning, by_id.rank, by_id.raw) == (
        "5f0c2a9e",
        '{"why": "OOM"}',
        None,
        None,
    )
    assert (named.raw, named.rank) == ("otel-demo/Deployment/ad", None)
    assert named.model_extra == {"score": 0.9}
