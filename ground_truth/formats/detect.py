"""Checks across a format's specs and submissions together (`judge check`); detection and
loading are `ground_truth.formats.registry`'s and `ground_truth.loaders`'."""

from __future__ import annotations

from typing import Any

from ..registry import PluginError
from .registry import FORMATS


def cross_check(fmt: str, specs: list[Any], submissions: list[Any]) -> None:
    """Lint specs and submissions of one format together (`judge check`): warnings only."""
    try:
        adapter = FORMATS.find(fmt)  # items may name a format not installed here
    except PluginError:
        return
    check = getattr(adapter, "cross_check", None)
    if callable(check):
        check(specs, submissions)
