"""What the test modules share, in one place (imported as `helpers`; pytest puts tests/ on sys.path).

Here: the repository's paths, the shared corpus, and small helpers every room uses. A helper that
tests of one room share lives in the submodule named after it (`helpers.batch`, `helpers.html`,
...); a fixture that several files of a room use lives in that room's `conftest.py`. A test file
never imports another test file.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ground_truth.errors import FormatWarning

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
FORMATS = FIXTURES / "formats"
"""The small files of every benchmark format (see its ATTRIBUTION.md)."""
EXAMPLES = REPO / "examples"
EXAMPLE = EXAMPLES / "sregym-mini"
"""The bundled example set: 32 submissions on 9 SREGym incidents."""
EXAMPLE_GT = EXAMPLE / "ground_truth"
EXAMPLE_OUTPUTS = EXAMPLE / "outputs"
BENCHMARKS = REPO / "benchmarks"
JUDGE_SETTINGS = (
    "JUDGE_MODEL",
    "JUDGE_BASE_URL",
    "JUDGE_API_KEY",
    "JUDGE_MODEL_ID",
    "JUDGE_API_BASE",
)
"""The environment variables that set the judge; conftest.py unsets them for every test."""
OPT_IN = ("corpus", "browser", "realmodel")
"""The markers conftest.py deselects unless the -m expression names one of them."""
CHROMIUM = Path("/usr/bin/chromium")
"""Debian's chromium, for the tests marked `browser`."""
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]
"""Headless, and nothing the browser would fetch for itself."""
CORPUS_ENV = "DIAGNOSIS_JUDGE_CORPUS"


def corpus_root() -> Path:
    """The shared research corpus: `$DIAGNOSIS_JUDGE_CORPUS`, else `../shared/corpus` beside the repo.

    Only tests marked `corpus` read it (deselected unless `-m corpus` selects them); everything
    else runs on the small files in `tests/fixtures/`.
    """
    configured = os.environ.get(CORPUS_ENV)
    return Path(configured).expanduser() if configured else REPO.parent / "shared" / "corpus"


CORPUS = corpus_root()


def missing_corpus_message(path: Path) -> str:
    return (
        f"this test is marked `corpus` and needs {path}, which does not exist: put the shared "
        f"corpus at {REPO.parent / 'shared' / 'corpus'} or point {CORPUS_ENV} at it, "
        "or deselect the corpus tests (the default)"
    )


# Whether the running test is marked `corpus`: conftest sets it before every test.
_corpus_marked = False


def corpus(*parts: str) -> Path:
    """A file or folder of the shared corpus, for a test marked `corpus`; fails when absent.

    A corpus test was asked for explicitly, so a missing file is an error, never a skip; and a
    test without the marker may not read the corpus at all, or a fresh clone would break on it.
    """
    if not _corpus_marked:
        pytest.fail(
            "this test reads the shared corpus but is not marked `corpus`: mark it "
            "(@pytest.mark.corpus) or give it a file in tests/fixtures/",
            pytrace=False,
        )
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        pytest.fail(missing_corpus_message(path), pytrace=False)
    return path


def quiet(fn: Callable[..., Any], *args: Any) -> tuple[Any, list[FormatWarning]]:
    """Call `fn`, returning its result and the FormatWarnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args)
    return result, [w.message for w in caught if isinstance(w.message, FormatWarning)]


def eval_args(gt: Path, outputs: Path, result: Path, *extra: str) -> list[str]:
    """`judge eval` arguments for a ground truth, an outputs folder and a result file."""
    return [
        "eval",
        "--ground-truth",
        str(gt),
        "--outputs",
        str(outputs),
        "--result-file",
        str(result),
        *extra,
    ]


def one_incident_args(result: Path, *extra: str) -> list[str]:
    """`judge eval` over one example incident (incorrect_image, 3 trials): a quick end-to-end run."""
    return eval_args(
        EXAMPLE / "ground_truth" / "incorrect_image.yaml", EXAMPLE / "outputs", result, *extra
    )


def write_label_sheet(path: Path, answers: dict[tuple[str, str, str], str], who: str) -> None:
    """A label sheet in the project's format: one row per (incident, trial, question) answer,
    all by annotator `who`."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(
            handle, fieldnames=["incident_id", "trial", "question_id", "answer", "annotator"]
        )
        writer.writeheader()
        for (incident, trial, question), answer in answers.items():
            writer.writerow(
                {
                    "incident_id": incident,
                    "trial": trial,
                    "question_id": question,
                    "answer": answer,
                    "annotator": who,
                }
            )


class Clock:
    """A clock that moves only when the test moves it (`clock.now += 5`)."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def load_script(path: Path, name: str | None = None) -> ModuleType:
    """A script that is not part of a package (in benchmarks/ or examples/), loaded as module
    `name` (default: its file's stem) and kept in `sys.modules` as such."""
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
