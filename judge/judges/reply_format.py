"""The reply the llm judge asks a model for: one answer per question id, as JSON of a fixed
shape (answer first, or the evidence first), the strict response formats and schema hash of
that shape, the schema pinned to one call's questions, and the chat that asks again after an
unusable reply."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

ReplyOrder = Literal["answer-first", "evidence-first"]
REPLY_ORDERS: tuple[ReplyOrder, ...] = ("answer-first", "evidence-first")


class AnswerItem(BaseModel):
    """One question's answer as the judge model must give it: Yes/No, evidence quote, confidence."""

    id: str
    answer: Literal["Yes", "No"]
    evidence: str
    confidence: Literal["High", "Medium", "Low"]


class EvidenceFirstItem(BaseModel):
    """`AnswerItem` with the evidence asked for before the answer. A model writes the fields in
    schema order (a grammar-enforcing server makes it), so it quotes the diagnosis before it
    commits to Yes or No: a short chain of thought, at the cost of the longer quote tokens."""

    id: str
    evidence: str
    answer: Literal["Yes", "No"]
    confidence: Literal["High", "Medium", "Low"]


class DimensionReply(BaseModel):
    """The response format the model is asked for."""

    answers: list[AnswerItem]


class EvidenceFirstReply(BaseModel):
    """The response format with the evidence first (`--reply-order evidence-first`)."""

    answers: list[EvidenceFirstItem]


REPLY_MODELS: dict[str, type[BaseModel]] = {
    "answer-first": DimensionReply,
    "evidence-first": EvidenceFirstReply,
}


@functools.cache
def schema_hash(order: ReplyOrder = "answer-first") -> str:
    """The reply schema's part of a stored answer's key: the two orders are different asks."""
    schema = REPLY_MODELS[order].model_json_schema()
    return hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()[:16]


SCHEMA_HASH = schema_hash("answer-first")

REPLY_FORMATS = Path(__file__).with_name("reply_formats.json")
"""The reply models as strict `json_schema` response formats, one per reply order: the
`openai` SDK's own conversion (`to_strict_json_schema`), which litellm also uses, written out
so that no request waits for the SDK's import (~0.7 s). `tests/judges/test_llm_clients.py` checks
both clients send these bytes and that they are still the SDK's conversion of the models."""


@functools.cache
def strict_format(order: ReplyOrder = "answer-first") -> dict[str, Any]:
    """The reply model as the strict `json_schema` response format (`REPLY_FORMATS`)."""
    formats: dict[str, dict[str, Any]] = json.loads(REPLY_FORMATS.read_text(encoding="utf-8"))
    return formats[order]


def pinned_schema(question_ids: list[str], order: ReplyOrder = "answer-first") -> dict[str, Any]:
    """The reply schema with the answer list fixed to `question_ids`, one item each, in order.

    Servers that enforce a `json_object` schema with a grammar (llama.cpp, vLLM's guided
    decoding) then cannot end the list early or skip an id: a 1.5B model asked nine questions
    in one call answered the first three and stopped, three attempts in a row, under the
    generic schema. Only for that mode: OpenAI's strict `json_schema` does not take
    `prefixItems`, and there the generic schema stays (part of the store key as
    `schema_hash`; the pinned one asks for the same reply, so it is not)."""
    schema = REPLY_MODELS[order].model_json_schema()
    item = next(iter(schema["$defs"].values()))
    items = [
        {**item, "properties": {**item["properties"], "id": {"const": qid, "type": "string"}}}
        for qid in question_ids
    ]
    answers: dict[str, Any] = {
        "type": "array",
        "prefixItems": items,
        "minItems": len(items),
        "maxItems": len(items),
    }
    return {
        "type": "object",
        "properties": {"answers": answers},
        "required": ["answers"],
        "additionalProperties": False,
    }


def reask_messages(
    prompt: list[dict[str, Any]], content: str | None, problem: str, question_ids: list[str]
) -> list[dict[str, Any]]:
    """The chat that asks again after an unusable reply: the prompt, the reply, what was wrong."""
    return [
        *prompt,
        {"role": "assistant", "content": content or ""},
        {
            "role": "user",
            "content": f"Your reply was not usable ({problem}). Reply again "
            "with JSON only, answering every question id exactly once.\n"
            f"Question ids: {', '.join(question_ids)}",
        },
    ]
