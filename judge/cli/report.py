"""`judge report`: the HTML report and the CSV/JSONL/JUnit exports of a result file.

`add_export_arguments` and `write_exports` are shared with `judge eval`, which takes the same
export flags (`--html` there, `-o/--output` here).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ground_truth.errors import InputError

from .common import EXIT_OK, add_format_argument, add_max_input_argument
from .itbench import add_itbench_arguments, itbench_targets, write_itbench
from .writable import check_not_inputs, check_writable, inputs_of

EXPORTS = ("html", "csv", "jsonl", "junit")


def add_export_arguments(
    parser: argparse.ArgumentParser, html_flags: tuple[str, ...] = ("--html",)
) -> None:
    """Add the HTML, CSV, JSONL and JUnit output options (the HTML one under `html_flags`)."""
    group = parser.add_argument_group("reports and exports")
    group.add_argument(
        *html_flags,
        dest="html",
        type=Path,
        metavar="FILE",
        help="write the self-contained HTML report here",
    )
    group.add_argument("--csv", type=Path, metavar="FILE", help="one row per case with its scores")
    group.add_argument("--jsonl", type=Path, metavar="FILE", help="one judgment per line")
    group.add_argument(
        "--junit",
        type=Path,
        metavar="FILE",
        help="JUnit XML: a testcase per incident and trial; failed verdict = failure, "
        "no verdict because a call failed = error, left out by the user's stop = skipped",
    )


def write_exports(
    result: Any,
    args: argparse.Namespace,
    specs: list[Any] | None = None,
    submissions: list[Any] | None = None,
    *,
    texts: Any = None,
    raw: dict[str, Any] | None = None,
) -> list[Path]:
    """Write every export asked for in `args`; announce each on stderr (stdout may be JSON).

    The HTML report shows spec texts and diagnoses from `specs`/`submissions` (as `judge eval`
    has them) or from ready `texts`; `raw` is the result file's JSON, for optional sections.
    """
    from ..checklist.texts import CaseTexts, texts_from
    from ..report.exports import write_csv, write_jsonl, write_junit
    from ..report.html import write_html

    written = []
    if getattr(args, "html", None):
        if not isinstance(texts, CaseTexts):
            texts = texts_from(specs, submissions, result.config.get("rubric"))
        title = getattr(args, "title", None)
        written.append(write_html(args.html, result, texts=texts, raw=raw, title=title))
    for name, writer in (("csv", write_csv), ("jsonl", write_jsonl), ("junit", write_junit)):
        path = getattr(args, name, None)
        if path:
            written.append(writer(path, result))
    for path in written:
        print(f"Wrote {path}", file=sys.stderr)
    return written


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `report` subcommand."""
    p = commands.add_parser(
        "report",
        help="HTML report and CSV/JSONL/JUnit exports of a result file",
        description="Make a self-contained HTML report (no network, inline plots) and flat "
        "exports from a result file written by `judge eval`. The result file holds no spec "
        "texts or diagnoses: pass --ground-truth and --outputs to show them, with each "
        "evidence quote highlighted in its diagnosis.",
    )
    p.add_argument("result", type=Path, help="result JSON written by judge eval")
    add_export_arguments(p, ("-o", "--output", "--html"))
    p.add_argument(
        "--ground-truth", type=Path, help="spec file or directory, for ground-truth texts"
    )
    p.add_argument(
        "--outputs", type=Path, help="outputs directory or submissions JSONL, for diagnoses"
    )
    add_format_argument(p)
    p.add_argument("--title", help="report title")
    p.add_argument(
        "--labels",
        type=Path,
        help="label CSV on some of the cases: adds the means corrected with them (as `judge "
        "estimate`) to the terminal and the HTML report",
    )
    p.add_argument("--annotator", help="with --labels: whose labels, when the CSV holds several")
    add_max_input_argument(p)
    add_itbench_arguments(p, "report")
    p.set_defaults(handler=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    """`judge report`: write the exports asked for, or RESULT.html when none is."""
    from ..checklist.results import load_result
    from ..checklist.texts import load_texts

    if not any(getattr(args, name) for name in EXPORTS) and args.itbench is None:
        args.html = args.result.with_suffix(".html")
    targets = [(_FLAGS[name], getattr(args, name)) for name in EXPORTS]
    targets += itbench_targets(args, "--itbench")
    _check_not_the_result(args.result, targets)
    check_writable(targets)
    raw: dict[str, Any] = {}
    result = load_result(args.result, raw)
    texts = load_texts(args.ground_truth, args.outputs, result.config.get("rubric"), args.format)
    check_not_inputs(targets, inputs_of(args, "result", "ground_truth", "outputs", "labels"))
    if args.labels:
        raw["estimates"] = _estimates(result, args)
    write_exports(result, args, texts=texts, raw=raw)
    if write_itbench(result, args, args.result) is not None:
        print(f"Wrote {args.itbench} (ITBench's evaluation_results shape)", file=sys.stderr)
    return EXIT_OK


def _estimates(result: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The corrected-with-labels section: printed here, and handed to the HTML report."""
    from ..labelling.estimate import estimate_with_labels
    from ..report.estimates import render
    from .common import console

    estimates = estimate_with_labels(result, args.labels, annotator=args.annotator)
    estimates.result = str(args.result)
    console().print(render(estimates))
    return estimates.model_dump(mode="json")


_FLAGS = {"html": "--output", "csv": "--csv", "jsonl": "--jsonl", "junit": "--junit"}


def _check_not_the_result(result: Path, targets: list[tuple[str, Path | None]]) -> None:
    """An export written over the result file it is made from would lose the result."""
    for flag, path in targets:
        if path is not None and path.resolve() == result.resolve():
            raise InputError(path, "is the result file being reported on", field=flag)
