"""A run whose replies cannot be used stops within a few rounds of its in-flight limit (issue
35): when the first K calls to end (K = twice the requests in flight, at least 10) gave no
usable answer, or nearly every call of a rolling window of 2K did not, no further call starts,
the command exits 3 naming the cause (replies that are not the JSON asked for, answers to the
wrong question ids, refusals), and what was answered is kept. An explicit `--max-errors`
replaces the rule. The provider is the fake one on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import EXAMPLE_GT

from judge.cli import main
from judge.run.limits import UnusableReplies
from judge.testing import FakeProvider, FakeProviderConfig


def submissions(path: Path, n: int) -> Path:
    """`n` submissions of the example's incidents, each diagnosis its own (no cache hits)."""
    ids = sorted(p.stem for p in EXAMPLE_GT.glob("*.yaml"))
    with path.open("w") as handle:
        for i in range(n):
            row = {"incident_id": ids[i % len(ids)], "trial": f"t{i}", "diagnosis": f"d {i}"}
            handle.write(json.dumps(row) + "\n")
    return path


def run(tmp_path: Path, config: FakeProviderConfig, n: int, *extra: str) -> tuple[int, dict, int]:
    result = tmp_path / "r.json"
    with FakeProvider(config) as provider:
        code = main(
            [
                "eval", "--ground-truth", str(EXAMPLE_GT),
                "--outputs", str(submissions(tmp_path / "s.jsonl", n)),
                "--result-file", str(result), "--judge-model", "openai/fake-judge",
                "--api-base", provider.url, "--no-progress", "--no-store", *extra,
            ]
        )  # fmt: skip
        requests = len(provider.calls)
    return code, json.loads(result.read_text()), requests


@pytest.mark.parametrize(
    ("fault", "cause"),
    [("malformed", "not the JSON asked for"), ("refusal", "refusals")],
)
def test_every_reply_unusable_stops_within_a_few_rounds(
    tmp_path: Path, capsys, fault: str, cause: str
) -> None:
    code, result, requests = run(tmp_path, FakeProviderConfig(fault_rates={fault: 1.0}), 200)
    err = capsys.readouterr().err
    assert code == 3 and result["stopped"]["kind"] == "max_errors"
    assert "no usable answer" in result["exit_reason"] and cause in result["exit_reason"]
    assert "exit 3:" in err and cause in " ".join(err.split())
    # 10 calls of 3 requests each (two re-asks), and the calls under way when the tenth
    # ended (4 workers per request slot: 20) with at most 2 requests each: not 600
    assert requests <= 10 * 3 + 20 * 2, requests
    assert result["complete"] is False and len(result["incomplete"]) > 150


def test_answers_to_the_wrong_ids_are_named_as_such(tmp_path: Path) -> None:
    config = FakeProviderConfig(stop_after_answers=1)  # one answer of three, every time
    code, result, requests = run(tmp_path, config, 200, "--structured-output", "json_object")
    assert code == 3 and "wrong question ids" in result["exit_reason"], result["exit_reason"]
    assert requests <= 10 * 3 + 20 * 2


def test_a_run_that_answers_keeps_going_and_keeps_its_answers(tmp_path: Path) -> None:
    """Half the requests malformed: a call fails only when its three tries all are (1 in 8);
    the run goes to the end, every other call answered."""
    config = FakeProviderConfig(fault_rates={"malformed": 0.5}, seed=3)
    code, result, _ = run(tmp_path, config, 120, "--max-unscored", "0.9")
    assert code == 0 and result["stopped"] is None
    assert result["overall"]["n_scored_questions"] > 0


def test_max_errors_replaces_the_rule(tmp_path: Path) -> None:
    config = FakeProviderConfig(fault_rates={"malformed": 1.0})
    code, result, requests = run(tmp_path, config, 40, "--max-errors", "1.0")
    assert code == 3 and result["stopped"] is None  # every call made, as the budget allows
    assert requests == 40 * 3


def test_what_was_answered_before_the_replies_went_bad_is_kept(tmp_path: Path) -> None:
    schedule = ["ok"] * 30 + ["malformed"] * 2000
    config = FakeProviderConfig(fault_schedule=schedule)
    code, result, requests = run(tmp_path, config, 200, "--max-concurrent", "1")
    assert code == 3 and "no usable answer" in result["exit_reason"]
    answered = [c for c in result["calls"] if not c.get("error")]
    assert len(answered) == 30
    assert requests < 30 + 2 * 10 * 3 + 10


# ------------------------------------------------------------------ the rule, on its own


def outcomes(rule: UnusableReplies, kinds: list[str | None]) -> str | None:
    said = None
    for kind in kinds:
        said = said or rule.finished(kind, f"{kind} reason")
    return said


def test_the_first_k_calls_unusable_stop() -> None:
    rule = UnusableReplies(first=10)
    assert outcomes(rule, ["unparseable"] * 9) is None
    assert "the first 10 calls" in (outcomes(rule, ["unparseable"]) or "")


def test_one_usable_answer_among_the_first_k_is_enough_to_go_on() -> None:
    rule = UnusableReplies(first=10)
    assert outcomes(rule, ["unparseable"] * 5 + [None] + ["unparseable"] * 10) is None


def test_a_window_nearly_all_unusable_stops_later_in_the_run() -> None:
    rule = UnusableReplies(first=10)
    assert outcomes(rule, [None] * 50) is None
    assert outcomes(rule, ["refusal", "unparseable", None] + ["unparseable"] * 15) is None
    said = outcomes(rule, ["unparseable"])  # 18 of the last 20: two answered, 18 not
    assert said is not None and "18 of the last 20 calls" in said and "refusals (1)" in said


def test_provider_errors_are_left_to_the_retries_and_the_cooldown() -> None:
    rule = UnusableReplies(first=10)
    assert outcomes(rule, ["server", "timeout", "rate_limit", "connection"] * 20) is None


def test_the_rules_k_follows_the_requests_in_flight() -> None:
    assert UnusableReplies.for_concurrency(5).first == 10
    assert UnusableReplies.for_concurrency(20).first == 40
    assert UnusableReplies.for_concurrency(1).first == 10
