"""Terminal tables for `judge calibrate` (reliability, thresholds) and a cascade's summary."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from agreement.ranking import Ranking
from agreement.reliability import ConfidenceCalibration, ReliabilityDiagram
from agreement.render import keep_whole
from agreement.shift import ShiftTest

from ..checklist.results import CascadeSummary
from ..judges.selective.file import CalibrationFile
from ..judges.selective.fit import Calibrated
from ..labelling.guarantee import GuaranteeCheck
from .display import fmt

BAR = 20


def reliability_table(calibrated: Calibrated) -> Group:
    """Per judge: how its confidence compares with its agreement, raw and after its map."""
    where = (
        f"{calibrated.n_select} selection items"
        if calibrated.n_fit
        else f"{calibrated.n_select} items (no fitting share: the map is the identity)"
    )
    summary = Table(
        title=f"Confidence calibration ({calibrated.guarantee}s; maps fitted on "
        f"{calibrated.n_fit} items, measured on {where})",
        title_justify="left",
    )
    columns = ("judge", "n", "agreement", "AUROC raw", "AUROC calibrated", "ECE raw")
    for column in (*columns, "ECE calibrated", "maps"):
        summary.add_column(column, justify="left" if column in ("judge", "maps") else "right")
    parts: list[Table | Text] = [summary]
    for stage in calibrated.stages:
        maps = stage.maps
        if maps.choice is not None:
            parts.append(Text(f"{stage.identity.name}: {map_choice_text(maps)}"))
        kinds = f"{map_counts(maps)}, pooled"
        summary.add_row(
            stage.identity.name,
            str(stage.n_scored),
            fmt(stage.agreement),
            auroc_text(stage.raw_ranking),
            auroc_text(stage.ranking),
            fmt(stage.raw.ece if stage.raw else None, 3),
            fmt(stage.calibrated.ece if stage.calibrated else None, 3),
            kinds,
        )
        if stage.calibrated is not None:
            parts.append(diagram_table(stage.calibrated, f"{stage.identity.name}, calibrated"))
    summary.caption = (
        "AUROC: how often an answer that agrees with the label is more confident than one that "
        "does not (0.5: a coin), with its 95% interval resampling incidents. A threshold that "
        "leaves answers out needs it above 0.5."
    )
    summary.caption_justify = "left"
    keep_whole(summary, ("judge", "maps"))
    return Group(*parts)


def diagram_table(diagram: ReliabilityDiagram, title: str) -> Table:
    """One reliability diagram as rows: bin, count, mean confidence, observed agreement, bar."""
    table = Table(title=f"Reliability: {title} (ECE {diagram.ece:.3f})", title_justify="left")
    for column in ("confidence", "n", "mean conf.", "agreed", ""):
        table.add_column(
            column, justify="right" if column in ("n", "mean conf.", "agreed") else "left"
        )
    for b in diagram.bins:
        if not b.count:
            continue
        bar = "#" * round((b.observed_agreement or 0.0) * BAR)
        table.add_row(
            f"{b.lower:.1f}-{b.upper:.1f}",
            str(b.count),
            fmt(b.mean_confidence),
            fmt(b.observed_agreement),
            bar,
        )
    return table


def thresholds_table(calibration: CalibrationFile) -> Table:
    """The chosen thresholds, stage by stage, and what they give on the selection items."""
    table = Table(
        title=f"Guarantee: agreement >= {calibration.target:g} on the {calibration.guarantee}s "
        f"answered, with probability >= {1 - calibration.alpha:g} (alpha {calibration.alpha:g}, "
        f"{calibration.stage_alpha:.3g} per judge); coverage {calibration.coverage:.2f}, "
        f"agreement {fmt(calibration.agreement)} on {calibration.labels.n_select} selection items",
        title_justify="left",
    )
    for column in ("judge", "reaching", "AUROC", "threshold", "bound", "answered", "note"):
        table.add_column(column, justify="left" if column in ("judge", "note") else "right")
    for stage in calibration.stages:
        selection = stage.selection
        auroc = auroc_text(stage.ranking)
        if selection.status == "guaranteed":
            note = (
                "keeps every answer it gives: the guarantee is its agreement, not a selection"
                if stage.selects is False
                else ""
            )
            table.add_row(
                stage.judge.name,
                str(stage.n_reaching),
                auroc,
                f"{selection.threshold:.3f}",
                f"{selection.lower_bound:.3f}",
                f"{selection.n_answered} ({selection.coverage:.2f})",
                note,
            )
        else:
            more = selection.more_labels_needed
            note = "never answers" + (f"; ~{more} more labels would do" if more else "")
            table.add_row(stage.judge.name, str(stage.n_reaching), auroc, "—", "—", "0", note)
    return keep_whole(table, ("judge", "note"))


def map_counts(maps: ConfidenceCalibration) -> str:
    """How many maps of each kind a stage's calibration has."""
    by_answer = sum(q.answer is not None for q in maps.questions)
    return (
        f"{len(maps.questions) - by_answer} per question, {by_answer} per question and answer, "
        f"{len(maps.answers)} per answer, {len(maps.judges)} per judge"
    )


