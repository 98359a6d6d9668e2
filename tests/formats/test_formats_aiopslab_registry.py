"""AIOpsLab ground truth from its published source tree: the problem registry and the problem
classes, parsed with `ast` (verbatim MIT files of AIOpsLab ddf7e40, 4 of its problem modules)."""

from __future__ import annotations

import shutil
import sys

import pytest
import yaml
from helpers import FIXTURES, corpus, quiet

from ground_truth import InputError, load_specs
from ground_truth.formats.registry import detect

SOURCE = FIXTURES / "formats" / "aiopslab" / "source"
PROBLEMS = SOURCE / "aiopslab" / "orchestrator" / "problems"


@pytest.fixture(scope="module")
def registry_specs():
    specs, found = quiet(load_specs, SOURCE)
    return {s.id: s for s in specs}, found


@pytest.mark.parametrize("path", [SOURCE, PROBLEMS, PROBLEMS / "registry.py"])
def test_a_checkout_its_problems_folder_or_the_registry_is_detected(path):
    assert detect(path, "specs").name == "aiopslab"


def test_registered_problems_with_their_classes_are_read(registry_specs):
    specs, found = registry_specs
    assert len(specs) == 19
    (skipped,) = [w for w in found if "registered problems" in str(w)]
    assert "70 of 89" in str(skipped)
    assert all(s.source["schema"] == "registry" for s in specs.values())


def test_lambda_arguments_base_init_and_app_namespace(registry_specs):
    spec = registry_specs[0]["k8s_target_port-misconfig-analysis-2"]
    (origin,) = spec.fault_origin
    assert (origin.name, origin.namespace) == ("text-service", "test-social-network")
    extra = spec.extra["aiopslab"]
    assert (extra["expected_system_level"], extra["expected_fault_type"]) == (
        "Virtualization",
        "Misconfiguration",
    )
    assert spec.parameters["injector"] == "VirtualizationFaultInjector"
    assert extra["application"] == "SocialNetwork (namespace test-social-network)"


def test_defaults_branches_and_expected_answers(registry_specs):
    specs = registry_specs[0]
    assert specs["pod_failure_hotel_res-localization-1"].fault_origin[0].name == "user"
    noop = specs["noop_detection_social_network-1"]
    assert noop.fault_origin == [] and noop.extra["aiopslab"]["expected_detection"] == "No"
    assert "namespace test-social-network" in noop.extra["aiopslab"]["application"]
    ad = specs["astronomy_shop_ad_service_failure-detection-1"]
    assert ad.extra["aiopslab"]["fault_type"] == "adFailure"
    assert ad.fault_origin[0].namespace == "astronomy-shop"


def test_the_source_is_never_imported(registry_specs):
    assert not [m for m in sys.modules if m == "aiopslab" or m.startswith("aiopslab.")]


def test_a_module_that_is_not_python_names_file_and_line(tmp_path):
    tree = tmp_path / "AIOpsLab"
    shutil.copytree(SOURCE, tree)
    broken = tree / "aiopslab" / "orchestrator" / "problems" / "no_op" / "no_op.py"
    broken.write_text("class NoOpDetection(:\n")
    with pytest.raises(InputError, match="not valid Python") as caught:
        quiet(load_specs, tree)
    assert caught.value.field == "line 1" and str(caught.value.path).endswith("no_op.py")


@pytest.mark.corpus
def test_every_fact_equals_the_hand_extraction(registry_specs):
    reference = yaml.safe_load(corpus("aiopslab", "ground_truth.yaml").read_text())
    by_id = {p["problem_id"]: p for p in reference["problems"]}
    for pid, spec in registry_specs[0].items():
        ref, extra = by_id[pid], spec.extra["aiopslab"]
        assert [o.name for o in spec.fault_origin] == (
            [ref["faulty_component"]] if ref.get("faulty_component") else []
        ), pid
        for key in ("task_type", "expected_detection", "expected_system_level"):
            assert extra.get(key) == ref.get(key), (pid, key)
        assert spec.parameters.get("injector") == ref.get("injector"), pid
