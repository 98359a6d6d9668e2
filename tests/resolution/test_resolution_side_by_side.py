"""The diagnosis-vs-resolution table, its conditional rates and the evidence-coverage view."""

from __future__ import annotations

import pytest

from judge.resolution import ResolutionResult, side_by_side


def res(key: str, success: bool | None, coverage: float | None = None) -> ResolutionResult:
    return ResolutionResult(
        incident_id=key, trial="1", format="test", success=success, evidence_coverage=coverage
    )


def keyed(*results: ResolutionResult) -> dict:
    return {r.key: r for r in results}


def test_two_by_two_and_conditional_rates():
    diagnosis = {
        ("a", "1"): True,
        ("b", "1"): True,
        ("c", "1"): True,
        ("d", "1"): False,
        ("e", "1"): False,
    }
    resolution = keyed(
        res("a", True), res("b", True), res("c", False), res("d", True), res("e", False)
    )
    table = side_by_side(diagnosis, resolution)
    assert table.n_pairs == 5
    t = table.table
    assert (t.passed_resolved, t.passed_unresolved, t.failed_resolved, t.failed_unresolved) == (
        2,
        1,
        1,
        1,
    )
    passed, failed = table.p_resolved_given_passed, table.p_resolved_given_failed
    assert (passed.numerator, passed.denominator, passed.value) == (2, 3, pytest.approx(2 / 3))
    assert (failed.numerator, failed.denominator, failed.value) == (1, 2, 0.5)
    assert table.excluded == []


def test_undefined_rate_when_no_diagnosis_failed():
    table = side_by_side({("a", "1"): True}, keyed(res("a", False)))
    assert table.p_resolved_given_passed.value == 0.0
    failed = table.p_resolved_given_failed
    assert failed.value is None and failed.denominator == 0
    assert "failed" in failed.undefined_reason


def test_exclusions_are_listed_with_reasons():
    diagnosis = {("a", "1"): None, ("b", "1"): True, ("c", "1"): True, ("d", "1"): False}
    resolution = {
        ("a", "1"): res("a", True),
        ("b", "1"): None,
        ("c", "1"): res("c", None),
        ("e", "1"): res("e", True),
    }
    table = side_by_side(diagnosis, resolution)
    assert table.n_pairs == 0
    assert [(x.key, x.reason) for x in table.excluded] == [
        ("a/1", "diagnosis unscored"),
        ("b/1", "no resolution result (no trajectory)"),
        ("c/1", "resolution success unknown"),
        ("d/1", "no resolution result (no trajectory)"),
        ("e/1", "no diagnosis verdict"),
    ]
    assert table.p_resolved_given_passed.value is None
    assert table.p_resolved_given_passed.undefined_reason


def test_evidence_coverage_vs_success():
    results = keyed(
        res("a", True, 1.0),
        res("b", True, 0.5),
        res("c", False, 1.0),
        res("d", False, 0.0),
        res("e", False, 0.25),
        res("f", False, 0.999),
        res("g", None, 0.7),
        res("h", True, None),
    )
    view = side_by_side({}, results).coverage
    assert view.n == 6  # g (success unknown) and h (no coverage) left out
    assert view.mean_coverage_success == pytest.approx(0.75)
    assert view.mean_coverage_failure == pytest.approx((1.0 + 0.0 + 0.25 + 0.999) / 4)
    buckets = {b.label: (b.n, b.n_success, b.success_rate) for b in view.buckets}
    assert buckets == {
        "0%-<25%": (1, 0, 0.0),
        "25%-<50%": (1, 0, 0.0),
        "50%-<75%": (1, 1, 1.0),
        "75%-<100%": (1, 0, 0.0),
        "100%": (2, 1, 0.5),
    }


def test_empty_inputs():
    table = side_by_side({}, {})
    assert table.n_pairs == 0
    assert table.coverage.mean_coverage_success is None
    assert all(b.success_rate is None for b in table.coverage.buckets)


def test_plain_string_keys_work():
    table = side_by_side({"x": True}, {"x": res("x", True)})
    assert table.table.passed_resolved == 1
