"""`judge selftest`: check a judge on cases derived from the specs and the rubric's goldens."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace

from .common import (
    EXIT_FAIL_UNDER,
    EXIT_OK,
    LazyConsole,
    add_format_argument,
    add_max_input_argument,
    load_inputs,
    print_warnings,
)
from .eval import add_judge_arguments, add_run_control_arguments
from .rubric import check_answerable
from .writable import check_writable, inputs_of

DEFAULT_STORE = Path("selftest.sqlite")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `selftest` subcommand."""
    p = commands.add_parser(
        "selftest",
        help="check a judge on cases derived from the specs (no outputs, no labels)",
        description="Derive from each spec diagnoses a judge must pass (the ground truth, "
        "verbatim and rewritten) and must fail (fault origin or mechanism swapped, a victim "
        "blamed, vague, empty, asking for Yes), add the rubric's goldens, put them to the "
        "judge, and report per probe kind and per question the share that behaved as "
        "expected. Exit 1 when a probe kind is below --fail-under.",
    )
    p.add_argument(
        "-g",
        "--ground-truth",
        type=Path,
        help="spec file or directory to derive probes from (optional when the rubric has "
        "goldens: they run alone)",
    )
    add_format_argument(p)
    add_max_input_argument(p)
    p.add_argument("--rubric", default="sregym-v3", help="shipped rubric name or a YAML path")
    p.add_argument(
        "--goldens",
        type=Path,
        metavar="FILE",
        help="a goldens file to run instead of the rubric's own (<rubric>.goldens.yaml)",
    )
    p.add_argument("--no-goldens", action="store_true", help="run the derived probes only")
    add_judge_arguments(p)
    p.add_argument(
        "--fail-under",
        type=float,
        default=0.95,
        help="exit 1 when the share of a probe kind's probes that behaved as expected is "
        "below this (default 0.95)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="picks the swapped-in components and mechanisms"
    )
    p.add_argument("--json", action="store_true", help="print the whole report as JSON")
    add_run_control_arguments(p)
    store = next(a for a in p._actions if "--store" in a.option_strings)
    store.help = f"SQLite judgment store: cache and resume point (default: {DEFAULT_STORE})"
    p.set_defaults(handler=cmd_selftest)


def cmd_selftest(args: argparse.Namespace) -> int:
    """`judge selftest`, with SIGINT/SIGTERM handled over the whole command."""
    from ..run.control import SignalLatch

    with SignalLatch() as latch:
        return _selftest(args, latch)


def _selftest(args: argparse.Namespace, latch) -> int:
    from ..api import EvalOptions, run_sync
    from ..checklist.prompts import PromptRenderer
    from ..checklist.rubric import load_rubric
    from ..selftest.check import selftest_judge_async
    from ..selftest.render import plan_line
    from .eval import announce, batch_options, run_options, store_path
    from .judges import judge_from_args

    rubric = load_rubric(args.rubric)
    goldens = _goldens(args, rubric)
    judge = judge_from_args(args)
    check_answerable(judge, rubric, args.rubric)
    specs = _specs(args)
    renderer = PromptRenderer(args.prompt_template, reply_order=args.reply_order)
    out = LazyConsole(stderr=args.json)
    announce(judge, args, out)
    store = store_path(args, judge, out, default=DEFAULT_STORE)
    storage_batch = batch_options(args, judge, store)
    inputs = inputs_of(args, "ground_truth", "rubric", "goldens", "prompt_template", "replay_store")
    check_writable([("--store", store)], inputs)
    limits, control, storage = run_options(args, latch, store, storage_batch)
    options = EvalOptions(limits=limits, control=control, storage=storage)
    latch.defer()
    report = run_sync(
        selftest_judge_async(
            specs,
            rubric,
            judge,
            options,
            goldens=goldens,
            seed=args.seed,
            fail_under=args.fail_under,
            renderer=renderer,
            on_plan=lambda plan: out.print(plan_line(plan, args.max_cost), highlight=False),
        )
    )
    report.ground_truth = str(args.ground_truth) if args.ground_truth else None
    code, reason = _outcome(report, args, latch)
    report.exit_code, report.exit_reason = code, reason
    if args.json:
        print(report.model_dump_json(indent=2))
    else:
        _print(report, out)
    from .eval import report_outcome

    report_outcome(code, reason)
    return code


def _goldens(args: argparse.Namespace, rubric) -> bool | Path:
    """What goldens run: none (--no-goldens), a given file, or the rubric's own; bad input
    when nothing at all would be checked."""
    from ground_truth.errors import InputError

    from ..selftest.goldens import goldens_path

    if args.no_goldens and args.goldens is not None:
        raise InputError("--goldens", "cannot be combined with --no-goldens")
    if args.goldens is not None:
        if not args.goldens.is_file():
            raise InputError(args.goldens, "no such goldens file", field="--goldens")
        return args.goldens
    if args.ground_truth is None and (args.no_goldens or goldens_path(rubric) is None):
        why = "--no-goldens" if args.no_goldens else f"rubric {args.rubric} has no goldens"
        raise InputError(
            "--ground-truth", f"nothing to check: give specs to derive probes from ({why})"
        )
    return not args.no_goldens


def _specs(args: argparse.Namespace) -> list:
    from ground_truth.errors import InputError

    if args.ground_truth is None:
        return []
    specs, _, found = load_inputs(args.ground_truth, None, args.format)
    print_warnings(found)
    if not specs:
        raise InputError(args.ground_truth, "no spec found here: nothing to derive probes from")
    return specs


def _outcome(report, args: argparse.Namespace, latch) -> tuple[int, str | None]:
    """`judge eval`'s outcome for the run behind the report (130 interrupted; 3 stopped, the
    judge failed, too much unscored), else 1 when a probe kind is below --fail-under."""
    from .eval import run_outcome

    code, reason = run_outcome(
        report.run_result, SimpleNamespace(max_unscored=args.max_unscored, fail_under=None), latch
    )
    if code != EXIT_OK:
        return code, reason
    if report.below:
        shares = ", ".join(
            f"{k.kind} {'n/a' if k.share is None else f'{k.share:.2f}'}"
            for k in report.kinds
            if k.below
        )
        return EXIT_FAIL_UNDER, f"probe kinds below --fail-under {args.fail_under:g}: {shares}"
    return EXIT_OK, None


def _print(report, out) -> None:
    from ..selftest.render import failures_table, kinds_table, notes, questions_table

    out.print(kinds_table(report))
    if report.questions:
        out.print(questions_table(report))
    failures = failures_table(report)
    if failures is not None:
        out.print(failures)
    for line in notes(report):
        out.print(line, highlight=False, markup=False)
