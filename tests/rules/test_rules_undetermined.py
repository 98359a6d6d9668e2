"""A diagnosis that says its root cause is not established, or asks what to check next (issue 22,
failure mode 2: mention as blame). The labelling guide's reading (benchmarks/validity/real/GUIDE.md
and labeller a's readings for "insufficient evidence" findings): a finding that reports failures
at a service and says the cause could not be established names nothing as faulty; a component it
names as the cause is still blamed; what a next check is to verify is a question, not a claim.

No published MIT/Apache agent text of these shapes was found (the FORGE, OpenRCA and SREGym files
in tests/fixtures and ../shared/corpus hold none; the real set's Assistant V3 runs do, but have no
licence), so the diagnoses below are written for these tests, in that agent's report layout."""

from __future__ import annotations

from ground_truth import IncidentSpec, Submission
from judge import evaluate_submission

TRUTH = IncidentSpec(
    id="internal_traffic_policy_local",
    ground_truth=(
        "[fault_spec] component=recommendation; namespace=astronomy-shop || The recommendation "
        "Service's internalTrafficPolicy is set to Local, so callers on nodes without a "
        "recommendation pod get connection failures."
    ),
)


def judged(text: str) -> dict[str, str]:
    case = evaluate_submission(TRUTH, Submission(incident_id=TRUTH.id, diagnosis=text))
    return {j.question_id: j.answer or "unscored" for j in case.judgments}


UNDETERMINED = (
    "> **Finding:** Recommendation failures are present, but the root cause cannot be "
    "established from the bounded telemetry window.\n\n**Status:** insufficient evidence\n\n"
    "**Impact:** 64 of 64 recommendation requests failed."
)


def test_a_service_reported_failing_is_not_blamed_when_the_cause_is_not_established() -> None:
    got = judged(UNDETERMINED)
    assert got["D1-Q1"] == got["D1-Q3"] == got["D3-Q1"] == "No"


def test_the_same_report_with_the_cause_stated_blames_it() -> None:
    stated = UNDETERMINED.replace(
        "but the root cause cannot be established from the bounded telemetry window",
        "because the recommendation Service's internalTrafficPolicy is Local",
    ).replace("insufficient evidence", "likely cause")
    got = judged(stated)
    assert got["D1-Q1"] == got["D1-Q3"] == "Yes"


def test_a_component_named_as_the_cause_stays_blamed_when_the_trigger_is_unknown() -> None:
    got = judged(
        "> **Root cause:** The recommendation Service's internalTrafficPolicy is Local, so "
        "frontend pods on other nodes cannot reach it. The underlying cause of the change is "
        "unknown."
    )
    assert got["D1-Q1"] == "Yes"


def test_no_fault_present_in_a_service_does_not_blame_it() -> None:
    got = judged(
        "> **Finding:** No server-side fault is present in `recommendation` during the requested "
        "window, so no root cause can be established from the available telemetry."
    )
    assert got["D1-Q1"] == got["D1-Q3"] == "No"


def test_what_a_next_check_asks_is_no_claim() -> None:
    """`verify whether X ...`: X is what is to be checked, not what is blamed (here the only
    place the origin is named)."""
    got = judged(
        "> **Finding:** Frontend requests failed with ECONNREFUSED, but the evidence does not "
        "establish why the failures began.\n\n**Next check:** Verify whether the refused "
        "destination IPs were serving recommendation pods and whether their readiness changed."
    )
    assert got["D1-Q1"] == got["D1-Q3"] == got["D3-Q1"] == "No"


def test_a_cause_stated_before_the_next_check_stays_blamed() -> None:
    got = judged(
        "> **Root cause:** The recommendation Service's internalTrafficPolicy is Local, so "
        "frontend pods on other nodes get connection refused.\n\n**Next check:** Verify whether "
        "frontend pods run on nodes without a recommendation pod."
    )
    assert got["D1-Q1"] == got["D1-Q3"] == "Yes"
