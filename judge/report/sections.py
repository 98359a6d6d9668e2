"""The report's sections computed beside the judge, read as plain data from the result (a
result file written without them, or by an older version, still makes a report): resolution
checks, agreement between raters, and a cascade's run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..checklist.results import EvalResult
from ..checklist.scoring import CaseResult
from ..checklist.texts import case_key
from .cases import case_status
from .display import fmt


@dataclass
class Table:
    """A plain table for the report: title, columns, rows of strings, notes."""

    title: str
    columns: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)


def resolution_rows(
    resolution: dict[str, Any] | None, cases: Sequence[CaseResult]
) -> list[dict[str, Any]]:
    """One row per case of the resolution section, beside the diagnosis's verdict."""
    if not resolution:
        return []
    verdicts = {case_key(c.incident_id, c.trial): case_status(c) for c in cases}
    rows = []
    for case in resolution.get("cases", []):
        if not isinstance(case, dict):
            continue
        checks = case.get("checks") or {}
        failed = [
            name
            for name, check in checks.items()
            if isinstance(check, dict) and check.get("passed") is False and name != "success"
        ]
        rows.append(
            {
                "incident_id": case.get("incident_id"),
                "trial": case.get("trial"),
                "format": case.get("format"),
                "success": case.get("success"),
                "evidence_coverage": case.get("evidence_coverage"),
                "diagnosis": verdicts.get(
                    case_key(str(case.get("incident_id")), str(case.get("trial")))
                ),
                "failed_checks": failed,
                "discrepancies": len(case.get("discrepancies") or []),
            }
        )
    return rows


def agreement_tables(section: dict[str, Any]) -> tuple[list[Table] | None, str | None]:
    """Pairwise and multi-rater tables when the section is an agreement report, else raw JSON."""
    report = section
    if "levels" not in report:
        nested = [v for v in section.values() if isinstance(v, dict) and "levels" in v]
        report = nested[0] if nested else report
    levels = report.get("levels")
    if not isinstance(levels, list):
        return None, json.dumps(section, indent=2, sort_keys=True)
    tables = []
    for level in levels:
        tables.append(_pair_table(f"Level: {level.get('level', '?')}", level.get("pairwise") or []))
        multi = level.get("multi_rater")
        if isinstance(multi, dict):
            tables[-1].notes.append(
                f"all raters ({', '.join(multi.get('raters') or [])}): Fleiss κ "
                f"{_est_text(multi.get('fleiss_kappa'))}, Krippendorff α "
                f"{_est_text(multi.get('krippendorff_alpha'))}"
            )
    for key, title in (("human_ceiling", "Among people"), ("self_consistency", "Self-consistency")):
        groups = report.get(key) or []
        if groups:
            tables.append(
                Table(
                    title=title,
                    columns=["group", "level", "raters", "mean κ", "Fleiss κ"],
                    rows=[
                        [
                            str(g.get("name")),
                            str(g.get("level")),
                            ", ".join(g.get("raters") or []),
                            fmt(g.get("mean_kappa")),
                            _est_text((g.get("multi_rater") or {}).get("fleiss_kappa")),
                        ]
                        for g in groups
                    ],
                )
            )
    return tables, None


def ranking_tables(result: EvalResult) -> list[Table]:
    """Whether the agents' order survives a change of judge among a panel's members
    (`agreement.leaderboard`, as `judge agreement --rank` on the result); none unless the result
    is a panel's (or a cascade's: its stages) and its cases name two agents or more."""
    own = result.config.get("judge", {}).get("label")
    if not any(j.judge != own and j.answer is not None for j in result.member_judgments):
        return []
    if len({c.agent for c in result.cases if c.agent is not None}) < 2:
        return []
    from agreement.leaderboard import rank_rows, rank_stability

    report = rank_stability([result.model_dump(mode="json")])
    tables = [Table(title, columns, rows) for title, columns, rows in rank_rows(report)]
    tables[-1].notes.extend(report.notes)
    return tables


def _pair_table(title: str, pairs: list[dict[str, Any]]) -> Table:
    table = Table(
        title=title,
        columns=["rater A", "rater B", "n", "agreement", "κ [95% CI]", "PABAK", "AC1"],
        rows=[],
    )
    for p in pairs:
        table.rows.append(
            [
                str(p.get("rater_a")),
                str(p.get("rater_b")),
                str(p.get("n")),
                _est_text(p.get("agreement")),
                _est_text(p.get("kappa")),
                _est_text(p.get("pabak"), ci=False),
                _est_text(p.get("ac1"), ci=False),
            ]
        )
        for name in ("kappa", "agreement"):
            reason = (p.get(name) or {}).get("undefined")
            if reason and reason not in table.notes:
                table.notes.append(reason)
    return table


def _est_text(est: Any, ci: bool = True) -> str:
    if not isinstance(est, dict):
        return "—"
    if est.get("value") is None:
        return "undefined"
    out = f"{est['value']:.2f}"
    if ci and est.get("ci_low") is not None and est.get("ci_high") is not None:
        out += f" [{est['ci_low']:.2f}, {est['ci_high']:.2f}]"
    return out


def cascade_section(result: EvalResult) -> dict[str, Any] | None:
    """The cascade block as plain data (the template reads it like the JSON)."""
    return None if result.cascade is None else result.cascade.model_dump(mode="json")
