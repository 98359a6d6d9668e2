"""`judge agreement`, `judge calibrate`, `judge labels ...`: how far a judge can be trusted."""

from __future__ import annotations

import argparse
from pathlib import Path

from ground_truth.errors import InputError

from .common import (
    EXIT_FAIL_UNDER,
    EXIT_OK,
    add_max_input_argument,
    collect_warnings,
    console,
    print_warnings,
)
from .flags import FOLDER
from .writable import check_writable, inputs_of


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `agreement`, `calibrate` and `labels` subcommands."""
    _register_agreement(commands)
    _register_calibrate(commands)
    _register_labels(commands)


def _bootstrap_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--bootstrap", type=int, default=1000, help="bootstrap samples for the CIs (default 1000)"
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("-O", "--output", "-o", type=Path, help="also write the report as JSON here")
    add_max_input_argument(p)


def _register_agreement(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "agreement",
        help="agreement among judges and people (Cohen's kappa and more)",
        description="Inter-rater agreement of any mix of judge result files (JSON) and human label "
        "files (CSV), per question, per dimension and per final verdict, with bootstrap CIs "
        "resampled by incident.",
    )
    p.add_argument("sources", nargs="+", type=Path, help="result JSON files and label CSV files")
    p.add_argument(
        "--breakdown", action="store_true", help="also print per-question and per-dimension tables"
    )
    p.add_argument(
        "--table2",
        action="store_true",
        help="print SREGym's Table 2 (markdown) for the verdict level",
    )
    p.add_argument(
        "--allow-rubric-mismatch",
        action="store_true",
        help="compare results made with different rubrics (refused by default: exit 2)",
    )
    p.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="also write a self-contained HTML page: κ per question with CIs (a chart), "
        "each level's table and every pair's confusion matrix",
    )
    p.add_argument(
        "--rank",
        action="store_true",
        help="whether the agents' order survives a change of judge: Kendall tau-b and Spearman "
        "rho of the per-agent pass rates and mean composites between the judges of the result "
        "files (a panel's members too), each judge against the others' mean",
    )
    p.add_argument(
        "--no-members", action="store_true", help="with --rank: leave a panel's members out"
    )
    _bootstrap_arguments(p)
    p.set_defaults(handler=cmd_agreement)


def _register_calibrate(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "calibrate",
        help="how well judges match people: threshold sweep, confidence calibration, guarantees",
        description="Compare each judge result file with human labels, and sweep the pass "
        "threshold: the kappa of the judge's pass/fail verdict against people at each threshold. "
        "Then fit each judge's map from raw confidence to the probability of agreeing with the "
        "labels (isotonic, per judge and question) and show its reliability diagram and ECE. "
        "With --target-agreement, choose per judge (results in cascade order, cheapest first) "
        "the confidence threshold that guarantees that agreement at level --alpha and write "
        "the calibration file a cascade judge reads (judge eval --judge-model cascade:...). "
        "With --check RESULT, test a cascade run's promise on labels of some of its cases "
        "instead (exit 0 when it holds, 1 when it fails or is not established).",
    )
    p.add_argument("results", nargs="*", type=Path, help="judge result JSON files")
    p.add_argument(
        "--human", action="append", required=True, type=Path, help="human label CSV (repeatable)"
    )
    p.add_argument("--thresholds", help="comma-separated thresholds (default 0.05 steps)")
    _bootstrap_arguments(p)
    g = p.add_argument_group("selective judging with a guarantee")
    g.add_argument(
        "--target-agreement",
        type=float,
        metavar="T",
        help="agreement with the labels to guarantee on what is answered (e.g. 0.9)",
    )
    g.add_argument(
        "--alpha",
        type=float,
        default=0.1,
        help="the guarantee holds with probability at least 1 - alpha (default 0.1)",
    )
    g.add_argument(
        "--guarantee",
        choices=("question", "verdict"),
        default="question",
        help="what agrees with the labels: each answer kept (default) or each case's verdict",
    )
    g.add_argument(
        "--calibration",
        type=Path,
        metavar="FILE",
        help="where to write the calibration file (default: the first result with suffix "
        ".calibration.json)",
    )
    g.add_argument(
        "--fit-share",
        type=float,
        default=0.5,
        metavar="SHARE",
        help="share of labelled incidents the confidence maps are fitted on; thresholds are "
        "chosen on the rest, which the guarantee needs (default 0.5; 0: thresholds on raw "
        "confidence)",
    )
    g.add_argument("--html", type=Path, metavar="FILE", help="also write an HTML report")
    c = p.add_argument_group("checking a promise on a new run")
    c.add_argument(
        "--check",
        type=Path,
        metavar="RESULT",
        help="a cascade run's result: test its promised agreement on the labelled cases of "
        "--human (one annotator's; a random sample, or drawn by `judge labels serve --order "
        "informative`) against the --calibration FILE it ran with",
    )
    c.add_argument("--annotator", help="with --check: whose labels, when the CSV holds several")
    c.add_argument(
        "--recalibrate",
        type=Path,
        metavar="FILE",
        help="with --check: also write a calibration with the thresholds chosen again on "
        "these labels (the maps kept) and this run as its profile",
    )
    p.set_defaults(handler=cmd_calibrate)


def _register_labels(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser("labels", help="label sheets for people")
    sub = p.add_subparsers(dest="labels_command", metavar="ACTION", required=True)
    t = sub.add_parser(
        "template",
        help="write a label sheet (CSV) for a result file",
        description="One row per (case, question) and one `verdict` row per case, with an empty "
        "answer column; the judge's answers are not shown, so people label blind.",
    )
    t.add_argument("result", type=Path)
    t.add_argument(
        "-O", "--output", "-o", type=Path, required=True, help="the label sheet to write"
    )
    t.add_argument("--ground-truth", type=Path, help="spec files, to fill the ground-truth column")
    t.add_argument("--outputs", type=Path, help="submissions, to fill the diagnosis column")
    t.add_argument(
        "--rubric", default=None, help="rubric for the question texts (default: the result's)"
    )
    t.add_argument("--annotator", default="", help="prefill the annotator column")
    add_max_input_argument(t)
    t.set_defaults(handler=cmd_labels_template)
    s = sub.add_parser(
        "import-sregym-bench",
        help="convert SREGym's judge benchmark into specs, submissions and labels",
        description="Convert SREGym's judge_bench data.yaml (description / answer / oracle) into "
        "specs.json, submissions.jsonl and a verdict-level labels.csv. FalseNegative maps to No.",
    )
    s.add_argument("bench", type=Path)
    s.add_argument(
        "-O", "--output", "-o", type=FOLDER, required=True, help="directory to write into"
    )
    add_max_input_argument(s)
    s.set_defaults(handler=cmd_labels_import_bench)
    from ..labelling.cli import register as register_labelling

    register_labelling(sub)


def _write_json(path: Path | None, text: str) -> None:
    if path is not None:
        from ..checklist.results import write_json_atomic

        write_json_atomic(path, text)


def cmd_agreement(args: argparse.Namespace) -> int:
    """`judge agreement`: print agreement among result and label files; optionally write JSON."""
    from agreement import agreement_report, render_report, table2_markdown

    check_writable([("--output", args.output), ("--html", args.html)], inputs_of(args, "sources"))
    if args.rank:
        if args.html is not None:
            raise InputError("--html", "is the agreement page; --rank prints its tables only")
        return _rank(args)
    report = agreement_report(
        args.sources,
        B=args.bootstrap,
        seed=args.seed,
        allow_rubric_mismatch=args.allow_rubric_mismatch,
    )
    out = console()
    out.print(render_report(report, breakdown=args.breakdown))
    if args.table2:
        print(table2_markdown(report))
    _write_json(args.output, report.model_dump_json(indent=2))
    if args.html is not None:
        from ..report.agreement_page import write_agreement_html

        write_agreement_html(args.html, report)
    return EXIT_OK


def _rank(args: argparse.Namespace) -> int:
    """`judge agreement --rank`: the agents' order under each judge, and how alike it is."""
    from agreement.leaderboard import rank_stability, rank_tables

    report = rank_stability(
        args.sources, B=args.bootstrap, seed=args.seed, members=not args.no_members
    )
    out = console()
    for table in rank_tables(report):
        out.print(table)
    for note in report.notes:
        out.print(f"note: {note}", highlight=False, markup=False)
    _write_json(args.output, report.model_dump_json(indent=2))
    return EXIT_OK


