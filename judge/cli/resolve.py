"""`judge resolve`: programmatic resolution checks on simulator trajectories, no judge."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import EXIT_OK, add_input_arguments, console, load_inputs, print_warnings
from .writable import check_writable, inputs_of


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `resolve` subcommand."""
    p = commands.add_parser(
        "resolve",
        help="run the resolution checks on trajectories (no judge)",
        description="Check every submission that carries a simulator trajectory: success, evidence "
        "coverage, invalid/wrong/distractor actions, premature resolution (SRE-Zero semantics).",
    )
    add_input_arguments(p, outputs_help="outputs directory or run record")
    p.add_argument(
        "-r",
        "--result-file",
        type=Path,
        default=Path("resolution.json"),
        metavar="FILE",
        help="the resolution checks' JSON to write (default: resolution.json)",
    )
    p.set_defaults(handler=cmd_resolve)


def cmd_resolve(args: argparse.Namespace) -> int:
    """`judge resolve`: run the resolution checks; InputError if no submission has a trajectory."""
    from ground_truth import InputError, match_submissions

    from ..checklist.results import write_json_atomic
    from ..resolution.section import resolution_section

    specs, submissions, found = load_inputs(args.ground_truth, args.outputs, args.format)
    print_warnings(found)
    check_writable(
        [("--result-file", args.result_file)], inputs_of(args, "ground_truth", "outputs")
    )
    matching = match_submissions(specs, submissions or [])  # --outputs is required
    section = resolution_section(matching.pairs)
    if section is None:
        raise InputError(
            args.outputs, "no submission carries a trajectory to check", field="trajectory"
        )
    write_json_atomic(args.result_file, section.model_dump_json(indent=2))
    out = console()
    out.print(resolution_table(section.model_dump(mode="json")))
    out.print(f"Wrote {args.result_file}")
    return EXIT_OK


def resolution_table(section: dict[str, Any]) -> Any:
    """Per case: success, coverage, the counted mistakes; then the side-by-side rates."""
    from rich.table import Table

    table = Table(title="Resolution checks")
    table.add_column("case", no_wrap=True, overflow="ellipsis", max_width=48)
    for col in ("success", "evidence", "invalid", "wrong", "distractor", "premature"):
        table.add_column(col)
    for case in section["cases"]:
        checks = case.get("checks", {})
        table.add_row(
            f"{case['incident_id']}/{case['trial']}",
            _flag(case.get("success")),
            _num(case.get("evidence_coverage")),
            *(
                _num(checks.get(name, {}).get("value"))
                for name in (
                    "invalid_actions",
                    "wrong_remediations",
                    "distractor_remediations",
                    "premature_resolution",
                )
            ),
        )
    summary = section["summary"]
    rate = summary.get("success_rate")
    table.caption = (
        f"success {summary['n_success']}/{summary['n_success_known']}"
        + (f" ({rate:.2f})" if rate is not None else "")
        + _side_by_side_caption(section.get("side_by_side"))
    )
    return table


def _side_by_side_caption(sbs: dict[str, Any] | None) -> str:
    if not sbs:
        return ""
    parts = []
    for label, key in (
        ("P(resolved | diagnosis passed)", "p_resolved_given_passed"),
        ("P(resolved | diagnosis failed)", "p_resolved_given_failed"),
    ):
        rate = sbs[key]
        value = "undefined" if rate["value"] is None else f"{rate['value']:.2f}"
        parts.append(f"{label} = {value} ({rate['numerator']}/{rate['denominator']})")
    return "; " + "; ".join(parts)


def _flag(value: Any) -> str:
    return "—" if value is None else ("yes" if value else "no")


def _num(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return _flag(value)
    return f"{value:.2f}" if isinstance(value, float) else str(value)
