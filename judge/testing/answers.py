"""What the fake provider says: checklist answers built from the prompt, and faulty variants."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Literal

Verdict = Literal["Yes", "No"]
AnswerPolicy = Callable[[str, Sequence[dict[str, Any]]], str]

REFUSAL_TEXT = "I'm sorry, but I can't help with that request."

_IDS_LINE = re.compile(r"^[ \t]*Question ids:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
_FENCE = re.compile(
    r"^[ \t]*(?P<fence>`{3,}|~{3,})[^\n]*\n(?P<body>.*?)^[ \t]*(?P=fence)[`~]*[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_BEGIN_END = re.compile(
    r"^[^\n]*\bBEGIN DIAGNOSIS\b[ \t]*(?P<tag>\w*)[^\n]*\n(?P<body>.*?)"
    r"^[^\n]*\bEND DIAGNOSIS\b[ \t]*(?P=tag)\b[^\n]*$",
    re.MULTILINE | re.DOTALL,
)
_TAGGED = re.compile(r"<diagnosis>\s*(?P<body>.*?)\s*</diagnosis>", re.DOTALL | re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_MAX_QUOTE = 120
_CONFIDENCES = ("High", "Medium", "Low")


def message_text(message: dict[str, Any]) -> str:
    """The text of a chat message whose content is a string or a list of typed parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def last_user_text(messages: Sequence[dict[str, Any]]) -> str:
    """The text of the last user message; "" if there is none."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return message_text(message)
    return ""


def diagnosis_match(text: str) -> re.Match[str] | None:
    for pattern in (_BEGIN_END, _FENCE, _TAGGED):
        match = pattern.search(text)
        if match:
            return match
    return None


def _outside_diagnosis(text: str) -> str:
    match = diagnosis_match(text)
    return text[: match.start()] + text[match.end() :] if match else text


def question_ids(text: str) -> list[str]:
    """The ids of the last `Question ids: A, B, C` line outside the diagnosis; [] when none."""
    lines = _IDS_LINE.findall(_outside_diagnosis(text))
    if not lines:
        return []
    return [qid.strip() for qid in lines[-1].split(",") if qid.strip()]


def diagnosis_text(text: str) -> str:
    """The diagnosis between `BEGIN DIAGNOSIS <tag>` / `END DIAGNOSIS <tag>` lines (the project's
    prompt), in a markdown fence, or in `<diagnosis>` tags; the whole text when it is not fenced."""
    match = diagnosis_match(text)
    return (match.group("body") if match else text).strip()


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()


def hash_policy(question_id: str, messages: Sequence[dict[str, Any]]) -> Verdict:
    """Default policy: a stable hash of (question id, last user message) picks Yes or No."""
    return "Yes" if _digest(question_id, last_user_text(messages))[0] % 2 == 0 else "No"


_INCIDENT_LINE = re.compile(r"^# Ground truth for incident (?P<id>.+?)[ \t]*$", re.MULTILINE)
_ORIGIN_LINE = re.compile(r"^Fault origin:[ \t]*(?P<origins>.+?)[ \t]*$", re.MULTILINE)
_NAMESPACE = re.compile(r"\s*\(namespace [^)]*\)")
GROUNDED_NO_SHARE = 0.25
"""The share of each incident's questions the grounded policy answers No however good the
diagnosis (a stable hash of question and incident), so that its answers vary."""


def origin_names(text: str) -> list[str]:
    """The fault origin's names and aliases from the project's prompt (`Fault origin:` line of
    `case.j2`, outside the diagnosis), lower case; [] when it names none."""
    line = _ORIGIN_LINE.search(_outside_diagnosis(text))
    if not line:
        return []
    names = []
    for origin in line.group("origins").split("; "):
        origin, _, aliases = _NAMESPACE.sub("", origin).partition(", also called ")
        names.append(origin.rsplit("/", 1)[-1])
        names += aliases.split(", ") if aliases else []
    return [n.strip().lower() for n in names if n.strip()]


def grounded_policy(question_id: str, messages: Sequence[dict[str, Any]]) -> Verdict:
    """A judge that reads what the diagnosis says, not how it is presented: Yes when the
    diagnosis names the fault origin (any name or alias on the prompt's `Fault origin:` line),
    except for a stable `GROUNDED_NO_SHARE` of each incident's questions, which are No. The
    order of the questions, padding without names and where the ground truth stands change
    nothing (the unbiased judge of `judge audit`'s tests)."""
    incident, named = _grounded_facts(last_user_text(messages))
    if _digest(question_id, incident, "grounded")[0] < 256 * GROUNDED_NO_SHARE:
        return "No"
    return "Yes" if named else "No"


@lru_cache(maxsize=4096)
def _grounded_facts(text: str) -> tuple[str, bool]:
    """(incident id, whether the diagnosis names the origin): read once per prompt, not once
    per question."""
    incident = _INCIDENT_LINE.search(_outside_diagnosis(text))
    diagnosis = diagnosis_text(text).lower()
    named = any(name in diagnosis for name in origin_names(text))
    return (incident.group("id") if incident else ""), named


def constant_policy(verdict: Verdict) -> AnswerPolicy:
    """An answer policy giving `verdict` to every question."""

    def policy(question_id: str, messages: Sequence[dict[str, Any]]) -> str:
        return verdict

    return policy


def evidence_quote(question_id: str, diagnosis: str) -> str:
    """A verbatim, short piece of the diagnosis: one sentence chosen by the question id."""
    sentences = [s.strip() for s in _SENTENCE_END.split(diagnosis) if s.strip()]
    if not sentences:
        return ""
    sentence = sentences[_digest(question_id, "evidence")[0] % len(sentences)]
    if len(sentence) <= _MAX_QUOTE:
        return sentence
    cut = sentence.rfind(" ", 0, _MAX_QUOTE)
    return sentence[: cut if cut > 0 else _MAX_QUOTE]


def build_answers(
    messages: Sequence[dict[str, Any]], ids: list[str], policy: AnswerPolicy
) -> list[dict[str, str]]:
    """A fake judge's answers for `ids`: the policy's verdict, an evidence quote from the
    diagnosis and a confidence derived from the prompt; ValueError if the policy says other
    than Yes or No.
    """
    text = last_user_text(messages)
    diagnosis = diagnosis_text(text)
    answers = []
    for qid in ids:
        verdict = policy(qid, messages)
        if verdict not in ("Yes", "No"):
            raise ValueError(f"answer policy returned {verdict!r} for {qid}; expected Yes or No")
        answers.append(
            {
                "id": qid,
                "answer": verdict,
                "evidence": evidence_quote(qid, diagnosis),
                "confidence": _CONFIDENCES[_digest(qid, text, "confidence")[0] % 3],
            }
        )
    return answers


def answers_json(answers: list[dict[str, str]]) -> str:
    """The answers as the reply JSON a judge sends: `{"answers": [...]}`."""
    return json.dumps({"answers": answers}, ensure_ascii=False)


def malformed(content: str) -> str:
    """Prose around a Python-repr-like body: the kind of almost-JSON a chatty model returns."""
    return "Here are my answers:\n" + content.replace('"', "'") + "\nLet me know if you need more."


def truncated(content: str) -> str:
    """The reply cut off midway, as when the provider hits max_tokens."""
    return content[: max(1, len(content) // 2)]


def count_tokens(text: str) -> int:
    """The fake tokenizer: one token per four characters, rounded up."""
    return math.ceil(len(text) / 4)
