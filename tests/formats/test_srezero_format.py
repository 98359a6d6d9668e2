"""The SRE-Zero adapter: task configs -> IncidentSpec, run records -> Submission."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import FIXTURES, corpus

from ground_truth import InputError
from ground_truth.formats.srezero import (
    SREZeroActionError,
    format_srezero_action,
    load_srezero_specs,
    load_srezero_submissions,
    looks_like_srezero,
    looks_like_srezero_specs,
    looks_like_srezero_submissions,
    parse_srezero_action,
)

SREZERO = FIXTURES / "srezero"
CONFIGS = SREZERO / "task_configs_all_40.json"
RECORD = SREZERO / "example_results_scripted_v0.5.json"


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def one_config() -> dict:
    return json.loads(CONFIGS.read_text())["tasks"]["cache_auth_token_expired"]


@pytest.mark.corpus
def test_fixtures_are_the_corpus_files_unchanged():
    for name in ("task_configs_all_40.json", "example_results_scripted_v0.5.json"):
        assert (SREZERO / name).read_bytes() == corpus("sre-zero", name).read_bytes()


def test_all_40_task_configs_become_specs():
    specs = {s.id: s for s in load_srezero_specs(CONFIGS)}
    assert len(specs) == 40
    spec = specs["cache_auth_token_expired"]
    assert spec.ground_truth.startswith("cache authentication token expired. ")
    assert "AUTH_TOKEN_VALID is false." in spec.ground_truth
    assert [c.name for c in spec.fault_origin] == ["cache"]
    assert spec.mechanism_keywords == ["cache", "authentication", "token"]
    assert spec.parameters == {"AUTH_TOKEN_VALID": False}
    assert [c.name for c in spec.distractors] == ["web_server"]
    assert spec.distractors[0].aliases == ["web server"]
    assert spec.expected_fix == "set cache AUTH_TOKEN_VALID to true"
    assert spec.symptoms == ["Product pages are slow and cache requests are being denied."]
    assert spec.source["format"] == "srezero"
    kept = spec.extra["srezero"]
    assert kept["correct_fix"]["exact_value"] is True
    assert kept["relevant_evidence"][2] == "inspect_config:cache:AUTH_TOKEN_VALID"
    assert specs["cache_crash"].expected_fix == "restart cache"
    assert specs["cache_crash"].problem_class == "service crash"
    assert specs["db_pool_exhaustion"].expected_fix == "set database DB_POOL_SIZE to at least 80"


def test_single_config_list_and_folder_are_read(tmp_path):
    config = one_config()
    assert [s.id for s in load_srezero_specs(write(tmp_path / "a.json", config))] == [
        "cache_auth_token_expired"
    ]
    other = {**config, "task_id": "other"}
    assert len(load_srezero_specs(write(tmp_path / "b.json", [config, other]))) == 2
    folder = tmp_path / "configs"
    folder.mkdir()
    write(folder / "one.json", config)
    write(folder / "two.json", other)
    assert sorted(s.id for s in load_srezero_specs(folder)) == ["cache_auth_token_expired", "other"]


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda c: c.pop("root_cause"), "tasks.t.root_cause"),
        (lambda c: c.update(root_cause_keywords="cache"), "tasks.t.root_cause_keywords"),
        (
            lambda c: c["correct_fix"].update(action_type="reboot"),
            "tasks.t.correct_fix.action_type",
        ),
        (lambda c: c.update(max_steps=0), "tasks.t.max_steps"),
    ],
)
def test_bad_config_names_file_and_field(tmp_path, mutate, field):
    config = one_config()
    mutate(config)
    path = write(tmp_path / "bundle.json", {"tasks": {"t": config}})
    with pytest.raises(InputError) as err:
        load_srezero_specs(path)
    assert err.value.field == field
    assert err.value.path == str(path)


def test_bad_json_and_empty_folder(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"tasks": ', encoding="utf-8")
    with pytest.raises(InputError, match="invalid JSON") as err:
        load_srezero_specs(broken)
    assert err.value.field == "line 1"
    with pytest.raises(InputError, match="no SRE-Zero task config"):
        load_srezero_specs(tmp_path / "nothing-here")


def test_run_record_becomes_submissions_with_trajectories():
    subs = load_srezero_submissions(RECORD)
    assert len(subs) == 15
    sub = subs[0]
    assert (sub.incident_id, sub.trial, sub.agent) == ("cache_crash", "1", "scripted")
    assert sub.diagnosis == "Root cause: cache service crashed\nFix: restart cache service"
    actions = sub.trajectory.actions
    assert [a.tool for a in actions] == [
        "check_status",
        "inspect_logs",
        "inspect_metrics",
        "restart_service",
        "resolve_incident",
    ]
    assert actions[3].args == {"service": "cache"}
    assert actions[4].args == {
        "root_cause": "cache service crashed",
        "fix": "restart cache service",
    }
    assert all(a.accepted for a in actions)
    assert actions[4].observation == "Incident resolved."
    assert actions[4].model_extra["reward"] == 0.4875
    assert sub.trajectory.metrics["final_reward"] == 0.9375
    assert sub.trajectory.metrics["evidence_coverage"] == 1.0
    update = next(s for s in subs if s.incident_id == "db_slow_queries_missing_index")
    assert update.trajectory.actions[2].args["value"] is True


def _record(actions: list[tuple[str, str]], task: str = "cache_crash") -> dict:
    trajectory = [
        {"step": i + 1, "action": a, "reward": 0.0, "summary": s}
        for i, (a, s) in enumerate(actions)
    ]
    return {
        "task_id": task,
        "metrics": {"success": False},
        "evidence_coverage": 0.0,
        "trajectory": trajectory,
    }


def test_rejections_and_repeated_episodes(tmp_path):
    records = [
        _record(
            [
                ("inspect logs", "Invalid action."),
                ("resolve_incident(cache down, restart cache)", "Resolution rejected."),
            ]
        ),
        {
            **_record([("check_status(cache)", "cache status is crashed.")]),
            "agent_error": "TimeoutError: model did not answer",
        },
    ]
    subs = load_srezero_submissions(write(tmp_path / "run.json", records))
    assert [s.trial for s in subs] == ["1", "2"]
    first = subs[0].trajectory.actions
    assert (first[0].tool, first[0].accepted) == (None, False)
    assert (first[1].tool, first[1].accepted) == ("resolve_incident", False)
    assert subs[0].diagnosis == "Root cause: cache down\nFix: restart cache"
    assert subs[1].diagnosis == ""
    assert subs[1].trajectory.final_state == {"agent_error": "TimeoutError: model did not answer"}


def test_canonical_form_with_commas_is_recovered_when_accepted(tmp_path):
    action = "resolve_incident(cache crashed, OOM, restart cache)"
    sub = load_srezero_submissions(
        write(tmp_path / "r.json", {"records": [_record([(action, "Incident resolved.")])]})
    )[0]
    step = sub.trajectory.actions[0]
    assert step.args == {"root_cause": "cache crashed", "fix": "OOM, restart cache"}
    assert "quoting" in step.model_extra["parse_note"]
    refused = load_srezero_submissions(
        write(tmp_path / "s.json", [_record([(action, "Invalid action.")])])
    )[0]
    assert refused.trajectory.actions[0].tool is None


def test_baseline_marks_runs_get_distinct_trials(tmp_path):
    run = {"agent": "react", "model": "m1", "records": [_record([])]}
    data = {"runs": [run, {**run, "model": "m2"}]}
    subs = load_srezero_submissions(write(tmp_path / "marks.json", data))
    assert [(s.agent, s.trial) for s in subs] == [
        ("react/m1", "react/m1#1"),
        ("react/m2", "react/m2#1"),
    ]


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"agent": "x"}, "records"),
        ({"records": [{"trajectory": []}]}, "records[0].task_id"),
        ({"records": [{"task_id": "t", "trajectory": {}}]}, "records[0].trajectory"),
        (
            {"records": [{"task_id": "t", "trajectory": [{"action": 3}]}]},
            "records[0].trajectory[0].action",
        ),
        ({"records": [{"task_id": "t", "trajectory": [], "metrics": []}]}, "records[0].metrics"),
    ],
)
def test_bad_run_record_names_field(tmp_path, data, field):
    path = write(tmp_path / "run.json", data)
    with pytest.raises(InputError) as err:
        load_srezero_submissions(path)
    assert err.value.field == field
    assert str(path) in str(err.value)


def test_looks_like_srezero(tmp_path):
    assert looks_like_srezero(CONFIGS)
    assert looks_like_srezero(RECORD)
    assert looks_like_srezero(write(tmp_path / "one.json", one_config()))
    native = [{"id": "x", "ground_truth": "y"}]
    assert not looks_like_srezero(write(tmp_path / "native.json", native))
    assert not looks_like_srezero(SREZERO / "llm_baselines_25task_sweep.csv")
    assert not looks_like_srezero(tmp_path / "missing.json")
    assert looks_like_srezero_specs(CONFIGS) and not looks_like_srezero_specs(RECORD)
    assert looks_like_srezero_submissions(RECORD) and not looks_like_srezero_submissions(CONFIGS)


def test_project_loaders_dispatch_to_this_adapter():
    from ground_truth import load_specs, load_submissions

    assert len(load_specs(CONFIGS)) == 40
    assert {s.source["format"] for s in load_submissions(RECORD)} == {"srezero"}


@pytest.mark.parametrize(
    ("text", "tool", "args"),
    [
        ("inspect_logs(cache)", "inspect_logs", {"service": "cache"}),
        ("  inspect_config ( cache )  ", "inspect_config", {"service": "cache"}),
        (
            "inspect_config(cache, ttl_seconds)",
            "inspect_config",
            {"service": "cache", "key": "ttl_seconds"},
        ),
        (
            "update_config(cache, TTL_SECONDS, 300)",
            "update_config",
            {"service": "cache", "key": "TTL_SECONDS", "value": 300},
        ),
        (
            "update_config(cache, RATIO, 0.5)",
            "update_config",
            {"service": "cache", "key": "RATIO", "value": 0.5},
        ),
        (
            "update_config(db, FLAG, TRUE)",
            "update_config",
            {"service": "db", "key": "FLAG", "value": True},
        ),
        (
            "resolve_incident(\"pool, exhausted\", 'grow pool')",
            "resolve_incident",
            {"root_cause": "pool, exhausted", "fix": "grow pool"},
        ),
        ("escalate(need a human)", "escalate", {"reason": "need a human"}),
    ],
)
def test_action_grammar(text, tool, args):
    assert parse_srezero_action(text) == (tool, args)


@pytest.mark.parametrize(
    "text",
    [
        "inspect logs cache",
        "frobnicate(cache)",
        "inspect_logs()",
        "inspect_logs(cache, web_server)",
        "update_config(cache, TTL_SECONDS)",
        "resolve_incident(, fix)",
        "escalate()",
        "inspect_logs(cache\n)",
        "2fast(cache)",
    ],
)
def test_action_grammar_rejects(text):
    with pytest.raises(SREZeroActionError):
        parse_srezero_action(text)


def test_canonical_format_round_trips():
    for text in (
        "update_config(cache, FLAG, True)",
        "inspect_config(cache)",
        "resolve_incident(a b, c d)",
    ):
        tool, args = parse_srezero_action(text)
        assert format_srezero_action(tool, args) == text