KIND_NAMES = {
    "judge": "one map per judge",
    "question": "maps per question",
    "question-answer": "maps per question and answer",
}


def map_choice_text(maps: ConfidenceCalibration) -> str:
    """Which kind of maps was fitted and why ("" when the file predates the choice)."""
    choice = maps.choice
    if choice is None:
        return ""
    return f"{KIND_NAMES[choice.kind]}, chosen by {choice.reason}"


def auroc_text(ranking: Ranking | None) -> str:
    """An AUROC with its 95% interval, "—" when undefined."""
    if ranking is None or ranking.auroc is None:
        return "—"
    if ranking.ci_low is None or ranking.ci_high is None:
        return f"{ranking.auroc:.2f}"
    return f"{ranking.auroc:.2f} [{ranking.ci_low:.2f}, {ranking.ci_high:.2f}]"


def cascade_table(summary: CascadeSummary) -> Group:
    """A cascade run: the guarantee (or why it is not established), coverage, each stage's
    share and cost, and the shift check's features that differ."""
    coverage = fmt(summary.coverage)
    counts = (
        f"coverage {coverage} ({summary.answered} of {summary.n_items}, {summary.abstained} "
        "unscored below_guarantee)"
    )
    if summary.guarantee_established:
        promise = (
            f"agreement >= {summary.target:g} with probability >= {1 - summary.alpha:g} on "
            "what is answered"
        )
    else:
        promise = f"the guarantee (agreement >= {summary.target:g}) is NOT established for this run"
    table = Table(
        title=f"Cascade ({summary.guarantee} guarantee): {promise}; {counts}",
        title_justify="left",
    )
    for column in ("judge", "threshold", "calls", "from store", "answered", "share", "cost"):
        table.add_column(column, justify="left" if column == "judge" else "right")
    for stage in summary.stages:
        table.add_row(
            stage.judge,
            fmt(stage.threshold, 3),
            str(stage.calls),
            str(stage.calls_from_store),
            str(stage.answered),
            fmt(stage.share),
            _usd(stage.cost_usd),
        )
    saved = (
        f"; saved {_usd(summary.saved_usd)} ({summary.saved_share:.0%})"
        if summary.saved_usd is not None and summary.saved_share is not None
        else ""
    )
    table.caption = (
        f"cost {_usd(summary.cost_usd)} against {_usd(summary.strongest_cost_usd)} for "
        f"{summary.strongest} on every call ({summary.strongest_estimate}){saved}"
    )
    table.caption_justify = "left"
    parts: list[Table | Text] = [table]
    if summary.guarantee_note:
        parts.append(Text(summary.guarantee_note, style="bold yellow"))
    shift = summary.shift_test()
    if shift is not None and shift.shifted:
        parts.append(shift_table(shift))
    return Group(*parts)


def shift_table(shift: ShiftTest, shown: int = 12) -> Table:
    """The shift check's features, those that differ first."""
    table = Table(
        title=f"Shift check: this run ({shift.n_new} cases) against the calibration set "
        f"({shift.n_reference}); features that differ at level {shift.level:g} (min-P "
        f"adjusted, {shift.permutations} permutations of incidents)",
        title_justify="left",
    )
    for column in ("feature", "calibration set", "this run", "distance", "p (adjusted)"):
        table.add_column(
            column, justify="right" if column in ("distance", "p (adjusted)") else "left"
        )
    for note in shift.unseen:
        table.add_row(note, "", "", "", "unseen")
    for feature in shift.features[:shown]:
        table.add_row(
            feature.feature + (" *" if feature.shifted else ""),
            feature.reference,
            feature.new,
            f"{feature.statistic:.3f}",
            f"{feature.adjusted:.3g}",
        )
    return table


def _usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def check_table(check: GuaranteeCheck) -> Group:
    """`judge calibrate --check`: the promise tested on a run's labels, and what it says."""
    table = Table(
        title=f"Promise check ({check.guarantee} guarantee: agreement >= {check.target:g}, "
        f"alpha {check.alpha:g}); labels by {check.labeller}, {check.design}",
        title_justify="left",
    )
    for column in ("", "items", "incidents", "agreement", "effective n", "bounds", "verdict"):
        table.add_column(column, justify="left" if column in ("", "verdict") else "right")
    bounds = (
        f"[{check.lower_bound:.3f}, {check.upper_bound:.3f}]"
        if check.lower_bound is not None and check.upper_bound is not None
        else "—"
    )
    table.add_row(
        "answered by the cascade",
        str(check.n_answered),
        str(check.n_incidents),
        fmt(check.agreement, 3),
        fmt(check.effective_n, 1),
        bounds,
        check.verdict,
    )
    if check.abstained:
        table.add_row(
            "abstained (first judge's own answers)",
            str(check.abstained),
            "",
            fmt(check.abstained_agreement, 3),
            "",
            "",
            "",
        )
    parts: list[Table | Text] = [table, Text(check.message)]
    if check.shift is not None and check.shift.shifted:
        parts.append(shift_table(check.shift))
    return Group(*parts)
