"""`judge selftest` with an LLM judge, end to end over real HTTP to the fake provider on
127.0.0.1: the calls and their cost said before asking, a rerun answered from the store (no
call), `--max-cost` stopping the run (exit 3), and provider failures counted as unscored,
never as a probe that failed or behaved."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import EXAMPLE

from judge.cli import main
from judge.testing import FakeProvider, FakeProviderConfig, constant_policy

SPEC = EXAMPLE / "ground_truth" / "incorrect_port_assignment.yaml"
ASKED = 7  # the eight derived probes of one spec with a victim, the empty one never asked


def selftest(capsys, provider: FakeProvider, store: Path, *flags: str) -> tuple[int, dict, str]:
    code = main(
        [
            "selftest",
            "-g",
            str(SPEC),
            "--no-goldens",
            "--judge-model",
            flags[0] if flags and not flags[0].startswith("-") else "openai/gpt-4o-mini",
            "--api-base",
            provider.url,
            "--store",
            str(store),
            "--no-progress",
            "--cooldown-after",
            "0",
            "--json",
            *(flags[1:] if flags and not flags[0].startswith("-") else flags),
        ]
    )
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def test_the_plan_is_said_before_asking_and_a_rerun_asks_nothing(capsys, tmp_path: Path) -> None:
    store = tmp_path / "selftest.sqlite"
    with FakeProvider(FakeProviderConfig(seed=1)) as provider:
        code, first, said = selftest(capsys, provider, store)
        asked_first = len(provider.calls)
        again, second, said_again = selftest(capsys, provider, store)
        asked_again = len(provider.calls) - asked_first
    assert asked_first == ASKED and asked_again == 0
    assert f"{ASKED} calls to make, 0 answered by the store; estimated cost $" in said
    assert f"0 calls to make, {ASKED} answered by the store" in said_again
    assert first["plan"]["cost_usd"] > 0 and second["plan"]["stored"] == ASKED
    assert second["usage"]["cache_hits"] == ASKED and second["usage"]["calls_made"] == 0
    assert [p["answers"] for p in first["probes"]] == [p["answers"] for p in second["probes"]]
    assert code == again and code in (0, 1)  # the hash policy answers at random


def test_an_llm_judge_that_says_yes_to_everything_fails(capsys, tmp_path: Path) -> None:
    config = FakeProviderConfig(answer_policy=constant_policy("Yes"))
    with FakeProvider(config) as provider:
        code, report, _ = selftest(capsys, provider, tmp_path / "s.sqlite")
    kinds = {k["kind"]: k for k in report["kinds"]}
    assert code == 1 and kinds["truth"]["share"] == 1.0
    assert kinds["origin-swap"]["share"] == 0.0 and kinds["injection"]["share"] == 0.0


def test_max_cost_stops_the_selftest_with_exit_3(capsys, tmp_path: Path) -> None:
    with FakeProvider(FakeProviderConfig(seed=3)) as provider:
        code, report, said = selftest(
            capsys, provider, tmp_path / "s.sqlite", "--max-cost", "0.0001", "--max-concurrent", "1"
        )
        asked = len(provider.calls)
    assert "--max-cost 0.0001 stops it" in said
    assert code == 3 and report["exit_code"] == 3
    assert report["stopped"]["kind"] == "max_cost" and asked < ASKED
    unscored = [p for p in report["probes"] if p["behaved"] is None]
    reasons = [r for p in unscored for q, r in p["unscored"].items() if q != "verdict"]
    assert unscored and all("not judged" in r and "--max-cost" in r for r in reasons)
    assert not any(f["probe_id"] in {p["id"] for p in unscored} for f in report["failures"])


def test_provider_failures_are_unscored_never_failed(capsys, tmp_path: Path) -> None:
    """Every second call (4 of 7) fails with a 500 and is not retried: those probes are
    unscored."""
    schedule = ",".join(["500", "ok"] * ASKED)
    config = FakeProviderConfig(fault_schedule=schedule, answer_policy=constant_policy("Yes"))
    with FakeProvider(config) as provider:
        code, report, _ = selftest(
            capsys,
            provider,
            tmp_path / "s.sqlite",
            "--max-retries",
            "0",
            "--max-concurrent",
            "1",
            "--max-unscored",
            "1",
        )
    unscored = [p for p in report["probes"] if p["behaved"] is None]
    assert len(unscored) == 4 and report["errors"] == {"server": 4}
    failed = {f["probe_id"] for f in report["failures"]}
    assert not failed & {p["id"] for p in unscored}
    for kind in report["kinds"]:
        assert kind["scored"] == kind["probes"] - sum(p["kind"] == kind["kind"] for p in unscored)
    assert code == 1  # the calls that answered said Yes to everything


def test_every_call_failing_is_exit_3_not_a_verdict(capsys, tmp_path: Path) -> None:
    config = FakeProviderConfig(fault_rates={"500": 1.0})
    with FakeProvider(config) as provider:
        code, report, _ = selftest(capsys, provider, tmp_path / "s.sqlite", "--max-retries", "0")
    assert code == 3 and "unscored because their calls failed" in report["exit_reason"]
    assert not report["failures"]
