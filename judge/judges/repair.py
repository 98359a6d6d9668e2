"""Reading a judge's reply: strict JSON first, then the repairs that cannot change its meaning.

Small models (and servers that do not enforce the schema) return replies that are almost
right. A reply is repaired only when there is one reading of it: the JSON inside a code fence
or inside prose (exactly one candidate object), trailing commas, a Python-style literal with
single quotes, the answer list wrapped in one other key or given bare, `"yes"`/`"YES"` for
`"Yes"`, key names in another case, a missing or unknown `confidence`. Anything else is
unparseable and the judge re-asks. Every repair is named, so a run can report how many replies
needed one.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..checklist.judgment import Answer, Confidence, QuestionAnswer, trusted

_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)\n?\s*```", re.DOTALL)
_ANSWERS: dict[str, Answer] = {"yes": "Yes", "no": "No"}
_CONFIDENCES: dict[str, Confidence] = {"high": "High", "medium": "Medium", "low": "Low"}
_ITEM_KEYS = ("id", "answer", "evidence", "confidence")
_CLEAN_KEYS = frozenset(_ITEM_KEYS)
MAX_REPLY_CHARS = 200_000
"""Longer replies are not searched for JSON (a judge's reply is a few hundred characters)."""


_REFUSAL = re.compile(
    r"\s*(i'?m sorry|i am sorry|sorry,|i can(?:'|no)?t\b|i won'?t|i(?:'m| am) (?:not able|unable)"
    r"|as an ai\b)",
    re.IGNORECASE,
)
"""How a model that declines begins its reply (a refusal written where the JSON should be)."""


class UnparseableReply(ValueError):
    """A judge reply that no repair can turn into one answer per question (empty, too long,
    no JSON, missing or duplicate ids); the call counts as failed.
    """

    pass


@dataclass
class ParsedReply:
    """A reply's answers in question order, and what had to be repaired to read them."""

    answers: list[QuestionAnswer]
    repairs: list[str] = field(default_factory=list)
    """What had to be repaired; empty for a clean reply."""

    @property
    def clean(self) -> bool:
        return not self.repairs


def parse_reply(content: str | None, question_ids: list[str]) -> ParsedReply:
    """The answers in a reply, every question id exactly once, and the repairs it needed."""
    if not content or not content.strip():
        raise UnparseableReply("empty reply")
    if len(content) > MAX_REPLY_CHARS:
        raise UnparseableReply(f"reply of {len(content)} characters is too long")
    repairs: list[str] = []
    data = _decode(content, repairs)
    items = _answer_items(data, repairs)
    answers = [_answer(item, repairs) for item in items]
    _check_ids([a.question_id for a in answers], question_ids)
    by_id = {a.question_id: a for a in answers}
    return ParsedReply([by_id[q] for q in question_ids], sorted(set(repairs)))


def _decode(content: str, repairs: list[str]) -> Any:
    text = content.strip()
    found = _loads(text)
    if found is not None:
        return found[0]
    fenced = _FENCE.findall(text)
    if len(fenced) == 1:
        found = _loads_repaired(fenced[0].strip(), repairs)
        if found is not None:
            repairs.append("code fence")
            return found[0]
    candidates = _objects_in(text)
    if len(candidates) == 1:
        repairs.append("JSON extracted from text")
        return candidates[0]
    if len(candidates) > 1:
        raise UnparseableReply(f"reply holds {len(candidates)} different JSON objects")
    found = _loads_repaired(text, repairs)
    if found is not None:
        return found[0]
    if _REFUSAL.match(text):
        raise UnparseableReply("reply is a refusal, not the requested JSON: no JSON object found")
    raise UnparseableReply("reply is not the requested JSON: no JSON object found")


def _loads(text: str) -> tuple[Any] | None:
    try:
        return (json.loads(text),)
    except (ValueError, RecursionError):
        return None


def _loads_repaired(text: str, repairs: list[str]) -> tuple[Any] | None:
    found = _loads(text)
    if found is not None:
        return found
    without_commas = _drop_trailing_commas(text)
    if without_commas != text and (found := _loads(without_commas)) is not None:
        repairs.append("trailing comma")
        return found
    literal = _python_literal(text)
    if literal is not None:
        repairs.append("single quotes")
        return literal
    return None


def _drop_trailing_commas(text: str) -> str:
    """Commas before `}` or `]`, outside strings."""
    out: list[str] = []
    in_string = escaped = False
    for i, char in enumerate(text):
        if in_string:
            escaped = char == "\\" and not escaped
            in_string = not (char == '"' and not escaped)
        elif char == '"':
            in_string = True
        elif char == "," and text[i + 1 :].lstrip()[:1] in ("}", "]"):
            continue
        out.append(char)
    return "".join(out)


def _python_literal(text: str) -> tuple[Any] | None:
    """A dict or list written as a Python literal (single quotes): one reading only."""
    if not text.startswith(("{", "[")):
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return (value,) if isinstance(value, dict | list) else None


def _objects_in(text: str) -> list[Any]:
    """The distinct JSON objects embedded in prose that look like an answer."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    i = text.find("{")
    while i != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except (ValueError, RecursionError):
            i = text.find("{", i + 1)
            continue
        if _looks_like_reply(value) and value not in found:
            found.append(value)
        i = text.find("{", end)
    return found


def _looks_like_reply(value: Any) -> bool:
    try:
        _answer_items(value, [])
    except UnparseableReply:
        return False
    return True


def _answer_items(data: Any, repairs: list[str]) -> list[dict[str, Any]]:
    if isinstance(data, dict):
        lowered = {str(k).lower(): v for k, v in data.items()}
        if "answers" in lowered and len(lowered) == len(data):
            if "answers" not in data:
                repairs.append("key case")
            data = lowered["answers"]
        elif len(data) == 1:
            repairs.append("answers wrapped in another key")
            return _answer_items(next(iter(data.values())), repairs)
        else:
            raise UnparseableReply("reply is not the requested JSON: no 'answers' list")
    elif isinstance(data, list):
        repairs.append("bare answer list")
    if not isinstance(data, list) or not data:
        raise UnparseableReply("reply is not the requested JSON: 'answers' is not a list")
    if not all(isinstance(item, dict) for item in data):
        raise UnparseableReply("reply is not the requested JSON: an answer is not an object")
    return data


def _answer(item: dict[str, Any], repairs: list[str]) -> QuestionAnswer:
    if _CLEAN_KEYS.issuperset(item):  # the keys asked for, as asked: nothing to normalise
        fields = item
    else:
        fields = {str(k).strip().lower(): v for k, v in item.items()}
    if len(fields) != len(item):
        raise UnparseableReply("reply is not the requested JSON: repeated keys in an answer")
    if any(k not in item for k in fields if k in _ITEM_KEYS):
        repairs.append("key case")
    qid, answer = fields.get("id"), fields.get("answer")
    if not isinstance(qid, str) or not isinstance(answer, str):
        raise UnparseableReply("reply is not the requested JSON: an answer lacks 'id' or 'answer'")
    normal = _ANSWERS.get(answer.strip().lower())
    if normal is None:
        raise UnparseableReply(f"reply is not the requested JSON: answer {answer[:20]!r}")
    if normal != answer:
        repairs.append("answer case")
    evidence = fields.get("evidence")
    if not isinstance(evidence, str):
        repairs.append("evidence missing")
        evidence = None
    confidence = fields.get("confidence")
    known = _CONFIDENCES.get(confidence.strip().lower()) if isinstance(confidence, str) else None
    if known is None or known != confidence:
        repairs.append("confidence case" if known else "confidence missing")
    return trusted(  # every value checked above
        QuestionAnswer,
        question_id=qid.strip(),
        answer=normal,
        evidence=evidence,
        confidence=known,
        confidence_score=None,
        unscored_reason=None,
        stage=None,
    )


def _check_ids(ids: list[str], question_ids: list[str]) -> None:
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    missing = [q for q in question_ids if q not in ids]
    unknown = sorted(set(ids) - set(question_ids))
    problems = [
        f"{label}: {', '.join(values)}"
        for label, values in (
            ("duplicate ids", duplicates),
            ("missing ids", missing),
            ("unknown ids", unknown),
        )
        if values
    ]
    if problems:
        raise UnparseableReply("; ".join(problems))
