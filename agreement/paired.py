"""Paired effects with cluster-bootstrap intervals: how far a judge's answers move when the same
cases are asked again in another form (`judge audit`).

An effect is the mean of per-item values (a Yes that became a No is -1, a flip is 1, ...) over
the items asked in both forms. Items of one incident are not independent (the same diagnosis,
the same spec), so the interval resamples incidents, as every interval of this package does:
the mean is a ratio of sums over the resampled incidents.

Each effect carries two intervals from the same resamples: the 95% one that is reported, and
one at the level a gate uses when it decides on several effects at once (`gate_level`,
1 - 0.05 / m for m effects: Bonferroni), so that a judge without any bias raises an alarm on
none of the m in 95% of audits, not on each in 95%.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from agreement.stats import CONFIDENCE, ClusterBootstrap

DEFAULT_B = 4000
Side = Literal["two-sided", "greater"]


class PairedEffect(BaseModel):
    """A mean paired difference, its 95% interval and the interval a gate decides on."""

    value: float | None = Field(description="The mean over the paired items; None when none.")
    n: int = Field(description="Paired items (asked and answered in both forms).")
    n_clusters: int = Field(description="Incidents the items come from.")
    ci_low: float | None = None
    ci_high: float | None = None
    gate_low: float | None = None
    gate_high: float | None = None
    gate_level: float = CONFIDENCE
    side: Side = Field(
        "two-sided",
        description="`greater`: only an effect above zero is a bias (a flip rate beyond the "
        "noise); `two-sided`: either direction is.",
    )
    undefined: str | None = Field(None, description="Why there is no value or no interval.")

    def excludes_zero(self, tolerance: float = 0.0) -> bool:
        """Whether the gate's interval lies beyond `tolerance` from zero (on the effect's side):
        the bias is there, and larger than the tolerance allows."""
        if self.gate_low is None or self.gate_high is None:
            return False
        if self.gate_low > tolerance:
            return True
        return self.side == "two-sided" and self.gate_high < -tolerance

    def text(self, digits: int = 3) -> str:
        """`+0.120 [+0.050, +0.190]`, or `n/a` with the reason in `undefined`."""
        if self.value is None:
            return "n/a"
        out = f"{self.value:+.{digits}f}"
        if self.ci_low is not None and self.ci_high is not None:
            out += f" [{self.ci_low:+.{digits}f}, {self.ci_high:+.{digits}f}]"
        return out


def paired_effect(
    values: Sequence[float],
    clusters: Sequence[str],
    *,
    side: Side = "two-sided",
    gate_level: float = CONFIDENCE,
    B: int = DEFAULT_B,
    seed: int = 0,
    bootstrap: ClusterBootstrap | None = None,
) -> PairedEffect:
    """The mean of `values` (one per paired item, each in the incident `clusters` names) with
    percentile intervals from resampling incidents: 95% and `gate_level`. Give the same
    `bootstrap` to several effects so that they see the same resamples."""
    return difference_effect(
        values, clusters, [], [], side=side, gate_level=gate_level, B=B, seed=seed,
        bootstrap=bootstrap,
    )  # fmt: skip


def difference_effect(
    values: Sequence[float],
    clusters: Sequence[str],
    minus: Sequence[float],
    minus_clusters: Sequence[str],
    *,
    side: Side = "two-sided",
    gate_level: float = CONFIDENCE,
    B: int = DEFAULT_B,
    seed: int = 0,
    bootstrap: ClusterBootstrap | None = None,
) -> PairedEffect:
    """mean(`values`) - mean(`minus`) (the second mean left out when `minus` is empty), each
    resample taking both means over the same resampled incidents."""
    n = len(values) + len(minus)
    found = list(dict.fromkeys([*clusters, *minus_clusters]))
    effect = PairedEffect(value=None, n=n, n_clusters=len(found), side=side, gate_level=gate_level)
    if not values:
        effect.undefined = "no item was answered in both forms"
        return effect
    parts = [(np.asarray(values, dtype=float), list(clusters))]
    if minus:
        parts.append((np.asarray(minus, dtype=float), list(minus_clusters)))
    effect.value = float(parts[0][0].mean() - (parts[1][0].mean() if minus else 0.0))
    if len(found) < 2:
        effect.undefined = "one incident only: no interval"
        return effect
    boot = bootstrap or ClusterBootstrap(found, B=B, seed=seed)
    means = np.zeros(boot.B)
    for sign, (data, where) in zip((1.0, -1.0), parts, strict=False):
        sums = boot.replicate(where, np.column_stack([data, np.ones(len(data))]))
        with np.errstate(divide="ignore", invalid="ignore"):
            means = means + sign * sums[:, 0] / sums[:, 1]
    means = means[np.isfinite(means)]
    if means.size < 2:
        effect.undefined = "no resample holds items of every group"
        return effect
    effect.ci_low, effect.ci_high = _percentiles(means, CONFIDENCE)
    effect.gate_low, effect.gate_high = _percentiles(means, gate_level)
    return effect


def gate_level(effects: int, confidence: float = CONFIDENCE) -> float:
    """The level of each of `effects` intervals that keeps the chance of any false alarm at
    `1 - confidence` (Bonferroni)."""
    return 1 - (1 - confidence) / max(effects, 1)


def _percentiles(replicates: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1 - level) / 2
    low, high = np.quantile(replicates, [tail, 1 - tail])
    return float(low), float(high)
