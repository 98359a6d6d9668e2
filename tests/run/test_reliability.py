"""Reliable runs against the fake provider on 127.0.0.1: faults counted apart from verdicts,
the store (zero calls on a rerun, misses that say why, panels per member), fail-fast on 401,
pause file, --max-cost, --max-errors, and no API key in anything the run writes.

No test asserts a time; latencies are small and only order events.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import EXAMPLE_GT, REPO
from helpers.fake_runs import EXAMPLE_SUBS, llm_judge, submissions, write_submissions

import judge.run.control as control
from ground_truth import Submission, load_specs
from judge import EvalOptions, evaluate
from judge.cli import main
from judge.testing import FakeProvider, FakeProviderConfig, read_call_log

SPECS = load_specs(EXAMPLE_GT)
FAULT_TO_KIND = {
    "429": "rate_limit",
    "500": "server",
    "hang": "timeout",
    "malformed": "unparseable",
}


def cli(tmp_path: Path, provider: FakeProvider, n: int, *extra: str, name: str = "r") -> int:
    outputs = tmp_path / "subs.jsonl"
    if not outputs.exists():
        write_submissions(outputs, n)
    return main(
        [
            "eval",
            "--ground-truth",
            str(EXAMPLE_GT),
            "--outputs",
            str(outputs),
            "--result-file",
            str(tmp_path / f"{name}.json"),
            "--api-base",
            provider.url,
            "--granularity",
            "dimension",
            "--no-progress",
            *(extra or ("--judge-model", "openai/fake-judge")),
        ]
    )


def load(tmp_path: Path, name: str = "r") -> dict:
    return json.loads((tmp_path / f"{name}.json").read_text())


# ------------------------------------------------------------------ faults apart from verdicts


@pytest.mark.slow
def test_faulty_provider_every_judgment_scored_or_unscored_and_faults_counted() -> None:
    config = FakeProviderConfig(
        seed=11,
        fault_rates={"429": 0.3, "500": 0.1, "hang": 0.05, "malformed": 0.05},
        retry_after=0,
        hang_seconds=30,  # far past the timeout: a busy CPU must not turn a hang into a hangup
    )
    with FakeProvider(config) as provider:
        judge = llm_judge(provider, timeout=2.0, max_retries=5)
        options = EvalOptions(granularity="dimension", max_concurrent=10, cooldown=0.01)
        result = evaluate(SPECS, submissions(50), judge=judge, options=options)
        injected = provider.injected_counts()
        n_requests = len(provider.calls)

    assert result.stopped is None and not result.incomplete
    assert len(result.calls) == 150 and len(result.judgments) == 450
    assert sum(injected.values()) > 50  # the faults really happened
    expected = Counter({FAULT_TO_KIND[fault]: n for fault, n in injected.items()})
    assert Counter(result.attempt_errors) == expected
    assert result.usage.requests == n_requests
    assert result.usage.retries == n_requests - 150
    failed = {(c.incident_id, c.trial, c.dimension_id): c for c in result.calls if c.error_kind}
    assert result.errors == dict(Counter(c.error_kind for c in failed.values()))
    for j in result.judgments:
        call = failed.get((j.incident_id, j.trial, j.dimension_id))
        if call is None:
            assert j.answer in {"Yes", "No"}
        else:  # explicitly unscored with the provider's reason, never counted as No
            assert j.answer is None and j.unscored_reason == call.error
    assert result.overall.n_unscored_questions == 3 * len(failed)
    assert result.overall.n_failed_questions == 3 * len(failed)
    assert result.complete == (not failed)  # a rerun asks the failed calls again


# ------------------------------------------------------------------ the store


def test_second_identical_run_makes_zero_calls(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    with FakeProvider(FakeProviderConfig(seed=2)) as provider:
        first = evaluate(
            SPECS,
            submissions(10),
            judge=llm_judge(provider),
            options=EvalOptions(granularity="dimension", store=store),
        )
        n_first = len(provider.calls)
        second = evaluate(
            SPECS,
            submissions(10),
            judge=llm_judge(provider),
            options=EvalOptions(granularity="dimension", store=store),
        )
        n_second = len(provider.calls) - n_first
    assert n_first == 30 and n_second == 0
    assert [j.answer for j in first.judgments] == [j.answer for j in second.judgments]
    assert all(c.cached for c in second.calls) and second.usage.cache_hits == 30
    assert second.usage.requests == 0 and second.usage.cost_usd == 0


def test_changed_template_or_temperature_misses_and_says_why(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    templates = tmp_path / "templates"
    templates.mkdir()
    system = (REPO / "judge" / "templates" / "system.j2").read_text()
    (templates / "system.j2").write_text(system + "\nBe brief.\n")
    from judge import PromptRenderer

    with FakeProvider(FakeProviderConfig(seed=2)) as provider:
        subs = submissions(3)
        evaluate(
            SPECS,
            subs,
            judge=llm_judge(provider),
            options=EvalOptions(granularity="dimension", store=store),
        )
        before = len(provider.calls)
        new_template = evaluate(
            SPECS,
            subs,
            judge=llm_judge(provider),
            renderer=PromptRenderer(templates),
            options=EvalOptions(granularity="dimension", store=store),
        )
        hotter = evaluate(
            SPECS,
            subs,
            judge=llm_judge(provider, temperature=0.5),
            options=EvalOptions(granularity="dimension", store=store),
        )
        after = len(provider.calls)
    assert after - before == 18
    assert {c.cache_miss for c in new_template.calls} == {"prompt changed"}
    assert {c.cache_miss for c in hotter.calls} == {"params changed: temperature 0.0 -> 0.5"}


def test_refresh_asks_again(tmp_path: Path) -> None:
    with FakeProvider(FakeProviderConfig(seed=2)) as provider:
        assert cli(tmp_path, provider, 2) == 0
        assert cli(tmp_path, provider, 2, "--judge-model", "openai/fake-judge", "--refresh") == 0
        n_calls = len(provider.calls)
    assert n_calls == 12
    assert (tmp_path / "r.sqlite").is_file()  # the default store sits beside the result file


def test_errors_are_stored_and_asked_again_next_time(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    config = FakeProviderConfig(fault_schedule=["500"] * 3)
    with FakeProvider(config) as provider:
        first = evaluate(
            SPECS,
            submissions(1),
            judge=llm_judge(provider, max_retries=0),
            options=EvalOptions(
                granularity="dimension", store=store, max_concurrent=1, cooldown_after=0
            ),
        )
        second = evaluate(
            SPECS,
            submissions(1),
            judge=llm_judge(provider, max_retries=0),
            options=EvalOptions(granularity="dimension", store=store, max_concurrent=1),
        )
        outcomes = [c.outcome for c in provider.calls]
    assert first.errors == {"server": 3}
    assert second.errors == {} and not any(c.cached for c in second.calls)
    assert outcomes == ["500"] * 3 + ["ok"] * 3


def test_panel_members_are_cached_each_under_its_own_name(tmp_path: Path) -> None:
    with FakeProvider(FakeProviderConfig(seed=5)) as provider:
        assert (
            cli(tmp_path, provider, 2, "--judge-model", "openai/fake-judge", "--repeat", "2") == 0
        )
        two = len(provider.calls)
        assert (
            cli(tmp_path, provider, 2, "--judge-model", "openai/fake-judge", "--repeat", "2") == 0
        )
        again = len(provider.calls) - two
        assert (
            cli(tmp_path, provider, 2, "--judge-model", "openai/fake-judge", "--repeat", "3") == 0
        )
        third = len(provider.calls) - two - again
    result = load(tmp_path)
    assert (two, again, third) == (12, 0, 6)
    by_judge = Counter((c["judge"], c["cached"]) for c in result["calls"])
    assert by_judge == {
        ("llm:openai/fake-judge#1", True): 6,
        ("llm:openai/fake-judge#2", True): 6,
        ("llm:openai/fake-judge#3", False): 6,
    }


# ------------------------------------------------------------------ fail fast, budgets


def test_401_stops_the_run_at_once_without_a_retry_storm(tmp_path: Path, capsys) -> None:
    with FakeProvider(FakeProviderConfig(fault_schedule=["401"] * 500)) as provider:
        code = cli(
            tmp_path, provider, 40, "--judge-model", "openai/fake-judge", "--max-concurrent", "3"
        )
        n_calls = len(provider.calls)
    result = load(tmp_path)
    printed = capsys.readouterr()
    assert code == 3
    assert n_calls <= 3  # only the requests already in flight, none retried
    assert result["complete"] is False and result["stopped"]["kind"] == "provider"
    assert "openai/fake-judge" in result["stopped"]["message"]
    assert "Incorrect API key provided" in result["stopped"]["message"]
    assert "Incorrect API key provided" in printed.out + printed.err
    assert len(result["incomplete"]) >= 39


def test_max_errors_stops_the_run_and_exits_3(tmp_path: Path) -> None:
    config = FakeProviderConfig(fault_schedule=["500"] * 500)
    with FakeProvider(config) as provider:
        code = cli(
            tmp_path,
            provider,
            20,
            "--judge-model",
            "openai/fake-judge",
            "--max-retries",
            "0",
            "--max-concurrent",
            "2",
            "--cooldown-after",
            "0",
            "--max-errors",
            "4",
        )
        n_calls = len(provider.calls)
    result = load(tmp_path)
    assert code == 3
    assert result["stopped"]["kind"] == "max_errors"
    assert 5 <= n_calls <= 6  # the fifth error stops it; one more may have been in flight
    assert result["errors"] == {"server": n_calls} and not result["complete"]
    assert len(result["incomplete"]) >= 17


def test_max_errors_as_a_fraction(tmp_path: Path) -> None:
    schedule = ["500"] * 500
    with FakeProvider(FakeProviderConfig(fault_schedule=schedule)) as provider:
        code = cli(
            tmp_path,
            provider,
            10,
            "--judge-model",
            "openai/fake-judge",
            "--max-retries",
            "0",
            "--max-concurrent",
            "1",
            "--cooldown-after",
            "0",
            "--max-errors",
            "0.1",
        )
        n_calls = len(provider.calls)
    assert code == 3 and n_calls == 4  # 10% of 30 planned calls is 3: the fourth is past it


def test_max_cost_stops_once_spent(tmp_path: Path) -> None:
    """gpt-4o-mini has a price in litellm's local cost map; the fake provider serves any model."""
    with FakeProvider(FakeProviderConfig(seed=3)) as provider:
        code = cli(
            tmp_path,
            provider,
            30,
            "--judge-model",
            "openai/gpt-4o-mini",
            "--max-cost",
            "0.0005",
            "--max-concurrent",
            "2",
        )
        n_calls = len(provider.calls)
    result = load(tmp_path)
    per_call = [c["usage"]["cost_usd"] for c in result["calls"]]
    assert code == 3 and result["stopped"]["kind"] == "max_cost"
    assert all(cost and cost > 0 for cost in per_call)
    spent = result["usage"]["cost_usd"]
    assert spent == pytest.approx(sum(per_call))
    # it went past the budget with one call; the other of the 2 in flight may finish too
    assert spent >= 0.0005 and spent - 2 * max(per_call) < 0.0005
    assert n_calls == len(per_call) <= 0.0005 / min(per_call) + 2 and n_calls < 90


