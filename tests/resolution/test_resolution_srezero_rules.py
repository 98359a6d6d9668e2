"""SRE-Zero's semantics, rule by rule, on small hand-made trajectories."""

from __future__ import annotations

import json

import pytest
from helpers import FIXTURES

from ground_truth import Action, Submission, Trajectory
from ground_truth.formats.srezero import SREZeroTaskConfig, config_to_spec
from judge.resolution import ResolutionResult, check_resolution
from judge.resolution.srezero_text import contains, match_fix_text, match_root_cause

CONFIGS = FIXTURES / "srezero" / "task_configs_all_40.json"

POOL = {
    "task_id": "toy_pool",
    "root_cause": "database connection pool exhaustion",
    "root_cause_keywords": ["database", "pool", "exhaustion"],
    "relevant_evidence": [
        "inspect_logs:web_server",
        "inspect_metrics:database",
        "inspect_config:database:DB_POOL_SIZE",
    ],
    "correct_fix": {
        "action_type": "update_config",
        "service": "database",
        "key": "DB_POOL_SIZE",
        "min_numeric_value": 80,
        "fix_keywords": ["database", "pool"],
    },
    "distractor_services": ["web_server"],
    "max_steps": 8,
}
RESOLVE = "resolve_incident(database connection pool exhaustion, increase database pool size)"
FIX = "update_config(database, DB_POOL_SIZE, 100)"
SOLVED = (
    "inspect_logs(web_server)",
    "inspect_metrics(database)",
    "inspect_config(database, DB_POOL_SIZE)",
    FIX,
    RESOLVE,
)
"""An episode that finds the cause, applies the fix and resolves."""


def task(config: dict) -> SREZeroTaskConfig:
    return SREZeroTaskConfig.model_validate(config)


def real(task_id: str) -> dict:
    return json.loads(CONFIGS.read_text())["tasks"][task_id]


def run(*actions: str | Action, config: dict = POOL) -> ResolutionResult:
    spec = config_to_spec(task(config), config, None)
    steps = [a if isinstance(a, Action) else Action(raw=a) for a in actions]
    sub = Submission(incident_id=spec.id, diagnosis="", trajectory=Trajectory(actions=steps))
    result = check_resolution(spec, sub)
    assert result is not None
    return result


def value(result: ResolutionResult, check: str):
    return result.checks[check].value


# ---------------------------------------------------------------- root cause text


@pytest.mark.parametrize(
    ("text", "matched", "hits"),
    [
        ("Database connection-pool exhaustion under load", True, 3),  # whole phrase
        ("the pool of the database ran dry", True, 2),  # ceil(3/2) = 2 keywords
        ("pool exhausted", False, 1),  # 'exhaustion' is not in 'exhausted'; 1 < 2
        ("DATABASE_POOL", True, 2),  # `_` reads as a space, case ignored
        ("web server slow", False, 0),
    ],
)
def test_root_cause_phrase_or_half_the_keywords(text, matched, hits):
    found = match_root_cause(task(POOL), text)
    assert found.matched is matched
    assert len(found.keywords_matched) == hits
    assert found.keywords_required == 2


def test_root_cause_keyword_threshold_rounds_up_and_is_at_least_one():
    four = task({**POOL, "root_cause_keywords": ["a1", "b2", "c3", "d4"]})
    assert match_root_cause(four, "a1 b2").matched
    assert not match_root_cause(four, "a1").matched
    none = task({**POOL, "root_cause_keywords": []})
    assert match_root_cause(none, "database connection pool exhaustion").matched
    assert not match_root_cause(none, "database pool").matched


# ---------------------------------------------------------------- fix text


def fix_of(config: dict):
    return task(config).correct_fix


def test_fix_all_keywords():
    found = match_fix_text(fix_of(POOL), "Raise the DATABASE connection-pool size")
    assert (found.matched, found.via) == (True, "keywords")
    assert found.keywords_missing == []


