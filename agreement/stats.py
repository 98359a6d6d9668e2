"""Agreement statistics for Yes/No ratings, with cluster-bootstrap confidence intervals.

Every statistic is a function of additive counts (a 2x2 confusion table for two raters; per-item
category counts for several), so the bootstrap resamples incidents once, as a weight matrix
(B x incidents), and evaluates all replicates at once with numpy. The point estimate of Cohen's
kappa comes from `sklearn.metrics.cohen_kappa_score` with `labels=["No", "Yes"]`; the
replicates use the same closed form (tests check both agree).

A statistic that is undefined on the data (0/0) is an `Estimate` with `value=None` and the
reason in `undefined`; nothing here returns nan to a caller.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from agreement.ratings import Answer, Level, normalize_answer

LABELS: list[Answer] = ["No", "Yes"]
CONFIDENCE = 0.95
DEFAULT_B = 1000
NO_PAIRS = "no items answered by both raters"
EXACT = 1e-12


class Estimate(BaseModel):
    """A statistic, its 95% cluster-bootstrap interval, or why it is undefined."""

    value: float | None = None
    undefined: str | None = Field(None, description="Why `value` is None (it is 0/0 on this data).")
    ci_low: float | None = None
    ci_high: float | None = None
    ci_note: str | None = Field(None, description="Why there is no interval, or resamples dropped.")

    @property
    def defined(self) -> bool:
        return self.value is not None

    def text(self, digits: int = 2, ci: bool = True) -> str:
        """`0.44 [0.12, 0.70]`, or `undefined` (the reason is in `undefined`)."""
        if self.value is None:
            return "undefined"
        out = f"{self.value:.{digits}f}"
        if ci and self.ci_low is not None and self.ci_high is not None:
            out += f" [{self.ci_low:.{digits}f}, {self.ci_high:.{digits}f}]"
        return out


class Confusion(BaseModel):
    """2x2 table; the first word is rater A's answer, the second rater B's."""

    yes_yes: int = 0
    yes_no: int = 0
    no_yes: int = 0
    no_no: int = 0

    @property
    def n(self) -> int:
        return self.yes_yes + self.yes_no + self.no_yes + self.no_no

    def as_array(self) -> np.ndarray:
        return np.array([self.yes_yes, self.yes_no, self.no_yes, self.no_no], dtype=float)


class ReferenceStats(BaseModel):
    """Rater A scored against rater B as the truth (people); positive class = Yes."""

    reference: str
    tpr: Estimate = Field(description="Sensitivity = recall: A says Yes when B says Yes.")
    tnr: Estimate = Field(description="Specificity: A says No when B says No.")
    precision: Estimate
    recall: Estimate
    f1: Estimate = Field(description="F1 of the Yes class.")
    macro_f1: Estimate = Field(description="Mean of the Yes-class and No-class F1.")


class PairStats(BaseModel):
    """Two raters over the items both answered (pairwise deletion, aligned by key)."""

    rater_a: str
    rater_b: str
    level: Level | None = None
    unit: str | None = Field(
        None, description="A question or dimension id; None = the whole level."
    )
    n: int = Field(description="Paired items: both raters answered.")
    n_incidents: int
    yes_rate_a: float | None
    yes_rate_b: float | None
    agreement: Estimate
    kappa: Estimate = Field(description="Cohen's kappa (scikit-learn).")
    pabak: Estimate = Field(description="Prevalence- and bias-adjusted kappa, 2*agreement - 1.")
    ac1: Estimate = Field(description="Gwet's AC1.")
    confusion: Confusion
    vs_reference: ReferenceStats | None = None


class MultiRaterStats(BaseModel):
    """Three or more raters: Fleiss' kappa (items all raters answered) and Krippendorff's alpha."""

    raters: list[str]
    n_items: int = Field(description="Items answered by two or more raters (alpha uses these).")
    n_complete: int = Field(description="Items answered by every rater (Fleiss uses these).")
    fleiss_kappa: Estimate
    krippendorff_alpha: Estimate


# --- bootstrap -------------------------------------------------------------------------------


class ClusterBootstrap:
    """Resample clusters (incidents) with replacement, B times, from one seed.

    Drawn once as a B x C matrix of multiplicities, so every statistic computed with the same
    object sees the same resamples. Items from clusters not in `clusters` are an error.
    """

    def __init__(self, clusters: Sequence[str], B: int = DEFAULT_B, seed: int = 0):
        self.clusters = list(dict.fromkeys(clusters))
        self.index = {c: i for i, c in enumerate(self.clusters)}
        self.B = B
        size = len(self.clusters)
        rng = np.random.default_rng(seed)
        if size and B > 0:
            self.weights = rng.multinomial(size, np.full(size, 1.0 / size), size=B)
        else:
            self.weights = np.zeros((max(B, 0), size), dtype=np.int64)

    def replicate(self, item_clusters: Sequence[str], per_item: np.ndarray) -> np.ndarray:
        """Sum `per_item` rows (n x k) within each resample: returns B x k."""
        index = np.array([self.index[c] for c in item_clusters], dtype=np.int64)
        used, inverse = np.unique(index, return_inverse=True)
        per_cluster = np.zeros((len(used), per_item.shape[1]))
        np.add.at(per_cluster, inverse, per_item)
        return self.weights[:, used] @ per_cluster


def _interval(
    replicates: np.ndarray, n_clusters: int, B: int
) -> tuple[float | None, float | None, str | None]:
    if B <= 0:
        return None, None, "bootstrap disabled (B=0)"
    if n_clusters < 2:
        return None, None, "one incident only: no bootstrap interval"
    ok = replicates[np.isfinite(replicates)]
    if ok.size < 2:
        return None, None, f"undefined in {B - ok.size} of {B} resamples"
    alpha = (1 - CONFIDENCE) / 2
    low, high = np.quantile(ok, [alpha, 1 - alpha])
    note = None if ok.size == B else f"undefined in {B - ok.size} of {B} resamples (dropped)"
    return float(low), float(high), note


def _estimate(
    value: float | None, reason: str | None, replicates: np.ndarray | None, n_clusters: int, B: int
) -> Estimate:
    if value is None or not np.isfinite(value):
        return Estimate(undefined=reason or "undefined")
    if replicates is None:
        return Estimate(value=float(value))
    low, high, note = _interval(replicates, n_clusters, B)
    return Estimate(value=float(value), ci_low=low, ci_high=high, ci_note=note)


# --- two raters ------------------------------------------------------------------------------


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def pair_formulas(counts: np.ndarray) -> dict[str, np.ndarray]:
    """All two-rater statistics from counts `[..., (yy, yn, ny, nn)]`; nan where 0/0."""
    yy, yn, ny, nn = (counts[..., i] for i in range(4))
    n = yy + yn + ny + nn
    po = _div(yy + nn, n)
    pa, pb = _div(yy + yn, n), _div(yy + ny, n)
    pe = pa * pb + (1 - pa) * (1 - pb)
    kappa = np.where(np.abs(1 - pe) < EXACT, np.nan, _div(po - pe, 1 - pe))
    pi = (pa + pb) / 2
    pe_ac1 = 2 * pi * (1 - pi)
    f1_yes, f1_no = _div(2 * yy, 2 * yy + yn + ny), _div(2 * nn, 2 * nn + yn + ny)
    return {
        "agreement": po,
        "kappa": kappa,
        "pabak": 2 * po - 1,
        "ac1": _div(po - pe_ac1, 1 - pe_ac1),
        "tpr": _div(yy, yy + ny),
        "tnr": _div(nn, nn + yn),
        "precision": _div(yy, yy + yn),
        "recall": _div(yy, yy + ny),
        "f1": f1_yes,
        "macro_f1": (f1_yes + f1_no) / 2,
    }


def _reasons(c: Confusion) -> dict[str, str | None]:
    if c.n == 0:
        return dict.fromkeys(("agreement", "kappa", "pabak", "ac1", *_REFERENCE), NO_PAIRS)
    constant = None
    if c.yes_yes == c.n:
        constant = "Yes"
    elif c.no_no == c.n:
        constant = "No"
    kappa = None
    if constant:
        kappa = (
            f"both raters answered {constant} on all {c.n} items: chance agreement is 1, "
            "so kappa is 0/0"
        )
    no_yes_anywhere = c.yes_yes + c.yes_no + c.no_yes == 0
    no_no_anywhere = c.no_no + c.yes_no + c.no_yes == 0
    return {
        "agreement": None,
        "kappa": kappa,
        "pabak": None,
        "ac1": None,
        "tpr": "the reference never answered Yes" if c.yes_yes + c.no_yes == 0 else None,
        "tnr": "the reference never answered No" if c.no_no + c.yes_no == 0 else None,
        "precision": "the rater never answered Yes" if c.yes_yes + c.yes_no == 0 else None,
        "recall": "the reference never answered Yes" if c.yes_yes + c.no_yes == 0 else None,
        "f1": "neither rater answered Yes" if no_yes_anywhere else None,
        "macro_f1": (
            "one class (Yes or No) is absent from both raters, so its F1 is 0/0"
            if no_yes_anywhere or no_no_anywhere
            else None
        ),
    }


_REFERENCE = ("tpr", "tnr", "precision", "recall", "f1", "macro_f1")


def confusion(a: Sequence[Answer], b: Sequence[Answer]) -> Confusion:
    """Counts of each (a, b) answer pair; ValueError if the sequences differ in length."""
    counts = {"yes_yes": 0, "yes_no": 0, "no_yes": 0, "no_no": 0}
    for x, y in zip(a, b, strict=True):
        counts[f"{x.lower()}_{y.lower()}"] += 1
    return Confusion(**counts)


def _sklearn_kappa(a: Sequence[Answer], b: Sequence[Answer]) -> float:
    from sklearn.metrics import cohen_kappa_score  # imported late: it costs seconds

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(cohen_kappa_score(list(a), list(b), labels=LABELS))


def _paired(a: Sequence[Any], b: Sequence[Any]) -> tuple[list[Answer], list[Answer]]:
    if len(a) != len(b):
        raise ValueError(
            f"rater sequences differ in length ({len(a)} vs {len(b)}); align by key first"
        )
    pairs = [(normalize_answer(x), normalize_answer(y)) for x, y in zip(a, b, strict=True)]
    kept = [(x, y) for x, y in pairs if x is not None and y is not None]
    return [x for x, _ in kept], [y for _, y in kept]


def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> Estimate:
    """Cohen's kappa of two aligned answer sequences (missing entries dropped pairwise).

    Undefined, with the reason, when no pair is left or both raters gave one and the same answer
    everywhere. Accepts the spellings `normalize_answer` accepts.
    """
    x, y = _paired(a, b)
    c = confusion(x, y)
    reason = _reasons(c)["kappa"]
    if reason:
        return Estimate(undefined=reason)
    return Estimate(value=_sklearn_kappa(x, y))


def pair_stats(
    a: Sequence[Any],
    b: Sequence[Any],
    clusters: Sequence[str] | None = None,
    *,
    rater_a: str = "A",
    rater_b: str = "B",
    level: Level | None = None,
    unit: str | None = None,
    reference: bool = False,
    bootstrap: ClusterBootstrap | None = None,
    B: int = DEFAULT_B,
    seed: int = 0,
) -> PairStats:
    """All two-rater statistics for aligned sequences, CIs resampled by `clusters` (incidents).

    `clusters[i]` is the incident of item i (default: every item its own cluster). With
    `reference=True`, B is the truth and TPR/TNR/precision/recall/F1 are added.
    """
    if clusters is None:
        clusters = [str(i) for i in range(len(a))]
    if not (len(a) == len(b) == len(clusters)):
        raise ValueError("a, b and clusters must have the same length")
    keep = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x is not None and y is not None]
    x, y = _paired([a[i] for i in keep], [b[i] for i in keep])
    item_clusters = [clusters[i] for i in keep]
    c = confusion(x, y)
    reasons = _reasons(c)
    point = pair_formulas(c.as_array())
    if reasons["kappa"] is None and c.n:
        point["kappa"] = np.asarray(_sklearn_kappa(x, y), dtype=np.float64)
    replicates = _replicates(x, y, item_clusters, bootstrap, B, seed)
    n_clusters = len(set(item_clusters))
    boot_b = bootstrap.B if bootstrap is not None else B

    def est(name: str) -> Estimate:
        rep = None if replicates is None else replicates[name]
        value = None if reasons[name] else float(point[name])
        return _estimate(value, reasons[name], rep, n_clusters, boot_b)

    return PairStats(
        rater_a=rater_a,
        rater_b=rater_b,
        level=level,
        unit=unit,
        n=c.n,
        n_incidents=n_clusters,
        yes_rate_a=(c.yes_yes + c.yes_no) / c.n if c.n else None,
        yes_rate_b=(c.yes_yes + c.no_yes) / c.n if c.n else None,
        agreement=est("agreement"),
        kappa=est("kappa"),
        pabak=est("pabak"),
        ac1=est("ac1"),
        confusion=c,
        vs_reference=(
            ReferenceStats(reference=rater_b, **{name: est(name) for name in _REFERENCE})
            if reference
            else None
        ),
    )


def _replicates(
    x: list[Answer],
    y: list[Answer],
    item_clusters: list[str],
    bootstrap: ClusterBootstrap | None,
    B: int,
    seed: int,
) -> dict[str, np.ndarray] | None:
    if not x:
        return None
    if bootstrap is None:
        bootstrap = ClusterBootstrap(item_clusters, B=B, seed=seed)
    if bootstrap.B <= 0:
        return {name: np.array([]) for name in ("agreement", "kappa", "pabak", "ac1", *_REFERENCE)}
    per_item = np.zeros((len(x), 4))
    slot = {("Yes", "Yes"): 0, ("Yes", "No"): 1, ("No", "Yes"): 2, ("No", "No"): 3}
    for i, pair in enumerate(zip(x, y, strict=True)):
        per_item[i, slot[pair]] = 1
    return pair_formulas(bootstrap.replicate(item_clusters, per_item))


# --- three or more raters --------------------------------------------------------------------


def category_counts(rows: Sequence[Sequence[Any]]) -> tuple[np.ndarray, list[Any]]:
    """Items x raters (None or nan = missing) -> items x categories counts, and the categories."""
    cats: dict[Any, int] = {}
    cleaned = [[v for v in row if not _missing(v)] for row in rows]
    for row in cleaned:
        for v in row:
            cats.setdefault(v, len(cats))
    counts = np.zeros((len(cleaned), max(len(cats), 1)))
    for i, row in enumerate(cleaned):
        for v in row:
            counts[i, cats[v]] += 1
    return counts, sorted(cats, key=cats.__getitem__)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def fleiss_parts(counts: np.ndarray, m: int) -> np.ndarray:
    """Per item, Fleiss' additive parts: [1, P_i, n_i1..n_iK] (items with exactly m ratings)."""
    p_i = ((counts**2).sum(axis=1) - m) / (m * (m - 1))
    return np.column_stack([np.ones(len(counts)), p_i, counts])