def test_max_cost_with_an_unknown_price_stops_rather_than_spend_blind(tmp_path: Path) -> None:
    with FakeProvider(FakeProviderConfig(seed=3)) as provider:
        code = cli(
            tmp_path,
            provider,
            10,
            "--judge-model",
            "openai/fake-judge",
            "--max-cost",
            "1",
            "--max-concurrent",
            "1",
        )
        n_calls = len(provider.calls)
    result = load(tmp_path)
    assert code == 3 and n_calls == 1
    assert "unknown" in result["stopped"]["message"]
    assert result["usage"]["cost_usd"] is None  # never a made-up 0


# ------------------------------------------------------------------ pause file


@pytest.mark.slow
def test_pause_file_holds_every_call_until_removed(tmp_path: Path, monkeypatch) -> None:
    """The operator acts on what the run says and does, never after a fixed wait: it removes
    the file once the run says it is paused, puts it back after 12 calls, and removes it again
    once the gate, paused again, has looked at the file 20 more times."""
    pause = tmp_path / "PAUSE"
    pause.touch()
    log = tmp_path / "calls.jsonl"
    removed: dict[str, float] = {}
    paused_again: dict[str, float] = {}
    paused = threading.Event()
    looks = [0]  # the gate's looks at the pause file that found it there
    original = control.PauseFile.active

    def active(self: control.PauseFile) -> bool:
        found = original(self)
        looks[0] += found
        return found

    monkeypatch.setattr(control.PauseFile, "active", active)

    def note(message: str) -> None:
        if message.startswith("paused:"):
            paused.set()

    def until(condition, what: str) -> None:
        deadline = time.monotonic() + 60
        while not condition():
            assert time.monotonic() < deadline, what
            time.sleep(0.01)

    failed: list[AssertionError] = []

    def operator() -> None:
        try:
            until(paused.is_set, "the run never said it was paused")
            paused.clear()
            removed["at"] = time.time()
            pause.unlink()
            until(lambda: log.exists() and len(read_call_log(log)) >= 12, "12 calls")
            pause.touch()
            paused_again["from"] = time.time()
            until(paused.is_set, "the run never said it was paused again")
            seen = looks[0]
            until(lambda: looks[0] >= seen + 20, "the gate stopped looking at the pause file")
            paused_again["to"] = time.time()
        except AssertionError as failure:
            failed.append(failure)
        finally:
            pause.unlink(missing_ok=True)  # never leave the run paused for good

    thread = threading.Thread(target=operator)
    config = FakeProviderConfig(seed=4, latency=0.02, log_path=log)
    with FakeProvider(config) as provider:
        thread.start()
        result = evaluate(
            SPECS,
            submissions(15),
            judge=llm_judge(provider),
            options=EvalOptions(
                granularity="dimension",
                max_concurrent=3,
                pause_file=pause,
                pause_poll=0.02,
                note=note,
            ),
        )
        thread.join()
        calls = provider.calls
    assert failed == []
    assert result.complete and len(calls) == 45
    assert all(c.timestamp > removed["at"] for c in calls)  # nothing while it existed at start
    during = [c for c in calls if paused_again["from"] < c.timestamp < paused_again["to"]]
    assert len(during) <= 3  # only requests already past the gate (in flight) when it came back


