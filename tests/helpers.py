"""Helpers the test modules share (imported as `helpers`; pytest puts tests/ on sys.path)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ground_truth.formats.detect import FormatWarning

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def corpus(*parts: str) -> Path:
    """A file or folder of the shared corpus; skips the calling test when it is absent."""
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared corpus file not present: {path}")
    return path


def quiet(fn: Callable[..., Any], *args: Any) -> tuple[Any, list[FormatWarning]]:
    """Call `fn`, returning its result and the FormatWarnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args)
    return result, [w.message for w in caught if isinstance(w.message, FormatWarning)]


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sregym-mini"


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
