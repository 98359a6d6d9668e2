"""`judge labels serve` and `judge labels export`, registered under `judge labels`."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from ground_truth.errors import InputError

ORDERS = ("as-is", "random", "informative")  # here, not in `ordering`: `judge --help` stays quick
_LABELLER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def register(labels: argparse._SubParsersAction) -> None:
    """Add `serve` and `export` to the `judge labels` subcommands."""
    _register_serve(labels)
    _register_export(labels)


def _register_serve(labels: argparse._SubParsersAction) -> None:
    p = labels.add_parser(
        "serve",
        help="label cases in the browser (a local page; every answer saved at once)",
        description="Serve a local labelling page on 127.0.0.1: one case at a time with its "
        "ground truth, diagnosis and the rubric's questions; answer with y/n/u, move with "
        "j/k (questions) and h/l or the arrows (cases). Every answer is appended to the "
        "labeller's store (JSONL, fsync'd) the moment it is given; rerun to resume. The judge's "
        "answers stay hidden until a case is done, unless --show-judge.",
    )
    p.add_argument("result", type=Path, help="result JSON written by judge eval")
    p.add_argument("-g", "--ground-truth", required=True, type=Path, help="spec file or directory")
    p.add_argument("-o", "--outputs", required=True, type=Path, help="outputs directory or JSONL")
    p.add_argument("--format", default="auto", help="input format (default: auto-detect)")
    p.add_argument("--labeller", required=True, help="your name, as it goes into the labels")
    p.add_argument(
        "--labels",
        type=Path,
        help="the labels store (default: RESULT's folder, <result>.labels-<labeller>.jsonl)",
    )
    p.add_argument("--rubric", help="rubric for the questions and hints (default: the result's)")
    p.add_argument(
        "--show-judge", action="store_true", help="show the judge's answers from the start"
    )
    p.add_argument(
        "--order",
        choices=ORDERS,
        default="as-is",
        help="case order (default as-is). informative: cases drawn with probabilities "
        "proportional to the judge's uncertainty (recorded, so `judge estimate` can weight "
        "each label by them), most uncertain first; the page shows the corrected pass rate",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed for --order random/informative and --sample"
    )
    p.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="label N cases, stratified by verdict and incident (with --order informative: "
        "the draw's sample of N expected labels)",
    )
    p.add_argument(
        "--compare",
        action="append",
        type=Path,
        default=[],
        metavar="RESULT",
        help="another judge's result on the same cases (repeatable): where it answers apart, "
        "the case counts as a disagreement for --disagreements, and the question as a coin "
        "flip for --order informative",
    )
    p.add_argument("--unlabelled", action="store_true", help="only cases not fully labelled")
    p.add_argument(
        "--disagreements",
        action="store_true",
        help="only cases where a panel's members split or you answered apart from the judge",
    )
    p.add_argument("--incident", help="only this incident")
    p.add_argument("--agent", help="only this agent's submissions")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free)")
    p.add_argument("--no-browser", action="store_true", help="print the URL, do not open it")
    p.set_defaults(handler=cmd_serve)


def _register_export(labels: argparse._SubParsersAction) -> None:
    p = labels.add_parser(
        "export",
        help="write the label CSV (for judge agreement / calibrate) from labels stores",
        description="Derive the label CSV from one or more labels stores (one per labeller). "
        "Unsure answers are exported empty (missing for agreement) with `unsure` in notes. "
        "Prints, per store, the mode (blind / show-judge) and any sample the labels were made on.",
    )
    p.add_argument("stores", nargs="+", type=Path, help="labels stores (.jsonl)")
    p.add_argument("-O", "--output", "-o", type=Path, required=True, help="CSV to write")
    p.set_defaults(handler=cmd_export)


def cmd_serve(args: argparse.Namespace) -> int:
    """`judge labels serve`: serve the labelling page until stopped; InputError on a bad
    --labeller or --sample.
    """
    from .session import open_session

    if not _LABELLER.fullmatch(args.labeller):
        raise InputError(
            None,
            f"--labeller {args.labeller!r}: use letters, digits, '.', '_' or '-' (at most 64)",
        )
    if args.sample is not None and args.sample < 1:
        raise InputError(None, f"--sample {args.sample}: expected a positive number of cases")
    labels = args.labels or args.result.with_name(
        f"{args.result.stem}.labels-{args.labeller}.jsonl"
    )
    with open_session(args, labels) as server:
        if server is None:
            print(f"nothing to label: every selected case is labelled in {labels}")
            return 0
        app = server.app
        done = sum(c["done"] for c in app.overview()["cases"])
        print(f"{len(app.cases)} cases ({done} labelled), {app.session.mode}; labels -> {labels}")
        print(f"open {server.url}", flush=True)
        if not args.no_browser:
            import webbrowser

            webbrowser.open(server.url)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            answered = len(app.store.contents.answers)
            print(f"\nstopped; {answered} answers in {labels}", file=sys.stderr)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """`judge labels export`: write the label stores' answers as one label CSV."""
    from .export import describe, write_export

    for store in args.stores:
        if not store.is_file():
            raise InputError(store, "no such labels store (expected a .jsonl from labels serve)")
    rows = write_export(args.stores, args.output)
    for store in args.stores:
        print(describe(store))
    print(f"wrote {rows} rows to {args.output}")
    return 0
