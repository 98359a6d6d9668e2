"""Loading specs and submissions in the native formats, matching them, and naming bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ground_truth import (
    ComponentRef,
    IncidentSpec,
    InputError,
    Submission,
    load_specs,
    load_submissions,
    match_submissions,
    parse_fault_spec,
)

CHECKOUT_GT = (
    "[fault_spec] component=deployment/checkout; namespace=astronomy-shop || "
    "The checkout deployment runs a wrong image tag."
)
HOTEL_GT = (
    "[fault_spec] component=deployments/frontend, geo, profile; namespace=hotel-reservation || "
    "Three deployments were scaled to zero."
)


def spec_dict(incident_id: str, ground_truth: str = CHECKOUT_GT, **extra: Any) -> dict:
    return {"id": incident_id, "ground_truth": ground_truth, **extra}


def write_yaml(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# ------------------------------------------------------------------ specs


def test_example_directory_of_specs(example_ground_truth: Path) -> None:
    specs = load_specs(example_ground_truth)
    files = sorted(example_ground_truth.glob("*.yaml"))
    assert len(specs) == len(files) >= 8
    assert {s.id for s in specs} == {f.stem for f in files}
    assert all(s.fault_origin for s in specs)
    assert all(s.source["format"] == "native" for s in specs)


def test_directory_is_searched_recursively_and_json_too(tmp_path: Path) -> None:
    write_yaml(tmp_path / "a.yaml", spec_dict("a"))
    write_json(tmp_path / "nested" / "b.json", spec_dict("b"))
    (tmp_path / "notes.txt").write_text("not a spec", encoding="utf-8")
    assert sorted(s.id for s in load_specs(tmp_path)) == ["a", "b"]


def test_single_file_with_a_list(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "all.yaml", [spec_dict("a"), spec_dict("b"), spec_dict("c")])
    specs = load_specs(path)
    assert [s.id for s in specs] == ["a", "b", "c"]
    assert all(s.source["file"] == str(path) for s in specs)


def test_incidents_mapping(tmp_path: Path) -> None:
    path = write_json(tmp_path / "all.json", {"incidents": [spec_dict("a"), spec_dict("b")]})
    assert [s.id for s in load_specs(path)] == ["a", "b"]


def test_integer_id_becomes_text(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "n.yaml", spec_dict(42))
    assert load_specs(path)[0].id == "42"


def test_fault_spec_string_fills_fault_origin(tmp_path: Path) -> None:
    [spec] = load_specs(write_yaml(tmp_path / "s.yaml", spec_dict("s")))
    assert spec.fault_origin == [
        ComponentRef(name="checkout", kind="deployment", namespace="astronomy-shop")
    ]


def test_fault_spec_multi_component(tmp_path: Path) -> None:
    [spec] = load_specs(write_yaml(tmp_path / "s.yaml", spec_dict("s", HOTEL_GT)))
    assert [(c.name, c.kind, c.namespace) for c in spec.fault_origin] == [
        ("frontend", "deployment", "hotel-reservation"),
        ("geo", "deployment", "hotel-reservation"),
        ("profile", "deployment", "hotel-reservation"),
    ]


def test_explicit_fault_origin_wins_over_the_string(tmp_path: Path) -> None:
    data = spec_dict("s", fault_origin=[{"name": "cart", "aliases": ["cartservice"]}])
    [spec] = load_specs(write_yaml(tmp_path / "s.yaml", data))
    assert [c.name for c in spec.fault_origin] == ["cart"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[fault_spec] component=deployment/checkout; namespace=astronomy-shop || Wrong tag.",
            ([("checkout", "deployment", "astronomy-shop")], "astronomy-shop", "Wrong tag."),
        ),
        (
            "[fault_spec] component=services/geo, deployment/rate; namespace=hr || Two faults.",
            ([("geo", "service", "hr"), ("rate", "deployment", "hr")], "hr", "Two faults."),
        ),
        (
            "[fault_spec] component=node/worker-2 || A node is down.",
            ([("worker-2", "node", None)], None, "A node is down."),
        ),
        (
            "[fault_spec] component=ingress/web; namespace=x || Ingress broke.",
            ([("web", "ingress", "x")], "x", "Ingress broke."),
        ),
        (
            "[fault_spec] component=ingresses/web, networkpolicies/deny-all; namespace=x || N.",
            ([("web", "ingress", "x"), ("deny-all", "networkpolicy", "x")], "x", "N."),
        ),
        # The next three are real SREGym strings (from ../shared/corpus/sregym*).
        (
            "[fault_spec] component=ClusterRole/configmap-cleanup-controller and "
            "configmap/reservation-cleanup-token; namespace=hotel-reservation || RBAC.",
            (
                [
                    ("configmap-cleanup-controller", "ClusterRole", "hotel-reservation"),
                    ("reservation-cleanup-token", "configmap", "hotel-reservation"),
                ],
                "hotel-reservation",
                "RBAC.",
            ),
        ),
        (
            "[fault_spec] component=daemonset/kube-proxy + deployment/frontend; "
            "namespace=astronomy-shop || Two faults.",
            (
                [
                    ("kube-proxy", "daemonset", "astronomy-shop"),
                    ("frontend", "deployment", "astronomy-shop"),
                ],
                "astronomy-shop",
                "Two faults.",
            ),
        ),
        (
            "[fault_spec] component=customresource/tidbcluster/basic; namespace=tidb-cluster || T.",
            ([("basic", "tidbcluster", "tidb-cluster")], "tidb-cluster", "T."),
        ),
        (
            "[fault_spec] component=dns/coredns; namespace=kube-system || DNS.",
            ([("coredns", "dns", "kube-system")], "kube-system", "DNS."),
        ),
    ],
)
def test_parse_fault_spec(text: str, expected) -> None:
    components, namespace, description = parse_fault_spec(text)
    assert [(c.name, c.kind, c.namespace) for c in components] == expected[0]
    assert (namespace, description) == expected[1:]


@pytest.mark.corpus
def test_every_sregym_registry_fault_spec_parses(corpus_dir: Path) -> None:
    """All 123 SREGym root-cause strings: the namespace field is never displaced by a kind."""
    path = corpus_dir / "sregym-registry" / "root_causes_all_123.yaml"
    problems = yaml.safe_load(path.read_text(encoding="utf-8"))["problems"]
    parsed = 0
    for problem in problems:
        result = parse_fault_spec(problem["root_cause_text"])
        if result is None:
            continue
        parsed += 1
        components, namespace, description = result
        assert namespace == problem["namespace"], problem["problem_id"]
        assert components and description, problem["problem_id"]
        for c in components:
            assert c.namespace == namespace, (problem["problem_id"], c)
            assert "/" not in c.name and " and " not in c.name and "+" not in c.name, c
            assert not (c.kind or "").lower().endswith("ments"), c
    assert parsed >= 100


def test_plain_ground_truth_is_not_a_fault_spec(tmp_path: Path) -> None:
    assert parse_fault_spec("The checkout service ran out of memory.") is None
    [spec] = load_specs(write_yaml(tmp_path / "s.yaml", spec_dict("s", "checkout ran out")))
    assert spec.fault_origin == []


def test_duplicate_ids_name_both_files(tmp_path: Path) -> None:
    first = write_yaml(tmp_path / "a.yaml", spec_dict("same"))
    second = write_yaml(tmp_path / "b.yaml", spec_dict("same"))
    with pytest.raises(InputError) as caught:
        load_specs(tmp_path)
    assert caught.value.field == "id"
    assert str(first) in str(caught.value) and str(second) in str(caught.value)
    assert "'same'" in str(caught.value)


def test_duplicate_ids_name_the_spec_files_not_the_upstream_source(tmp_path: Path) -> None:
    """A spec's own `source.file` (the upstream problem file) must not hide where it was read."""
    upstream = {"file": "sregym/conductor/problems/x.py", "benchmark": "SREGym"}
    first = write_yaml(tmp_path / "a.yaml", spec_dict("same", source=upstream))
    second = write_yaml(tmp_path / "b.yaml", spec_dict("same", source=upstream))
    with pytest.raises(InputError) as caught:
        load_specs(tmp_path)
    assert str(first) in str(caught.value) and str(second) in str(caught.value)


