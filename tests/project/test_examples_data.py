"""The bundled example set `examples/sregym-mini` is well formed and faithful to its SREGym source.

Specs must validate as native `IncidentSpec`s, every output must belong to a spec, the ground
truths must be SREGym's exact strings, and the structured fields must be traceable to the source
text, since the offline `rules` judge reads them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import EXAMPLE, EXAMPLE_GT, EXAMPLE_OUTPUTS, FIXTURES, REPO, corpus

from ground_truth import IncidentSpec, Submission, parse_fault_spec

# verbatim copies of corpus files (tests/fixtures/formats/ATTRIBUTION.md, agreement/SOURCE.md)
SREGYM_SUBMISSIONS = (
    FIXTURES / "formats" / "sregym" / "service_port_conflict_hotel_reservation_submissions.json"
)
SREGYM_BENCH = FIXTURES / "agreement" / "judge_bench_data.96a9057e.yaml"
SREGYM_COMMIT = "ba07faf1a322f9b6d4a279643bb796aa2f36f64b"
QUALITIES = {"correct", "victim-blamed", "wrong mechanism", "over-scoped", "vague"}
REQUIRED_INCIDENTS = {
    "service_port_conflict_hotel_reservation",
    "incorrect_port_assignment",
    "incorrect_image",
    "missing_env_variable_astronomy_shop",
    "valkey_auth_disruption",
    "revoke_auth_mongodb-1",
    "network_policy_block",
    "assign_to_non_existent_node",
    "secret_rotation_stale_env_credentials_astronomy_shop",
    "faulty_image_correlated",
}
SPEC_FILES = sorted(EXAMPLE_GT.glob("*.yaml"))


def _load_spec(path: Path) -> IncidentSpec:
    return IncidentSpec.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


def _trial_dirs(incident_id: str) -> list[Path]:
    root = EXAMPLE_OUTPUTS / incident_id
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def _agent_output(trial_dir: Path) -> dict[str, Any]:
    return json.loads((trial_dir / "agent_output.json").read_text(encoding="utf-8"))


def _expected_quality() -> dict[str, str]:
    return json.loads((EXAMPLE / "expected_quality.json").read_text(encoding="utf-8"))


def _alternatives(group: str) -> list[str]:
    return [a.strip().lower() for a in group.split("|") if a.strip()]


def _sregym_problems() -> dict[str, dict[str, Any]]:
    path = corpus("sregym", "problems", "ground_truth_40.json")
    problems = json.loads(path.read_text(encoding="utf-8"))["problems"]
    return {p["problem_id"]: p for p in problems}


def _sregym_registry() -> dict[str, dict[str, Any]]:
    path = corpus("sregym-registry", "root_causes_all_123.yaml")
    problems = yaml.safe_load(path.read_text(encoding="utf-8"))["problems"]
    return {p["problem_id"]: p for p in problems}


def test_the_set_holds_the_required_incidents() -> None:
    ids = {p.stem for p in SPEC_FILES}
    assert len(ids) >= 10
    assert ids >= REQUIRED_INCIDENTS


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.stem)
def test_spec_is_a_valid_native_incident_spec(path: Path) -> None:
    spec = _load_spec(path)
    assert spec.id == path.stem
    assert spec.fault_origin, "every example names its fault origin"
    assert spec.mechanism and spec.problem_class
    assert 3 <= len(spec.mechanism_keywords) <= 6
    assert spec.symptoms
    assert spec.source == {
        "benchmark": "SREGym",
        "problem_id": spec.id,
        "file": spec.source["file"],
        "license": "MIT",
        "commit": SREGYM_COMMIT,
        "repo": "github.com/SREGym/SREGym",
    }
    assert spec.source["file"].startswith("sregym/conductor/problems/")


def test_extra_keys_in_a_spec_are_rejected() -> None:
    data = yaml.safe_load(SPEC_FILES[0].read_text(encoding="utf-8"))
    data["root_cause"] = "not a field of IncidentSpec"
    with pytest.raises(ValueError, match="root_cause"):
        IncidentSpec.model_validate(data)


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.stem)
def test_fault_origin_agrees_with_the_fault_spec_prefix(path: Path) -> None:
    spec = _load_spec(path)
    parsed = parse_fault_spec(spec.ground_truth)
    assert parsed is not None, "SREGym ground truths carry a [fault_spec] prefix"
    components, namespace, _ = parsed
    assert [c.name for c in spec.fault_origin] == [c.name for c in components]
    for mine, theirs in zip(spec.fault_origin, components, strict=True):
        assert mine.namespace == namespace
        if theirs.kind:
            assert mine.kind and mine.kind.lower() == theirs.kind.lower()
        assert mine.name not in mine.aliases


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.stem)
def test_keywords_symptoms_and_components_are_grounded_in_the_text(path: Path) -> None:
    """Each `a|b` group must have one spelling the source states, or the rules judge drifts."""
    spec = _load_spec(path)
    text = spec.ground_truth.lower()
    values = " ".join(str(v) for v in spec.parameters.values()).lower()
    for group in [*spec.mechanism_keywords, *spec.symptoms]:
        assert any(a in text or a in values for a in _alternatives(group)), group
    for ref in [*spec.contributing_components, *spec.affected_components]:
        assert any(n.lower() in text for n in ref.all_names()), ref.name


@pytest.mark.corpus
@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.stem)
def test_ground_truth_is_the_exact_sregym_string(path: Path) -> None:
    problems = _sregym_problems()
    spec = _load_spec(path)
    assert spec.ground_truth == problems[spec.id]["root_cause_text"]
    assert spec.ground_truth == _sregym_registry()[spec.id]["root_cause_text"]
    assert spec.source["file"] == problems[spec.id]["source_path"]


@pytest.mark.corpus
@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.stem)
def test_parameters_are_injected_values_from_the_source(path: Path) -> None:
    problems = _sregym_problems()
    spec = _load_spec(path)
    source_values = {str(v) for v in problems[spec.id]["parameters"].values()}
    for key, value in spec.parameters.items():
        assert str(value) in source_values or str(value) in spec.ground_truth, key


def test_every_output_directory_names_a_spec() -> None:
    ids = {p.stem for p in SPEC_FILES}
    incident_dirs = {p.name for p in EXAMPLE_OUTPUTS.iterdir() if p.is_dir()}
    assert incident_dirs <= ids, incident_dirs - ids


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.stem)
def test_every_spec_has_one_to_three_valid_trials(path: Path) -> None:
    trials = _trial_dirs(path.stem)
    assert 1 <= len(trials) <= 3
    for trial in trials:
        data = _agent_output(trial)
        assert set(data) == {"agent", "diagnosis"}
        assert data["diagnosis"].strip() and data["agent"].strip()
        submission = Submission.model_validate(
            {"incident_id": path.stem, "trial": trial.name, **data}
        )
        assert submission.key == (path.stem, trial.name)


def test_the_set_has_a_single_trial_incident_and_a_very_short_diagnosis() -> None:
    counts = [len(_trial_dirs(p.stem)) for p in SPEC_FILES]
    assert 1 in counts
    lengths = [len(_agent_output(t)["diagnosis"]) for p in SPEC_FILES for t in _trial_dirs(p.stem)]
    assert min(lengths) < 60


def test_expected_quality_labels_every_trial_and_only_existing_ones() -> None:
    expected = _expected_quality()
    trials = {f"{p.stem}/{t.name}" for p in SPEC_FILES for t in _trial_dirs(p.stem)}
    assert set(expected) == trials
    assert set(expected.values()) == QUALITIES


def test_readme_table_matches_expected_quality() -> None:
    readme = (EXAMPLE.parent / "README.md").read_text(encoding="utf-8")
    assert SREGYM_COMMIT in readme and "MIT" in readme
    assert "service_port_conflict_hotel_reservation_submissions.json" in readme
    for key, quality in _expected_quality().items():
        incident, trial = key.split("/")
        assert f"| {incident} | {trial} | {quality} |" in readme, key


def test_real_service_port_conflict_diagnoses_are_verbatim() -> None:
    source = json.loads(SREGYM_SUBMISSIONS.read_text(encoding="utf-8"))
    real = {d["agent"]: d["non_empty_submissions_in_order"] for d in source["diagnoses"]}
    for trial in _trial_dirs("service_port_conflict_hotel_reservation"):
        data = _agent_output(trial)
        assert data["diagnosis"] in real[data["agent"]]


def test_judge_benchmark_answers_are_quoted_verbatim() -> None:
    answers = [item["answer"] for item in yaml.safe_load(SREGYM_BENCH.read_text(encoding="utf-8"))]
    checked = 0
    for spec in SPEC_FILES:
        for trial in _trial_dirs(spec.stem):
            data = _agent_output(trial)
            if data["agent"].startswith("unnamed agent (SREGym judge benchmark"):
                assert data["diagnosis"] in answers
            elif data["agent"].startswith("example-agent (adapted"):
                assert any(data["diagnosis"].startswith(a) for a in answers)
            else:
                continue
            checked += 1
    assert checked == 5


def test_harness_example_runs_through_the_python_api() -> None:
    script = REPO / "examples" / "harness.py"
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGE_")}
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 32
    assert any(" pass" in line for line in lines) and any(" fail" in line for line in lines)
