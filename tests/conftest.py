"""Shared test setup: the repo root on sys.path, and where the example set and the corpus are.

The shared research corpus (`../shared/corpus` beside the repo) holds files some of which carry
no license; tests read them in place and skip cleanly when the folder is absent.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
EXAMPLE = REPO / "examples" / "sregym-mini"
FIXTURES = REPO / "tests" / "fixtures"
BAD = FIXTURES / "bad"


def corpus_path(*parts: str) -> Path:
    """A file or folder of the shared corpus; skips the calling test when it is absent."""
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared corpus file not present: {path}")
    return path


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def example_dir() -> Path:
    return EXAMPLE


@pytest.fixture(scope="session")
def example_ground_truth() -> Path:
    return EXAMPLE / "ground_truth"


@pytest.fixture(scope="session")
def example_outputs() -> Path:
    return EXAMPLE / "outputs"


@pytest.fixture(scope="session")
def bad_dir() -> Path:
    return BAD


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The shared corpus folder; tests using it skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not present at {CORPUS}")
    return CORPUS