def test_fix_service_and_key_alias_fallback():
    found = match_fix_text(fix_of(POOL), "grow the db pool size")  # 'database' keyword missing
    assert (found.matched, found.via) == (True, "alias_fallback")
    assert (found.service_alias, found.key_alias) == ("db", "db pool size")
    assert found.keywords_missing == ["database"]


def test_short_aliases_must_be_whole_words():
    assert not contains("db", "feedback loop")
    assert contains("db", "the db is full")
    assert not match_fix_text(fix_of(POOL), "tune the feedback pool").matched


def test_fix_fallback_needs_the_exact_value_when_the_task_fixes_one():
    health = fix_of(real("load_balancer_health_check_misconfig"))  # keywords: health check, path
    found = match_fix_text(health, "point the lb health check at /healthz")
    assert (found.matched, found.key_alias, found.value_term) == (True, "health check", "/healthz")
    assert not match_fix_text(health, "point the lb health check at /ready").matched


def test_fix_fallback_boolean_value_words():
    maintenance = fix_of(real("database_maintenance_mode_left_on"))  # exact_value false
    assert match_fix_text(maintenance, "turn off db maintenance mode").matched
    assert not match_fix_text(maintenance, "look at db maintenance mode").matched
    weight = fix_of(real("load_balancer_bad_backend_weight"))  # exact_value 50
    assert match_fix_text(weight, "set lb backend weight back to 50").matched
    assert not match_fix_text(weight, "set lb backend weight to 150").matched


def test_restart_fix_needs_service_alias_and_restart_verb():
    crash = fix_of(real("cache_crash"))  # fix keywords: restart, cache
    assert match_fix_text(crash, "restart the cache").via == "keywords"
    rebooted = match_fix_text(crash, "reboot the cache")
    assert (rebooted.matched, rebooted.restart_verb) == (True, "reboot")
    assert not match_fix_text(crash, "repair the cache").matched
    assert not match_fix_text(crash, "reboot the database").matched


def test_every_expected_fix_text_of_the_40_configs_matches():
    for task_id, config in json.loads(CONFIGS.read_text())["tasks"].items():
        resolve = [p for p in config["expected_action_pattern"] if p.startswith("resolve")]
        root, fix = resolve[0][len("resolve_incident(") : -1].split(", ", 1)
        assert match_root_cause(task(config), root).matched, task_id
        assert match_fix_text(task(config).correct_fix, fix).matched, task_id


# ---------------------------------------------------------------- whole episodes


def test_solved_episode_success_coverage_and_reward():
    result = run(*SOLVED)
    assert result.success is True
    assert result.evidence_coverage == 1.0
    assert value(result, "steps") == 5
    assert value(result, "final_reward") == pytest.approx(0.2 + 0.25 + 0.25 + 0.2 + 0.1 * 3 / 8)
    remediation = result.checks["success"].evidence["remediation"]
    assert (remediation["raw"], remediation["index"]) == (FIX, 3)
    assert result.checks["correct_remediation"].evidence["before_resolve"] is True
    assert result.srezero.terminal_reason == "resolved"


def test_resolve_before_fix_is_premature_and_ends_the_episode():
    result = run("inspect_metrics(database)", RESOLVE, FIX, RESOLVE)
    assert result.success is False
    assert value(result, "premature_resolution") is True
    assert value(result, "root_cause_matched") is True
    assert value(result, "correct_remediation") is False  # the fix came after the end
    assert result.srezero.actions_after_done == 2
    assert value(result, "steps") == 2
    assert "no correct remediation before resolving" in result.checks["success"].detail
    # evidence 0.2 x 1/3 + root cause 0.25 - premature 0.20
    assert value(result, "final_reward") == pytest.approx(0.2 / 3 + 0.25 - 0.20)


def test_right_keywords_but_no_remediation_fails():
    result = run("inspect_logs(web_server)", "inspect_metrics(database)", RESOLVE)
    assert result.success is False
    assert (value(result, "root_cause_matched"), value(result, "fix_matched")) == (True, True)
    attempt = result.srezero.resolve_attempts[0]
    assert attempt.remediation_applied is False
    assert value(result, "premature_resolution") is True


