"""Auto-detection over every adapter, and a lossless round trip through the native format."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import pytest
from helpers import FORMATS, corpus

from ground_truth import IncidentSpec, InputError, Submission, loaders
from ground_truth.errors import FormatWarning
from ground_truth.formats.registry import detect

NOT_SPECS = "not-specs"
NOT_SUBMISSIONS = "not-submissions"

CORPUS_CASES = [
    ("itbench/ground_truth/itbench_scenarios", "itbench", NOT_SUBMISSIONS),
    ("itbench/ground_truth/itbench-evaluations_data", "itbench", NOT_SUBMISSIONS),
    ("itbench/agent_outputs/itbench-evaluations_data", NOT_SPECS, "itbench"),
    ("itbench/agent_outputs/itbench-sre-agent_pr11", NOT_SPECS, "itbench"),
    (
        "itbench/judge_results/agentbeats-leaderboard-v2/itbench-hub-20260130-214037.json",
        NOT_SPECS,
        "itbench",
    ),
    ("sregym/problems", "sregym", NOT_SUBMISSIONS),
    ("sregym-registry/root_causes_all_123.yaml", "sregym", NOT_SUBMISSIONS),
    ("sregym/agent_diagnoses", "sregym", "sregym"),
    ("sregym/results_examples/legacy_09-10_18-40_arena_results.csv", NOT_SPECS, "sregym"),
    ("aiopslab/ground_truth.yaml", "aiopslab", NOT_SUBMISSIONS),
    ("aiopslab/ai_sre_data_sessions.json", NOT_SPECS, "aiopslab"),
    (
        "aiopslab/ai_sre_data_session_qwen3-30b-a3b_misconfig_app_analysis.json",
        NOT_SPECS,
        "aiopslab",
    ),
    ("openrca", "openrca", "openrca"),
    ("rca-llm-reasoning", "forge", "forge"),
    ("rca-llm-reasoning/label_Online-Boutique-cloudbed-1.csv", "forge", NOT_SUBMISSIONS),
    ("sre-zero/task_configs_all_40.json", "srezero", None),
    ("sre-zero/example_results_scripted_v0.5.json", None, "srezero"),
    ("cloud-opsbench", "cloud-opsbench", NOT_SUBMISSIONS),
]

FIXTURE_CASES = [
    ("itbench/scenarios", "itbench", NOT_SUBMISSIONS),
    ("itbench/scenarios/scenario_38/groundtruth_v1.yaml", "itbench", NOT_SUBMISSIONS),
    ("sregym/service_port_conflict_hotel_reservation_submissions.json", "sregym", "sregym"),
    ("sregym/results_judged.csv", NOT_SPECS, "sregym"),
    ("openrca/agent-Telecom.csv", "openrca", "openrca"),
    ("forge/label_Online-Boutique-cloudbed-1.csv", "forge", NOT_SUBMISSIONS),
    ("itbench/synthetic/ground_truths.json", "itbench", NOT_SUBMISSIONS),
    ("itbench/synthetic/agent_outputs", NOT_SPECS, "itbench"),
    ("itbench/synthetic/agent_outputs_current", NOT_SPECS, "itbench"),
    ("itbench/synthetic/judge_results/leaderboard_run.json", NOT_SPECS, "itbench"),
    ("sregym/problems", "sregym", NOT_SUBMISSIONS),
    ("sregym-registry/root_causes_all_123.excerpt.yaml", "sregym", NOT_SUBMISSIONS),
    ("sregym/legacy_09-10_18-40_arena_results.csv", NOT_SPECS, "sregym"),
    ("aiopslab/ground_truth.excerpt.yaml", "aiopslab", NOT_SUBMISSIONS),
    ("aiopslab/sessions/ai_sre_data_sessions.json", NOT_SPECS, "aiopslab"),
    ("aiopslab/sessions/session_c-0002.json", NOT_SPECS, "aiopslab"),
    ("openrca", "openrca", "openrca"),
    ("forge", "forge", "forge"),
    ("../srezero/task_configs_all_40.json", "srezero", None),
    ("../srezero/example_results_scripted_v0.5.json", None, "srezero"),
    ("cloud-opsbench", "cloud-opsbench", NOT_SUBMISSIONS),
]


def check_detection(path: Path, spec_format: str | None, submission_format: str | None) -> None:
    for kind, expected in (("specs", spec_format), ("submissions", submission_format)):
        if expected is None:
            continue
        if expected in (NOT_SPECS, NOT_SUBMISSIONS):
            with pytest.raises(InputError, match="not a recognised"):
                detect(path, kind)
        else:
            assert detect(path, kind).name == expected, (path, kind)


@pytest.mark.parametrize("relative, spec_format, submission_format", FIXTURE_CASES)
def test_detection_on_fixtures(relative, spec_format, submission_format):
    check_detection(FORMATS / relative, spec_format, submission_format)


@pytest.mark.corpus
@pytest.mark.parametrize("relative, spec_format, submission_format", CORPUS_CASES)
def test_detection_on_the_corpus(relative, spec_format, submission_format):
    check_detection(corpus(relative), spec_format, submission_format)


def test_unknown_input_names_the_formats_tried(tmp_path):
    path = tmp_path / "mystery.json"
    path.write_text(json.dumps({"hello": "world"}))
    with pytest.raises(InputError) as err:
        detect(path, "specs")
    message = str(err.value)
    assert str(path) in message and "format" in message
    for fmt in ("native", "itbench", "sregym", "aiopslab", "openrca", "forge"):
        assert fmt in message


def test_bad_format_names_and_paths(tmp_path):
    with pytest.raises(InputError, match="unknown format 'nope'"):
        loaders.load_specs(FORMATS / "itbench" / "scenarios", "nope")
    with pytest.raises(InputError, match="no such file"):
        loaders.load_submissions(tmp_path / "absent", "itbench")
    with pytest.raises(InputError, match="no such file"):
        detect(tmp_path / "absent", "submissions")


def test_forcing_a_format_uses_that_adapter():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FormatWarning)
        specs = loaders.load_specs(FORMATS / "itbench" / "scenarios", "itbench")
    assert {s.source["format"] for s in specs} == {"itbench"}
    with pytest.raises(InputError):
        loaders.load_specs(FORMATS / "itbench" / "scenarios", "openrca")


def test_a_missing_adapter_fails_loudly_where_it_is_needed_only(monkeypatch):
    import ground_truth.formats as formats

    monkeypatch.delattr(formats, "srezero", raising=False)
    monkeypatch.setitem(sys.modules, "ground_truth.formats.srezero", None)
    with pytest.raises(ImportError):  # detection asks every adapter about an unclaimed input
        detect(FORMATS / "sregym" / "results_judged.csv", "specs")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FormatWarning)  # the fixtures' known problems
        assert loaders.load_specs(
            FORMATS / "itbench" / "scenarios", "itbench"
        )  # srezero not needed
    assert detect(FORMATS / "itbench" / "scenarios", "specs").name == "itbench"  # nor here


def test_format_warning_names_file_and_field():
    warning = FormatWarning("gt.yaml", "is odd", field="groups[1].filter")
    assert str(warning) == "gt.yaml: groups[1].filter: is odd"
    assert isinstance(warning, UserWarning)
    assert (warning.path, warning.field, warning.message) == (
        "gt.yaml",
        "groups[1].filter",
        "is odd",
    )


# ---------------------------------------------------------------- round trip through native


ROUND_TRIPS = [
    ("fixture", "itbench/scenarios", "itbench", "specs"),
    (
        "fixture",
        "sregym/service_port_conflict_hotel_reservation_submissions.json",
        "sregym",
        "specs",
    ),
    (
        "fixture",
        "sregym/service_port_conflict_hotel_reservation_submissions.json",
        "sregym",
        "submissions",
    ),
    ("fixture", "sregym/results_with_text.csv", "sregym", "submissions"),
    ("fixture", "openrca/agent-Telecom.csv", "openrca", "specs"),
    ("fixture", "openrca/agent-Telecom.csv", "openrca", "submissions"),
    ("fixture", "forge/label_Online-Boutique-cloudbed-1.csv", "forge", "specs"),
    ("fixture", "itbench/synthetic/ground_truths.json", "itbench", "specs"),
    ("fixture", "itbench/synthetic/agent_outputs", "itbench", "submissions"),
    ("fixture", "itbench/synthetic/agent_outputs_current", "itbench", "submissions"),
    ("fixture", "aiopslab/ground_truth.excerpt.yaml", "aiopslab", "specs"),
    ("fixture", "aiopslab/sessions", "aiopslab", "submissions"),
    ("fixture", "sregym-registry", "sregym", "specs"),
    ("fixture", "openrca", "openrca", "specs"),
    ("fixture", "forge", "forge", "submissions"),
    pytest.param(
        "corpus",
        "itbench/ground_truth/itbench-evaluations_data",
        "itbench",
        "specs",
        marks=pytest.mark.corpus,
    ),
    pytest.param(
        "corpus",
        "itbench/agent_outputs/itbench-evaluations_data",
        "itbench",
        "submissions",
        marks=pytest.mark.corpus,
    ),
    pytest.param(
        "corpus",
        "itbench/agent_outputs/itbench-sre-agent_pr11",
        "itbench",
        "submissions",
        marks=pytest.mark.corpus,
    ),
    pytest.param(
        "corpus", "aiopslab/ground_truth.yaml", "aiopslab", "specs", marks=pytest.mark.corpus
    ),
    pytest.param("corpus", "aiopslab", "aiopslab", "submissions", marks=pytest.mark.corpus),
    pytest.param("corpus", "sregym-registry", "sregym", "specs", marks=pytest.mark.corpus),
    pytest.param("corpus", "openrca", "openrca", "specs", marks=pytest.mark.corpus),
    pytest.param("corpus", "rca-llm-reasoning", "forge", "submissions", marks=pytest.mark.corpus),
]


@pytest.mark.parametrize("where, relative, fmt, kind", ROUND_TRIPS)
def test_round_trip_through_the_native_format_loses_nothing(tmp_path, where, relative, fmt, kind):
    path = FORMATS / relative if where == "fixture" else corpus(relative)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FormatWarning)
        if kind == "specs":
            items = loaders.load_specs(path, fmt)
            native = tmp_path / "specs.json"
            native.write_text(json.dumps([s.model_dump(mode="json") for s in items]))
            back = loaders.load_specs(native, format="native")
            model = IncidentSpec
        else:
            items = loaders.load_submissions(path, fmt)
            native = tmp_path / "submissions.jsonl"
            native.write_text("\n".join(json.dumps(s.model_dump(mode="json")) for s in items))
            back = loaders.load_submissions(native, format="native")
            model = Submission
    assert items and len(back) == len(items)
    for original, reloaded in zip(items, back, strict=True):
        assert isinstance(reloaded, model)
        before, after = original.model_dump(mode="json"), reloaded.model_dump(mode="json")
        # the native loader may add where it read the file from; everything else is unchanged
        assert before.pop("source").items() <= after.pop("source").items()
        assert after == before
