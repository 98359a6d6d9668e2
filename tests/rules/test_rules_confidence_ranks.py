"""The rules judge's confidence ranks its answers by how likely they are to be right (issue 39):
a Yes on a diagnosis that names many failing components scores below a Yes on a clear blame,
and a Yes matched on generic symptom words scores below a named origin and below a No of the
same diagnosis.

A Yes read from a mere mention in a short diagnosis that blames something else (`LOOKED_AT`)
is not told apart since the signals were chosen by cross-validation on the tune data: there a
Yes resting on a mention agreed with the labels 66 times in 68 (none of them on the
origin question D1-Q1), so a step for it did not rank held-out families' answers better."""

from __future__ import annotations

from ground_truth import IncidentSpec, Submission
from judge import RulesJudge, evaluate_submission

SCALED_TO_ZERO = (
    "[fault_spec] component=deployment/user-service; namespace=social-network || The deployment is "
    "scaled to zero replicas, removing all serving pods for this dependency and producing immediate "
    "request failures."
)
CLEAR_BLAME = (
    "Root cause: the user-service deployment was scaled to zero replicas, so it has no pods and "
    "requests to it fail."
)
# The origin is only one name in a list of failing services; the rules judge still answers Yes.
LISTED = (
    "Errors in nginx-thrift, compose-post-service, user-service, media-service, text-service. "
    "The frontend is degraded."
)
# The origin is only a place the agent looked; the cause it states is elsewhere.
LOOKED_AT = (
    "Requests failed across the app. We looked at user-service logs among others. The root cause "
    "is a redis memory saturation."
)


def scored(diagnosis: str) -> dict[str, tuple[str | None, float | None]]:
    spec = IncidentSpec(id="case", ground_truth=SCALED_TO_ZERO)
    case = evaluate_submission(
        spec, Submission(incident_id="case", diagnosis=diagnosis), judge=RulesJudge()
    )
    return {j.question_id: (j.answer, j.confidence_score) for j in case.judgments}


def test_a_yes_among_many_failing_names_scores_below_a_yes_on_a_clear_blame() -> None:
    clear = scored(CLEAR_BLAME)
    assert clear["D1-Q1"][0] == "Yes"
    answer, confidence = scored(LISTED)["D1-Q1"]
    assert answer == "Yes", "the fixture must be a Yes the rules judge gives on a list of names"
    assert confidence is not None and clear["D1-Q1"][1] is not None
    assert confidence < clear["D1-Q1"][1]
    assert scored(LOOKED_AT)["D1-Q1"][0] == "Yes"  # see the module docstring


def test_an_impact_matched_on_symptom_words_scores_below_a_named_origin() -> None:
    clear = scored(CLEAR_BLAME)
    assert clear["D3-Q3"][0] == "Yes"
    assert clear["D3-Q3"][1] < clear["D1-Q1"][1]  # type: ignore[operator]


def test_an_impact_yes_scores_below_a_no_of_the_same_diagnosis() -> None:
    answers = scored(LISTED)
    impact = answers["D3-Q3"]
    assert impact[0] == "Yes" and answers["D2-Q1"][0] == "No"
    assert impact[1] < answers["D2-Q1"][1]  # type: ignore[operator]
