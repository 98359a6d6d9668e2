"""`judge audit`: measure a judge's order, verbosity, anchoring and self-grading bias and its
noise on the run's own cases, before trusting its numbers."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace

from .common import (
    EXIT_FAIL_UNDER,
    EXIT_OK,
    LazyConsole,
    add_input_arguments,
    load_inputs,
    print_warnings,
)
from .eval import add_judge_arguments, add_run_control_arguments
from .rubric import check_answerable
from .writable import check_writable, inputs_of

DEFAULT_STORE = Path("results.sqlite")
DEFAULT_REPORT = Path("audit.json")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `audit` subcommand."""
    from ..audit import PROBES

    p = commands.add_parser(
        "audit",
        help="measure a judge's bias and noise on the run's cases (order, verbosity, anchoring, "
        "self-grading, run-to-run)",
        description="Put the run's cases to the judge again in forms that should not change "
        "its answers (questions in another order, the diagnosis padded with neutral text or "
        "without its filler, the diagnosis before the ground truth, its author named as a model "
        "of the judge's family) and once more as they are with another seed (the noise floor). "
        "Each probe reports the paired change in Yes answers and the answers that changed "
        "beyond the noise, with 95% intervals resampling incidents. Every arm goes through "
        "the store: rerun to resume, nothing is asked twice. Exit 1 with --fail-on-bias when "
        "a probe finds a bias.",
    )
    add_input_arguments(p)
    p.add_argument("--rubric", default="sregym-v3", help="shipped rubric name or a YAML path")
    add_judge_arguments(p)
    p.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="audit N cases, spread over as many incidents as possible (default: every case)",
    )
    p.add_argument(
        "--probes",
        default=",".join(PROBES),
        help=f"comma-separated probes to run (default: {','.join(PROBES)})",
    )
    p.add_argument(
        "--order-seeds",
        type=int,
        default=2,
        metavar="K",
        help="orders of the questions (default 2)",
    )
    p.add_argument(
        "--tolerance",
        type=float,
        default=0.02,
        help="effects within ±this are no bias, however sure (default 0.02)",
    )
    p.add_argument(
        "--fail-on-bias", action="store_true", help="exit 1 when a probe finds a bias (CI gating)"
    )
    p.add_argument("--seed", type=int, default=0, help="orders, padding, sample and resamples")
    p.add_argument(
        "--bootstrap", type=int, default=4000, help="resamples for the intervals (default 4000)"
    )
    p.add_argument(
        "-r",
        "--report-file",
        type=Path,
        default=DEFAULT_REPORT,
        metavar="FILE",
        help=f"the audit report JSON to write (default: {DEFAULT_REPORT})",
    )
    p.add_argument("--html", type=Path, metavar="FILE", help="the run's HTML report with the audit")
    p.add_argument("--json", action="store_true", help="print the whole report as JSON")
    add_run_control_arguments(p)
    store = next(a for a in p._actions if "--store" in a.option_strings)
    store.help = (
        f"SQLite judgment store: cache and resume point (default: {DEFAULT_STORE}, `judge "
        "eval`'s default, so the run's own answers are not asked again)"
    )
    p.set_defaults(handler=cmd_audit)


def cmd_audit(args: argparse.Namespace) -> int:
    """`judge audit`, with SIGINT/SIGTERM handled over the whole command."""
    from ..run.control import SignalLatch

    with SignalLatch() as latch:
        return _audit(args, latch)


