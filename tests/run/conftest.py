"""Fixtures of the run's tests."""

from __future__ import annotations

import pytest
from helpers import EXAMPLE_GT, EXAMPLE_OUTPUTS

from ground_truth import IncidentSpec, Submission, load_specs, load_submissions


@pytest.fixture(scope="module")
def example_inputs() -> tuple[list[IncidentSpec], list[Submission]]:
    """The bundled example's specs and submissions, loaded once per test module."""
    return load_specs(EXAMPLE_GT), load_submissions(EXAMPLE_OUTPUTS)
