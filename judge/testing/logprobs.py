"""Token log-probabilities for the fake provider's replies, as OpenAI returns them when asked
(`logprobs: true`, `top_logprobs: N`): each token of the reply with its log-probability and the
likeliest alternatives at its place.

The reply is cut into tokens at word and punctuation boundaries, so each answer's `Yes` or `No`
is a token of its own. At that token the alternatives are the answer given, with the
probability a `ConfidencePolicy` chooses, and the other answer with the rest; every other token
was certain (log-probability 0).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

ConfidencePolicy = Callable[[str, str, Sequence[dict[str, Any]], str], float]
"""`(model, question_id, messages, answer) -> P(answer)` in (0, 1]: how sure the fake model is."""

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
_ANSWER = re.compile(r'"answer"\s*:\s*"')
_ID = re.compile(r'"id"\s*:\s*"([^"]*)"')


def hash_confidence(
    model: str, question_id: str, messages: Sequence[dict[str, Any]], answer: str
) -> float:
    """Default policy: a stable hash of (model, question id, prompt) picks P in [0.5, 1)."""
    text = "\x1f".join([model, question_id, str(messages[-1].get("content") if messages else "")])
    return 0.5 + hashlib.sha256(text.encode("utf-8")).digest()[0] / 512


def logprobs_for(
    content: str,
    model: str,
    messages: Sequence[dict[str, Any]],
    policy: ConfidencePolicy,
    top: int,
) -> dict[str, Any]:
    """The `choices[0].logprobs` of a reply with this content (at most `top` alternatives)."""
    decided = _answer_offsets(content)
    items = []
    for match in _TOKEN.finditer(content):
        text = match.group(0)
        qid = decided.get(match.start())
        if qid is not None and text in ("Yes", "No"):
            p = min(1.0, max(1e-6, policy(model, qid, messages, text)))
            other = "No" if text == "Yes" else "Yes"
            alternatives = [(text, math.log(p))]
            if p < 1.0:
                alternatives.append((other, math.log(1.0 - p)))
        else:
            alternatives = [(text, 0.0)]
        chosen = alternatives[0][1]
        alternatives = alternatives[:top]
        items.append(
            {
                "token": text,
                "logprob": chosen,
                "bytes": list(text.encode("utf-8")),
                "top_logprobs": [
                    {"token": t, "logprob": lp, "bytes": list(t.encode("utf-8"))}
                    for t, lp in alternatives
                ],
            }
        )
    return {"content": items, "refusal": None}


def _answer_offsets(content: str) -> dict[int, str]:
    """Where each answer's value starts in `content`, with its question id."""
    out: dict[int, str] = {}
    current = None
    marks = sorted(
        [(m.start(), m.group(1)) for m in _ID.finditer(content)]
        + [(m.end(), None) for m in _ANSWER.finditer(content)],
        key=lambda mark: mark[0],
    )
    for position, qid in marks:
        if qid is not None:
            current = qid
        elif current is not None:
            out[position] = current
    return out
