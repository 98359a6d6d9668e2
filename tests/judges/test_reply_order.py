"""`--reply-order evidence-first`: the schema, the prompt and the store key ask for the quote
before the Yes/No; the default ask is byte-for-byte what it was."""

from __future__ import annotations

import json
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest
from helpers import one_incident_args

from judge import PromptRenderer
from judge.cli import main
from judge.judges.llm import LLMJudge
from judge.judges.reply_format import SCHEMA_HASH, pinned_schema, schema_hash
from judge.store import Store
from judge.testing import FakeProvider, FakeProviderConfig
from judge.testing.formats import LLAMA_CPP_PYTHON_FORMATS

IDS = ["D1-Q1", "D1-Q2"]


def judge(order: str = "answer-first") -> LLMJudge:
    return LLMJudge("openai/fake-judge", api_base="http://127.0.0.1:9/v1", reply_order=order)


def field_order(item: dict) -> list[str]:
    return [f for f in item["properties"] if f != "id"]


@pytest.mark.parametrize(
    ("order", "fields"),
    [
        ("answer-first", ["answer", "evidence", "confidence"]),
        ("evidence-first", ["evidence", "answer", "confidence"]),
    ],
)
def test_every_schema_mode_asks_for_the_fields_in_the_chosen_order(order, fields) -> None:
    strict = judge(order).request([], "json_schema", IDS)["response_format"]
    strict_item = next(iter(strict["json_schema"]["schema"]["$defs"].values()))
    assert field_order(strict_item) == fields
    pinned = judge(order).request([], "json_object+schema", IDS)["response_format"]
    items = pinned["schema"]["properties"]["answers"]["prefixItems"]
    assert [field_order(i) for i in items] == [fields, fields]
    assert [i["properties"]["id"]["const"] for i in items] == IDS
    assert pinned_schema(IDS, order)["properties"]["answers"]["prefixItems"] == items


def test_the_orders_are_different_store_keys_and_the_default_key_is_unchanged() -> None:
    assert schema_hash("answer-first") == SCHEMA_HASH != schema_hash("evidence-first")
    assert judge().cache_identity()["schema"] == SCHEMA_HASH
    assert judge("evidence-first").cache_identity()["schema"] == schema_hash("evidence-first")
    assert judge("evidence-first").describe()["reply_order"] == "evidence-first"


def test_an_unknown_order_is_refused() -> None:
    with pytest.raises(ValueError, match="reply_order must be one of answer-first, evidence"):
        judge("reasoning-first")


def test_the_system_prompt_describes_the_chosen_order() -> None:
    default = PromptRenderer().env.get_template("system.j2")
    first = default.render(reply_order="evidence-first")
    assert '{"id": "<question id>", "evidence": "<quote>", "answer"' in first
    assert 'first give "evidence"' in first
    answer_first = default.render(reply_order="answer-first")
    assert '{"id": "<question id>", "answer": "Yes" | "No", "evidence"' in answer_first
    assert default.render() == answer_first


def run(tmp_path, provider: FakeProvider, *extra: str) -> int:
    return main(
        one_incident_args(
            tmp_path / "r.json",
            "--judge-model",
            "openai/fake-judge",
            "--api-base",
            provider.url,
            "--store",
            str(tmp_path / "store.sqlite"),
            "--no-progress",
            *extra,
        )
    )


def test_cli_evidence_first_scores_every_case_and_is_not_served_answer_first_answers(
    tmp_path,
) -> None:
    config = FakeProviderConfig(seed=3, response_formats=LLAMA_CPP_PYTHON_FORMATS)
    with FakeProvider(config) as provider:
        assert run(tmp_path, provider) == 0
        first_run = len(provider.calls)
        assert run(tmp_path, provider, "--reply-order", "evidence-first") == 0
        second_run = len(provider.calls) - first_run
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["config"]["judge"]["reply_order"] == "evidence-first"
    assert result["complete"] and all(j["answer"] for j in result["judgments"])
    assert second_run >= 3 - 1  # every submission asked again (less run one's refused probe)
    with Store(tmp_path / "store.sqlite") as store:
        schemas = {row["schema_hash"] for row in store.rows()}
    assert schemas == {SCHEMA_HASH, schema_hash("evidence-first")}


def test_dry_run_writes_evidence_first_prompts(tmp_path) -> None:
    prompts = tmp_path / "prompts.jsonl"
    args = one_incident_args(
        tmp_path / "r.json",
        "--dry-run",
        "--prompts-file",
        str(prompts),
        "--reply-order",
        "evidence-first",
    )
    assert main(args) == 0
    lines = [json.loads(line) for line in prompts.read_text().splitlines()]
    assert lines and all(
        'first give "evidence"' in line["messages"][0]["content"] for line in lines
    )
