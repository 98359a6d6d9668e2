"""`--max-cost` in batch mode: before a batch is submitted its worst case (prompt tokens as the
live run estimates them, plus the most completion tokens a call may get, at the batch price)
must fit; the calls past the budget are left out, not asked (never "No"), reported, and the run
ends as a live run stopped by its budget does (exit 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.batch import batch_command, batch_lines, batch_provider, batch_run
from helpers.fake_runs import EXAMPLE_SPECS, submissions

from judge import PromptRenderer, load_rubric, render_prompts
from judge.cli import main
from judge.cli.common import EXIT_PROVIDER
from judge.run.batch import cost as batch_module
from judge.run.batch.budget import BatchBudget, completion_cap, prompt_tokens

PRICE = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "max_output_tokens": 500}
"""A priced model with no batch price: litellm's OpenAI batch discount (50%) applies."""


@pytest.fixture
def priced(monkeypatch) -> None:
    monkeypatch.setattr(batch_module, "_model_info", lambda model: PRICE)


def worst_cases(n: int) -> list[float]:
    """Each call's worst case in the run's order, as the tests expect it to be counted."""
    rubric = load_rubric("sregym-v3")
    prompts = render_prompts(EXAMPLE_SPECS, submissions(n), rubric, PromptRenderer(), "dimension")
    tokens = [len("".join(m["content"] for m in p.messages)) // 4 for _, _, p in prompts]
    return [(t * 1e-6 + 500 * 2e-6) * 0.5 for t in tokens]


def test_under_budget_every_call_is_submitted(tmp_path: Path, priced) -> None:
    with batch_provider() as server:
        result, notes = batch_run(
            server, tmp_path / "b.sqlite", max_cost=sum(worst_cases(4)) + 1e-9
        )
        lines = batch_lines(server)
    assert len(lines) == 12 and result.complete and result.stopped is None
    assert result.usage is not None and 0 < result.usage.cost_usd <= sum(worst_cases(4))
    assert not any("--max-cost" in n for n in notes)


def test_over_budget_a_stable_share_is_submitted_and_the_rest_is_not_asked(
    tmp_path: Path, priced
) -> None:
    worst = worst_cases(4)
    budget = sum(worst[:5]) + worst[5] / 2  # five calls fit, the sixth does not
    with batch_provider() as server:
        result, notes = batch_run(server, tmp_path / "b.sqlite", max_cost=budget)
        lines = batch_lines(server)
        ops = dict(server.batches.ops)
    assert ops["batch_create"] == 1 and len(lines) == 5
    asked = [(c.incident_id, c.trial, c.dimension_id) for c in result.calls]
    units = [(s.incident_id, s.trial, d) for s in submissions(4) for d in ("D1", "D2", "D3")]
    assert asked == units[:5]  # the first five in the run's order
    assert result.stopped is not None and result.stopped.kind == "max_cost"
    assert "7 of 12 calls were left out of the batch, not asked" in result.stopped.message
    left = [j for j in result.judgments if (j.trial, j.dimension_id) >= ("s1", "D3")]
    assert left and all(j.answer is None for j in left)
    assert all("not judged" in (j.unscored_reason or "") for j in left)
    assert all("--max-cost" in (j.unscored_reason or "") for j in left)
    assert sum(len(i.dimensions) for i in result.incomplete) == 7
    assert result.overall.n_failed_questions == 0  # not asked is not a failed call
    assert result.usage is not None and result.usage.cost_usd <= budget
    assert any("submitting 5 of 12 calls" in n and "7 calls left out" in n for n in notes)
    assert result.usage.batch is not None
    assert any("7 calls left out" in r for r in result.usage.batch["reports"])


def test_a_rerun_with_a_larger_budget_asks_only_the_calls_left_out(tmp_path: Path, priced) -> None:
    worst = worst_cases(4)
    store = tmp_path / "b.sqlite"
    with batch_provider() as server:
        batch_run(server, store, max_cost=sum(worst[:5]))
        again, _ = batch_run(server, store, max_cost=sum(worst))
        lines = batch_lines(server)
    assert len(lines) == 12 and len({c.messages_hash for c in lines}) == 12
    assert again.complete and again.usage is not None and again.usage.cache_hits == 5


def test_an_unknown_price_submits_nothing_under_max_cost(tmp_path: Path) -> None:
    with batch_provider() as server:  # fake-judge has no price in litellm's map
        result, _ = batch_run(server, tmp_path / "b.sqlite", n=1, max_cost=10.0)
        ops = dict(server.batches.ops)
    assert not ops and result.stopped is not None and result.stopped.kind == "max_cost"
    assert "unknown" in result.stopped.message
    assert all(j.answer is None for j in result.judgments)


def test_the_cli_says_what_was_left_out_and_exits_as_a_budget_stop(
    tmp_path: Path, priced, capsys
) -> None:
    worst = worst_cases(3)
    with batch_provider() as server:
        args = batch_command(tmp_path, server.url, "--judge-model", "openai/fake-judge")
        args.remove("--no-progress")
        code = main([*args, "--max-cost", f"{sum(worst[:2]) + worst[2] / 2:.12f}"])
    out = capsys.readouterr()
    assert code == EXIT_PROVIDER == 3
    err = " ".join(out.err.split())
    assert "--max-cost: submitting 2 of 9 calls" in err and "7 calls left out, not asked" in err
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["stopped"]["kind"] == "max_cost" and result["exit_code"] == 3
    assert "7 of 9 calls were left out" in result["exit_reason"]


def test_budget_counts_outstanding_lines_until_their_real_price_is_known() -> None:
    budget = BatchBudget(1.0, price=lambda p, c: (p + c) / 1000, cap=lambda questions: 100)
    message = [{"role": "user", "content": "x" * 400}]  # 100 prompt tokens: 0.2 worst case
    assert prompt_tokens(message) == 100
    fit = budget.fit([("a", message, ["q1"]), ("b", message, ["q1"]), ("c", message, ["q1"])])
    assert (fit.count, fit.reason) == (3, None) and budget.outstanding.keys() == {"a", "b", "c"}
    assert budget.fit([("d", message, ["q1"]), ("e", message, ["q1"])]).count == 2  # the limit
    budget.spend(0.05)
    budget.settled(["a", "b", "c", "d", "e"])  # real price 0.05 in all
    assert budget.fit([("f", message, ["q1"])] * 5).count == 4
    assert budget.exhausted is not None and "more than the $0.9500 left" in budget.exhausted
    assert budget.fit([("g", message, ["q1"])]).count == 0  # once exhausted, no later batch


def test_a_calls_worst_case_follows_the_questions_it_asks() -> None:
    budget = BatchBudget(
        1.0, price=lambda p, c: c / 1000, cap=lambda questions: 100 * len(questions)
    )
    message = [{"role": "user", "content": ""}]
    assert budget.worst_case(message, ["q1"]) == pytest.approx(0.1)
    assert budget.worst_case(message, ["q1", "q2", "q3"]) == pytest.approx(0.3)
    fit = budget.fit([("a", message, ["q1"] * 6), ("b", message, ["q1"] * 6)])
    assert fit.count == 1 and fit.reason is not None and "up to 600 completion tokens" in fit.reason


def test_the_completion_cap_is_the_least_of_the_requests_and_the_models() -> None:
    assert completion_cap({"max_tokens": 64}, {"max_output_tokens": 4096}) == 64
    assert completion_cap({}, {"max_output_tokens": 4096}) == 4096
    assert completion_cap({}, None) is None
    # the judge's default reply cap, sent when no max_tokens is given, bounds a call too
    assert completion_cap({}, {"max_output_tokens": 4096}, sent=520) == 520
    assert completion_cap({}, {"max_output_tokens": 500}, sent=520) == 500
    assert completion_cap({}, None, sent=520) == 520
    assert completion_cap({"max_tokens": 64}, None, sent=520) == 64  # the explicit one is sent


def test_a_batch_budget_counts_the_reply_cap_the_requests_send(tmp_path: Path, monkeypatch) -> None:
    """A model able to write 100,000 tokens, asked with the judge's default cap (40 + 160 a
    question): the worst case is that cap, so every call of a small batch fits a budget that
    the model's own maximum would have refused."""
    big = {**PRICE, "max_output_tokens": 100_000}
    monkeypatch.setattr(batch_module, "_model_info", lambda model: big)
    with batch_provider() as server:
        result, _ = batch_run(server, tmp_path / "b.sqlite", n=1, max_cost=0.01)
        lines = batch_lines(server)
    assert len(lines) == 3 and result.complete and result.stopped is None
    assert all(line.max_tokens == 40 + 160 * len(line.question_ids) for line in lines)
