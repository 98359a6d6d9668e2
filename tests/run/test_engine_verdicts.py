"""The engine checks every verdict against the dimension asked, whichever judge made it:
each question answered exactly once, and a judge that raises costs its own questions only."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import EXAMPLE

from ground_truth import IncidentSpec, Submission, load_specs, load_submissions
from judge import DimensionVerdict, EvalOptions, EvalResult, JudgeTask, QuestionAnswer, evaluate
from judge.judges import PanelJudge
from judge.judges.replay import ReplayJudge
from judge.store import Store

SPECS = load_specs(EXAMPLE / "ground_truth")
SUBS = load_submissions(EXAMPLE / "outputs")
SPEC = IncidentSpec(id="x", ground_truth="checkout listens on the wrong port")
SUB = Submission(incident_id="x", diagnosis="checkout uses the wrong port")

Answers = Callable[[JudgeTask], list[QuestionAnswer]]


class Custom:
    """A user's own judge class: answers whatever `answers(task)` says, Yes to each id given."""

    def __init__(self, answers: Answers, name: str = "mine"):
        self.answers, self.name = answers, name

    def describe(self) -> dict:
        return {"name": self.name, "model": None}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        return DimensionVerdict(answers=self.answers(task))


def yes(*ids: str) -> list[QuestionAnswer]:
    return [QuestionAnswer(question_id=i, answer="Yes", confidence="High") for i in ids]


def first_only(task: JudgeTask) -> list[QuestionAnswer]:
    return yes(task.question_ids[0])


def run(judge, specs=(SPEC,), subs=(SUB,), **options) -> EvalResult:
    """One call per dimension: these tests are about one dimension's verdict."""
    options = {"granularity": "dimension", **options}
    return evaluate(list(specs), list(subs), judge=judge, options=EvalOptions(**options))


def test_a_judge_answering_one_of_three_questions_is_not_complete() -> None:
    result = run(Custom(first_only))
    case = result.cases[0]
    assert not result.complete and result.overall.n_failed_questions == 6
    omitted = [j for j in result.judgments if j.answer is None]
    assert len(omitted) == 6 and all(j.unscored_reason.startswith("judge_omitted") for j in omitted)
    assert result.errors == {"judge_omitted": 3}
    assert all(d.n_scored == 1 and d.n_unscored == 2 for d in case.dimensions)


@pytest.mark.parametrize(
    "answers, named",
    [
        (lambda t: yes(*t.question_ids, "D9-Q9"), "unknown question id D9-Q9"),
        (lambda t: yes(*t.question_ids, t.question_ids[1]), "duplicate id"),
    ],
    ids=["unknown", "duplicate"],
)
def test_an_unknown_or_duplicate_id_rejects_the_whole_verdict(answers: Answers, named: str) -> None:
    result = run(Custom(answers))
    assert len(result.judgments) == 9  # never a fourth question
    assert all(j.answer is None and named in j.unscored_reason for j in result.judgments)
    assert result.errors == {"unparseable": 3} and result.cases[0].composite is None
    assert result.attempt_errors == {"unparseable": 3}


class Exploding:
    """Answers every question Yes, except that it raises for one incident."""

    name = "exploding"

    def describe(self) -> dict:
        return {"name": self.name, "model": None}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        if task.submission.incident_id == SUBS[1].incident_id:
            raise RuntimeError("my judge broke")
        return DimensionVerdict(answers=yes(*task.question_ids))


def test_a_judge_that_raises_loses_only_its_own_unit_and_the_run_goes_on() -> None:
    result = run(Exploding(), SPECS, SUBS, max_concurrent=1)
    broken = [c for c in result.cases if c.incident_id == SUBS[1].incident_id]
    others = [c for c in result.cases if c.incident_id != SUBS[1].incident_id]
    assert broken and all(c.composite is None for c in broken)
    assert others and all(c.composite == 1.0 for c in others)
    reasons = {j.unscored_reason for j in result.judgments if j.answer is None}
    assert reasons == {"judge_error: exploding raised RuntimeError: my judge broke"}
    assert result.errors == {"judge_error": 3 * len(broken)}


def test_a_panel_member_is_checked_like_any_judge() -> None:
    broken = SUBS[1].incident_id
    result = run(PanelJudge([Custom(first_only, "a"), Exploding()]), SPECS, SUBS)
    every = [*result.judgments, *result.member_judgments]
    omitted = [j for j in every if j.judge == "a" and j.answer is None]
    assert omitted and all(j.unscored_reason.startswith("judge_omitted") for j in omitted)
    assert all(not j.question_id.endswith("Q1") for j in omitted)
    errors = [j for j in every if j.judge == "exploding" and j.answer is None]
    assert {j.incident_id for j in errors} == {broken}
    votes = [j for j in result.judgments if j.judge == "panel" and j.incident_id == broken]
    assert votes and all((j.answer is not None) == j.question_id.endswith("Q1") for j in votes)
    assert result.overall.n_failed_questions == sum(j.answer is None for j in votes)


def test_a_replayed_verdict_is_checked_too(tmp_path: Path) -> None:
    """A store written by an older or foreign tool may hold a verdict for other questions."""

    class Cached(Custom):
        def cache_identity(self) -> dict:
            return {"model": "mine", "params": {}}

    store = tmp_path / "s.sqlite"
    run(Cached(lambda t: yes(*t.question_ids)), store=store)
    with sqlite3.connect(store) as db:
        db.execute("UPDATE judgments SET answers = replace(answers, '-Q2', '-Q7')")
    db.close()
    result = run(ReplayJudge(Store(store, readonly=True)))
    assert len(result.judgments) == 9  # the dimension's questions, not the stored ones
    assert all(j.answer is None for j in result.judgments)
    assert all("unknown question id" in j.unscored_reason for j in result.judgments)
    assert result.errors == {"unparseable": 3}
