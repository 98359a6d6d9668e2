"""`judge estimate`: a result's pass rate and means corrected with labels (PPI++)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import EXIT_OK, add_max_input_argument, console


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `estimate` subcommand."""
    p = commands.add_parser(
        "estimate",
        help="the pass rate and means corrected with labels (prediction-powered inference)",
        description="From a result and labels on some of its cases (a random sample, or drawn "
        "by `judge labels serve --order informative`): for the pass rate, the mean composite, "
        "each dimension's mean, each agent's pass rate and every pair of agents' difference, "
        "the judge-only, labels-only and PPI++ estimates with intervals clustered by "
        "incident, and how many labels the judge was worth.",
    )
    p.add_argument("--result", required=True, type=Path, help="result JSON written by judge eval")
    p.add_argument(
        "--labels",
        required=True,
        type=Path,
        help="label CSV: `judge labels export`, or a sheet in the project's label format",
    )
    p.add_argument("--annotator", help="whose labels, when the CSV holds several annotators'")
    p.add_argument(
        "--alpha", type=float, default=0.05, help="intervals cover 1 - alpha (default 0.05)"
    )
    p.add_argument(
        "--by",
        choices=("benchmark", "agent", "incident-family"),
        help="also estimate this run's means stratum by stratum (stratified PPI++, with the "
        "finite-population correction): by the cases' benchmark format, their agent, or their "
        "incident family (the incident id without a trailing number); the labels must be a "
        "random sample within each stratum",
    )
    p.add_argument("--json", action="store_true", help="print the estimates as JSON")
    add_max_input_argument(p)
    p.set_defaults(handler=cmd_estimate)


def cmd_estimate(args: argparse.Namespace) -> int:
    """`judge estimate`: print the estimates (a table, or JSON with --json)."""
    from ..labelling.estimate import estimate_with_labels
    from ..report.estimates import render

    estimates = estimate_with_labels(
        args.result, args.labels, alpha=args.alpha, annotator=args.annotator, by=args.by
    )
    if args.json:
        print(estimates.model_dump_json(indent=2))
    else:
        console().print(render(estimates))
    return EXIT_OK
