"""The building blocks of `agreement.ppi`: each estimator as a sum of per-item terms ψ_i (its
linearisation), with a cluster-robust variance (see `agreement.ppi` for the method and the
references), and the checks of its inputs."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agreement.arrays import (
    BoolArray,
    FloatArray,
    IntArray,
    as_floats,
    cluster_codes,
    same_length,
)


@dataclass
class Fit:
    """An estimate as a sum of per-item terms `psi` (its linearisation) over clusters `codes`:
    its variance is the sum over clusters of the squared sum of their terms (CR0)."""

    value: float
    psi: FloatArray
    codes: IntArray
    lam: float | None = None

    def variance(self) -> float:
        sums = np.bincount(self.codes, weights=self.psi)
        return float(sums @ sums)


def check_inputs(
    judge: npt.ArrayLike,
    labels: npt.ArrayLike,
    clusters: Sequence[Hashable] | None,
    labels_name: str = "labels",
    codes: IntArray | None = None,
) -> tuple[FloatArray, FloatArray, IntArray]:
    """The judge values, labels (NaN: not labelled) and cluster codes, checked."""
    f = as_floats(judge, "judge")
    y = as_floats(labels, labels_name, allow_nan=True)
    same_length(len(f), **{labels_name: y})
    return f, y, cluster_codes(clusters, len(f)) if codes is None else codes


def check_probabilities(probabilities: npt.ArrayLike) -> FloatArray:
    """Labelling probabilities, each in (0, 1]."""
    pi = as_floats(probabilities, "probabilities")
    if ((pi <= 0) | (pi > 1)).any():
        raise ValueError(
            f"probabilities: expected numbers in (0, 1], got {float(pi[(pi <= 0) | (pi > 1)][0])!r}"
        )
    return pi


def judge_fit(f: FloatArray, codes: IntArray) -> Fit | str:
    """The judge's mean over every item."""
    if len(f) == 0:
        return "no items"
    return Fit(float(f.mean()), (f - f.mean()) / len(f), codes)


def labels_fit(y: FloatArray, labelled: BoolArray, codes: IntArray) -> Fit | str:
    """The labels' mean over the labelled items; a reason instead when there are none."""
    n = int(labelled.sum())
    if n == 0:
        return "no labels"
    y_l = y[labelled]
    return Fit(float(y_l.mean()), (y_l - y_l.mean()) / n, codes[labelled])


def ppi_fit(
    f: FloatArray, y: FloatArray, labelled: BoolArray, codes: IntArray, lam: float | None
) -> Fit | str:
    """PPI++ with `lam` (power-tuned when None); a reason instead with fewer than 2 labels."""
    n, n_u = int(labelled.sum()), int((~labelled).sum())
    if n < 2:
        return f"PPI needs at least 2 labels, got {n}"
    if lam is not None and not 0 <= lam <= 1:
        raise ValueError(f"lam: expected a number in [0, 1] or None, got {lam!r}")
    f_l, y_l, f_u = f[labelled], y[labelled], f[~labelled]
    if n_u == 0:
        lam = 0.0
    elif lam is None:
        lam = _tuned_lambda(f, y_l, f_l, labelled, codes)
    psi = np.zeros(len(f))
    psi[labelled] = ((y_l - y_l.mean()) - lam * (f_l - f_l.mean())) / n
    value = float(y_l.mean() - lam * f_l.mean())
    if n_u:
        psi[~labelled] = lam * (f_u - f_u.mean()) / n_u
        value += lam * float(f_u.mean())
    return Fit(value, psi, codes, lam)


def _tuned_lambda(
    f: FloatArray, y_l: FloatArray, f_l: FloatArray, labelled: BoolArray, codes: IntArray
) -> float:
    n, n_u = len(y_l), len(f) - len(y_l)
    size = int(codes.max()) + 1
    cy = np.bincount(codes[labelled], weights=y_l - y_l.mean(), minlength=size)
    cf = np.bincount(codes[labelled], weights=f_l - f_l.mean(), minlength=size)
    spread = np.bincount(codes, weights=f - f.mean(), minlength=size)
    variance = float(spread @ spread) / (len(f) - 1)
    if variance == 0:
        return 0.0
    return float(np.clip(float(cy @ cf) / n / ((1 + n / n_u) * variance), 0.0, 1.0))


def active_fit(
    f: FloatArray,
    y: FloatArray,
    labelled: BoolArray,
    pi: FloatArray,
    codes: IntArray,
    lam: float | None,
) -> Fit | str:
    """Active PPI++: labels weighted by the inverse of their probabilities `pi`."""
    n = int(labelled.sum())
    if n < 2:
        return f"needs at least 2 labels, got {n}"
    if lam is not None and not 0 <= lam <= 1:
        raise ValueError(f"lam: expected a number in [0, 1] or None, got {lam!r}")
    weight = np.where(labelled, 1 / pi, 0.0)
    a = np.where(labelled, y, 0.0) * weight
    b = f * (1 - weight)
    if lam is None:
        ca = np.bincount(codes, weights=a - a.mean())
        cb = np.bincount(codes, weights=b - b.mean())
        lam = float(np.clip(-(ca @ cb) / (cb @ cb), 0.0, 1.0)) if cb @ cb > 0 else 0.0
    terms = a + lam * b
    return Fit(float(terms.mean()), (terms - terms.mean()) / len(f), codes, lam)


def difference(one: Fit | str, two: Fit | str) -> Fit | str:
    """One estimate minus another, over the clusters of both."""
    if isinstance(one, str) or isinstance(two, str):
        return one if isinstance(one, str) else two
    return Fit(
        one.value - two.value,
        np.concatenate([one.psi, -two.psi]),
        np.concatenate([one.codes, two.codes]),
        None,
    )


def cluster_keys(clusters: Sequence[Hashable] | None, n: int, side: str) -> list[Hashable]:
    """Cluster ids for one side of a difference; each item its own cluster when None."""
    if clusters is None:
        return [(_Alone, side, i) for i in range(n)]
    keys = list(clusters)
    if len(keys) != n:
        raise ValueError(
            f"clusters_{side}: expected {n} cluster ids (one per item), got {len(keys)}"
        )
    return keys


class _Alone:
    """Marks an item that is its own cluster, so its key can equal no caller's cluster id."""


def z_value(alpha: float) -> float:
    """The normal quantile of a two-sided interval at level 1 - alpha."""
    from scipy.special import ndtri  # imported late: scipy costs a second

    return float(ndtri(1 - alpha / 2))