def fleiss_formula(parts: np.ndarray, m: int) -> np.ndarray:
    """Fleiss' kappa from summed parts `[..., (N, sum P_i, sum n_ij...)]`; nan where 0/0."""
    n_items, p_sum, cat = parts[..., 0], parts[..., 1], parts[..., 2:]
    p_bar = _div(p_sum, n_items)
    p_j = cat / np.where(n_items > 0, n_items * m, 1)[..., None]
    pe = (p_j**2).sum(axis=-1)
    return np.where((np.abs(1 - pe) < EXACT) | (n_items == 0), np.nan, _div(p_bar - pe, 1 - pe))


def alpha_parts(counts: np.ndarray) -> np.ndarray:
    """Per item, Krippendorff's additive parts: [observed disagreement, n_c...] (pairable only)."""
    m_u = counts.sum(axis=1)
    pairable = m_u >= 2
    d = np.zeros(len(counts))
    d[pairable] = (m_u[pairable] ** 2 - (counts[pairable] ** 2).sum(axis=1)) / (m_u[pairable] - 1)
    return np.column_stack([d, counts * pairable[:, None]])


def alpha_formula(parts: np.ndarray) -> np.ndarray:
    """Nominal alpha = 1 - (n-1) * sum_{c!=k} o_ck / sum_{c!=k} n_c n_k; nan where 0/0."""
    d_obs, n_c = parts[..., 0], parts[..., 1:]
    n = n_c.sum(axis=-1)
    expected = n**2 - (n_c**2).sum(axis=-1)
    return 1 - _div((n - 1) * d_obs, expected)


