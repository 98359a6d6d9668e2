"""Fixtures of the judges' tests."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["litellm", "openai"])
def llm_client(request: pytest.FixtureRequest) -> str:
    """The llm judge's client (`judge.judges.clients`): a behaviour test that takes this
    fixture runs through each, against the same fake provider, so the two cannot drift."""
    return request.param
