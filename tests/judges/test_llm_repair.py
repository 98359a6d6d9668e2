"""Small-model robustness: almost-right replies are repaired only when unambiguous, and counted."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from ground_truth import IncidentSpec, Submission
from judge import JudgeTask, PromptRenderer, load_rubric
from judge.judges.clients import Reply
from judge.judges.llm import LLMJudge
from judge.judges.repair import UnparseableReply, parse_reply

IDS = ["D1-Q1", "D1-Q2", "D1-Q3"]
ITEMS = [
    {"id": "D1-Q1", "answer": "Yes", "evidence": "port 8082", "confidence": "High"},
    {"id": "D1-Q2", "answer": "No", "evidence": "", "confidence": "Low"},
    {"id": "D1-Q3", "answer": "Yes", "evidence": "checkout", "confidence": "Medium"},
]
CLEAN = json.dumps({"answers": ITEMS})


def answers(content: str) -> list[tuple[str, str | None]]:
    return [(a.question_id, a.answer) for a in parse_reply(content, IDS).answers]


EXPECTED = [("D1-Q1", "Yes"), ("D1-Q2", "No"), ("D1-Q3", "Yes")]


def test_a_clean_reply_needs_no_repair() -> None:
    parsed = parse_reply(CLEAN, IDS)
    assert parsed.clean and parsed.repairs == []
    assert parsed.answers[1].evidence == "" and parsed.answers[2].confidence == "Medium"


@pytest.mark.parametrize(
    ("content", "repair"),
    [
        (f"```json\n{CLEAN}\n```", "code fence"),
        (f"Here is my grading:\n{CLEAN}\nHope this helps.", "JSON extracted from text"),
        (CLEAN.replace('"Yes"', '"yes"').replace('"No"', '"NO"'), "answer case"),
        (CLEAN.replace("]}", ",]}").replace('"High"}', '"High",}'), "trailing comma"),
        (json.dumps({"result": {"answers": ITEMS}}), "answers wrapped in another key"),
        (json.dumps({"checklist": ITEMS}), "answers wrapped in another key"),
        (json.dumps(ITEMS), "bare answer list"),
        (repr({"answers": ITEMS}), "single quotes"),
        (CLEAN.replace('"answers"', '"Answers"'), "key case"),
        (CLEAN.replace('"High"', '"high"'), "confidence case"),
        (CLEAN.replace(', "confidence": "Low"', ""), "confidence missing"),
    ],
)
def test_almost_right_replies_are_repaired_and_named(content: str, repair: str) -> None:
    parsed = parse_reply(content, IDS)
    assert [(a.question_id, a.answer) for a in parsed.answers] == EXPECTED
    assert repair in parsed.repairs and not parsed.clean


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (CLEAN.replace('"No"', '"Maybe"'), "answer 'Maybe'"),
        (CLEAN.replace('"No"', "false"), "lacks 'id' or 'answer'"),
        (f"{CLEAN}\nor perhaps\n{CLEAN.replace('Yes', 'No')}", "2 different JSON objects"),
        (json.dumps({"a": {"answers": ITEMS}, "b": 1}), "no 'answers' list"),
        (CLEAN[:-20], "no JSON object found"),
        ("The diagnosis is correct.", "no JSON object found"),
        ("   ", "empty reply"),
        (json.dumps({"answers": ITEMS[:2]}), "missing ids: D1-Q3"),
        ("[" * 50_000 + "]" * 50_000, "not the requested JSON"),
    ],
)
def test_ambiguous_or_broken_replies_are_unparseable(content: str, problem: str) -> None:
    with pytest.raises(UnparseableReply, match=problem):
        parse_reply(content, IDS)


def test_the_same_object_twice_is_one_reading() -> None:
    assert answers(f"{CLEAN}\n\nAgain: {CLEAN}") == EXPECTED


# ------------------------------------------------------------------ counted per run

SPEC = IncidentSpec(id="checkout-port", ground_truth="[fault_spec] component=deployment/checkout")
SUB = Submission(incident_id="checkout-port", diagnosis="checkout's address uses port 8082.")


def task() -> JudgeTask:
    dim = load_rubric().dimensions[0]
    return JudgeTask(SPEC, SUB, dim, PromptRenderer().render(SPEC, SUB, dim))


def scripted_judge(monkeypatch, replies: list[str]) -> LLMJudge:
    script = iter(replies)

    async def call(messages, question_ids):
        return Reply(content=next(script), prompt_tokens=10, completion_tokens=5)

    judge = LLMJudge("openai/gpt-4o-mini", max_reasks=2)
    monkeypatch.setattr(judge, "_call", call)
    return judge


def test_reply_outcomes_are_counted_and_shared(monkeypatch) -> None:
    fenced = f"```\n{CLEAN}\n```"
    judge = scripted_judge(monkeypatch, [CLEAN, fenced, "no", CLEAN, "no", "no", "still no"])
    verdicts = [asyncio.run(judge.judge(task())) for _ in range(4)]
    assert [v.error_kind for v in verdicts] == [None, None, None, "unparseable"]
    replies = judge.describe()["replies"]
    assert {k: replies[k] for k in ("total", "clean", "repaired", "reasked", "unscored")} == {
        "total": 7,
        "clean": 2,
        "repaired": 1,
        "reasked": 3,
        "unscored": 1,
    }
    assert replies["shares"]["clean"] == pytest.approx(2 / 7, abs=1e-4)
    assert sum(replies["shares"].values()) == pytest.approx(1.0, abs=1e-3)
    assert judge.describe()["repairs"] == {"code fence": 1}


def test_no_replies_means_no_shares() -> None:
    judge = LLMJudge("openai/gpt-4o-mini")
    assert judge.describe()["replies"]["shares"]["clean"] is None
