"""Shared test setup: the repo root on sys.path, and where the example set and the corpus are.

The suite runs whole on a fresh clone: every format is exercised on the small files in
`tests/fixtures/`. Tests that need the whole shared research corpus (provenance checks,
corpus-wide counts and parity) are marked `corpus` and deselected by default; select them with
`-m corpus` (or `-m "corpus or not corpus"`, as `.ci/run` does). The corpus is found through
`helpers.corpus_root()`; a selected corpus test fails, never skips, when it is absent.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import helpers  # noqa: E402
from helpers import CORPUS, EXAMPLE, FIXTURES, missing_corpus_message  # noqa: E402

BAD = FIXTURES / "bad"


@pytest.fixture(autouse=True)
def _corpus_gate(request: pytest.FixtureRequest) -> Iterator[None]:
    """Only tests marked `corpus` may read the corpus; they fail up front when it is absent."""
    marked = request.node.get_closest_marker("corpus") is not None
    if marked and not CORPUS.is_dir():
        pytest.fail(missing_corpus_message(CORPUS), pytrace=False)
    helpers._corpus_marked = marked
    yield
    helpers._corpus_marked = False


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


@pytest.fixture()
def corpus_dir() -> Path:
    """The shared corpus folder, for tests marked `corpus`; fails when it is absent."""
    return helpers.corpus()