def test_spec_source_keeps_its_own_provenance(tmp_path: Path) -> None:
    upstream = {"file": "sregym/conductor/problems/x.py", "benchmark": "SREGym"}
    path = write_yaml(tmp_path / "a.yaml", spec_dict("a", source=upstream))
    [spec] = load_specs(path)
    assert spec.source["benchmark"] == "SREGym"
    assert spec.source["file"] == "sregym/conductor/problems/x.py"
    assert spec.source["loaded_from"] == str(path)


@pytest.mark.parametrize(
    ("name", "field", "words"),
    [
        ("malformed.yaml", "line ", "invalid YAML"),
        ("missing_id.yaml", "id", "Field required"),
        ("non_utf8.yaml", None, "not UTF-8"),
    ],
)
def test_bad_spec_fixtures(bad_dir: Path, name: str, field: str | None, words: str) -> None:
    path = bad_dir / "specs" / name
    with pytest.raises(InputError) as caught:
        load_specs(path)
    assert caught.value.path == str(path)
    assert words in str(caught.value)
    if field is not None:
        assert caught.value.field.startswith(field)


def test_non_utf8_names_the_byte(bad_dir: Path) -> None:
    with pytest.raises(InputError, match=r"byte 0xe9 at offset \d+"):
        load_specs(bad_dir / "specs" / "non_utf8.yaml")


