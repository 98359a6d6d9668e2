"""An LLM judge's confidence in each answer, from what the provider gives back.

In order of preference:

1. **The Yes/No token's probability.** Asked with `logprobs` and `top_logprobs` (OpenAI and
   compatible servers: vLLM, llama.cpp), a reply carries, for each token it wrote, the
   log-probabilities of the likeliest tokens at that place. `answer_probabilities` finds the
   token where each answer's `Yes` or `No` begins (the text of the tokens put together, read as
   the reply JSON), and the share of the Yes-like and No-like alternatives' probability that
   went to the answer given: P(No) / (P(Yes) + P(No)) for a No.
2. **The agreement of k samples** (`--samples k`): a panel of k calls at a temperature above
   0, whose combined score (`panel_score`) is the share that backs the majority when the
   members give no probability of their own.
3. **The model's stated level**: High, Medium, Low (`STATED`).

The score is the judge's raw confidence, not a probability of agreeing with people: `judge
calibrate` maps it to one.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..checklist.judgment import QuestionAnswer, trusted
from .clients.reply import TokenLogprob, TokenLogprobs, logprobs_of

STATED = {"High": 0.9, "Medium": 0.7, "Low": 0.5}
"""The score of a stated level when nothing better is known. Only their order matters."""
TOP_LOGPROBS = 5
"""Alternatives asked for at each token: enough to hold both Yes and No."""

_ID = re.compile(r'"id"\s*:\s*"((?:[^"\\]|\\.)*)"')
_ANSWER = re.compile(r'"answer"\s*:\s*"(?=[YyNn])')


Token = TokenLogprob
"""One generated token with its log-probability and the alternatives at its place."""


def tokens_of(logprobs: Any) -> Sequence[Token] | None:
    """The tokens of a choice's `logprobs` (the provider's objects or plain dicts), or of a
    `Reply`'s already read ones; None when the provider gave none."""
    if isinstance(logprobs, TokenLogprobs | tuple | list):
        return logprobs or None
    return logprobs_of(logprobs)


def answer_probabilities(tokens: Sequence[Token]) -> dict[str, float]:
    """Per question id, the probability the model gave the answer it wrote, among Yes and No.

    An answer whose token has no Yes-like or No-like alternative, or whose id cannot be read,
    is left out (the caller falls back to the stated level), as is one whose token's
    log-probabilities cannot be read."""
    texts = tokens.texts if isinstance(tokens, TokenLogprobs) else [t.token for t in tokens]
    text = "".join(texts)
    starts = _offsets(texts)
    marks = sorted(
        [(m.start(), "id", m.group(1)) for m in _ID.finditer(text)]
        + [(m.end(), "answer", "") for m in _ANSWER.finditer(text)]
    )
    found: dict[str, float] = {}
    current: str | None = None
    for position, kind, value in marks:
        if kind == "id":
            current = value
            continue
        if current is None or current in found:
            continue
        try:
            p = _chosen_probability(tokens, starts, position)
        except ValueError:  # a token or log-probability that is not one
            p = None
        if p is not None:
            found[current] = p
    return found


def with_scores(answers: Iterable[QuestionAnswer], logprobs: Any) -> list[QuestionAnswer]:
    """The answers with a confidence score each: the Yes/No token's probability where the
    reply's `logprobs` give it, else the stated level's score (`STATED`). The answers are
    validated models and each score a probability or a `STATED` level: the copies are not
    validated again."""
    tokens = tokens_of(logprobs) if logprobs is not None else None
    probabilities = answer_probabilities(tokens) if tokens else {}
    out = []
    for answer in answers:
        score = probabilities.get(answer.question_id)
        if score is None and answer.answer is not None:
            score = STATED.get(answer.confidence or "")
        out.append(trusted(type(answer), **{**answer.__dict__, "confidence_score": score}))
    return out


def stated_score(answer: QuestionAnswer) -> float | None:
    """An answer's score, or its stated level's when it has none (an answer stored before
    scores existed); None for an unscored answer or one with neither."""
    if answer.answer is None:
        return None
    if answer.confidence_score is not None:
        return answer.confidence_score
    return STATED.get(answer.confidence or "")


def panel_score(winner: str, members: Sequence[QuestionAnswer]) -> float | None:
    """A panel's confidence in `winner` from its members that scored the question: the mean
    of each member's probability of `winner` (its score when it answered `winner`, one minus
    it when it did not). A member with no score counts as sure of its answer, so without any
    scores this is the share of members that back the winner: the agreement of k samples."""
    scored = [m for m in members if m.answer is not None]
    if not scored:
        return None
    total = 0.0
    for member in scored:
        p = member.confidence_score if member.confidence_score is not None else 1.0
        total += p if member.answer == winner else 1.0 - p
    return round(total / len(scored), 6)


def _offsets(texts: Sequence[str]) -> list[int]:
    """Where each token starts in the text they make together."""
    return [0, *itertools.accumulate(map(len, texts))][:-1] if texts else []


def _chosen_probability(tokens: Sequence[Token], starts: list[int], position: int) -> float | None:
    """P(answer written) / (P(Yes-like) + P(No-like)) at the token holding `position`."""
    index = _token_at(starts, position)
    if index is None:
        return None
    token = tokens[index]
    prefix = token.token[: position - starts[index]]
    chosen = _side(token.token[len(prefix) :])
    if chosen is None:
        return None
    mass = {"yes": 0.0, "no": 0.0}
    alternatives = dict(token.top)
    alternatives.setdefault(token.token, token.logprob)
    for text, logprob in alternatives.items():
        if not text.startswith(prefix):
            continue
        side = _side(text[len(prefix) :])
        if side is not None:
            mass[side] += math.exp(logprob)
    total = mass["yes"] + mass["no"]
    return round(mass[chosen] / total, 6) if total > 0 else None


def _token_at(starts: list[int], position: int) -> int | None:
    lo, hi = 0, len(starts) - 1
    if hi < 0 or position < 0:
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= position:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _side(rest: str) -> str | None:
    """Which answer a token's text from the answer's first character spells: "yes", "no" or
    neither (an empty rest, a quote, another word)."""
    word = rest.strip().lower()
    if not word:
        return None
    if "yes".startswith(word) or word.startswith("yes"):
        return "yes"
    if "no".startswith(word) or (word.startswith("no") and not word[2:3].isalpha()):
        return "no"
    return None
