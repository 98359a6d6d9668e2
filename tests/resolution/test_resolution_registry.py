"""The check registry, user checks, the SREGym mitigation check and format detection."""

from __future__ import annotations

import pytest

from ground_truth import Action, IncidentSpec, Submission, Trajectory
from judge.resolution import (
    CheckOutcome,
    check_resolution,
    register_check,
    registered_checks,
    resolution_format,
    summarize_resolution,
    unregister_check,
)


@pytest.fixture
def cleanup():
    added: list[tuple[str, str]] = []
    yield added
    for fmt, name in added:
        unregister_check(fmt, name)


def spec(fmt: str | None = "toysim") -> IncidentSpec:
    source = {"format": fmt} if fmt else {}
    return IncidentSpec(id="inc", ground_truth="disk full on db", source=source)


def sub(final_state: dict | None = None, metrics: dict | None = None, trajectory=True):
    traj = (
        Trajectory(
            actions=[Action(raw="df -h")], final_state=final_state or {}, metrics=metrics or {}
        )
        if trajectory
        else None
    )
    return Submission(incident_id="inc", diagnosis="db disk full", trajectory=traj)


def test_user_checks_plug_in_per_format(cleanup):
    @register_check("toysim", "success")
    def disk_ok(spec, trajectory):
        return trajectory.final_state.get("disk_free_pct", 0) > 10

    @register_check("toysim", "free_space")
    def free_space(spec, trajectory):
        return trajectory.final_state.get("disk_free_pct")

    cleanup += [("toysim", "success"), ("toysim", "free_space")]
    good = check_resolution(spec(), sub({"disk_free_pct": 40}))
    assert good.format == "toysim"
    assert good.success is True
    assert good.checks["free_space"] == CheckOutcome(name="free_space", value=40)
    bad = check_resolution(spec(), sub({}))
    assert bad.success is False
    assert bad.not_applicable == ["free_space"]
    summary = summarize_resolution([good, bad, None])
    assert (summary.n_results, summary.n_success, summary.success_rate) == (2, 1, 0.5)
    assert summary.checks["success"].n_true == 1
    assert summary.checks["free_space"].mean == 40.0
    assert summary.by_format == {"toysim": 2}
    assert summary.srezero is None


def test_wildcard_checks_apply_everywhere_and_formats_override(cleanup):
    register_check("*", "acted")(lambda s, t: len(t.actions) > 0)
    register_check("toysim", "acted")(lambda s, t: 7)
    cleanup += [("*", "acted"), ("toysim", "acted")]
    assert check_resolution(spec("native"), sub()).checks["acted"].value is True
    assert check_resolution(spec(), sub()).checks["acted"].value == 7
    assert "acted" in registered_checks("anything")


def test_duplicate_registration_is_refused_unless_replaced(cleanup):
    register_check("toysim", "dup")(lambda s, t: True)
    cleanup.append(("toysim", "dup"))
    with pytest.raises(ValueError, match="already registered"):
        register_check("toysim", "dup")(lambda s, t: False)
    register_check("toysim", "dup", replace=True)(lambda s, t: False)
    assert check_resolution(spec(), sub()).checks["dup"].value is False


def test_a_broken_check_is_recorded_not_raised(cleanup):
    register_check("toysim", "success")(lambda s, t: 1 / 0)
    register_check("toysim", "weird")(lambda s, t: ["a list"])
    cleanup += [("toysim", "success"), ("toysim", "weird")]
    result = check_resolution(spec(), sub())
    assert result.success is None
    assert result.checks["success"].error == "ZeroDivisionError: division by zero"
    assert "expected CheckOutcome" in result.checks["weird"].error
    assert summarize_resolution([result]).checks["success"].n_errors == 1


def test_format_names_are_normalised(cleanup):
    register_check("Toy-Sim", "named")(lambda s, t: True)
    cleanup.append(("toysim", "named"))
    assert "named" in registered_checks("toy_sim")


@pytest.mark.parametrize(
    ("final_state", "metrics", "expected"),
    [
        ({"Mitigation.success": True}, {}, True),
        ({"Mitigation.success": "False"}, {}, False),
        ({"Mitigation": {"success": "true", "fault_applied": False}}, {}, True),
        ({"Mitigation": "{'success': False, 'pvc_pd': []}"}, {}, False),
        ({}, {"mitigation_success": 1}, True),
        ({"mitigation": {"success": 0}}, {}, False),
    ],
)
def test_sregym_mitigation_success(final_state, metrics, expected):
    result = check_resolution(spec("sregym"), sub(final_state, metrics))
    assert result.format == "sregym"
    assert result.success is expected
    assert result.checks["success"].passed is expected


def test_sregym_unreadable_or_missing_mitigation():
    unreadable = check_resolution(spec("sregym"), sub({"Mitigation.success": "maybe"}))
    assert unreadable.success is None
    assert "unreadable" in unreadable.checks["success"].error
    missing = check_resolution(spec("sregym"), sub({"Detection.success": True}))
    assert missing.success is None
    assert missing.not_applicable == ["success"]


def test_format_detection():
    assert resolution_format(spec("SRE-Zero"), sub()) == "srezero"
    assert resolution_format(spec(None), sub({"Mitigation.success": True})) == "sregym"
    assert resolution_format(spec("native"), sub()) == "native"
    with_extra = IncidentSpec(id="inc", ground_truth="x", extra={"srezero": {}})
    assert resolution_format(with_extra, sub()) == "srezero"


def test_no_trajectory_gives_none_and_mismatched_ids_raise():
    assert check_resolution(spec(), sub(trajectory=False)) is None
    other = Submission(incident_id="other", diagnosis="", trajectory=Trajectory())
    with pytest.raises(ValueError, match="does not belong"):
        check_resolution(spec(), other)