def test_bad_item_in_a_list_is_located(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "all.yaml", [spec_dict("a"), {"ground_truth": "x"}])
    with pytest.raises(InputError) as caught:
        load_specs(path)
    assert caught.value.field == "[1].id"
    not_mapping = write_yaml(tmp_path / "bad.yaml", {"incidents": [spec_dict("a"), "oops"]})
    with pytest.raises(InputError) as caught:
        load_specs(not_mapping)
    assert caught.value.field == "incidents[1]"


def test_missing_ground_truth_names_the_field(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "s.yaml", {"id": "s", "mechanism": "wrong image"})
    with pytest.raises(InputError) as caught:
        load_specs(path)
    assert caught.value.path == str(path)
    assert caught.value.field == "ground_truth"


def test_unknown_spec_field_is_rejected(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "s.yaml", spec_dict("s", root_cause="typo'd field"))
    with pytest.raises(InputError) as caught:
        load_specs(path)
    assert caught.value.field == "root_cause"


def test_empty_spec_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no incident specs"):
        load_specs(tmp_path)


def test_absent_ground_truth_path(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_specs(tmp_path / "absent")
    assert caught.value.field == "--ground-truth"


# ------------------------------------------------------------------ submissions


def test_example_outputs(example_outputs: Path) -> None:
    subs = load_submissions(example_outputs)
    files = sorted(example_outputs.glob("*/*/agent_output.json"))
    assert len(subs) == len(files) >= 16
    assert {(s.incident_id, s.trial) for s in subs} == {
        (f.parent.parent.name, f.parent.name) for f in files
    }
    assert all(s.diagnosis and s.source["file"].endswith("agent_output.json") for s in subs)


def test_itbench_layout_both_depths(tmp_path: Path) -> None:
    write_json(tmp_path / "inc-a" / "1" / "agent_output.json", {"diagnosis": "a1"})
    write_json(
        tmp_path / "inc-a" / "2" / "outputs" / "agent_output.json",
        {"diagnosis": "a2", "agent": "bot", "entities": [{"name": "checkout"}]},
    )
    write_json(tmp_path / "inc-b" / "run-x" / "outputs" / "agent_output.json", {"diagnosis": "bx"})
    subs = {s.key: s for s in load_submissions(tmp_path)}
    assert set(subs) == {("inc-a", "1"), ("inc-a", "2"), ("inc-b", "run-x")}
    assert subs[("inc-a", "2")].diagnosis == "a2"
    assert subs[("inc-a", "2")].agent == "bot"
    assert subs[("inc-a", "2")].entities[0].name == "checkout"
    assert subs[("inc-b", "run-x")].source["file"].endswith("outputs/agent_output.json")


def test_flat_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "subs.jsonl"
    rows = [
        {"incident_id": "a", "trial": 1, "diagnosis": "one"},
        {"incident_id": "a", "trial": "2", "diagnosis": "two", "agent": "x"},
        {"incident_id": "b", "diagnosis": "three"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    subs = load_submissions(path)
    assert [s.key for s in subs] == [("a", "1"), ("a", "2"), ("b", "1")]
    assert subs[1].agent == "x"


def test_json_list_of_submissions(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "subs.json",
        [{"incident_id": "a", "diagnosis": "x"}, {"incident_id": "b", "diagnosis": "y"}],
    )
    assert [s.incident_id for s in load_submissions(path)] == ["a", "b"]


def test_jsonl_bad_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "subs.jsonl"
    path.write_text(
        json.dumps({"incident_id": "a", "diagnosis": "x"}) + "\n{not json\n", encoding="utf-8"
    )
    with pytest.raises(InputError) as caught:
        load_submissions(path)
    assert caught.value.field == "line 2"


def test_jsonl_row_missing_diagnosis_is_named(tmp_path: Path) -> None:
    path = tmp_path / "subs.jsonl"
    rows = [{"incident_id": "a", "diagnosis": "x"}, {"incident_id": "b"}]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_submissions(path)
    assert caught.value.field == "line 2.diagnosis"


def test_agent_output_missing_diagnosis_names_file_and_field(bad_dir: Path) -> None:
    outputs = bad_dir / "outputs_no_diagnosis"
    with pytest.raises(InputError) as caught:
        load_submissions(outputs)
    assert caught.value.path == str(outputs / "incorrect_image" / "1" / "agent_output.json")
    assert caught.value.field == "diagnosis"


def test_second_agent_output_missing_diagnosis(tmp_path: Path) -> None:
    write_json(tmp_path / "a" / "1" / "agent_output.json", {"diagnosis": "fine"})
    bad = write_json(tmp_path / "b" / "1" / "agent_output.json", {"summary": "no diagnosis"})
    with pytest.raises(InputError) as caught:
        load_submissions(tmp_path)
    assert (caught.value.path, caught.value.field) == (str(bad), "diagnosis")


def test_agent_output_that_is_not_an_object(tmp_path: Path) -> None:
    bad = write_json(tmp_path / "a" / "1" / "agent_output.json", ["diagnosis"])
    with pytest.raises(InputError) as caught:
        load_submissions(tmp_path)
    assert caught.value.path == str(bad)


def test_outputs_with_no_submissions(tmp_path: Path) -> None:
    (tmp_path / "inc" / "1").mkdir(parents=True)
    with pytest.raises(InputError) as caught, pytest.warns(UserWarning, match="without agent_"):
        load_submissions(tmp_path)
    assert caught.value.path == str(tmp_path)
    assert "no submissions" in str(caught.value)
    assert "1 trial folder(s) have no agent_output.json, e.g. inc/1" in str(caught.value)


def test_duplicate_submission_names_both_files(tmp_path: Path) -> None:
    first = write_json(tmp_path / "a" / "1" / "agent_output.json", {"diagnosis": "x"})
    second = write_json(tmp_path / "a" / "1" / "outputs" / "agent_output.json", {"diagnosis": "y"})
    with pytest.raises(InputError, match="duplicate submission") as caught:
        load_submissions(tmp_path)
    assert str(first) in str(caught.value) and str(second) in str(caught.value)


def test_submission_source_must_be_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "subs.jsonl"
    path.write_text(json.dumps({"incident_id": "a", "diagnosis": "x", "source": "me"}))
    with pytest.raises(InputError) as caught:
        load_submissions(path)
    assert caught.value.field == "line 1.source"


# ------------------------------------------------------------------ matching


def test_missing_and_orphans() -> None:
    specs = [IncidentSpec(id=i, ground_truth=CHECKOUT_GT) for i in ("a", "b", "c")]
    subs = [
        Submission(incident_id="a", trial="10", diagnosis="x"),
        Submission(incident_id="a", trial="2", diagnosis="x"),
        Submission(incident_id="c", trial="1", diagnosis="x"),
        Submission(incident_id="zzz", trial="1", diagnosis="x"),
    ]
    matching = match_submissions(specs, subs)
    assert matching.missing == ["b"]
    assert [o.key for o in matching.orphans] == [("zzz", "1")]
    assert [(s.id, sub.trial) for s, sub in matching.pairs] == [("a", "2"), ("a", "10"), ("c", "1")]


def test_a_matcher_keeps_only_the_pairs_asked_for_and_misses_none() -> None:
    from ground_truth.matching import Matcher

    specs = [IncidentSpec(id=i, ground_truth=CHECKOUT_GT) for i in ("a", "b", "c")]
    matcher = Matcher(specs, keep=lambda sub: sub.trial == "2")
    for incident, trial in (("a", "10"), ("a", "2"), ("c", "1"), ("zzz", "1")):
        matcher.add(Submission(incident_id=incident, trial=trial, diagnosis="x"))
    matching = matcher.matching()
    assert [(s.id, sub.trial) for s, sub in matching.pairs] == [("a", "2")]
    assert matching.missing == ["b"]  # c was answered, though its pair is not kept
    assert [o.key for o in matching.orphans] == [("zzz", "1")]


def test_example_set_matches_fully(example_ground_truth: Path, example_outputs: Path) -> None:
    matching = match_submissions(
        load_specs(example_ground_truth), load_submissions(example_outputs)
    )
    assert matching.missing == [] and matching.orphans == []
