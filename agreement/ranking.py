"""Does a judge's confidence rank its answers: are the answers it is surer of right more often?

A threshold on confidence buys agreement only when the answers above it agree with the labels
more often than those below. The area under the ROC curve of confidence for "this answer
agrees with its label" measures that: the probability that a randomly drawn agreeing answer
has a higher confidence than a randomly drawn disagreeing one (ties count one half). 0.5 is a
coin: abstaining on the least confident answers then drops right and wrong ones alike, and
costs coverage without raising agreement.

`rank_confidence` gives the AUROC with a cluster-bootstrap interval (incidents resampled, as
every interval of this package) and decides whether the confidence ranks better than chance:
the one-sided (1 - alpha) lower bound, the alpha quantile of the resampled AUROCs, is above
0.5. With no disagreeing (or no agreeing) answer the AUROC is undefined and nothing is shown
to rank.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from agreement.arrays import FloatArray, as_bools, as_floats, check_level

DEFAULT_B = 1000
CHANCE = 0.5
CHUNK = 100
"""Resamples computed at once: bounds the B x distinct-confidences matrices."""


class Ranking(BaseModel):
    """How well a confidence separates agreeing answers from disagreeing ones."""

    n: int = Field(description="Answers measured.")
    n_disagreed: int = Field(description="Of those, answers that disagreed with the label.")
    auroc: float | None = Field(
        description="P(an agreeing answer is more confident than a disagreeing one), ties "
        "counted one half; None when either kind is missing."
    )
    ci_low: float | None = Field(None, description="95% cluster-bootstrap interval, low end.")
    ci_high: float | None = None
    alpha: float = Field(description="The level of the one-sided lower bound.")
    lower_bound: float | None = Field(
        None, description="One-sided (1 - alpha) cluster-bootstrap lower bound on the AUROC."
    )
    ranks: bool = Field(description="The lower bound is above 0.5: better than chance.")
    reason: str | None = Field(None, description="Why it is not shown to rank, when it is not.")


def auroc(
    confidence: npt.ArrayLike, agreed: npt.ArrayLike, weights: npt.ArrayLike | None = None
) -> float | None:
    """The AUROC of `confidence` for `agreed` (ties one half), each answer counted `weights`
    times (default once); None when no answer agreed or none disagreed."""
    x = as_floats(confidence, "confidence")
    y = as_bools(agreed, "agreed", len(x))
    w = np.ones(len(x)) if weights is None else np.asarray(weights, dtype=float)
    values = _aurocs(x, y, w[None, :])
    return None if np.isnan(values[0]) else float(values[0])


def rank_confidence(
    confidence: npt.ArrayLike,
    agreed: npt.ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    *,
    alpha: float = 0.1,
    B: int = DEFAULT_B,
    seed: int = 0,
) -> Ranking:
    """The AUROC of `confidence` for `agreed`, its intervals resampling `clusters` (default:
    each answer its own), and whether it ranks better than chance at level `alpha`.

    Raises:
        ValueError: bad values, lengths that differ, alpha outside (0, 1), B < 1.
    """
    alpha = check_level(alpha, "alpha")
    if B < 1:
        raise ValueError(f"B: expected at least 1 resample, got {B}")
    x = as_floats(confidence, "confidence")
    y = as_bools(agreed, "agreed", len(x))
    groups: list[Hashable] = list(range(len(x))) if clusters is None else list(clusters)
    if len(groups) != len(x):
        raise ValueError(f"clusters: expected {len(x)} entries (one per answer), got {len(groups)}")
    n_disagreed = int((~y).sum())
    value = auroc(x, y)
    if value is None:
        kind = "disagreed" if n_disagreed == 0 else "agreed"
        return Ranking(
            n=len(x),
            n_disagreed=n_disagreed,
            auroc=None,
            alpha=alpha,
            ranks=False,
            reason=f"no answer {kind} with its label: the AUROC is undefined",
        )
    replicates = _resampled(x, y, groups, B, seed)
    finite = replicates[np.isfinite(replicates)]
    if finite.size < 2:
        return Ranking(
            n=len(x),
            n_disagreed=n_disagreed,
            auroc=value,
            alpha=alpha,
            ranks=False,
            reason="too few incidents to bound the AUROC",
        )
    low, high = np.quantile(finite, [0.025, 0.975])
    lower = float(np.quantile(finite, alpha))
    ranks = lower > CHANCE
    return Ranking(
        n=len(x),
        n_disagreed=n_disagreed,
        auroc=value,
        ci_low=float(low),
        ci_high=float(high),
        alpha=alpha,
        lower_bound=lower,
        ranks=ranks,
        reason=None
        if ranks
        else f"AUROC {value:.3f}, one-sided {1 - alpha:g} lower bound {lower:.3f}: not above "
        "0.5, so its confident answers are not shown to agree more often than the others",
    )


def _resampled(
    x: FloatArray, y: npt.NDArray[np.bool_], groups: list[Hashable], B: int, seed: int
) -> FloatArray:
    """The AUROC in B cluster-bootstrap resamples (NaN where one kind is missing)."""
    index = {g: i for i, g in enumerate(dict.fromkeys(groups))}
    cluster = np.array([index[g] for g in groups], dtype=np.int64)
    rng = np.random.default_rng(seed)
    size = len(index)
    out = []
    for start in range(0, B, CHUNK):
        draws = rng.multinomial(size, np.full(size, 1.0 / size), size=min(CHUNK, B - start))
        out.append(_aurocs(x, y, draws[:, cluster].astype(float)))
    return np.concatenate(out)


def _aurocs(x: FloatArray, y: npt.NDArray[np.bool_], weights: FloatArray) -> FloatArray:
    """The weighted AUROC for each row of `weights` (answers' multiplicities)."""
    values, level = np.unique(x, return_inverse=True)
    n_levels = len(values)
    agree = np.zeros((weights.shape[0], n_levels))
    disagree = np.zeros((weights.shape[0], n_levels))
    for kind, out in ((y, agree), (~y, disagree)):
        columns = np.flatnonzero(kind)
        if columns.size:
            np.add.at(out.T, level[columns], weights[:, columns].T)
    below = np.cumsum(disagree, axis=1) - disagree
    wins = (agree * (below + 0.5 * disagree)).sum(axis=1)
    pairs = agree.sum(axis=1) * disagree.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pairs > 0, wins / np.where(pairs > 0, pairs, 1.0), np.nan)