# ------------------------------------------------------------------ the key stays secret


@pytest.mark.slow
@pytest.mark.parametrize("how", ["env", "flag"])
def test_api_key_appears_in_no_file_the_run_writes(
    tmp_path: Path, monkeypatch, capsys, how
) -> None:
    secret = "sk-top-secret-0123456789abcdef"
    variable = "JUDGE_API_KEY" if how == "env" else "MY_PROVIDER_KEY"
    monkeypatch.setenv(variable, secret)
    extra = ["--api-key-env", variable] if how == "flag" else []
    config = FakeProviderConfig(seed=6, api_key=secret, fault_schedule=["500", "429", "ok"])
    with FakeProvider(config) as provider:
        code = cli(tmp_path, provider, 3, "--judge-model", "openai/fake-judge", *extra)
        calls = provider.calls
    printed = capsys.readouterr()
    assert code == 0 and calls and all(c.outcome != "unauthorized" for c in calls)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"r.json", "r.sqlite"}
    for path in written:
        assert secret.encode() not in path.read_bytes(), path
    assert secret not in printed.out + printed.err


def test_a_wrong_key_is_reported_without_echoing_it(tmp_path: Path, monkeypatch, capsys) -> None:
    secret = "sk-wrong-key-9876543210"
    monkeypatch.setenv("JUDGE_API_KEY", secret)
    with FakeProvider(FakeProviderConfig(api_key="sk-the-right-one")) as provider:
        code = cli(tmp_path, provider, 2)
    printed = capsys.readouterr()
    assert code == 3
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        assert secret.encode() not in path.read_bytes(), path
    assert secret not in printed.out + printed.err


