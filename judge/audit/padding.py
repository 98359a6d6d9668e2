"""Diagnoses made longer or shorter without changing what they say (the verbosity probe).

- `pad`: the diagnosis, then a paragraph of neutral sentences that name no component, no
  mechanism and no finding, until the text is at least twice as long;
- `shorten`: the diagnosis without what carries no claim: markdown headings and decoration,
  filler openers
  ("Based on my investigation, ", "In summary, "), hedges ("I think that "), sentences said
  twice and runs of blank space. A diagnosis with too little of that to remove (less than
  `MIN_CUT` of its length) has no shortened form: cutting more would cut what it says.
"""

from __future__ import annotations

import random
import re

NEUTRAL = (
    "The notes above were written at the end of the session.",
    "This paragraph adds nothing to the diagnosis stated above.",
    "The checks were run in the usual order for an incident of this kind.",
    "The wording follows the team's usual template for such reports.",
    "Each observation was collected during the same working session.",
    "The record is kept here for completeness.",
    "No further conclusion is drawn in this part of the report.",
    "The same format is used for every report of this kind.",
    "The order in which the steps are listed carries no meaning.",
    "This report was prepared as part of the routine review.",
)
"""Sentences that claim nothing about any incident."""
MIN_CUT = 0.15
_FILLER = re.compile(
    r"\b(?:based on (?:my|the|our) (?:investigation|analysis|findings)|after (?:careful|thorough) "
    r"(?:investigation|analysis)|in summary|to summari[sz]e|in conclusion|overall|to conclude|"
    r"i (?:think|believe) that|it (?:appears|seems) that|it is likely that|basically|essentially|"
    r"clearly|obviously|as (?:mentioned|noted) (?:above|earlier))\b,?\s*",
    re.IGNORECASE,
)
_HEADING = re.compile(r"^\s*#{1,6}\s[^\n]*$", re.MULTILINE)
_DECORATION = re.compile(r"(\*\*|__|^\s*[-*+]\s+|^\s*>\s?)", re.MULTILINE)
_SENTENCES = re.compile(r"(?<=[.!?])\s+")


def pad(diagnosis: str, seed: int = 0) -> str:
    """`diagnosis` and neutral sentences (a seeded order, repeated if need be) after it, until
    the whole is at least twice its length (at least one sentence)."""
    order = list(NEUTRAL)
    random.Random(seed).shuffle(order)
    added: list[str] = []
    target = 2 * len(diagnosis.strip())
    text = diagnosis.rstrip()
    while not added or len(text) + 2 + len(" ".join(added)) < target:
        added.append(order[len(added) % len(order)])
    return f"{text}\n\n{' '.join(added)}"


def shorten(diagnosis: str) -> str | None:
    """`diagnosis` without decoration, filler, hedges and repeated sentences; None when that
    cuts less than `MIN_CUT` of it (nothing to shorten without changing what it says)."""
    text = _DECORATION.sub("", _HEADING.sub("", diagnosis))
    text = _FILLER.sub("", text)
    kept: list[str] = []
    seen: set[str] = set()
    for paragraph in re.split(r"\n\s*\n", text):
        for sentence in _SENTENCES.split(" ".join(paragraph.split())):
            key = sentence.lower().strip(" .")
            if key and key not in seen:
                seen.add(key)
                kept.append(_capitalised(sentence))
    short = " ".join(kept)
    original = len(diagnosis.strip())
    if not short or original == 0 or len(short) > (1 - MIN_CUT) * original:
        return None
    return short


def _capitalised(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:]
