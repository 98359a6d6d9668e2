"""Every judge puts a numeric confidence in [0, 1] on each answer (issue 23): the rules judge
from the strength of what it found, the llm judge from its Yes/No token's probability (asked of
the provider), the agreement of k samples, or its stated level; a panel combines its members'."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from helpers import EXAMPLE

from ground_truth import IncidentSpec, Submission, load_specs, load_submissions
from judge import QuestionAnswer, RulesJudge, evaluate, evaluate_submission
from judge.cli import main
from judge.judges.confidence import (
    STATED,
    Token,
    answer_probabilities,
    panel_score,
    tokens_of,
    with_scores,
)
from judge.judges.llm import LLMJudge, supports_logprobs
from judge.judges.rules.basis import Basis
from judge.judges.rules.case import Case
from judge.judges.rules.confidence import Shape, score
from judge.testing import FakeProvider, FakeProviderConfig


@pytest.fixture(autouse=True)
def _no_judge_env(monkeypatch) -> None:
    for var in ("JUDGE_MODEL", "JUDGE_BASE_URL", "JUDGE_API_KEY"):
        monkeypatch.delenv(var, raising=False)


# ------------------------------------------------------------------ the rules judge


def test_every_rules_answer_has_a_score_and_unscored_ones_none() -> None:
    specs = load_specs(EXAMPLE / "ground_truth")
    result = evaluate(specs, load_submissions(EXAMPLE / "outputs"), judge=RulesJudge())
    for j in result.judgments:
        if j.answer is None:
            assert j.confidence_score is None
        else:
            assert j.confidence_score is not None and 0.0 <= j.confidence_score <= 1.0
    assert len({j.confidence_score for j in result.judgments}) > 3, "scores tell answers apart"


def test_what_predicts_the_rules_errors_lowers_its_scores() -> None:
    plain = Basis(name="exact", claim="explicit")
    assert score(Basis(name="exact", claim="explicit", conflicting=True), "Yes") < score(
        plain, "Yes"
    )
    assert score(plain, "Yes", shape=Shape(blamed=3)) < score(plain, "Yes")
    assert score(plain, "Yes", shape=Shape(hedged=True)) < score(plain, "Yes")
    assert score(Basis(), "Yes", "origin_named") < score(Basis(), "No", "origin_named")
    assert score(plain, "Yes", "symptoms_matched") < score(plain, "Yes", "origin_named")
    assert score(plain, "No", shape=Shape(short=True)) > score(plain, "No")
    assert score(plain, "No", shape=Shape(blamed=0)) > score(plain, "No")
    worst = Basis(conflicting=True)
    assert score(worst, "Yes", "symptoms_matched", Shape(blamed=9, hedged=True)) >= 0.05


def test_the_rules_signals_are_read_from_the_diagnosis() -> None:
    spec = load_specs(EXAMPLE / "ground_truth")[0]
    origin = spec.fault_origin[0].name
    hedged = Case.build(spec, f"{origin} might be the root cause, its pods crash.")
    assert Shape.of(hedged) == Shape(blamed=1, hedged=True, short=True)
    long = Case.build(spec, f"The root cause is {origin}. " + "Latency rose on every path. " * 12)
    assert Shape.of(long) == Shape(blamed=1, hedged=False, short=False)
    assert Shape.of(Case.build(spec, "Latency rose.")).blamed == 0


def test_an_empty_diagnosis_is_no_with_certainty() -> None:
    spec = IncidentSpec(id="x", ground_truth="[fault_spec] component=deployment/a; namespace=n")
    case = evaluate_submission(spec, Submission(incident_id="x", diagnosis="   "))
    assert {(j.answer, j.confidence_score) for j in case.judgments} == {("No", 1.0)}


# ------------------------------------------------------------------ log-probabilities


def _tokens(*pieces: tuple[str, dict[str, float]]) -> list[Token]:
    """Tokens whose alternatives are given as probabilities (the chosen token's own first)."""
    out = []
    for text, alternatives in pieces:
        top = tuple((t, math.log(p)) for t, p in alternatives.items())
        out.append(Token(text, math.log(alternatives.get(text, 1.0)), top))
    return out


def test_the_answer_tokens_probability_among_yes_and_no() -> None:
    tokens = _tokens(
        ('{"answers": [{"id": "D1-Q1", "answer": "', {}),
        ("Yes", {"Yes": 0.6, "No": 0.3, "Maybe": 0.1}),
        ('", "evidence": "the answer \\"No\\" is quoted", "confidence": "High"}, ', {}),
        ('{"id": "D1-Q2", "answer', {}),
        ('":"', {}),
        ("N", {"N": 0.8, "Y": 0.2}),
        ('o"}]}', {}),
    )
    found = answer_probabilities(tokens)
    assert found["D1-Q1"] == pytest.approx(0.6 / 0.9)
    assert found["D1-Q2"] == pytest.approx(0.8)


def test_a_token_that_holds_the_quote_before_the_answer() -> None:
    tokens = _tokens(
        ('{"id":"Q","answer":', {}),
        ('"No', {'"No': 0.7, '"Yes': 0.2, '"': 0.1}),
        ('"}', {}),
    )
    assert answer_probabilities(tokens) == {"Q": pytest.approx(0.7 / 0.9)}


def test_no_logprobs_or_no_alternatives_fall_back_to_the_stated_level() -> None:
    answers = [
        QuestionAnswer(question_id="Q", answer="Yes", confidence="Medium"),
        QuestionAnswer(question_id="R", unscored_reason="x"),
    ]
    assert [a.confidence_score for a in with_scores(answers, None)] == [STATED["Medium"], None]
    lonely = {"content": [{"token": '{"id":"Q","answer":"', "logprob": 0.0, "top_logprobs": []},
                          {"token": "Maybe", "logprob": 0.0, "top_logprobs": []}]}  # fmt: skip
    assert with_scores(answers, lonely)[0].confidence_score == STATED["Medium"]
    assert tokens_of({"content": None}) is None


def test_a_panel_combines_its_members() -> None:
    def a(answer: str, p: float | None = None) -> QuestionAnswer:
        return QuestionAnswer(question_id="Q", answer=answer, confidence_score=p)  # type: ignore[arg-type]

    assert panel_score("Yes", [a("Yes"), a("Yes"), a("No")]) == pytest.approx(2 / 3)
    assert panel_score("Yes", [a("Yes", 0.9), a("No", 0.6)]) == pytest.approx((0.9 + 0.4) / 2)
    assert panel_score("Yes", [QuestionAnswer(question_id="Q")]) is None


def test_logprobs_are_asked_where_litellm_says_the_provider_returns_them() -> None:
    assert supports_logprobs("openai/gpt-4o-mini")
    assert not supports_logprobs("anthropic/claude-3-5-sonnet-20240620")


def _confident(model: str, qid: str, messages, answer: str) -> float:
    return {"D1-Q1": 0.97, "D1-Q2": 0.6}.get(qid, 0.8)


def test_the_llm_judge_reads_its_answers_probabilities_over_http() -> None:
    specs = load_specs(EXAMPLE / "ground_truth")
    subs = load_submissions(EXAMPLE / "outputs")[:2]
    with FakeProvider(FakeProviderConfig(confidence_policy=_confident)) as provider:
        judge = LLMJudge("openai/gpt-4o-mini", api_base=provider.url, api_key="sk-x", logprobs=True)
        result = evaluate(specs, subs, judge=judge)
        asked = provider.calls
    scores = {j.question_id: j.confidence_score for j in result.judgments}
    assert scores["D1-Q1"] == pytest.approx(0.97) and scores["D1-Q2"] == pytest.approx(0.6)
    assert scores["D2-Q1"] == pytest.approx(0.8)
    assert judge.describe()["logprobs"] is True and len(asked) == len(subs)  # one call each


def test_a_server_that_ignores_logprobs_gives_the_stated_level() -> None:
    specs = load_specs(EXAMPLE / "ground_truth")
    subs = load_submissions(EXAMPLE / "outputs")[:1]
    with FakeProvider(FakeProviderConfig(logprobs=False)) as provider:
        judge = LLMJudge("openai/gpt-4o-mini", api_base=provider.url, api_key="sk-x", logprobs=True)
        result = evaluate(specs, subs, judge=judge)
    assert {j.confidence_score for j in result.judgments} <= set(STATED.values())
    assert all(j.confidence_score == STATED[j.confidence] for j in result.judgments)  # type: ignore[index]


def test_samples_are_k_calls_each_stored_and_their_agreement_is_the_confidence(
    tmp_path: Path,
) -> None:
    subs = tmp_path / "subs.jsonl"
    rows = load_submissions(EXAMPLE / "outputs")[:2]
    subs.write_text("".join(s.model_dump_json() + "\n" for s in rows))
    argv = ["eval", "--ground-truth", str(EXAMPLE / "ground_truth"), "--outputs", str(subs),
            "--judge-model", "openai/gpt-4o-mini", "--samples", "3", "--no-progress",
            "--granularity", "dimension", "--result-file", str(tmp_path / "r.json")]  # fmt: skip
    with FakeProvider(FakeProviderConfig(logprobs=False)) as provider:
        assert main([*argv, "--api-base", provider.url]) == 0
        first = len(provider.calls)
        assert main([*argv, "--api-base", provider.url]) == 0
        again = len(provider.calls) - first
    result = json.loads((tmp_path / "r.json").read_text())
    assert first == 2 * 3 * 3 and again == 0, "k calls per dimension, none on the rerun"
    assert result["config"]["judge"]["label"] == "llm:openai/gpt-4o-mini[samples=3]"
    assert {m["params"]["temperature"] for m in result["config"]["judge"]["members"]} == {0.7}
    assert len({m["params"]["seed"] for m in result["config"]["judge"]["members"]}) == 3
    assert result["usage"]["cache_hits"] == 18 and len(result["calls"]) == 18
    own = result["judgments"]
    assert all(j["judge"].endswith("[samples=3]") for j in own)
    members = result["member_judgments"]
    assert all("#" in j["judge"] for j in members)
    for j in own:
        votes = [
            m for m in members if (m["trial"], m["question_id"]) == (j["trial"], j["question_id"])
        ]
        backing = sum(m["answer"] == j["answer"] for m in votes)
        stated = [STATED[m["confidence"]] for m in votes]
        expected = sum(p if m["answer"] == j["answer"] else 1 - p
                       for m, p in zip(votes, stated, strict=True)) / 3  # fmt: skip
        assert backing >= 2 and j["confidence_score"] == pytest.approx(expected)


def test_replay_gives_back_the_stored_scores(tmp_path: Path) -> None:
    subs = tmp_path / "subs.jsonl"
    subs.write_text(load_submissions(EXAMPLE / "outputs")[0].model_dump_json() + "\n")
    base = ["eval", "--ground-truth", str(EXAMPLE / "ground_truth"), "--outputs", str(subs),
            "--no-progress"]  # fmt: skip
    with FakeProvider() as provider:
        assert main([*base, "--judge-model", "openai/gpt-4o-mini", "--api-base", provider.url,
                     "--result-file", str(tmp_path / "llm.json")]) == 0  # fmt: skip
    assert main([*base, "--judge-model", f"replay:{tmp_path / 'llm.sqlite'}",
                 "--result-file", str(tmp_path / "replay.json")]) == 0  # fmt: skip

    def scores(name: str) -> list:
        data = json.loads((tmp_path / name).read_text())
        return sorted((j["question_id"], j["confidence_score"]) for j in data["judgments"])

    assert scores("replay.json") == scores("llm.json")
    assert all(s is not None for _, s in scores("llm.json"))
