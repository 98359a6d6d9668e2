"""The panel judge: majority vote, ties, members kept, and its agreement table."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from helpers import one_incident_args

from ground_truth import IncidentSpec, Submission
from judge import (
    DimensionVerdict,
    JudgeTask,
    PromptRenderer,
    QuestionAnswer,
    evaluate_submission,
    load_rubric,
)
from judge.checklist.judgment import unscored
from judge.cli import main
from judge.judges import PanelJudge, build_judge
from judge.testing import FakeProvider, FakeProviderConfig

SPEC = IncidentSpec(
    id="x", ground_truth="[fault_spec] component=deployment/checkout; namespace=shop || bad port"
)
SUB = Submission(incident_id="x", diagnosis="checkout uses the wrong port")


class Scripted:
    """A judge that answers every question the same way (or fails)."""

    def __init__(self, name: str, answer: str | None):
        self.name, self.answer = name, answer

    def describe(self) -> dict:
        return {"name": "scripted", "model": None}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        if self.answer is None:
            return unscored(task.question_ids, "server error from scripted", "server")
        return DimensionVerdict(
            answers=[
                QuestionAnswer(
                    question_id=q, answer=self.answer, evidence=self.name, confidence="High"
                )
                for q in task.question_ids
            ]
        )


def verdict(panel: PanelJudge) -> DimensionVerdict:
    dim = load_rubric().dimensions[0]
    return asyncio.run(
        panel.judge(JudgeTask(SPEC, SUB, dim, PromptRenderer().render(SPEC, SUB, dim)))
    )


def test_majority_wins_and_members_are_kept() -> None:
    v = verdict(PanelJudge([Scripted("a", "Yes"), Scripted("b", "No"), Scripted("c", "Yes")]))
    assert {a.answer for a in v.answers} == {"Yes"}
    assert {a.confidence for a in v.answers} == {"Medium"}
    assert set(v.members) == {"a", "b", "c"}
    assert v.members["b"].answers[0].answer == "No"


@pytest.mark.parametrize(("tie", "expected"), [("unscored", None), ("yes", "Yes"), ("no", "No")])
def test_ties(tie: str, expected: str | None) -> None:
    v = verdict(PanelJudge([Scripted("a", "Yes"), Scripted("b", "No")], tie=tie))
    assert {a.answer for a in v.answers} == {expected}
    if expected is None:
        assert all("tie" in a.unscored_reason for a in v.answers)


def test_failed_member_is_left_out_of_the_vote_and_reported() -> None:
    v = verdict(PanelJudge([Scripted("a", "No"), Scripted("b", None), Scripted("c", "No")]))
    assert {a.answer for a in v.answers} == {"No"}
    assert "b: server error" in v.error


def test_no_member_scored_is_unscored_never_no() -> None:
    v = verdict(PanelJudge([Scripted("a", None), Scripted("b", None)]))
    assert {a.answer for a in v.answers} == {None}


def test_members_need_distinct_names() -> None:
    with pytest.raises(ValueError, match="distinct"):
        PanelJudge([Scripted("a", "Yes"), Scripted("a", "No")])


def test_panel_scores_only_its_own_answers() -> None:
    case = evaluate_submission(
        SPEC,
        SUB,
        judge=PanelJudge([Scripted("a", "Yes"), Scripted("b", "Yes"), Scripted("c", "No")]),
    )
    assert case.composite == pytest.approx(1.0)
    assert {j.judge for j in case.judgments} == {"panel"}


def test_repeat_builds_named_repetitions() -> None:
    panel = build_judge(None, repeat=3)
    assert [m.name for m in panel.members] == ["rules#1", "rules#2", "rules#3"]


def test_cli_panel_of_three_models_over_http(tmp_path: Path, capsys, monkeypatch) -> None:
    def policy(answer: str):
        return lambda qid, messages: answer

    with (
        FakeProvider(FakeProviderConfig(models=["a"], answer_policy=policy("Yes"))) as yes1,
        FakeProvider(FakeProviderConfig(models=["b"], answer_policy=policy("No"))) as no,
        FakeProvider(FakeProviderConfig(models=["c"], answer_policy=policy("Yes"))) as yes2,
    ):
        out = tmp_path / "panel.json"
        args = one_incident_args(out)
        for model in ("a", "b", "c"):
            args += ["--judge-model", f"openai/{model}"]
        # each model on its own server: route by model name (one --api-base serves all in real use)
        from judge.judges import llm

        original = llm.LLMJudge.__init__
        bases = {"openai/a": yes1.url, "openai/b": no.url, "openai/c": yes2.url}

        def routed(self, model, **kw):
            original(self, model, **{**kw, "api_base": bases[model], "retry_wait": 0.01})

        monkeypatch.setattr(llm.LLMJudge, "__init__", routed)
        assert main(args) == 0
    result = json.loads(out.read_text())
    assert {j["judge"] for j in result["judgments"]} == {"panel"}
    members = {j["judge"] for j in result["member_judgments"]}
    assert members == {"llm:openai/a", "llm:openai/b", "llm:openai/c"}
    assert {j["answer"] for j in result["judgments"]} == {"Yes"}
    assert result["config"]["judge"]["name"] == "panel"
    assert len(result["config"]["judge"]["members"]) == 3
    printed = capsys.readouterr().out
    assert "llm:openai/b" in printed and "Pairwise agreement" in printed
    # the panel's result reads as one rater for judge agreement (members are skipped)
    assert main(["agreement", str(out), str(out), "--bootstrap", "50"]) == 0