def test_rules_judge_writes_no_store(tmp_path: Path) -> None:
    outputs = write_submissions(tmp_path / "subs.jsonl", 3)
    code = main(
        [
            "eval",
            "--ground-truth",
            str(EXAMPLE_GT),
            "--outputs",
            str(outputs),
            "--result-file",
            str(tmp_path / "r.json"),
            "--no-progress",
        ]
    )
    assert code == 0 and not (tmp_path / "r.sqlite").exists()
    assert load(tmp_path)["usage"] is None


def test_resume_needs_an_existing_store(tmp_path: Path, capsys) -> None:
    with FakeProvider(FakeProviderConfig()) as provider:
        code = cli(tmp_path, provider, 1, "--judge-model", "openai/fake-judge", "--resume")
        n_calls = len(provider.calls)
    assert code == 2 and n_calls == 0
    assert "nothing to resume" in capsys.readouterr().err


# ------------------------------------------------------------------ SIGINT / SIGTERM


@contextlib.contextmanager
def signal_after(log: Path, requests: int, sig: int = signal.SIGINT) -> Iterator[None]:
    """Send `sig` to this process once the fake provider has logged `requests` requests."""

    def operator() -> None:
        while not log.exists() or len(read_call_log(log)) < requests:
            time.sleep(0.01)
        os.kill(os.getpid(), sig)

    thread = threading.Thread(target=operator)
    thread.start()
    try:
        yield
    finally:
        thread.join()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_writes_an_incomplete_result_and_exits_130(tmp_path: Path, sig) -> None:
    log = tmp_path / "calls.jsonl"
    config = FakeProviderConfig(seed=8, latency=0.05, log_path=log)
    with FakeProvider(config) as provider:
        with signal_after(log, 6, sig):
            code = cli(
                tmp_path, provider, 40, "--judge-model", "openai/fake-judge",
                "--max-concurrent", "2",
            )  # fmt: skip
        n_calls = len(provider.calls)
    result = load(tmp_path)
    assert code == 130
    assert result["complete"] is False and result["stopped"]["kind"] == "interrupted"
    assert sig.name in result["stopped"]["message"]
    answered = [c for c in result["calls"] if c["error_kind"] is None]
    assert len(answered) == n_calls  # the calls in flight finished within the grace period
    assert sum(len(c["dimensions"]) for c in result["incomplete"]) == 120 - n_calls
    stored = sqlite3.connect(tmp_path / "r.sqlite").execute("SELECT count(*) FROM judgments")
    assert stored.fetchone()[0] == n_calls


