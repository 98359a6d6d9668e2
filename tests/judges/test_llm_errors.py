"""Provider failures the llm judge must name right: connection errors, and a key echoed back."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from helpers import one_incident_args

from ground_truth import IncidentSpec, Submission
from judge import JudgeTask, PromptRenderer, load_rubric
from judge.cli import main
from judge.judges.llm import LLMJudge
from judge.judges.mask import MIN_RUN, mask_secret
from judge.testing import FakeProvider, FakeProviderConfig

SPEC = IncidentSpec(id="checkout-port", ground_truth="[fault_spec] component=deployment/checkout")
SUB = Submission(incident_id="checkout-port", diagnosis="checkout's address uses port 8082.")
KEY = "sk-proj-" + "".join(f"{i:02d}Q{chr(97 + i % 26)}" for i in range(39))[:156]


def task() -> JudgeTask:
    dim = load_rubric().dimensions[0]
    return JudgeTask(SPEC, SUB, dim, PromptRenderer().render(SPEC, SUB, dim))


# ------------------------------------------------------------------ connection errors


def test_a_refused_port_is_a_connection_error_not_a_server_error(
    llm_client, closed_port_url
) -> None:
    judge = LLMJudge(
        "openai/fake-judge",
        api_base=closed_port_url,
        timeout=5,
        max_retries=1,
        retry_wait=0.01,
        client=llm_client,
    )
    verdict = asyncio.run(judge.judge(task()))
    assert verdict.error_kind == "connection"
    assert verdict.attempt_errors == {"connection": 2} and verdict.requests == 2
    assert verdict.error.startswith("connection from openai/fake-judge")


def test_a_socket_closed_without_reply_is_a_connection_error(llm_client) -> None:
    config = FakeProviderConfig(fault_schedule=["hang"], hang_seconds=0)
    with FakeProvider(config) as provider:
        judge = LLMJudge(
            "openai/fake-judge",
            api_base=provider.url,
            timeout=5,
            retry_wait=0.01,
            client=llm_client,
        )
        verdict = asyncio.run(judge.judge(task()))
        outcomes = [c.outcome for c in provider.calls]
    assert outcomes == ["hang", "ok"]
    assert verdict.error is None and verdict.attempt_errors == {"connection": 1}


# ------------------------------------------------------------------ retry budgets


def test_429s_do_not_use_up_the_fault_retries(llm_client) -> None:
    """Eight 429s in a row, then an answer: a provider saying "later" is ridden out (at 50%
    429s five shared retries lost one call in 64); its own budget still ends a call."""
    config = FakeProviderConfig(fault_schedule=["429"] * 8, retry_after=0.01)
    with FakeProvider(config) as provider:
        judge = LLMJudge(
            "openai/fake-judge",
            api_base=provider.url,
            timeout=5,
            retry_wait=0.01,
            client=llm_client,
        )
        verdict = asyncio.run(judge.judge(task()))
    assert verdict.error is None and verdict.attempt_errors == {"rate_limit": 8}
    assert verdict.requests == 9
    config = FakeProviderConfig(fault_schedule=["429"] * 4, retry_after=0.01)
    with FakeProvider(config) as provider:
        judge = LLMJudge(
            "openai/fake-judge",
            api_base=provider.url,
            timeout=5,
            retry_wait=0.01,
            max_rate_limit_retries=3,
            client=llm_client,
        )
        verdict = asyncio.run(judge.judge(task()))
    assert verdict.error_kind == "rate_limit" and verdict.requests == 4
    assert LLMJudge("openai/x", max_retries=0).max_rate_limit_retries == 0  # "never retry"
    assert LLMJudge("openai/x").max_rate_limit_retries == 30


@pytest.mark.slow
def test_server_errors_still_end_a_call_after_max_retries_whatever_429s_came_before(
    llm_client,
) -> None:
    config = FakeProviderConfig(fault_schedule=["429", "429", "500", "500", "500"])
    with FakeProvider(config) as provider:
        judge = LLMJudge(
            "openai/fake-judge",
            api_base=provider.url,
            timeout=5,
            retry_wait=0.01,
            max_retries=2,
            client=llm_client,
        )
        verdict = asyncio.run(judge.judge(task()))
    assert verdict.error_kind == "server"
    assert verdict.attempt_errors == {"rate_limit": 2, "server": 3} and verdict.requests == 5


# ------------------------------------------------------------------ the key, masked


def key_runs(text: str) -> list[str]:
    return sorted({KEY[i : i + MIN_RUN] for i in range(len(KEY) - MIN_RUN + 1)} & _grams(text))


def _grams(text: str) -> set[str]:
    return {text[i : i + MIN_RUN] for i in range(len(text) - MIN_RUN + 1)}


def test_mask_secret_masks_every_run_of_the_key() -> None:
    assert len(KEY) == 164
    text = f"a {KEY} b {KEY[10:30]} c {KEY[:7]} d {KEY[-9:]}"
    masked = mask_secret(text, KEY)
    assert key_runs(masked) == []
    assert masked == f"a *** b *** c {KEY[:7]} d ***"
    assert mask_secret("sk-1 and sk-1", "sk-1") == "*** and ***"
    assert mask_secret("nothing", None) == "nothing"


@pytest.mark.slow
@pytest.mark.parametrize("padding", [0, 40, 80, 120, 150, 180, 200, 240, 299])
def test_a_key_echoed_in_a_401_appears_nowhere(
    tmp_path, monkeypatch, capsys, padding, llm_client
) -> None:
    """The gateway echoes the 164-character key after `padding` characters, so the key
    straddles each place a message is cut (300 characters for a reason, shorter for the
    progress line); not a run of 8 of its characters may be written anywhere."""
    config = FakeProviderConfig(api_key="sk-the-right-one", echo_key_padding=padding)
    out, store = tmp_path / "r.json", tmp_path / "r.sqlite"
    with FakeProvider(config) as provider:
        monkeypatch.setenv("JUDGE_API_KEY", KEY)
        code = main(
            one_incident_args(
                out,
                "--judge-model",
                "openai/fake-judge",
                "--api-base",
                provider.url,
                "--store",
                str(store),
                "--client",
                llm_client,
            )
        )
        assert provider.calls and provider.calls[0].outcome == "unauthorized"
    assert code == 3
    printed = capsys.readouterr()
    result = out.read_text()
    assert "Incorrect API key provided" in result
    with sqlite3.connect(store) as db:
        rows = json.dumps(db.execute("select * from errors").fetchall())
    assert "Incorrect API key provided" in rows
    files = sorted(tmp_path.glob("r.sqlite*"))
    stored = rows + "".join(f.read_bytes().decode("latin-1") for f in files)
    for where, text in {
        "stdout": printed.out,
        "stderr": printed.err,
        "result": result,
        "store": stored,
    }.items():
        assert key_runs(text) == [], where