def _audit(args: argparse.Namespace, latch) -> int:
    from ..api import EvalOptions, run_sync
    from ..audit.check import audit_judge_async
    from ..audit.render import arm_line
    from ..checklist.prompts import PromptRenderer
    from ..checklist.results import write_json_atomic
    from ..checklist.rubric import load_rubric
    from ..selftest.render import plan_line
    from .eval import announce, batch_options, run_options, store_path
    from .judges import judge_from_args

    probes = _probes(args)
    rubric = load_rubric(args.rubric)
    judge = judge_from_args(args)
    check_answerable(judge, rubric, args.rubric)
    specs, submissions, warnings = load_inputs(args.ground_truth, args.outputs, args.format)
    print_warnings(warnings)
    renderer = PromptRenderer(args.prompt_template, reply_order=args.reply_order)
    out = LazyConsole(stderr=args.json)
    announce(judge, args, out)
    store = store_path(args, judge, out, default=DEFAULT_STORE)
    batch = batch_options(args, judge, store)
    inputs = inputs_of(args, "ground_truth", "outputs", "rubric", "prompt_template", "replay_store")
    targets = [("--report-file", args.report_file), ("--store", store), ("--html", args.html)]
    check_writable(targets, inputs)
    limits, control, storage = run_options(args, latch, store, batch)
    options = EvalOptions(limits=limits, control=control, storage=storage)
    latch.defer()
    report = run_sync(
        audit_judge_async(
            specs,
            submissions or [],
            rubric,
            judge,
            options,
            renderer=renderer,
            sample=args.sample,
            seed=args.seed,
            probes=probes,
            order_seeds=args.order_seeds,
            tolerance=args.tolerance,
            bootstrap=args.bootstrap,
            on_plan=lambda plan: out.print(
                plan_line(plan, args.max_cost, "cases in every arm"), highlight=False
            ),
            on_arm=lambda arm: out.print(arm_line(arm), highlight=False, markup=False),
        )
    )
    report.ground_truth, report.outputs = str(args.ground_truth), str(args.outputs)
    code, reason = _outcome(report, args, latch)
    report.exit_code, report.exit_reason = code, reason
    write_json_atomic(args.report_file, report.model_dump_json(indent=2))
    if args.html is not None and report.base_result is not None:
        _write_html(args.html, report, specs, submissions or [])
    if args.json:
        print(report.model_dump_json(indent=2))
    else:
        _print(report, out)
        out.print(f"Wrote {args.report_file}" + (f" and {args.html}" if args.html else ""))
    if reason is not None:
        from ..report.safe_text import markup_safe

        style = "yellow" if code == EXIT_FAIL_UNDER else "red"
        out.print(f"[{style}]exit {code}: {markup_safe(reason)}[/{style}]")
    return code


def _probes(args: argparse.Namespace) -> list[str]:
    from ground_truth.errors import InputError

    from ..audit import PROBES

    unknown = sorted(set(args.probes) - set(PROBES))
    if unknown:
        raise InputError(
            "--probes", f"unknown probe {', '.join(unknown)}; known: {', '.join(PROBES)}"
        )
    return list(args.probes)


def _outcome(report, args: argparse.Namespace, latch) -> tuple[int, str | None]:
    """`judge eval`'s outcome for each arm's run, the first that is not 0 (130 interrupted; 3
    stopped, the judge failed, too much unscored), else 1 when --fail-on-bias and a probe
    found a bias."""
    from .eval import run_outcome

    limits = SimpleNamespace(max_unscored=args.max_unscored, fail_under=None)
    for arm, result in report.results.items():
        code, reason = run_outcome(result, limits, latch)
        if code != EXIT_OK:
            return code, f"arm {arm}: {reason}"
    if args.fail_on_bias and report.biased:
        return EXIT_FAIL_UNDER, f"bias found by probe(s): {', '.join(report.biased)}"
    return EXIT_OK, None


def _print(report, out) -> None:
    from ..audit.render import cost_line, members_table, noise_lines, probes_table, summary_lines

    out.print(probes_table(report))
    for line in noise_lines(report):
        out.print(line, highlight=False, markup=False)
    members = members_table(report)
    if members is not None:
        out.print(members)
    out.print(cost_line(report), highlight=False, markup=False)
    for line in summary_lines(report):
        out.print(line, highlight=False, markup=False)


def _write_html(path: Path, report, specs, submissions) -> None:
    from ..checklist.texts import texts_from
    from ..report.html import write_html

    result = report.base_result
    texts = texts_from(specs, submissions, result.config.get("rubric"))
    raw = {"audit": report.model_dump(mode="json")}
    write_html(path, result, texts=texts, raw=raw, title=f"Judge audit — {report.judge}")
