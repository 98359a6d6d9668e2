"""Is a new set of cases drawn like a reference set? A two-sample test per feature.

A guarantee calibrated on labelled cases holds for new cases drawn like them. Without labels
on the new cases, what can be compared is what both sets have without labels: the judge's
answers and confidence per question, the diagnoses' length, the benchmarks and agents present.
`shift_test` compares each such feature between the two sets and says which differ.

Per feature, the statistic is the Kolmogorov-Smirnov distance between the two sets' empirical
distributions (numbers; missing values left out) or the total-variation distance between their
shares of each category. Its p-value is a permutation test that reassigns whole clusters
(incidents) between the sets, so answers to one incident, which move together, never count
as independent evidence. The p-values are corrected for testing many features at once
(Westfall and Young's single-step min-P over the same permutations, which holds the chance of
any false alarm at `level` and follows the dependence between features). Categories of the new
cases that no reference case has (a benchmark, an agent) are listed; whether they are a shift
is the category's test: a few cases of an agent a random labelled sample happened to miss are
not, a run made of them is.

What no feature shows cannot be seen: a judge that grows less accurate on cases that look the
same in every feature compared passes this test. Labels on some of the new cases are the
check for that (`judge calibrate --check`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from agreement.arrays import FloatArray, as_floats, check_level

DEFAULT_LEVEL = 0.01
DEFAULT_PERMUTATIONS = 1000


@dataclass
class Sample:
    """One set of cases: each case's cluster (incident), numeric features (NaN: missing)
    and categorical features (None is a category of its own: "not recorded"; a feature one
    set never records is not tested)."""

    clusters: list[Hashable]
    numbers: dict[str, list[float]] = field(default_factory=dict)
    categories: dict[str, list[str | None]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.clusters)


class FeatureShift(BaseModel):
    """One feature compared between the reference and the new cases."""

    feature: str
    kind: Literal["number", "category"]
    statistic: float = Field(
        description="Kolmogorov-Smirnov distance (numbers) or total-variation distance "
        "(categories) between the two sets."
    )
    p_value: float = Field(description="Permutation p-value, clusters permuted between sets.")
    adjusted: float = Field(description="min-P adjusted p-value over every feature tested.")
    shifted: bool = Field(description="adjusted <= level.")
    reference: str = Field(description="The feature in the reference set, in a few words.")
    new: str = Field(description="The feature in the new set.")


class ShiftTest(BaseModel):
    """Whether the new cases look drawn like the reference cases, feature by feature."""

    level: float = Field(description="Chance of any false alarm when nothing changed.")
    permutations: int
    n_reference: int
    n_new: int
    features: list[FeatureShift] = Field(description="Every feature tested, most shifted first.")
    unseen: list[str] = Field(
        default_factory=list,
        description="Categories of the new cases that no reference case has (their feature's "
        "test decides whether that is a shift).",
    )
    untested: list[str] = Field(
        default_factory=list, description="Features with no value to compare, and why."
    )
    shifted: bool = Field(description="Some feature differs at the level.")

    @property
    def differing(self) -> list[str]:
        """What differs, in a few words each."""
        return [f"{f.feature} ({f.reference} -> {f.new})" for f in self.features if f.shifted]


def shift_test(
    reference: Sample,
    new: Sample,
    *,
    level: float = DEFAULT_LEVEL,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = 0,
) -> ShiftTest:
    """Compare `new` with `reference` feature by feature (the features both name).

    Raises:
        ValueError: a level outside (0, 1), fewer than 1 permutation, a feature whose length
            differs from its set's number of cases, or an empty set.
    """
    level = check_level(level, "level")
    if permutations < 1:
        raise ValueError(f"permutations: expected at least 1, got {permutations}")
    if not len(reference) or not len(new):
        raise ValueError("shift_test: each set needs at least one case")
    sides = _Sides(reference.clusters, new.clusters, permutations, seed)
    tested: list[tuple[str, str, float, FloatArray, str, str]] = []
    untested: list[str] = []
    for name in [n for n in reference.numbers if n in new.numbers]:
        a = as_floats(reference.numbers[name], name, allow_nan=True)
        b = as_floats(new.numbers[name], name, allow_nan=True)
        _check_length(name, a, reference, b, new)
        values = np.concatenate([a, b])
        if np.isnan(a).all() or np.isnan(b).all():
            untested.append(
                f"{name}: no value in {'the reference' if np.isnan(a).all() else 'the new cases'}"
            )
            continue
        if np.unique(values[~np.isnan(values)]).size < 2:
            continue  # one value everywhere: nothing to tell apart
        observed, resampled = _ks(values, sides)
        tested.append(("number", name, observed, resampled, _describe(a), _describe(b)))
    unseen: list[str] = []
    for name in [n for n in reference.categories if n in new.categories]:
        a_cat, b_cat = list(reference.categories[name]), list(new.categories[name])
        _check_length(name, a_cat, reference, b_cat, new)
        if all(v is None for v in a_cat) or all(v is None for v in b_cat):
            where = "the reference" if all(v is None for v in a_cat) else "the new cases"
            untested.append(f"{name}: not recorded in {where}")
            continue
        unseen += _unseen(name, a_cat, b_cat)
        if len(set(a_cat) | set(b_cat)) < 2:
            continue
        observed, resampled = _total_variation(a_cat + b_cat, sides)
        tested.append(("category", name, observed, resampled, _shares(a_cat), _shares(b_cat)))
    p_values, adjusted = min_p([(o, r) for _, _, o, r, _, _ in tested])
    features = [
        FeatureShift(
            feature=name,
            kind=kind,  # type: ignore[arg-type]
            statistic=round(observed, 6),
            p_value=p,
            adjusted=q,
            shifted=q <= level,
            reference=ref,
            new=now,
        )
        for (kind, name, observed, _, ref, now), p, q in zip(
            tested, p_values, adjusted, strict=True
        )
    ]
    features.sort(key=lambda f: (f.adjusted, -f.statistic))
    return ShiftTest(
        level=level,
        permutations=permutations,
        n_reference=len(reference),
        n_new=len(new),
        features=features,
        unseen=unseen,
        untested=untested,
        shifted=any(f.shifted for f in features),
    )


def min_p(tests: Sequence[tuple[float, FloatArray]]) -> tuple[list[float], list[float]]:
    """Each test's permutation p-value and its single-step min-P adjusted p-value (Westfall and
    Young): the share of permutations in which the smallest p-value of all the tests is at
    most this one's. The tests share their permutations, so the adjustment follows their
    dependence, and the chance of any false alarm stays at the level chosen."""
    if not tests:
        return [], []
    observed = np.array([o for o, _ in tests])
    permuted = np.vstack([r for _, r in tests])  # tests x permutations
    count = permuted.shape[1]
    tolerance = 1e-12
    raw = (1 + (permuted >= observed[:, None] - tolerance).sum(axis=1)) / (1 + count)
    # each permutation's own p-value per test: the share of permutations at least as extreme
    ranks = np.empty_like(permuted)
    for row, values in enumerate(permuted):
        ordered = np.sort(values)
        ranks[row] = (count - np.searchsorted(ordered, values - tolerance, side="left")) / count
    smallest = ranks.min(axis=0)
    adjusted = (1 + (smallest[None, :] <= raw[:, None] + tolerance).sum(axis=1)) / (1 + count)
    return [float(p) for p in raw], [float(max(a, p)) for a, p in zip(adjusted, raw, strict=True)]


class _Sides:
    """Which set each cluster is in: as observed (row 0) and under each permutation of the
    clusters between the sets (the number of clusters of each set kept)."""

    def __init__(
        self, reference: Sequence[Hashable], new: Sequence[Hashable], permutations: int, seed: int
    ):
        keys = [("reference", c) for c in reference] + [("new", c) for c in new]
        index = {k: i for i, k in enumerate(dict.fromkeys(keys))}
        self.cluster = np.array([index[k] for k in keys], dtype=np.int64)
        observed = np.array([side == "new" for side, _ in index], dtype=float)
        shuffled = np.random.default_rng(seed).permuted(
            np.tile(observed, (permutations, 1)), axis=1
        )
        self.by_cluster = np.vstack([observed, shuffled])

    def counts(self, mask: npt.NDArray[np.bool_], group: npt.NDArray[np.int64]) -> FloatArray:
        """Per row (observed, then each permutation), the new set's count of the cases under
        `mask` in each group (`group`: each masked case's group, 0..G-1)."""
        from scipy.sparse import csr_matrix  # imported late: scipy costs a second

        clusters = self.cluster[mask]
        size = int(group.max()) + 1 if group.size else 0
        ones = np.ones(len(clusters))
        shape = (self.by_cluster.shape[1], size)
        per_cluster = csr_matrix((ones, (clusters, group)), shape=shape)
        return np.asarray((per_cluster.T @ self.by_cluster.T).T)


def _ks(values: FloatArray, sides: _Sides) -> tuple[float, FloatArray]:
    """The Kolmogorov-Smirnov distance as observed and under each permutation."""
    valid = ~np.isnan(values)
    distinct, group = np.unique(values[valid], return_inverse=True)
    total = np.bincount(group, minlength=len(distinct)).astype(float)
    new = sides.counts(valid, group)
    ref = total[None, :] - new
    n_new = new.sum(axis=1, keepdims=True)
    n_ref = ref.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.abs(np.cumsum(new, axis=1) / n_new - np.cumsum(ref, axis=1) / n_ref)
    every = np.where((n_new[:, 0] > 0) & (n_ref[:, 0] > 0), gap.max(axis=1), 0.0)
    return float(every[0]), every[1:]


def _total_variation(values: list[str | None], sides: _Sides) -> tuple[float, FloatArray]:
    """Half the summed gaps between the sets' category shares, observed and permuted."""
    names = {v: i for i, v in enumerate(dict.fromkeys(values))}
    group = np.array([names[v] for v in values], dtype=np.int64)
    total = np.bincount(group, minlength=len(names)).astype(float)
    new = sides.counts(np.ones(len(values), dtype=bool), group)
    ref = total[None, :] - new
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.abs(new / new.sum(axis=1, keepdims=True) - ref / ref.sum(axis=1, keepdims=True))
    every = np.nan_to_num(0.5 * gap.sum(axis=1))
    return float(every[0]), every[1:]


def _unseen(name: str, reference: list[str | None], new: list[str | None]) -> list[str]:
    known = set(reference)
    counts: dict[str | None, int] = {}
    for value in new:
        if value not in known:
            counts[value] = counts.get(value, 0) + 1
    return [
        f"{name} {_shown(value)} ({n} of {len(new)} cases) is not in the reference set"
        for value, n in sorted(counts.items(), key=lambda kv: -kv[1])
    ]


def _describe(values: FloatArray) -> str:
    present = values[~np.isnan(values)]
    if present.size == 0:
        return "none"
    if np.isin(present, (0.0, 1.0)).all():
        return f"share {present.mean():.2f}"
    median = float(np.median(present))
    return f"median {median:,.0f}" if abs(median) >= 1000 else f"median {median:.3g}"


def _shares(values: list[str | None], shown: int = 3) -> str:
    counts: dict[str | None, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    top = sorted(counts.items(), key=lambda kv: -kv[1])
    text = ", ".join(f"{_shown(v)} {n / len(values):.0%}" for v, n in top[:shown])
    return text + (f", +{len(top) - shown} more" if len(top) > shown else "")


def _shown(value: str | None) -> str:
    return "(not recorded)" if value is None else repr(value)


def _check_length(
    name: str,
    a: Sequence[object] | FloatArray,
    ref: Sample,
    b: Sequence[object] | FloatArray,
    new: Sample,
) -> None:
    for values, sample, which in ((a, ref, "reference"), (b, new, "new")):
        if len(values) != len(sample):
            raise ValueError(
                f"{name}: expected {len(sample)} values in the {which} set (one per case), "
                f"got {len(values)}"
            )


def as_sample(
    clusters: Sequence[Hashable],
    numbers: Mapping[str, Sequence[float | None]] | None = None,
    categories: Mapping[str, Sequence[str | None]] | None = None,
) -> Sample:
    """A `Sample` from plain sequences (None in a number column is missing)."""
    return Sample(
        clusters=list(clusters),
        numbers={
            k: [np.nan if v is None else float(v) for v in vs] for k, vs in (numbers or {}).items()
        },
        categories={k: list(vs) for k, vs in (categories or {}).items()},
    )
