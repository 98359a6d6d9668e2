"""Every request caps its reply (`max_tokens`): sized to the answers asked by default, set by
`--max-tokens`, none for `--max-tokens 0` or a reasoning model. Without a cap a call the
client gave up on keeps a one-request server writing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from helpers import EXAMPLE_GT, EXAMPLE_OUTPUTS, eval_args

from judge.cli import main
from judge.judges.clients.openai_client import OPENAI_BASE_URL, cap_field
from judge.judges.llm import LLMJudge, reasons, reply_tokens
from judge.testing import FakeProvider, FakeProviderConfig
from judge.testing.faults import FaultKind


def _run(tmp_path: Path, provider: FakeProvider, *flags: str) -> dict:
    result = tmp_path / "r.json"
    args = eval_args(EXAMPLE_GT / "incorrect_image.yaml", EXAMPLE_OUTPUTS, result, *flags)
    args += ["--judge-model", "openai/fake", "--api-base", provider.url, "--no-progress"]
    assert main(args) == 0
    return json.loads(result.read_text())


def test_the_cap_sent_is_sized_to_the_answers_asked(tmp_path: Path) -> None:
    with FakeProvider(FakeProviderConfig(models=["fake"])) as provider:
        written = _run(tmp_path, provider)
        calls = provider.calls
    assert calls and all(c.outcome == "ok" for c in calls)
    assert {c.max_tokens for c in calls} == {reply_tokens(len(calls[0].question_ids))}
    assert all(c.completion_tokens < c.max_tokens for c in calls)  # type: ignore[operator]
    assert written["config"]["judge"]["max_tokens"] == "auto"


@pytest.mark.parametrize(("flag", "sent"), [("700", 700), ("0", None)])
def test_max_tokens_sets_the_cap_or_sends_none(tmp_path: Path, flag: str, sent) -> None:
    with FakeProvider(FakeProviderConfig(models=["fake"])) as provider:
        written = _run(tmp_path, provider, "--max-tokens", flag)
        calls = provider.calls
    assert calls and {c.max_tokens for c in calls} == {sent}
    assert written["config"]["judge"]["max_tokens"] == int(flag)


def test_a_reask_keeps_the_cap(tmp_path: Path) -> None:
    config = FakeProviderConfig(models=["fake"], fault_schedule=[FaultKind.MALFORMED])
    with FakeProvider(config) as provider:
        _run(tmp_path, provider, "--max-tokens", "900", "--max-concurrent", "1")
        calls = provider.calls
    assert calls[0].outcome == "malformed" and len(calls) > 1
    assert {c.max_tokens for c in calls} == {900}


def test_a_negative_cap_is_bad_input(tmp_path: Path, capsys) -> None:
    args = eval_args(EXAMPLE_GT, EXAMPLE_OUTPUTS, tmp_path / "r.json", "--max-tokens", "-1")
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2 and "--max-tokens" in capsys.readouterr().err


def test_reasoning_models_get_no_default_cap() -> None:
    assert reasons("openai/o3-mini") and not reasons("openai/gpt-4o-mini")
    assert not reasons("openai/no-such-model")
    plain = LLMJudge("openai/gpt-4o-mini", api_key="sk-x")
    thinking = LLMJudge("openai/o3-mini", api_key="sk-x")
    assert plain.request([], "prompt", ["a", "b"])["max_tokens"] == reply_tokens(2)
    assert "max_tokens" not in thinking.request([], "prompt", ["a", "b"])
    capped = LLMJudge("openai/o3-mini", api_key="sk-x", max_tokens=5000)
    assert capped.request([], "prompt", ["a"])["max_tokens"] == 5000
    given = LLMJudge("openai/gpt-4o-mini", api_key="sk-x", extra_params={"max_tokens": 64})
    assert given.request([], "prompt", ["a"])["max_tokens"] == 64


def test_openais_own_api_gets_the_cap_as_max_completion_tokens() -> None:
    """OpenAI's reasoning models refuse `max_tokens`; OpenAI-compatible servers read it (the
    fake provider's runs above)."""
    assert cap_field(OPENAI_BASE_URL) == "max_completion_tokens"
    assert cap_field("https://api.openai.com:443/v1/") == "max_completion_tokens"
    assert cap_field("http://127.0.0.1:8000/v1") == "max_tokens"
    assert cap_field("https://gateway.example/openai/v1") == "max_tokens"
