"""Keeping every credential a run holds out of what it writes, and out of the params a stored
answer is keyed by.

A provider may echo a key back (a 401 body, a proxy's error page, a model repeating its
headers into an answer's evidence), whole or in part, and a message may later be shortened:
so each credential is masked whole, and every run of `MIN_RUN` or more characters that also
occurs in it is masked, wherever it appears and however it was cut. The credentials are the
judge's own key and every environment variable whose name says it holds one (`*_API_KEY`,
`*_TOKEN`, ..., from the environment or a `.env` file: the clients send `OPENAI_API_KEY` when
no key is given). A `Secrets` masks them all; the llm judge masks each reply and each error
with its own as it arrives (`judge.judges.llm`), before anything reads, stores or prints it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

MIN_RUN = 8
MASK = "***"
_SECRET = re.compile(r"key|token|secret|password|authorization|credential", re.I)
_CREDENTIAL_VARIABLE = re.compile(r"key|token|secret|passw|_pass$|auth|credential", re.I)
_API_KEY = re.compile(r"api_?key$", re.I)
SHORTEST_KEY = 4


class Secrets:
    """The credentials one judge holds, and `mask` for any text it is given back."""

    def __init__(self, secrets: Iterable[str | None] = ()):
        held = {s for s in secrets if s}
        self._short = sorted((s for s in held if len(s) < MIN_RUN), key=len, reverse=True)
        self._grams = frozenset(
            s[i : i + MIN_RUN] for s in held for i in range(len(s) - MIN_RUN + 1)
        )

    @classmethod
    def of(cls, key: str | None, environ: Mapping[str, str] | None = None) -> Secrets:
        """`key` and the credentials in `environ` (default: the process's environment)."""
        return cls([key, *credentials(os.environ if environ is None else environ)])

    def __bool__(self) -> bool:
        return bool(self._short or self._grams)

    def mask(self, text: str) -> str:
        """`text` with every credential, and every run of `MIN_RUN` characters of one, as `***`."""
        if not text or not self:
            return text
        for secret in self._short:
            text = text.replace(secret, MASK)
        if not self._grams or not self._found(text):
            return text
        covered = [False] * len(text)
        for i in range(len(text) - MIN_RUN + 1):
            if text[i : i + MIN_RUN] in self._grams:
                covered[i : i + MIN_RUN] = [True] * MIN_RUN
        out: list[str] = []
        for i, char in enumerate(text):
            if not covered[i]:
                out.append(char)
            elif i == 0 or not covered[i - 1]:
                out.append(MASK)
        return "".join(out)

    def _found(self, text: str) -> bool:
        """Whether any run of a credential is in `text`: the grams searched for in the text
        (at C speed) when they are fewer than its positions, else each position looked up."""
        if len(self._grams) < len(text):
            return any(gram in text for gram in self._grams)
        return any(text[i : i + MIN_RUN] in self._grams for i in range(len(text) - MIN_RUN + 1))


def credentials(environ: Mapping[str, str]) -> list[str]:
    """The values of the variables in `environ` named as credentials, long enough to be one:
    an API key (`OPENAI_API_KEY`, which the clients send when the judge has no key of its own)
    from `SHORTEST_KEY` characters, any other from `MIN_RUN` (a `PIP_NO_KEY=1` is no secret,
    and masking "1" would mangle every text)."""
    return [
        value
        for name, value in environ.items()
        if _CREDENTIAL_VARIABLE.search(name)
        and len(value.strip()) >= (SHORTEST_KEY if _API_KEY.search(name) else MIN_RUN)
    ]


def mask_secret(text: str, secret: str | None) -> str:
    """`text` with every run of at least `MIN_RUN` characters of `secret` replaced by `***`."""
    return Secrets([secret]).mask(text)


def scrub_params(params: dict[str, Any]) -> dict[str, Any]:
    """Params without anything that looks like a credential (`api_key`, `token`, ...)."""
    return {k: v for k, v in params.items() if not _SECRET.search(k)}
