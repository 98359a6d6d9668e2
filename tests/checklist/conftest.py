"""Fixtures of the checklist's tests (rubric, prompts, scoring, the result file)."""

from __future__ import annotations

import pytest

from judge import Rubric, load_rubric


@pytest.fixture(scope="module")
def rubric() -> Rubric:
    """The default rubric, SREGym's checklist v3.0."""
    return load_rubric("sregym-v3")
