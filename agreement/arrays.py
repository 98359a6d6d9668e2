"""Input checks shared by the calibration, selective and prediction-powered modules.

Each check turns what a caller passed into a 1-D numpy array or raises `ValueError` naming the
argument and what was expected, so a bad column fails at the boundary and not deep in a formula.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


def as_floats(values: npt.ArrayLike, name: str, *, allow_nan: bool = False) -> FloatArray:
    """`values` as a 1-D float array; NaN only when `allow_nan`, infinities never."""
    raw = np.asarray(values)
    if raw.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence, got shape {raw.shape}")
    if raw.dtype.kind not in "fiub":
        raw = np.array([np.nan if v is None else v for v in raw], dtype=object)
    try:
        out = raw.astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: expected numbers ({exc})") from None
    if np.isinf(out).any() or (not allow_nan and np.isnan(out).any()):
        missing = "infinite" if np.isinf(out).any() else "missing (NaN/None)"
        raise ValueError(f"{name}: expected finite numbers, got {missing} values")
    return out


def as_unit(values: npt.ArrayLike, name: str) -> FloatArray:
    """`values` as a 1-D float array of numbers in [0, 1] (confidences, probabilities)."""
    out = as_floats(values, name)
    if ((out < 0) | (out > 1)).any():
        bad = out[(out < 0) | (out > 1)][0]
        raise ValueError(f"{name}: expected numbers in [0, 1], got {float(bad)!r}")
    return out


def as_bools(values: npt.ArrayLike, name: str, n: int) -> BoolArray:
    """`values` as a 1-D bool array of length `n`; only booleans or 0/1 are accepted."""
    raw = np.asarray(values)
    if raw.ndim != 1 or len(raw) != n:
        raise ValueError(f"{name}: expected {n} values (one per confidence), got shape {raw.shape}")
    if raw.dtype != np.bool_ and not np.isin(raw, (0, 1)).all():
        raise ValueError(
            f"{name}: expected booleans (or 0/1), got {raw[~np.isin(raw, (0, 1))][0].item()!r}"
        )
    return raw.astype(bool)


def same_length(n: int, **arrays: np.ndarray) -> None:
    for name, array in arrays.items():
        if len(array) != n:
            raise ValueError(f"{name}: expected {n} values (one per item), got {len(array)}")


def check_level(value: float, name: str) -> float:
    """A probability strictly inside (0, 1): a target agreement or an error level alpha."""
    if not 0 < value < 1:
        raise ValueError(f"{name}: expected a number strictly between 0 and 1, got {value!r}")
    return float(value)


def cluster_codes(clusters: Sequence[Hashable] | None, n: int, name: str = "clusters") -> IntArray:
    """Integer codes 0..C-1 for the items' clusters; None puts every item in its own cluster."""
    if clusters is None:
        return np.arange(n, dtype=np.int64)
    keys = list(clusters)
    if len(keys) != n:
        raise ValueError(f"{name}: expected {n} cluster ids (one per item), got {len(keys)}")
    index: dict[Hashable, int] = {}
    return np.array([index.setdefault(k, len(index)) for k in keys], dtype=np.int64)