def fleiss_kappa(table: Sequence[Sequence[float]]) -> Estimate:
    """Fleiss' kappa of an items x categories count table with the same raters per item."""
    counts = np.asarray(table, dtype=float)
    if counts.ndim != 2 or len(counts) == 0:
        return Estimate(undefined="no items")
    totals = counts.sum(axis=1)
    m = int(totals[0])
    if not np.allclose(totals, m):
        raise ValueError("every item needs the same number of ratings for Fleiss' kappa")
    if m < 2:
        return Estimate(undefined="fewer than two ratings per item")
    value = float(fleiss_formula(fleiss_parts(counts, m).sum(axis=0), m))
    reason = (
        None if np.isfinite(value) else "all ratings fall in one category: chance agreement is 1"
    )
    return _estimate(value, reason, None, 0, 0)


def krippendorff_alpha(reliability_data: Sequence[Sequence[Any]]) -> Estimate:
    """Nominal Krippendorff's alpha of raters x units data (None or nan = missing)."""
    units = list(zip(*reliability_data, strict=True)) if len(reliability_data) else []
    counts, _ = category_counts(units)
    return _estimate(*_alpha_point(counts), None, 0, 0)


def _alpha_point(counts: np.ndarray) -> tuple[float | None, str | None]:
    if not (counts.sum(axis=1) >= 2).any():
        return None, "no item has ratings from two or more raters"
    value = float(alpha_formula(alpha_parts(counts).sum(axis=0)))
    if not np.isfinite(value):
        return None, "all ratings fall in one category: expected disagreement is 0"
    return value, None


