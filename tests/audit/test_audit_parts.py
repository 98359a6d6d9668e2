"""The audit's parts one by one: model families, padding and shortening, the sample, the orders,
reseeding, the diagnosis-first prompt, scoring and the cases one answer from the threshold;
and `judge agreement --rank` over two real runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import EXAMPLE

from ground_truth import Submission, load_specs, load_submissions
from judge import PromptRenderer, evaluate, load_rubric
from judge.audit.arms import (
    DIAGNOSIS_FIRST,
    audit_cases,
    diagnosis_first,
    plan_arms,
    reseeded,
    sample_cases,
)
from judge.audit.effects import ArmAnswers, near_threshold, score
from judge.audit.families import family_of, self_grading
from judge.audit.padding import NEUTRAL, pad, shorten
from judge.cli import main
from judge.judges import build_judge
from judge.judges.llm import LLMJudge
from judge.testing import FakeProvider, FakeProviderConfig
from judge.testing.answers import grounded_policy

RUBRIC = load_rubric()
SPECS = load_specs(EXAMPLE / "ground_truth")
SUBMISSIONS = load_submissions(EXAMPLE / "outputs")


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("openai/gpt-4o-mini", "openai"),
        ("o3-mini", "openai"),
        ("codex (Codex CLI)", "openai"),
        ("claudecode (Claude Code CLI)", "anthropic"),
        ("bedrock/anthropic.claude-3-5-sonnet", "anthropic"),
        ("hosted_vllm/Qwen/Qwen2.5-7B-Instruct", "alibaba"),
        ("qwen3:32b/react", "alibaba"),
        ("llama3.3", "meta"),
        ("geminicli (Gemini CLI)", "google"),
        ("openai/fake-judge", None),
        ("opencode", None),
        ("deepseek-r1-distill-qwen-32b", None),  # two families: neither is said
        (None, None),
    ],
)
def test_a_name_points_to_its_family(name, family) -> None:
    assert family_of(name) == family


def test_self_grading_counts_the_judges_family() -> None:
    subs = [
        Submission(incident_id="i", trial="1", diagnosis="x", agent="codex (Codex CLI)"),
        Submission(incident_id="i", trial="2", diagnosis="x", agent="a", agent_model="gpt-5"),
        Submission(incident_id="i", trial="3", diagnosis="x", agent="claudecode (Claude Code CLI)"),
        Submission(incident_id="i", trial="4", diagnosis="x", agent="opencode"),
    ]
    found = self_grading(subs, ["openai/gpt-4o-mini", "openai/fake"])
    assert (
        found.n_own == 2
        and found.n_known == 3
        and found.judge_families == {"openai/gpt-4o-mini": "openai"}
    )
    assert found.by_family == {"anthropic": 1, "openai": 2}
    assert "2 of 4 submissions" in found.warning and "gpt-5" in found.warning
    assert self_grading(subs, ["anthropic/claude-sonnet-4"]).n_own == 1
    assert self_grading(subs, ["rules"]).warning is None


def test_padding_doubles_with_neutral_sentences_and_shortening_cuts_only_filler() -> None:
    text = "The cart service cannot reach valkey-cart: NOAUTH on every command."
    padded = pad(text, seed=1)
    assert padded.startswith(text) and len(padded) >= 2 * len(text)
    added = padded[len(text) :]
    assert {f"{sentence}." for sentence in added.strip().rstrip(".").split(". ")} <= set(NEUTRAL)
    assert not any(word in added.lower() for word in ("cart", "valkey", "noauth"))
    assert pad(text, 1) == padded and pad(text, 2) != padded
    assert shorten(text) is None  # nothing to cut
    wordy = (
        "## Root cause\n\n**Based on my investigation,** I think that the cart service cannot "
        "reach valkey-cart. In summary, the cart service cannot reach valkey-cart. Overall, "
        "every command fails with NOAUTH."
    )
    short = shorten(wordy)
    assert short == "The cart service cannot reach valkey-cart. Every command fails with NOAUTH."


def test_the_sample_spreads_over_incidents_and_is_seeded() -> None:
    cases = audit_cases(SUBMISSIONS)
    picked = sample_cases(cases, 13, seed=0)
    assert len({c.spec_id for c in picked}) == 13
    assert sample_cases(cases, 13, 0) == picked and sample_cases(cases, 13, 1) != picked
    assert len(sample_cases(cases, 20, 0)) == 20 and sample_cases(cases, None, 0) == cases


def test_the_orders_move_the_questions_and_the_plan_names_its_arms() -> None:
    judge = LLMJudge("openai/gpt-4o-mini")
    plan = plan_arms(audit_cases(SUBMISSIONS), RUBRIC, PromptRenderer(), judge, seed=0)
    names = [a.name for a in plan.arms]
    assert names == ["base", "repeat", "order-1", "order-2", "padded", "diagnosis-first",
                     "named-openai", "named-anthropic"]  # fmt: skip
    first = [q.id for d in plan.arms[2].rubric.dimensions for q in d.questions]
    own = [q.id for d in RUBRIC.dimensions for q in d.questions]
    assert first == own[::-1] and plan.arms[2].rubric.hash != RUBRIC.hash
    assert plan.skipped == {
        "verbosity-shortened": "no diagnosis has filler enough to cut without changing what it says"
    }
    assert "running gpt-4o-mini." in plan.arms[6].cases[0].diagnosis
    assert "running claude-sonnet-4." in plan.arms[7].cases[0].diagnosis


def test_a_judge_is_reseeded_leaf_by_leaf_and_the_rules_judge_is_not() -> None:
    panel = build_judge(["openai/a", "openai/b"], api_base="http://127.0.0.1:9/v1")
    again = reseeded(panel, 1000)
    assert [m.name for m in again.judges()] == ["llm:openai/a~1000", "llm:openai/b~1000"]
    assert [m.seed for m in again.judges()] == [1000, 1000]
    assert [m.seed for m in panel.judges()] == [0, 0]  # the original is left as it was
    assert reseeded(build_judge(None), 1000) is None


def test_the_diagnosis_comes_first_unless_the_templates_say_where(tmp_path: Path) -> None:
    spec = SPECS[0]
    sub = next(s for s in SUBMISSIONS if s.incident_id == spec.id)
    from judge.checklist.rubric import whole_submission

    text = diagnosis_first(PromptRenderer()).render(spec, sub, whole_submission(RUBRIC.dimensions))
    user = text.messages[1]["content"]
    assert user.index("BEGIN DIAGNOSIS") < user.index("# Ground truth") < user.index("Question ids")
    (tmp_path / "case.j2").write_text((DIAGNOSIS_FIRST / "case.j2").read_text())
    assert diagnosis_first(PromptRenderer(tmp_path)) is None


def test_scoring_and_the_cases_one_answer_from_the_threshold() -> None:
    result = evaluate(SPECS, SUBMISSIONS)
    arm = ArmAnswers("base", "base")
    for case in result.cases:
        key = (case.incident_id, case.trial)
        arm.answers[key] = {j.question_id: j.answer == "Yes" for j in case.judgments if j.answer}
        assert score(arm.answers[key], RUBRIC) == (case.composite, case.passed)
        arm.composite[key], arm.passed[key] = case.composite, case.passed
    near = near_threshold(arm, RUBRIC)
    expected = 0
    for key, answers in arm.answers.items():
        for question in answers:
            flipped = {**answers, question: not answers[question]}
            if score(flipped, RUBRIC)[1] != arm.passed[key]:
                expected += 1
                break
    assert near == expected > 0


def test_agreement_rank_compares_two_real_runs(tmp_path: Path, capsys) -> None:
    rows = []
    for spec in SPECS:
        origin = spec.fault_origin[0].name
        truth = spec.ground_truth.split("||")[-1].strip()
        for agent, text in (
            ("good", f"The fault is in {origin}. {truth}"),
            ("named", f"{origin} looks unhealthy."),
            ("wrong", "The frontend is broken because the database is out of memory."),
        ):
            rows.append({"incident_id": spec.id, "trial": agent, "agent": agent, "diagnosis": text})
    subs = tmp_path / "subs.jsonl"
    subs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    gt = EXAMPLE / "ground_truth"
    assert main(["eval", "-g", str(gt), "-o", str(subs), "-r", str(tmp_path / "rules.json")]) == 0
    with FakeProvider(FakeProviderConfig(answer_policy=grounded_policy)) as provider:
        assert main(
            ["eval", "-g", str(gt), "-o", str(subs), "-r", str(tmp_path / "llm.json"),
             "--judge-model", "openai/m", "--api-base", provider.url, "--no-store"]
        ) == 0  # fmt: skip
    capsys.readouterr()
    out = tmp_path / "rank.json"
    code = main(
        ["agreement", "--rank", str(tmp_path / "rules.json"), str(tmp_path / "llm.json"),
         "-o", str(out), "--bootstrap", "200"]
    )  # fmt: skip
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())
    assert code == 0 and report["raters"] == ["rules", "openai/m"]
    assert report["agents"] == ["good", "named", "wrong"]
    assert "Kendall tau-b" in printed and "pass rate (mean composite) per agent" in printed
    composite = next(p for p in report["pairs"] if p["metric"] == "mean_composite")
    assert composite["kendall_tau"]["value"] > 0 and composite["n_agents"] == 3
