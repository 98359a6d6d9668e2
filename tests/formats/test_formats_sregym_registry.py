"""SREGym ground truth from its published source tree: the problem registry and problem classes
parsed with `ast` (verbatim MIT files of SREGym ba07faf: 6 of its problem modules)."""

from __future__ import annotations

import sys

import pytest
import yaml
from helpers import FIXTURES, corpus, quiet

from ground_truth import load_specs
from ground_truth.formats.registry import detect

SOURCE = FIXTURES / "formats" / "sregym-registry" / "source"
PROBLEMS = SOURCE / "sregym" / "conductor" / "problems"
# The registry passes faulty_service="mongodb-rate", which ResourceRequestTooLarge/Small hand
# positionally to ResourceRequest.__init__; the corpus extraction kept the default "frontend".
CORPUS_DIFFERS = {"resource_request_too_large", "resource_request_too_small"}


@pytest.fixture(scope="module")
def registry_specs():
    specs, found = quiet(load_specs, SOURCE)
    return {s.id: s for s in specs}, found


@pytest.mark.parametrize("path", [SOURCE, PROBLEMS, PROBLEMS / "registry.py"])
def test_a_checkout_its_problems_folder_or_the_registry_is_detected(path):
    assert detect(path, "specs").name == "sregym"


def test_problems_whose_classes_are_here_are_read(registry_specs):
    specs, found = registry_specs
    assert sorted(specs) == [
        "astronomy_shop_ad_service_failure",
        "ephemeral_port_range_hotel_reservation",
        "faulty_image_correlated",
        "incorrect_port_assignment",
        "resource_request_too_large",
        "resource_request_too_small",
        "unschedulable_incorrect_port_assignment",
    ]
    (skipped,) = [w for w in found if "registered problems" in str(w)]
    assert "116 of 123" in str(skipped)
    assert all(s.source["schema"] == "registry" for s in specs.values())


def test_fstrings_app_namespace_and_joined_lists(registry_specs):
    specs = registry_specs[0]
    ad = specs["astronomy_shop_ad_service_failure"]
    assert ad.ground_truth.startswith("[fault_spec] component=ad; namespace=astronomy-shop || ")
    assert "`adFailure` feature flag" in ad.ground_truth
    assert len(specs["faulty_image_correlated"].fault_origin) == 8
    assert "'32000 32003'" in specs["ephemeral_port_range_hotel_reservation"].ground_truth


def test_keyword_branches_and_positional_base_arguments(registry_specs):
    specs = registry_specs[0]
    assert "Two faults are active" in specs["unschedulable_incorrect_port_assignment"].ground_truth
    assert "Two faults" not in specs["incorrect_port_assignment"].ground_truth
    large = specs["resource_request_too_large"]
    assert large.fault_origin[0].name == "mongodb-rate"


def test_the_source_is_never_imported(registry_specs):
    assert not [m for m in sys.modules if m == "sregym" or m.startswith("sregym.")]


@pytest.mark.corpus
def test_root_causes_equal_the_corpus_extraction(registry_specs):
    data = yaml.safe_load(corpus("sregym-registry", "root_causes_all_123.yaml").read_text())
    reference = {p["problem_id"]: p["root_cause_text"] for p in data["problems"]}
    for pid, spec in registry_specs[0].items():
        if pid not in CORPUS_DIFFERS:
            assert spec.ground_truth == reference[pid], pid
        else:
            assert spec.ground_truth == reference[pid].replace("frontend", "mongodb-rate"), pid