def cmd_calibrate(args: argparse.Namespace) -> int:
    """`judge calibrate`: judges' agreement with people and their threshold sweep; or, with
    --check, a cascade run's promise tested on labels."""
    from agreement import calibrate, render_calibration

    if args.check is not None:
        return _check_promise(args)
    for flag in ("annotator", "recalibrate"):
        if getattr(args, flag) is not None:
            raise InputError(f"--{flag}", "is read with --check RESULT")
    if not args.results:
        raise InputError("judge calibrate", "expected at least one judge result file (or --check)")
    target = None
    if args.target_agreement is not None:
        target = args.calibration or args.results[0].with_suffix(".calibration.json")
    check_writable(
        [("--output", args.output), ("--calibration", target), ("--html", args.html)],
        inputs_of(args, "results", "human"),
    )
    report = calibrate(args.results, args.human, args.thresholds, B=args.bootstrap, seed=args.seed)
    out = console()
    out.print(render_calibration(report))
    _write_json(args.output, report.model_dump_json(indent=2))
    _confidence_calibration(args, target, out)
    return EXIT_OK


def _confidence_calibration(args: argparse.Namespace, target: Path | None, out) -> None:
    """Each judge's confidence maps and reliability; with a target, its thresholds and file."""
    from agreement import read_ratings
    from agreement.calibrate import majority

    from ..judges.selective.file import write_calibration
    from ..judges.selective.fit import (
        NothingLabelled,
        choose_thresholds,
        fit_stages,
        load_stages,
        reference_labels,
        rubric_of,
    )
    from ..report.calibration_tables import reliability_table, thresholds_table

    stages, results = load_stages(args.results)
    rubric_hash, shape = rubric_of(results, [str(p) for p in args.results])
    people = read_ratings(args.human)
    names = [r.name for r in people.raters if r.kind == "human"]
    reference = names[0]
    if len(names) > 1:
        reference = people.add(majority(people, names))
    labels = reference_labels(
        people.labels(reference, "question"), people.labels(reference, "verdict"), shape
    )
    files = [str(p) for p in args.human]
    try:
        calibrated = fit_stages(
            stages,
            labels,
            shape,
            guarantee=args.guarantee,
            fit_share=args.fit_share,
            seed=args.seed,
            label_files=files,
        )
    except NothingLabelled as exc:
        if target is not None:
            raise
        out.print(f"No confidence calibration: {exc.message}")
        return
    out.print(reliability_table(calibrated))
    calibration = None
    if target is not None:
        calibration = choose_thresholds(
            calibrated,
            labels,
            rubric_hash,
            shape,
            target=args.target_agreement,
            alpha=args.alpha,
            label_files=files,
            reference=reference,
        )
        out.print(thresholds_table(calibration))
        write_calibration(calibration, target)
        out.print(f"Wrote {target}")
    if args.html is not None:
        from ..report.calibration import write_calibration_html

        write_calibration_html(args.html, calibrated, calibration)
        out.print(f"Wrote {args.html}")


