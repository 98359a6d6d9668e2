"""Cloud-OpsBench ground truth: `metadata.json` per case, alone or in `benchmark/<app>/<category>/
<n>/` folders (hand-written files in its shape: the repository has no license)."""

from __future__ import annotations

import pytest
from helpers import FORMATS, corpus

from ground_truth import InputError, load_specs, load_submissions
from ground_truth.formats.registry import detect

COB = FORMATS / "cloud-opsbench"
CASES = FORMATS / "cloud-opsbench-cases" / "benchmark"


def test_case_folders_give_ids_from_app_category_and_number():
    folder = CASES
    assert detect(folder, "specs").name == "cloud-opsbench"
    specs = {s.id: s for s in load_specs(folder)}
    assert sorted(specs) == ["shop-admission-3", "shop-infrastructure-2"]
    node = specs["shop-infrastructure-2"]
    assert [(o.name, o.kind, o.namespace) for o in node.fault_origin] == [
        ("worker-03", "Node", None)
    ]
    assert node.mechanism == "kubelet stopped" and node.mechanism_keywords == ["kubelet_stopped"]
    assert node.problem_class == "Infrastructure_Fault"
    assert node.symptoms == ["Several services stop answering at once."]
    assert node.extra["cloud_opsbench"]["process"]["path1"][0] == "GetResources::nodes"
    assert specs["shop-admission-3"].fault_origin[0].kind == "Namespace"


def test_a_single_case_file_and_a_workload_object():
    (spec,) = load_specs(COB / "shop_network_1_metadata.json")
    assert spec.id == "shop-network-1"
    (origin,) = spec.fault_origin
    assert (origin.name, origin.kind, origin.namespace) == ("checkout", None, "shop")
    assert "network_policy_denies_egress" in spec.ground_truth


def test_the_milestone_file_is_not_ground_truth():
    specs = load_specs(COB)
    assert "shop-network-1" in {s.id for s in specs}
    assert not any("milestone" in s.source["file"] for s in specs)


def test_a_case_folder_holds_no_submissions():
    with pytest.raises(InputError, match="not a recognised agent outputs format"):
        load_submissions(COB)
    with pytest.raises(InputError, match="holds no Cloud-OpsBench run results"):
        load_submissions(COB / "shop_network_1_metadata.json", "cloud-opsbench")


def test_a_case_without_a_root_cause_is_not_claimed(tmp_path):
    (tmp_path / "metadata.json").write_text(
        '{"namespace": "x", "query": "q", "result": {"fault_object": "app/a"}}'
    )
    with pytest.raises(InputError, match="not a recognised ground truth format"):
        load_specs(tmp_path)


@pytest.mark.corpus
def test_the_real_case_file_loads():
    (spec,) = load_specs(corpus("cloud-opsbench", "boutique_runtime_1_metadata.json"))
    assert spec.id == "boutique-runtime-1"
    assert spec.fault_origin[0].name == "adservice"
    assert spec.mechanism_keywords == ["liveness_probe_incorrect_protocol"]
