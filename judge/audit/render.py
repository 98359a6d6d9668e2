"""An audit report as terminal tables: one row per probe (its effects, their 95% intervals and
the gate's decision), the noise floor, the panel members' own-family effects, and what the
arms cost. Names from the inputs are shown as plain text, never read as markup."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from agreement.paired import PairedEffect

from .report import ArmRun, AuditReport

VERDICT_STYLES = {"BIAS": "bold red", "no": "green", "not measured": "yellow"}


def _effect(effect: PairedEffect | None) -> Text:
    if effect is None:
        return Text("—")
    if effect.value is None:
        return Text("n/a", style="dim")
    return Text(effect.text())


def probes_table(report: AuditReport) -> Table:
    """Per probe: what changed, the Yes shift, flips beyond the noise floor, the pass-rate
    shift, and whether the gate calls it a bias."""
    table = Table(
        title=f"judge audit: {report.judge} on {report.n_cases} cases of "
        f"{report.n_incidents} incidents (95% intervals, resampling incidents)"
    )
    for column in (
        "probe",
        "changed",
        "Yes shift",
        "flips beyond noise",
        "pass-rate shift",
        "bias",
    ):
        table.add_column(column, justify="left" if column in ("probe", "changed") else "right")
    for probe in report.probes:
        if probe.skipped:
            table.add_row(probe.probe, Text(probe.skipped, style="dim"), "—", "—", "—", "—")
            continue
        verdict = Text(probe.verdict, style=VERDICT_STYLES.get(probe.verdict, "dim"))
        table.add_row(
            probe.probe,
            Text(probe.title),
            _effect(probe.yes_shift),
            _effect(probe.excess_flips),
            _effect(probe.pass_shift),
            verdict,
        )
    return table


def noise_lines(report: AuditReport) -> list[str]:
    """The noise floor in a few lines (or why it was not measured)."""
    noise = report.noise
    near = f"{noise.near_threshold} of {report.n_cases} cases are one answer from the threshold"
    if not noise.measured:
        return [f"noise: not measured: {noise.skipped}", near]
    kappa = noise.kappa.text() if noise.kappa is not None else "n/a"
    flips = noise.flip_rate.text() if noise.flip_rate is not None else "n/a"
    noisiest = sorted(noise.questions, key=lambda q: -(q.flip_rate or 0))[:3]
    per_question = ", ".join(f"{q.question_id} {q.flip_rate:.2f}" for q in noisiest if q.flip_rate)
    lines = [
        f"noise (the same cases asked again with another seed): answers changed {flips}; "
        f"self-consistency kappa {kappa}",
        f"verdicts changed in {noise.cases_changed} of {noise.n_cases} cases "
        f"({noise.incidents_changed} of {noise.n_incidents} incidents); {near}",
    ]
    if per_question:
        lines.append(f"noisiest questions (share of answers changed): {per_question}")
    return lines


def members_table(report: AuditReport) -> Table | None:
    """Each panel member's Yes-rate lead over the other members on its own family's agents,
    against that lead on the others' agents."""
    if not report.members:
        return None
    table = Table(title="panel members on their own family's agents vs others'")
    for column in ("member", "family", "own items", "other items", "own-family lead"):
        table.add_column(column, justify="left" if column in ("member", "family") else "right")
    for m in report.members:
        table.add_row(Text(m.member), m.family, str(m.n_own), str(m.n_other), _effect(m.effect))
    return table


def arm_line(arm: ArmRun) -> str:
    """One arm once it ran: its cases, calls made and found in the store, unscored answers."""
    cost = "" if arm.cost_usd is None else f", ${arm.cost_usd:.4f}"
    stopped = f"; stopped: {arm.stopped.message}" if arm.stopped else ""
    return (
        f"arm {arm.name} ({arm.probe}): {arm.cases} cases, {arm.calls_made} calls made, "
        f"{arm.cache_hits} from the store, {arm.unscored_questions} answers unscored{cost}{stopped}"
    )


def cost_line(report: AuditReport) -> str:
    """The audit's cost in calls beside the run's."""
    made = sum(a.calls_made for a in report.arms)
    hits = sum(a.cache_hits for a in report.arms)
    ratio = f"{report.cost_ratio:.1f}x" if report.cost_ratio is not None else "n/a"
    return (
        f"cost: one run of these cases is {report.run_calls} calls; the audit's other arms "
        f"{report.audit_calls} ({ratio} the run); {made} calls made, {hits} answered by the store"
    )


def summary_lines(report: AuditReport) -> list[str]:
    """The decision, the gate's level, and the notes."""
    gate = (
        f"a probe is a bias when its Yes shift or its flips beyond noise lie beyond "
        f"±{report.tolerance:g} at the {100 * report.gate_level:.2f}% level (Bonferroni over "
        "the gated effects: an unbiased judge raises no alarm in 95% of audits)"
    )
    lines = [f"biases found: {report.findings}", gate]
    if report.self_grading is not None and report.self_grading.warning:
        lines.append(f"warning: {report.self_grading.warning}")
    lines += [f"note: {n}" for n in report.notes]
    return lines
