"""SREGym's 29-item judge benchmark: conversion to labels, specs and submissions."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from helpers import FIXTURES, corpus

from agreement import ItemKey, LabelFileError, agreement_report, read_labels
from agreement.sregym_bench import (
    components,
    export_native,
    load_bench,
    to_ratings,
    to_specs,
    to_submissions,
)
from ground_truth import models

FIXTURE = FIXTURES / "agreement" / "judge_bench_data.96a9057e.yaml"


@pytest.fixture(scope="module")
def items():
    return load_bench(FIXTURE)


@pytest.mark.corpus
def test_fixture_is_the_corpus_file_verbatim():
    original = corpus("sregym", "judge_benchmark", FIXTURE.name)
    assert FIXTURE.read_bytes() == original.read_bytes()


def test_counts_and_false_negative_mapping(items):
    assert len(items) == 29
    assert Counter(i.oracle for i in items) == {"True": 12, "False": 15, "FalseNegative": 2}
    assert Counter(i.verdict for i in items) == {"Yes": 12, "No": 17}
    false_negatives = [i for i in items if i.oracle == "FalseNegative"]
    assert [i.index for i in false_negatives] == [0, 3]
    assert all(i.verdict == "No" for i in false_negatives)
    assert false_negatives[1].answer.startswith("No faults were detected")  # the definition


def test_ids_are_stable_and_problem_ids_recovered(items):
    assert [i.id for i in items[:2]] == ["sregym-bench-00", "sregym-bench-01"]
    assert items[-1].id == "sregym-bench-28"
    assert len({i.id for i in items}) == 29
    assert items[13].problem_id is None
    assert items[14].problem_id == "auth_miss_mongodb"
    assert items[28].problem_id == "missing_configmap_social_network"
    assert sum(i.problem_id is not None for i in items) == 15


def test_labels_csv_reads_back_as_verdict_labels(items, tmp_path):
    paths = export_native(items, tmp_path)
    table = read_labels(paths["labels"])
    assert table.names == ["sregym-developer"]
    verdicts = table.labels("sregym-developer", "verdict")
    assert len(verdicts) == 29
    assert verdicts[ItemKey("sregym-bench-02", "1", "verdict")] == "Yes"
    assert verdicts[ItemKey("sregym-bench-03", "1", "verdict")] == "No"
    assert table.count("sregym-developer", "question") == 0
    assert to_ratings(items).labels("sregym-developer", "verdict") == verdicts
    text = paths["labels"].read_text(encoding="utf-8-sig")
    assert "oracle=FalseNegative" in text


def test_specs_and_submissions_validate_as_native_models(items, tmp_path):
    specs = [models.IncidentSpec.model_validate(s) for s in to_specs(items)]
    subs = [models.Submission.model_validate(s) for s in to_submissions(items)]
    assert [s.id for s in specs] == [s.incident_id for s in subs]
    assert specs[3].ground_truth.startswith("The deployment `checkout`")
    assert specs[3].source["license"] == "MIT" and specs[3].extra["oracle"] == "FalseNegative"
    assert [c.name for c in specs[3].fault_origin] == ["checkout"]
    assert subs[3].diagnosis.startswith("No faults were detected")
    paths = export_native(items, tmp_path)
    assert len(json.loads(paths["specs"].read_text())["incidents"]) == 29
    assert len(paths["submissions"].read_text().splitlines()) == 29


@pytest.mark.parametrize(
    ("description", "origin", "affected"),
    [
        (
            "The deployment `checkout` has the environment variable `PRODUCT_CATALOG_ADDR` configured "
            "with an incorrect port `8082` instead of `8080`.",
            ["checkout"],
            [],
        ),
        (
            "The 'product-catalog' deployment is mis-configured to pull the non-existent image "
            "'app-image:latest'.",
            ["product-catalog"],
            [],
        ),
        (
            "The ConfigMap `geo-config` is missing critical configuration keys, causing the deployment "
            "`geo` to malfunction.",
            ["geo-config"],
            ["geo"],
        ),
        (
            "The MongoDB deployments (mongodb-geo, mongodb-profile, and mongodb-rate) are updated to use "
            "an incompatible image version 'mongo:8.0.14-rc0'.",
            ["mongodb-geo", "mongodb-profile", "mongodb-rate"],
            [],
        ),
        ("The password in valkey is invalidated, therefore dependent services cannot work", [], []),
    ],
)
def test_component_extraction(description, origin, affected):
    found = components(description)
    assert [c["name"] for c in found["fault_origin"]] == origin
    assert [c["name"] for c in found["affected_components"]] == affected


def test_bad_bench_files(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text('- description: "x"\n  answer: "y"\n  oracle: "Maybe"\n')
    with pytest.raises(LabelFileError, match=r"\[0\].oracle: unknown oracle 'Maybe'"):
        load_bench(bad)
    bad.write_text('- description: "x"\n')
    with pytest.raises(LabelFileError, match="expected description, answer and oracle"):
        load_bench(bad)


def test_bench_verdicts_against_a_judge_result(items):
    """A judge result over the bench ids pairs with the developer's labels by incident id."""
    cases = [
        {
            "incident_id": i.id,
            "trial": "1",
            "composite": 1.0 if i.oracle == "True" else 0.0,
            "passed": i.oracle == "True" or i.index == 0,
            "complete": True,
            "dimensions": [],
        }
        for i in items
    ]
    result = {
        "config": {"judge": {"name": "rules", "model": None}},
        "judgments": [],
        "cases": cases,
    }
    report = agreement_report([result, to_ratings(items)], B=50, levels=["verdict"])
    [pair] = report.level("verdict").pairwise
    assert (pair.rater_a, pair.rater_b, pair.n) == ("rules", "sregym-developer", 29)
    assert pair.confusion.yes_no == 1 and pair.confusion.yes_yes == 12
    assert pair.vs_reference.tpr.value == 1.0