def test_fix_on_a_distractor_service_is_wrong_and_counted():
    result = run("restart_service(web_server)", "update_config(web_server, MAX_WORKERS, 64)")
    assert value(result, "wrong_remediations") == 2
    assert value(result, "distractor_remediations") == 2
    assert result.srezero.reward.penalties["wrong_remediation"] == pytest.approx(-0.30)
    assert result.srezero.reward.penalties["restart_unrelated_service"] == pytest.approx(-0.10)
    assert result.srezero.remediations[0].reason == "expected update_config, got restart_service"
    assert result.success is False


def test_wrong_remediation_then_right_one_still_succeeds():
    result = run("restart_service(web_server)", FIX, RESOLVE)
    assert result.success is True
    assert value(result, "wrong_remediations") == 1
    assert value(result, "distractor_remediations") == 1


def test_remediation_value_rules():
    low = run("update_config(database, DB_POOL_SIZE, 50)", RESOLVE)
    assert low.success is False
    assert low.srezero.remediations[0].reason == "value 50 < 80"
    text = run("update_config(database, DB_POOL_SIZE, lots)")
    assert text.srezero.remediations[0].reason == "value 'lots' is not a number"
    lower_key = run("update_config(database, db_pool_size, 80)", RESOLVE)
    assert lower_key.success is True  # keys compare case-insensitively, >= is inclusive
    wrong_key = run("update_config(database, QUERY_TIMEOUT_MS, 9000)", RESOLVE)
    assert wrong_key.success is False


def test_exact_value_rules():
    config = real("cache_auth_token_expired")
    resolve = "resolve_incident(cache authentication token expired, refresh cache token)"
    assert run("update_config(cache, AUTH_TOKEN_VALID, true)", resolve, config=config).success
    assert not run("update_config(cache, AUTH_TOKEN_VALID, yes)", resolve, config=config).success


def test_invalid_action_strings():
    result = run(
        "inspect logs of the database",  # not function-call syntax
        "inspect_logs(queue)",  # unknown service
        "frobnicate(database)",  # unknown tool
        "update_config(database, DB_POOL_SIZE)",  # missing the value
        "inspect logs of the database",  # the same invalid string again
    )
    assert value(result, "invalid_actions") == 5
    assert value(result, "repeated_actions") == 1
    assert value(result, "steps") == 5
    statuses = [s.status for s in result.srezero.steps]
    assert statuses == [
        "invalid_syntax",
        "invalid_service",
        "invalid_syntax",
        "invalid_syntax",
        "invalid_syntax",
    ]
    penalties = result.srezero.reward.penalties
    assert penalties["invalid_action"] == pytest.approx(-0.20)
    assert penalties["repeated_invalid_action"] == pytest.approx(-0.10)
    listed = result.checks["invalid_actions"].evidence["actions"]
    assert [a["index"] for a in listed] == [0, 1, 2, 3, 4]


def test_repeated_actions_without_new_evidence():
    result = run(
        "inspect_logs(web_server)",
        "inspect_logs(web_server)",  # repeat, nothing new
        "inspect_config(database)",  # no key: reveals DB_POOL_SIZE
        "inspect_config(database, DB_POOL_SIZE)",  # not a repeat, but nothing new either
        FIX,
        FIX,  # repeated remediation: counted twice, penalised once as repeated
    )
    assert value(result, "repeated_actions") == 2
    assert [s.repeated for s in result.srezero.steps] == [False, True, False, False, False, True]
    assert result.srezero.evidence_found == [
        "inspect_logs:web_server",
        "inspect_config:database:DB_POOL_SIZE",
    ]
    assert result.srezero.metrics.remediation_actions == 2
    assert result.srezero.metrics.correct_remediations == 2
    assert result.checks["repeated_actions"].evidence["actions"] == [
        {"index": 1, "raw": "inspect_logs(web_server)"},
        {"index": 5, "raw": FIX},
    ]


