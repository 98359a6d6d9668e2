"""Every aggregate is taken over the composite's population: complete cases only.

Incident `a` has one complete case (every Yes but D1, which is all No) and one incomplete case
(D2 unscored; D1 all Yes). Incident `b` has only an incomplete case. A dimension mean that
counted incomplete cases would disagree with the composite computed from the same cases.
"""

from __future__ import annotations

import pytest

from ground_truth import IncidentSpec, Submission
from judge import (
    DimensionVerdict,
    EvalOptions,
    EvalResult,
    JudgeTask,
    QuestionAnswer,
    evaluate,
    load_rubric,
)
from judge.checklist.scoring import OverallSummary

RUBRIC = load_rubric()
WEIGHTS = RUBRIC.scoring.weights
SPECS = [IncidentSpec(id=i, ground_truth=f"incident {i}") for i in ("a", "b")]
SUBS = [
    Submission(incident_id="a", trial="good", diagnosis="x", agent="one"),
    Submission(incident_id="a", trial="partial", diagnosis="x", agent="one"),
    Submission(incident_id="b", trial="partial", diagnosis="x", agent="two"),
    Submission(incident_id="b", trial="good", diagnosis="x", agent="two"),
]


class Scripted:
    """Complete case: D1 all No, the rest Yes. Partial case: D1 all Yes, D2 unscored."""

    name = "scripted"

    def describe(self) -> dict:
        return {"name": self.name, "model": None}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        sub, dim = task.submission, task.dimension.id
        partial = sub.trial == "partial"
        if sub.incident_id == "b" and sub.trial == "good":
            partial = True  # b has no complete case at all
        if partial and dim == "D2":
            answers = [
                QuestionAnswer(question_id=q, unscored_reason="cannot tell")
                for q in task.question_ids
            ]
        else:
            answer = "No" if dim == "D1" and not partial else "Yes"
            answers = [QuestionAnswer(question_id=q, answer=answer) for q in task.question_ids]
        return DimensionVerdict(answers=answers)


@pytest.fixture(scope="module")
def scripted_result() -> EvalResult:
    return evaluate(
        SPECS, SUBS, RUBRIC, Scripted(), options=EvalOptions(k=1, granularity="dimension")
    )


def weighted(means: dict[str, float | None]) -> float:
    return sum(WEIGHTS[d] * (m or 0.0) for d, m in means.items())


def test_incident_dimension_means_count_complete_cases_only(scripted_result: EvalResult) -> None:
    a = next(i for i in scripted_result.incidents if i.incident_id == "a")
    assert a.n_trials == 2 and a.n_complete == 1
    assert a.dimension_means == {"D1": 0.0, "D2": 1.0, "D3": 1.0}
    assert a.mean_composite == pytest.approx(weighted(a.dimension_means))


def test_an_incident_without_a_complete_case_has_no_dimension_mean(
    scripted_result: EvalResult,
) -> None:
    b = next(i for i in scripted_result.incidents if i.incident_id == "b")
    assert b.n_complete == 0 and b.mean_composite is None
    assert set(b.dimension_means.values()) == {None}


def _same_population(summary: OverallSummary) -> None:
    n = summary.mean_composite.n
    assert all(e.n == n for e in summary.dimension_means.values())
    means = {d: e.value for d, e in summary.dimension_means.items()}
    assert summary.mean_composite.value == pytest.approx(weighted(means))


def test_overall_dimension_means_use_the_composites_incidents(scripted_result: EvalResult) -> None:
    overall = scripted_result.overall
    assert overall.n_incidents_scored == 1 and overall.mean_composite.n == 1
    assert overall.dimension_means["D1"].value == 0.0
    _same_population(overall)


def test_per_agent_summaries_use_the_same_population(scripted_result: EvalResult) -> None:
    assert scripted_result.by_agent is not None
    one, two = scripted_result.by_agent["one"], scripted_result.by_agent["two"]
    _same_population(one)
    assert one.dimension_means["D1"].value == 0.0
    assert two.n_incidents_scored == 0 and two.mean_composite.n == 0
    assert all(e.n == 0 and e.value is None for e in two.dimension_means.values())