def multi_rater_stats(
    rows: Sequence[Sequence[Any]],
    clusters: Sequence[str],
    raters: Sequence[str],
    *,
    bootstrap: ClusterBootstrap | None = None,
    B: int = DEFAULT_B,
    seed: int = 0,
) -> MultiRaterStats:
    """Fleiss' kappa and Krippendorff's alpha for items x raters rows, CIs by cluster."""
    counts, _ = category_counts(rows)
    m = len(raters)
    complete = counts.sum(axis=1) == m
    pairable = counts.sum(axis=1) >= 2
    if bootstrap is None:
        bootstrap = ClusterBootstrap(clusters, B=B, seed=seed)
    clusters = list(clusters)

    fleiss_value, fleiss_reason = None, "no item answered by every rater"
    fleiss_rep = None
    if complete.any() and m >= 2:
        parts = fleiss_parts(counts[complete], m)
        fleiss_value = float(fleiss_formula(parts.sum(axis=0), m))
        fleiss_reason = "all ratings fall in one category: chance agreement is 1"
        sub = [c for c, keep in zip(clusters, complete, strict=True) if keep]
        if bootstrap.B > 0:
            fleiss_rep = fleiss_formula(bootstrap.replicate(sub, parts), m)
    alpha_value, alpha_reason = _alpha_point(counts)
    alpha_rep = None
    if pairable.any() and bootstrap.B > 0:
        sub = [c for c, keep in zip(clusters, pairable, strict=True) if keep]
        alpha_rep = alpha_formula(bootstrap.replicate(sub, alpha_parts(counts[pairable])))
    n_fleiss = len({c for c, keep in zip(clusters, complete, strict=True) if keep})
    n_alpha = len({c for c, keep in zip(clusters, pairable, strict=True) if keep})
    return MultiRaterStats(
        raters=list(raters),
        n_items=int(pairable.sum()),
        n_complete=int(complete.sum()),
        fleiss_kappa=_estimate(
            fleiss_value, fleiss_reason, _or_empty(fleiss_rep, bootstrap), n_fleiss, bootstrap.B
        ),
        krippendorff_alpha=_estimate(
            alpha_value, alpha_reason, _or_empty(alpha_rep, bootstrap), n_alpha, bootstrap.B
        ),
    )


def _or_empty(replicates: np.ndarray | None, bootstrap: ClusterBootstrap) -> np.ndarray | None:
    if replicates is None and bootstrap.B <= 0:
        return np.array([])
    return replicates
