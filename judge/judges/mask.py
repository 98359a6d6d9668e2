"""Keeping an API key out of every message the judge writes (errors, progress lines, the store)
and out of the params a stored answer is keyed by.

A provider may echo the key back (a 401 body, a proxy's error page), whole or in part, and a
message may later be shortened: so the key is masked first, and every run of `MIN_RUN` or more
characters that also occurs in the key is masked, wherever it appears and however it was cut.
"""

from __future__ import annotations

import re
from typing import Any

MIN_RUN = 8
MASK = "***"
_SECRET = re.compile(r"key|token|secret|password|authorization|credential", re.I)


def mask_secret(text: str, secret: str | None) -> str:
    """`text` with every run of at least `MIN_RUN` characters of `secret` replaced by `***`."""
    if not secret or not text:
        return text
    if len(secret) < MIN_RUN:
        return text.replace(secret, MASK)
    grams = {secret[i : i + MIN_RUN] for i in range(len(secret) - MIN_RUN + 1)}
    if not any(gram in text for gram in grams):  # the usual case, at C speed
        return text
    covered = [False] * len(text)
    for i in range(len(text) - MIN_RUN + 1):
        if text[i : i + MIN_RUN] in grams:
            covered[i : i + MIN_RUN] = [True] * MIN_RUN
    out: list[str] = []
    for i, char in enumerate(text):
        if not covered[i]:
            out.append(char)
        elif i == 0 or not covered[i - 1]:
            out.append(MASK)
    return "".join(out)


def scrub_params(params: dict[str, Any]) -> dict[str, Any]:
    """Params without anything that looks like a credential (`api_key`, `token`, ...)."""
    return {k: v for k, v in params.items() if not _SECRET.search(k)}