def _check_promise(args: argparse.Namespace) -> int:
    """`judge calibrate --check RESULT --human LABELS --calibration FILE`."""
    from ..checklist.results import load_result
    from ..judges.selective.file import load_calibration, write_calibration
    from ..labelling.guarantee import check_guarantee, recalibrate
    from ..labelling.labelset import read_label_set
    from ..report.calibration_tables import check_table

    if args.results:
        raise InputError(str(args.results[0]), "with --check, give the run as --check RESULT only")
    if args.calibration is None:
        raise InputError("--calibration", "--check needs the calibration file the run used")
    if len(args.human) != 1:
        raise InputError("--human", "--check reads one label file (one annotator's labels)")
    if args.target_agreement is not None:
        raise InputError("--target-agreement", "--check tests the calibration's own target")
    check_writable(
        [("-o", args.output), ("--recalibrate", args.recalibrate)],
        inputs_of(args, "check", "human", "calibration"),
    )
    result = load_result(args.check)
    labels = read_label_set(args.human[0], args.annotator)
    calibration = load_calibration(args.calibration)
    check = check_guarantee(result, labels, calibration)
    check = check.model_copy(update={"result": str(args.check)})
    out = console()
    out.print(check_table(check))
    _write_json(args.output, check.model_dump_json(indent=2))
    if args.recalibrate is not None:
        from ..report.calibration_tables import thresholds_table

        again = recalibrate(result, labels, calibration)
        out.print(thresholds_table(again))
        write_calibration(again, args.recalibrate)
        out.print(f"Wrote {args.recalibrate}")
    return EXIT_OK if check.verdict == "holds" else EXIT_FAIL_UNDER  # as a gate: 1 = not held


def cmd_labels_template(args: argparse.Namespace) -> int:
    """`judge labels template`: write a label CSV for people to fill in from a result file."""
    from agreement import write_label_template
    from ground_truth import load_specs, load_submissions

    from ..checklist.results import load_result
    from ..checklist.rubric import load_rubric

    result = load_result(args.result)
    rubric = load_rubric(args.rubric or result.config["rubric"]["name"])
    questions = {q.id: q.text for d in rubric.dimensions for q in d.questions}
    specs = (
        {s.id: s.ground_truth for s in load_specs(args.ground_truth)} if args.ground_truth else None
    )
    diagnoses = (
        {s.key: s.diagnosis for s in load_submissions(args.outputs)} if args.outputs else None
    )
    check_writable(
        [("--output", args.output)], inputs_of(args, "result", "ground_truth", "outputs", "rubric")
    )
    rows = write_label_template(
        result.model_dump(mode="json"),
        args.output,
        specs,
        question_texts=questions,
        diagnoses=diagnoses,
        annotator=args.annotator,
    )
    print(f"wrote {rows} rows to {args.output}")
    return EXIT_OK


def cmd_labels_import_bench(args: argparse.Namespace) -> int:
    """`judge labels import-bench`: convert SREGym's judge benchmark into this project's files."""
    from agreement.sregym_bench import export_native, load_bench

    items, found = collect_warnings(load_bench, args.bench)
    print_warnings(found)
    written = export_native(items, args.output)
    for kind, path in written.items():
        print(f"{kind}: {path}")
    return EXIT_OK