@pytest.mark.slow
def test_calls_still_in_flight_after_the_grace_period_are_cut_off(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    config = FakeProviderConfig(seed=8, latency=30, log_path=log)  # replies never come in time
    with FakeProvider(config) as provider:
        with signal_after(log, 2):
            code = cli(
                tmp_path, provider, 5, "--judge-model", "openai/fake-judge", "--max-concurrent",
                "2", "--grace", "0.1",
            )  # fmt: skip
        n_calls = len(provider.calls)
    result = load(tmp_path)
    assert code == 130 and n_calls == 2
    assert result["calls"] == [] and not result["complete"]
    assert sum(len(c["dimensions"]) for c in result["incomplete"]) == 15
    assert all(j["unscored_reason"].startswith("not judged") for j in result["judgments"])


def test_a_cut_off_call_keeps_the_failures_it_met_before_the_stop(tmp_path: Path) -> None:
    """Two 500s, retried, then a request that never answers and is cut off: the result says
    server 2 and cut_off 1, not only cut_off 3."""
    log = tmp_path / "calls.jsonl"
    config = FakeProviderConfig(
        fault_schedule=["500", "500", "hang"], hang_seconds=30, log_path=log
    )
    with FakeProvider(config) as provider, signal_after(log, 3):
        code = cli(
            tmp_path, provider, 1, "--judge-model", "openai/fake-judge", "--max-concurrent",
            "1", "--grace", "0.1",
        )  # fmt: skip
    result = load(tmp_path)
    assert code == 130 and result["calls"] == []
    assert result["attempt_errors"] == {"server": 2, "cut_off": 1}


def test_identical_prompts_in_one_run_are_asked_once(tmp_path: Path) -> None:
    """Two trials with the same diagnosis render the same prompts: one request each."""
    first = EXAMPLE_SUBS[0]
    twins = [
        Submission(incident_id=first.incident_id, trial=t, diagnosis=first.diagnosis)
        for t in ("a", "b")
    ]
    with FakeProvider(FakeProviderConfig(seed=2, latency=0.05)) as provider:
        result = evaluate(
            SPECS, twins, judge=llm_judge(provider),
            options=EvalOptions(granularity="dimension", store=tmp_path / "s.sqlite", max_concurrent=4),
        )  # fmt: skip
        n_calls = len(provider.calls)
    assert n_calls == 3 and len(result.calls) == 6
    assert sum(c.requests for c in result.calls) == 3 and result.usage.requests == 3
    assert sum(c.cached for c in result.calls) == 3  # shared in flight, or a store hit
    by_trial = {t: [j.answer for j in result.judgments if j.trial == t] for t in ("a", "b")}
    assert by_trial["a"] == by_trial["b"] and all(by_trial["a"])
