"""Helpers the test modules share (imported as `helpers`; pytest puts tests/ on sys.path)."""

from __future__ import annotations

import csv
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ground_truth.errors import FormatWarning

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
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


EXAMPLE = REPO / "examples" / "sregym-mini"


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


GROUPED_JUDGE = (
    "import runpy, sys; from judge.run import loop; from judge.store import grouped;"
    " loop.GROUP_FROM_UNITS = 1; grouped.GROUP_SECONDS = 0.2; sys.argv[0] = 'judge';"
    " runpy.run_module('judge', run_name='__main__', alter_sys=True)"
)


def judge_command(grouped: bool = False) -> list[str]:
    """`python -m judge`; `grouped`: committing its answers to the store in batches from the
    first (`judge.store.grouped`, which a run does from 1,000 calls on), each at most 0.2 s
    old, so that a test's small run has its batches."""
    if grouped:
        return [sys.executable, "-c", GROUPED_JUDGE]
    return [sys.executable, "-m", "judge"]
