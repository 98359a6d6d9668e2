"""Test helpers that ship with the package: a fake OpenAI-compatible provider with seeded faults.

Names are loaded on first use, so importing this package is cheap and
`python -m judge.testing.fake_provider` runs without a double-import warning.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "REFUSAL_TEXT": "judge.testing.answers",
    "AnswerPolicy": "judge.testing.answers",
    "constant_policy": "judge.testing.answers",
    "hash_policy": "judge.testing.answers",
    "CallRecord": "judge.testing.call_log",
    "read_call_log": "judge.testing.call_log",
    "FakeProviderConfig": "judge.testing.config",
    "FakeProvider": "judge.testing.fake_provider",
    "FaultKind": "judge.testing.faults",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'judge.testing' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
