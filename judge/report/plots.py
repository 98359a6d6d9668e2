"""Plots for the HTML report: matplotlib figures serialised as inline SVG strings.

Text stays text (`svg.fonttype: none`), there is no metadata, no XML prolog and no DOCTYPE,
and every id is prefixed per plot so several SVGs can live in one page. Nothing refers
outside the SVG, so the page needs no network.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

from markupsafe import Markup

PASS, FAIL, NEUTRAL, MUTED, UNSCORED = "#2e7d32", "#c62828", "#1f5fa8", "#9aa5b1", "#b26a00"
_STYLE = {
    "svg.fonttype": "none",
    "svg.hashsalt": "diagnosis-judge",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"],
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#5f6b7a",
    "axes.labelcolor": "#243040",
    "xtick.color": "#243040",
    "ytick.color": "#243040",
}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def to_svg(fig, prefix: str) -> Markup:
    """Serialise and close `fig`; ids become `prefix-<id>` so they cannot clash across plots."""
    plt = _pyplot()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    for old in sorted(ids, key=len, reverse=True):
        svg = re.sub(rf'(id="|#){re.escape(old)}(?=["\)])', rf"\g<1>{prefix}-{old}", svg)
    svg = re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", svg)
    svg = re.sub(r'width="([\d.]+)pt" height="[\d.]+pt"', _size, svg, count=1)
    return Markup(svg)


def _size(match: re.Match[str]) -> str:
    """Responsive: as wide as drawn (pt to px), never wider than its container."""
    return f'class="plot" style="max-width: {float(match.group(1)) * 4 / 3:.0f}px"'


def score_distribution(
    composites: Sequence[float], passed: Sequence[bool], threshold: float
) -> Markup:
    """Histogram of case composites, stacked pass/fail, with the threshold as a dashed line."""
    plt = _pyplot()
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(5.2, 2.8))
        bins = [i / 10 for i in range(11)]
        wins = [c for c, p in zip(composites, passed, strict=True) if p]
        losses = [c for c, p in zip(composites, passed, strict=True) if not p]
        ax.hist(
            [losses, wins],
            bins=bins,
            stacked=True,
            color=[FAIL, PASS],
            label=[f"fail ({len(losses)})", f"pass ({len(wins)})"],
            edgecolor="white",
        )
        ax.axvline(threshold, color="#243040", linestyle="--", linewidth=1)
        ax.annotate(
            f"threshold {threshold:.2f}",
            (threshold, 1),
            xycoords=("data", "axes fraction"),
            xytext=(0, 4),
            textcoords="offset points",
            ha="center",
            fontsize=9,
        )
        ax.set_xlim(0, 1)
        ax.set_xlabel("composite score per case")
        ax.set_ylabel("cases")
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.legend(frameon=False, loc="upper left", fontsize=9)
        return to_svg(fig, "dist")


def dimension_breakdown(
    labels: Sequence[str],
    means: Sequence[float | None],
    lows: Sequence[float | None],
    highs: Sequence[float | None],
    threshold: float | None = None,
) -> Markup:
    """Horizontal bars: mean score per dimension with its bootstrap CI."""
    plt = _pyplot()
    with plt.rc_context(_STYLE):
        height = 0.9 + 0.45 * len(labels)
        fig, ax = plt.subplots(figsize=(5.2, height))
        y = list(range(len(labels)))[::-1]
        values = [m or 0.0 for m in means]
        ax.barh(y, values, color=NEUTRAL, height=0.6)
        for yi, m, lo, hi in zip(y, means, lows, highs, strict=True):
            if m is not None and lo is not None and hi is not None:
                ax.errorbar(m, yi, xerr=[[m - lo], [hi - m]], color="#243040", capsize=3, lw=1)
            ax.text(
                (hi if hi is not None else (m or 0)) + 0.02,
                yi,
                "—" if m is None else f"{m:.2f}",
                va="center",
                fontsize=9,
            )
        if threshold is not None:
            ax.axvline(threshold, color=MUTED, linestyle=":", linewidth=1)
        ax.set_yticks(y, labels)
        ax.set_xlim(0, 1.12)
        ax.set_xlabel("mean score over incidents (95% CI)")
        return to_svg(fig, "dims")


def incident_scores(
    names: Sequence[str], means: Sequence[float | None], threshold: float
) -> Markup:
    """One bar per incident, worst first, coloured by whether its mean reaches the threshold."""
    plt = _pyplot()
    rows = sorted(zip(names, means, strict=True), key=lambda r: (r[1] is None, r[1] or 0.0))
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(5.2, 0.8 + 0.22 * len(rows)))
        y = list(range(len(rows)))[::-1]
        colors = [MUTED if m is None else PASS if m >= threshold - 1e-9 else FAIL for _, m in rows]
        ax.barh(y, [m or 0.0 for _, m in rows], color=colors, height=0.7)
        ax.axvline(threshold, color="#243040", linestyle="--", linewidth=1)
        ax.set_yticks(y, [_short(n) for n, _ in rows], fontsize=8)
        ax.set_xlim(0, 1)
        ax.set_xlabel("mean composite over trials")
        return to_svg(fig, "incidents")


def coverage_vs_success(
    coverage: Sequence[float], success: Sequence[bool], diagnosis_passed: Sequence[bool | None]
) -> Markup:
    """Evidence coverage of each resolved / unresolved case, marked by the diagnosis verdict."""
    plt = _pyplot()
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(5.2, 2.4))
        for k, (cov, ok, dx) in enumerate(zip(coverage, success, diagnosis_passed, strict=True)):
            jitter = ((k * 37) % 11 - 5) / 40
            ax.scatter(
                cov,
                (1 if ok else 0) + jitter,
                s=28,
                zorder=3,
                color=MUTED if dx is None else PASS if dx else FAIL,
                marker="o" if dx is not False else "x",
            )
        ax.set_yticks([0, 1], ["unresolved", "resolved"])
        ax.set_ylim(-0.5, 1.5)
        ax.set_xlim(-0.05, 1.05)
        ax.set_xlabel("evidence coverage")
        for label, color, marker in (
            ("diagnosis passed", PASS, "o"),
            ("diagnosis failed", FAIL, "x"),
            ("unscored", MUTED, "o"),
        ):
            ax.scatter([], [], color=color, marker=marker, label=label)
        ax.legend(frameon=False, fontsize=8, loc="center left", bbox_to_anchor=(1, 0.5))
        return to_svg(fig, "coverage")


def reliability(
    curves: Sequence[tuple[str, Sequence[float], Sequence[float], Sequence[int]]], prefix: str
) -> Markup:
    """A reliability diagram: per curve (label, mean confidence, observed agreement, count per
    non-empty bin) the agreement against the confidence, the diagonal being perfect calibration."""
    plt = _pyplot()
    colors = [MUTED, NEUTRAL, PASS, UNSCORED]
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(5.2, 4.6))
        ax.plot([0, 1], [0, 1], color="#243040", linestyle=":", linewidth=1)
        for n, (label, confidence, agreed, counts) in enumerate(curves):
            color = colors[n % len(colors)]
            ax.plot(confidence, agreed, color=color, linewidth=1.2, label=label)
            largest = max(counts, default=1) or 1
            sizes = [8 + 72 * (c / largest) ** 0.5 for c in counts]
            ax.scatter(confidence, agreed, s=sizes, color=color, zorder=3, clip_on=False)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("confidence (mean per bin)")
        ax.set_ylabel("agreement with the labels")
        ax.legend(frameon=False, fontsize=8, loc="upper left")
        return to_svg(fig, prefix)


def question_shares(
    labels: Sequence[str], yes: Sequence[float], no: Sequence[float], unscored: Sequence[float]
) -> Markup:
    """One stacked bar per row (a question, or a question and an agent): the share answered
    Yes, No and left unscored, top to bottom in the order given."""
    plt = _pyplot()
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(6.4, 0.9 + 0.26 * len(labels)))
        y = list(range(len(labels)))[::-1]
        left = [0.0] * len(labels)
        for values, color, name in (
            (yes, PASS, "Yes"),
            (no, FAIL, "No"),
            (unscored, UNSCORED, "unscored"),
        ):
            ax.barh(y, values, left=left, color=color, height=0.72, label=name)
            left = [a + b for a, b in zip(left, values, strict=True)]
        ax.set_yticks(y, [_short(label, 44) for label in labels], fontsize=8)
        ax.set_ylim(-0.6, len(labels) - 0.4)
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of cases")
        ax.legend(frameon=False, fontsize=8, ncols=3, loc="lower left", bbox_to_anchor=(0, 1))
        return to_svg(fig, "questions")


def kappa_forest(
    rows: Sequence[str],
    series: Sequence[
        tuple[str, Sequence[float | None], Sequence[float | None], Sequence[float | None]]
    ],
) -> Markup:
    """Cohen's kappa per row (a question) for each series (a pair of raters): the value and its
    95% CI, chance (0) and the usual 'substantial' line (0.6) marked."""
    plt = _pyplot()
    colors = [NEUTRAL, UNSCORED, PASS, FAIL, MUTED, "#6a3d9a"]
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(6.4, 1.2 + 0.36 * len(rows) * max(1, len(series)) ** 0.5))
        base = list(range(len(rows)))[::-1]
        step = 0.7 / max(1, len(series))
        for n, (label, values, lows, highs) in enumerate(series):
            offset = ((len(series) - 1) / 2 - n) * step  # the first pair on top, as in the legend
            color = colors[n % len(colors)]
            for yi, v, lo, hi in zip(base, values, lows, highs, strict=True):
                if v is None:
                    continue
                err = [[v - lo], [hi - v]] if lo is not None and hi is not None else None
                ax.errorbar(v, yi + offset, xerr=err, fmt="o", color=color, ms=4, capsize=2, lw=1)
            ax.plot([], [], "o", color=color, label=_short(label, 60))
        ax.axvline(0, color="#243040", linewidth=0.8)
        ax.axvline(0.6, color=MUTED, linestyle=":", linewidth=1)
        ax.set_yticks(base, list(rows), fontsize=8)
        ax.set_xlim(-1, 1)
        ax.set_xlabel("Cohen's κ (95% bootstrap CI)")
        ax.legend(frameon=False, fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5))
        return to_svg(fig, "kappa")


def _short(name: str, most: int = 36) -> str:
    return name if len(name) <= most else name[: most // 2 - 1] + "…" + name[-(most // 2 - 1) :]


def audit_probe(
    questions: Sequence[str],
    values: Sequence[float],
    overall: tuple[float, float | None, float | None] | None,
    xlabel: str,
    prefix: str,
    floor: float | None = None,
) -> Markup:
    """One audit probe: a bar per question (its shift or flip rate), the overall effect on top
    with its 95% interval, zero as a line, and the noise floor dotted when there is one."""
    plt = _pyplot()
    labels = ["all questions", *questions] if overall is not None else list(questions)
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(5.2, 0.9 + 0.28 * len(labels)))
        y = list(range(len(labels)))[::-1]
        bars = [overall[0]] if overall is not None else []
        bars += list(values)
        colors = ([NEUTRAL] if overall is not None else []) + [MUTED] * len(values)
        ax.barh(y, bars, color=colors, height=0.6)
        low, high = (overall[1], overall[2]) if overall is not None else (None, None)
        if overall is not None and low is not None and high is not None:
            value = overall[0]
            ax.errorbar(
                value, y[0], xerr=[[value - low], [high - value]], color="#243040", capsize=3, lw=1
            )
        ax.axvline(0, color="#243040", linewidth=0.8)
        if floor is not None:
            ax.axvline(floor, color=UNSCORED, linestyle=":", linewidth=1, label="noise floor")
            ax.legend(frameon=False, fontsize=8, loc="lower right")
        ax.set_yticks(y, [_short(label, 24) for label in labels], fontsize=8)
        low_edge = min([0.0, *bars]) - 0.05
        high_edge = max([0.05, *bars, *(o for o in (overall or ())[1:] if o is not None)]) + 0.05
        ax.set_xlim(max(low_edge, -1.05), min(high_edge, 1.05))
        ax.xaxis.get_major_locator().set_params(nbins=5)
        ax.set_xlabel(xlabel)
        return to_svg(fig, prefix)
