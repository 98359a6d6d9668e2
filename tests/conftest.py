"""Shared test setup: the repo root on sys.path, and where the example set and the corpus are.

The suite runs whole on a fresh clone: every format is exercised on the small files in
`tests/fixtures/`. Tests that need the whole shared research corpus (provenance checks,
corpus-wide counts and parity) are marked `corpus` and deselected by default; select them with
`-m corpus` (or `-m "not realmodel"` for every other test, as `.ci/run` does): the opt-in markers
(`corpus`, `browser`, `realmodel`) are deselected unless the -m expression names one of them, so
`-m "not slow"` (the fast lane) leaves them out as a bare `pytest` does. The corpus is found through
`helpers.corpus_root()`; a selected corpus test fails, never skips, when it is absent.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import helpers
import pytest
from helpers import (
    CHROMIUM,
    CORPUS,
    EXAMPLE_GT,
    EXAMPLE_OUTPUTS,
    FIXTURES,
    JUDGE_SETTINGS,
    OPT_IN,
    REPO,
    missing_corpus_message,
)

from ground_truth import load_specs, load_submissions
from judge import EvalResult, evaluate
from judge.testing import FakeProvider

if str(REPO) not in sys.path:  # for the tests of the scripts in benchmarks/
    sys.path.insert(0, str(REPO))

BAD = FIXTURES / "bad"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the opt-in tests unless the -m expression names an opt-in marker (then the
    expression alone decides, as `-m "not realmodel"` in `.ci/run` selects corpus and browser)."""
    expression = config.getoption("markexpr") or ""
    if any(re.search(rf"\b{marker}\b", expression) for marker in OPT_IN):
        return
    kept, dropped = [], []
    for item in items:
        opt_in = any(item.get_closest_marker(marker) for marker in OPT_IN)
        (dropped if opt_in else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session", autouse=True)
def _no_judge_settings_from_the_shell() -> Iterator[None]:
    """Module-scoped fixtures run before `_judge_settings_unset`: they too must not see the
    judge settings of the shell that runs the suite."""
    with pytest.MonkeyPatch.context() as patch:
        for name in JUDGE_SETTINGS:
            patch.delenv(name, raising=False)
        yield


@pytest.fixture(autouse=True)
def _judge_settings_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the judge settings of the shell that runs the suite, and none leaves any
    behind: `judge eval` puts what a .env file sets into the environment, and monkeypatch
    puts each of these names back as it found it."""
    for name in JUDGE_SETTINGS:
        monkeypatch.setenv(name, "")  # so that the value, or its absence, is put back ...
        monkeypatch.delenv(name)  # ... even when the test set it (a .env file) and took it out


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tests marked `browser` were asked for explicitly: a missing chromium fails them, never
    skips them (checked before any of their fixtures starts a browser)."""
    if item.get_closest_marker("browser") is not None and not CHROMIUM.exists():
        pytest.fail(
            f"this test is marked `browser` and needs Debian's chromium at {CHROMIUM} "
            "(apt-get install chromium), or deselect it (the default `-m 'not browser'`)",
            pytrace=False,
        )


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
def example_ground_truth() -> Path:
    return EXAMPLE_GT


@pytest.fixture(scope="session")
def example_outputs() -> Path:
    return EXAMPLE_OUTPUTS


@pytest.fixture(scope="module")
def example_result() -> EvalResult:
    """The bundled example judged by the rules judge (`evaluate` with every default)."""
    return evaluate(load_specs(EXAMPLE_GT), load_submissions(EXAMPLE_OUTPUTS))


@pytest.fixture
def fake_provider() -> Iterator[FakeProvider]:
    """A running fake OpenAI-compatible provider with its default settings."""
    with FakeProvider() as running:
        yield running


@pytest.fixture(scope="session")
def bad_dir() -> Path:
    return BAD


@pytest.fixture
def closed_port_url() -> Iterator[str]:
    """The URL of a port on 127.0.0.1 that refuses every connection, for the test's length.

    The port stays bound (never listening) until the test ends: a port found free and let go
    could be given to a fake provider of another test or another process at once, which would
    then record this test's requests as calls of its own.
    """
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{held.getsockname()[1]}/v1"


@pytest.fixture()
def corpus_dir() -> Path:
    """The shared corpus folder, for tests marked `corpus`; fails when it is absent."""
    return helpers.corpus()


def mount(target: Path, *args: str) -> None:
    """Mount, or skip the test saying why the sandbox does not allow it."""
    target.mkdir(exist_ok=True)
    try:
        done = subprocess.run(["mount", *args, str(target)], capture_output=True, text=True)
    except OSError as exc:
        pytest.skip(f"cannot run mount: {exc}")
    if done.returncode != 0:
        pytest.skip(f"mounting is not permitted here: {done.stderr.strip()}")


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A real 160 KB tmpfs: room for a small file, not for a result or many answers."""
    target = tmp_path / "small"
    mount(target, "-t", "tmpfs", "-o", "size=160k", "tmpfs")
    yield target
    subprocess.run(["umount", "-l", str(target)], check=False)


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Callable[[Path], None]:
    """Makes a folder a read-only bind mount of itself: read-only even for root."""
    mounted: list[Path] = []

    def make(folder: Path) -> None:
        mount(folder, "--bind", "-o", "ro", str(folder))
        mounted.append(folder)

    yield make
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], check=False)