def test_step_budget_ends_the_episode():
    config = {**POOL, "max_steps": 3}
    result = run(
        "inspect_logs(web_server)", "inspect_metrics(database)", FIX, RESOLVE, config=config
    )
    assert result.success is False
    assert result.srezero.terminal_reason == "step_budget_exhausted"
    assert result.srezero.actions_after_done == 1
    assert value(result, "final_reward") == pytest.approx(0.2 * 2 / 3 + 0.25)


def test_unfinished_episode_has_no_final_reward():
    result = run("inspect_logs(web_server)", FIX)
    assert result.srezero.terminated is False
    assert value(result, "final_reward") == 0.0
    assert result.srezero.reward.total == pytest.approx(0.2 / 3 + 0.25)
    assert result.checks["success"].detail == "never resolved (trajectory ended)"


def test_non_terminal_wrong_resolution_allows_a_retry():
    config = {**POOL, "terminal_on_wrong_resolution": False}
    result = run("resolve_incident(web server bug, restart web)", FIX, RESOLVE, config=config)
    assert result.success is True
    assert result.srezero.metrics.premature_resolutions == 1
    assert [a.accepted for a in result.srezero.resolve_attempts] == [False, True]


def test_escalate_ends_the_episode():
    result = run("escalate(need help)", FIX)
    assert result.srezero.terminal_reason == "escalated"
    assert result.srezero.metrics.remediation_actions == 0


def test_structured_actions_are_used_and_values_coerced():
    result = run(
        Action(
            tool="update_config",
            args={"service": "database", "key": "DB_POOL_SIZE", "value": "120"},
        ),
        Action(
            tool="resolve_incident",
            args={"root_cause": "database pool exhaustion", "fix": "bigger database pool"},
        ),
    )
    assert result.success is True
    assert result.srezero.remediations[0].value == 120


def test_a_remediation_the_simulator_refused_is_not_credited():
    result = run(Action(raw=FIX, accepted=False), RESOLVE)
    assert result.success is False
    assert result.srezero.remediations[0].reason == (
        "matches the fix but the simulator did not accept it"
    )
    assert [d.what for d in result.discrepancies] == ["accepted"]


def test_recorded_metrics_are_compared():
    spec = config_to_spec(task(POOL), POOL, None)
    recorded = {"success": True, "total_steps": 1, "brand_new_metric": 3}
    trajectory = Trajectory(actions=[Action(raw="inspect_logs(web_server)")], metrics=recorded)
    result = check_resolution(
        spec, Submission(incident_id="toy_pool", diagnosis="", trajectory=trajectory)
    )
    assert [(d.what, d.ours, d.recorded) for d in result.discrepancies] == [
        ("success", False, True)
    ]
    assert result.recorded == recorded


def test_episode_marks():
    result = run(*SOLVED)
    reward = 0.2 + 0.25 + 0.25 + 0.2 + 0.1 * 3 / 8
    expected = 40 + 25 * reward + 20 + 10 * (1 - 4 / 7) + 5
    assert value(result, "marks") == pytest.approx(expected, abs=1e-3)


def test_replays_are_shared_only_inside_one_check_resolution_call():
    from judge.resolution.srezero_checks import _REPLAYS, replay_cache, srezero_episode

    spec = config_to_spec(task(POOL), POOL, None)
    solved = Trajectory(actions=[Action(raw=FIX), Action(raw=RESOLVE)])
    unsolved = Trajectory(actions=[Action(raw=RESOLVE)])
    with replay_cache():
        first = srezero_episode(spec, solved)
        assert srezero_episode(spec, solved) is first
        assert srezero_episode(spec, unsolved).metrics.success is False
    assert _REPLAYS.get() is None
    assert srezero_episode(spec, solved) is not first
    assert run(FIX, RESOLVE).success and not run(RESOLVE).success
