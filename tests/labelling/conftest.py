"""Fixtures of the labelling page's tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.labelling import make_dataset


@pytest.fixture(scope="module")
def labelling_dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """`make_dataset`'s result file, ground truth and outputs, made once per test module."""
    return make_dataset(tmp_path_factory.mktemp("labelling"))
