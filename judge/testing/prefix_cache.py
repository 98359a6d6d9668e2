"""The fake provider's prompt cache: how many of a prompt's tokens a caching provider would
serve from prompts it has seen before.

Real providers cache a prompt's start in fixed blocks (vLLM 16 tokens, OpenAI 128 tokens
beyond a 1,024-token minimum) and bill the cached part at a discount. This one counts in blocks
of `BLOCK_CHARS` bytes (16 fake tokens: one token is four characters) of the messages' UTF-8
text in order, roles included: the cached part of a prompt is its longest run of whole blocks
from the start that some earlier prompt began with, reported only from `MIN_TOKENS` tokens on
(OpenAI reports 0 below its minimum). A prompt counts as seen when it arrives, so of a
submission's three dimension calls sent together the second and third find the first's start.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from typing import Any

from judge.testing.answers import message_text

BLOCK_CHARS = 64
MIN_TOKENS = 128
CHARS_PER_TOKEN = 4


def prompt_text(messages: Sequence[dict[str, Any]]) -> str:
    """What the cache compares: each message's role and text, in order."""
    return "".join(f"<{m.get('role')}>{message_text(m)}\n" for m in messages)


class PrefixCache:
    """Block hashes of every prompt seen; thread-safe (the server answers in threads)."""

    def __init__(self, block_chars: int = BLOCK_CHARS, min_tokens: int = MIN_TOKENS) -> None:
        self.block_chars = block_chars
        self.min_tokens = min_tokens
        self._seen: set[bytes] = set()
        self._lock = threading.Lock()

    def cached_tokens(self, messages: Sequence[dict[str, Any]], prompt_tokens: int) -> int:
        """Tokens of this prompt's start an earlier prompt shared; then remember this one."""
        text = prompt_text(messages)
        digests = self._block_digests(text)
        with self._lock:
            shared = next((i for i, d in enumerate(digests) if d not in self._seen), len(digests))
            self._seen.update(digests)
        tokens = min(prompt_tokens, shared * self.block_chars // CHARS_PER_TOKEN)
        return tokens if tokens >= self.min_tokens else 0

    def _block_digests(self, text: str) -> list[bytes]:
        """The hash of each whole-block prefix: text[:B], text[:2B], ..."""
        running = hashlib.sha256()
        digests = []
        data = text.encode("utf-8")
        for start in range(0, len(data) - self.block_chars + 1, self.block_chars):
            running.update(data[start : start + self.block_chars])
            digests.append(running.copy().digest())
        return digests
