"""`judge eval`: score every submission against its spec."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from .common import (
    EXIT_FAIL_UNDER,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PROVIDER,
    LazyConsole,
    SubmissionStream,
    add_input_arguments,
    console,
    load_inputs,
    print_warnings,
)
from .itbench import add_itbench_arguments, itbench_targets, resolve_result_files, write_itbench
from .judges import judge_from_args
from .report import EXPORTS, add_export_arguments, write_exports
from .rubric import check_answerable
from .writable import check_writable, inputs_of


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `eval` subcommand."""
    p = commands.add_parser(
        "eval",
        help="score diagnoses against ground truth",
        description="Score every submission under --outputs against its spec under --ground-truth. "
        "With no model configured the offline, deterministic rules judge is used.",
    )
    add_input_arguments(p)
    p.add_argument("--rubric", default="sregym-v3", help="shipped rubric name or a YAML path")
    add_judge_arguments(p)
    p.add_argument(
        "-r",
        "--result-file",
        type=Path,
        metavar="FILE",
        help="the result JSON to write (default: results.json); evaluation_results.json with "
        "--result-format itbench; the store and --dry-run's prompts go beside it unless given",
    )
    p.add_argument("--dimensions", help="comma-separated dimension ids to score (weights rescaled)")
    p.add_argument(
        "--k", type=int, help="k of pass@k and pass^k (default: fewest trials of an incident)"
    )
    p.add_argument(
        "--dry-run", action="store_true", help="write the rendered prompts; call no judge"
    )
    p.add_argument("--prompts-file", type=Path, help="where --dry-run writes prompts (JSONL)")
    p.add_argument("--fail-under", type=float, help="exit 1 when the pass rate is below this")
    p.add_argument("--json", action="store_true", help="print the overall summary as JSON")
    p.add_argument(
        "--granularity",
        choices=("dimension", "submission"),
        default="submission",
        help="one judge call per submission (default: every question in one call, as SREGym's "
        "and ITBench's judges ask; a third of the calls and half the prompt tokens) or per "
        "submission and dimension (each dimension gets the model's whole attention; the "
        "answers stored by earlier versions' default)",
    )
    p.add_argument(
        "--shard",
        metavar="I/N",
        help="judge only shard I of N (a stable hash of incident, trial, dimension); "
        "put the shards' results together with `judge merge`",
    )
    add_export_arguments(p)
    add_itbench_arguments(p, "eval")
    add_run_control_arguments(p)
    p.set_defaults(handler=cmd_eval)


def add_judge_arguments(p: argparse.ArgumentParser) -> None:
    """Which judge answers and how it reaches its model: `judge eval`'s flags, the same in
    every command that asks a judge (`judge selftest`; `judges.judge_from_args` reads them)."""
    p.add_argument(
        "--judge-model",
        action="append",
        help="litellm model string (env JUDGE_MODEL, or SREGym's JUDGE_MODEL_ID); repeat for a "
        "majority-vote panel; 'rules' or unset: the offline rules judge; 'replay:STORE'; a "
        "judge of your own: NAME[:ARGS] (registered, or an entry point in group "
        "diagnosis_judge.judges) or package.module:Class (importable, e.g. on PYTHONPATH); "
        "'cascade:A,B,C' asks A first and escalates to B, then C, what the --calibration "
        "file says A is not sure enough of",
    )
    p.add_argument(
        "--env-file",
        type=Path,
        metavar="PATH",
        help="read settings from this .env file (default: ./.env when there is one); "
        "variables already in the environment win",
    )
    p.add_argument("--no-env-file", action="store_true", help="read no .env file")
    p.add_argument(
        "--tie",
        choices=["unscored", "yes", "no"],
        default="unscored",
        help="a panel's answer on a tie (default: unscored)",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="ask each judge K times (seeds differ); a panel of the repeats, for self-consistency",
    )
    p.add_argument(
        "--samples",
        type=int,
        default=1,
        metavar="K",
        help="ask each LLM judge K times at temperature 0.7 (seeds differ; K calls each, "
        "stored one by one) and take the majority; where the provider gives no token "
        "probabilities, the share of samples that agree is each answer's confidence",
    )
    p.add_argument(
        "--calibration",
        type=Path,
        metavar="FILE",
        help="a cascade judge's calibration file (`judge calibrate --target-agreement`): its "
        "judges, rubric and thresholds must match this run's (exit 2 otherwise)",
    )
    p.add_argument(
        "--allow-shift",
        action="store_true",
        help="a cascade keeps its guarantee on a run that differs from its calibration set "
        "(the shift check's warning is still printed); by default the guarantee is then not "
        "established for the run, its answers kept",
    )
    p.add_argument(
        "--api-base",
        help="provider base URL (env JUDGE_BASE_URL, or SREGym's JUDGE_API_BASE); a model "
        "name no litellm provider claims is sent as-is to it, an OpenAI-compatible endpoint",
    )
    p.add_argument(
        "--structured-output",
        choices=("auto", "json_schema", "json_object+schema", "json_object", "prompt"),
        default="auto",
        metavar="MODE",
        help="reply format asked of an LLM judge, one of: %(choices)s; auto (default) steps "
        "down from json_schema to what the server accepts",
    )
    p.add_argument(
        "--reply-order",
        choices=("answer-first", "evidence-first"),
        default="answer-first",
        help="field order asked of an LLM judge's answers: answer-first (default) or "
        "evidence-first (the quote before the Yes/No, a short chain of thought)",
    )
    p.add_argument(
        "--confidence",
        choices=("stated", "logprobs"),
        default="stated",
        help="each LLM answer's confidence score: stated (default: the High/Medium/Low the "
        "model gives) or logprobs (the Yes/No token's probability, asked of the provider: "
        "replies ~30x larger; what `judge calibrate` fits best; a cascade always asks)",
    )
    p.add_argument(
        "--client",
        choices=("auto", "litellm", "openai"),
        default="auto",
        help="how an LLM judge reaches its model: auto (default: the lean OpenAI-compatible "
        "client, over httpx, for openai/... models and any --api-base endpoint; litellm for "
        "other providers), litellm or openai",
    )
    p.add_argument(
        "--max-concurrent", type=int, default=5, help="judge calls in flight (default 5)"
    )
    p.add_argument(
        "--timeout", type=float, default=120.0, help="seconds per model call (default 120)"
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        metavar="N",
        help="reply tokens an LLM judge's request allows (default: sized to the answers "
        "asked, none for a reasoning model; 0: no cap)",
    )
    p.add_argument(
        "--prompt-template", type=Path, help="directory of templates overriding the shipped ones"
    )


def add_run_control_arguments(p: argparse.ArgumentParser) -> None:
    """Retries, rate limits, the store, pause/stop and budgets (docs/scale.md)."""
    g = p.add_argument_group("run control (LLM judges)")
    g.add_argument("--rpm", type=float, help="requests per minute, paced client-side (waits)")
    g.add_argument("--tpm", type=float, help="tokens per minute, paced client-side (waits)")
    g.add_argument(
        "--max-retries", type=int, default=5, help="retries of a transient error (default 5)"
    )
    g.add_argument(
        "--cooldown-after",
        type=int,
        metavar="N",
        help="consecutive provider failures that start a cooldown (default: --max-concurrent, "
        "at least 3; 0: never)",
    )
    g.add_argument(
        "--cooldown",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long no call starts during a cooldown (default 60)",
    )
    g.add_argument(
        "--max-errors",
        help="stop when more calls than this failed: a count (10) or a fraction (0.2); exit 3",
    )
    g.add_argument(
        "--max-unscored",
        type=float,
        default=0.5,
        metavar="FRACTION",
        help="exit 3 when more than this share of the questions is unscored because calls "
        "failed (provider errors, unusable replies, judge errors); default 0.5",
    )
    g.add_argument(
        "--max-cost",
        type=float,
        metavar="USD",
        help="stop once this much is spent; exit 3 (with --batch: submit only the calls whose "
        "worst-case cost fits, the rest not asked)",
    )
    g.add_argument(
        "--store",
        type=Path,
        help="SQLite judgment store: cache, checkpoint, replay source "
        "(default: the result file with suffix .sqlite)",
    )
    g.add_argument("--no-store", action="store_true", help="neither read nor write a store")
    g.add_argument(
        "--no-log-text",
        dest="log_text",
        action="store_false",
        help="keep no prompt or reply text in the store's log of requests, only their "
        "latency, tokens, cost and errors (`judge store logs`)",
    )
    g.add_argument(
        "--resume",
        action="store_true",
        help="continue a stopped run from its store (which must exist); nothing is asked twice",
    )
    g.add_argument(
        "--refresh", action="store_true", help="ask again even when the store has the answer"
    )
    g.add_argument("--pause-file", type=Path, help="while this file exists no new call starts")
    g.add_argument(
        "--grace",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="on SIGINT/SIGTERM, how long calls in flight may finish (default 30)",
    )
    g.add_argument(
        "--replay-store",
        type=Path,
        help="the store `--judge-model replay` answers from (or --judge-model replay:PATH)",
    )
    g.add_argument(
        "--replay-judge",
        action="append",
        metavar="NAME",
        help="which stored judge to replay (e.g. llm:openai/gpt-4o); repeat for a panel",
    )
    g.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="read the API key from this environment variable (default JUDGE_API_KEY)",
    )
    g.add_argument("--no-progress", action="store_true", help="no progress bar or lines")
    g.add_argument(
        "--batch",
        action="store_true",
        help="send every call the store cannot answer as one provider batch job (OpenAI-"
        "compatible Batch API: about half the price, results within 24 h); a killed run "
        "resumes its batch when given --batch again",
    )
    g.add_argument(
        "--batch-poll",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="first wait between batch status checks; grows by half up to 60 s (default 5)",
    )


def cmd_eval(args: argparse.Namespace) -> int:
    """`judge eval`: score the outputs, with SIGINT/SIGTERM handled over the whole command."""
    from ..run.control import SignalLatch

    resolve_result_files(args)
    with SignalLatch() as latch:
        return _eval(args, latch)


def _eval(args: argparse.Namespace, latch) -> int:
    from ..checklist.rubric import load_rubric

    rubric = load_rubric(args.rubric)
    if args.dimensions:
        rubric = rubric.select(args.dimensions)
    judge = None if args.dry_run else judge_from_args(args)
    if judge is not None:
        check_answerable(judge, rubric, args.rubric)
    calls = judge is not None and _no_stored_answers(args)
    if calls:
        _prefetch(judge, lean_only=True)  # httpx imports while the inputs load
    specs, submissions, args.input_warnings = load_inputs(
        args.ground_truth, args.outputs, args.format, stream=judge is not None
    )
    print_warnings(args.input_warnings)
    _say_skipped(args.ground_truth, specs, args.input_warnings)
    spec, submission = _require_matches(specs, submissions, args)
    if isinstance(submissions, SubmissionStream) and _may_write_over_outputs(args):
        list(submissions)  # every input known before a call (`check_writable`), as before
    if calls:
        # litellm not sooner: detecting the format and loading the specs record warnings
        # (catch_warnings, global to all threads), and would record litellm's import
        # warnings and drop the filters litellm sets for them; httpx's import warns
        # nothing. The submissions read from here on hand their warnings over without it.
        _prefetch(judge)
    from ..checklist.prompts import PromptRenderer

    renderer = PromptRenderer(args.prompt_template, reply_order=args.reply_order)
    if args.prompt_template is not None:  # bad input for every judge, even one that reads none
        renderer.render(spec, submission, rubric.dimensions[0])
    if judge is None:
        return _dry_run(args, specs, submissions, rubric, renderer)
    return _run_eval(args, judge, specs, submissions, rubric, renderer, latch)


def _say_skipped(ground_truth: Path, specs: list, warnings: list[str]) -> None:
    """A note on stderr counting the data files under the ground-truth folder that no spec
    came from (`judge.cli.skipped`)."""
    from .skipped import skipped_files, skipped_note

    skipped = skipped_files(ground_truth, specs, said=warnings)
    note = skipped_note(ground_truth, skipped, "ground truth")
    if note:
        print(f"note: {note}", file=sys.stderr)


def _may_write_over_outputs(args) -> bool:
    """Whether a file this run writes might be one of the agent outputs it reads (exists, and
    lies in the outputs folder or has another name: a link). Only then are the submissions all
    read before the first call, so that `check_writable` knows every input; any other file
    cannot be one, and the run starts while they are still being read."""
    outputs = args.outputs.resolve()
    if not outputs.is_dir():
        return False  # a file of submissions is read whole, and recorded, at the first one
    written = [args.result_file, args.result_file.with_suffix(".sqlite"), args.store]
    written += [getattr(args, name, None) for name in EXPORTS]
    for path in (Path(p) for p in written if p is not None):
        if path.is_symlink() or (path.is_file() and path.stat().st_nlink > 1):
            return True
        if path.exists() and path.resolve().is_relative_to(outputs):
            return True
    return False


def _no_stored_answers(args) -> bool:
    """Whether no store can answer this run's calls (the run then surely calls its judge);
    `--resume` expects a store, and planning looks at what it holds."""
    if args.resume:
        return False
    if args.no_store or args.refresh:
        return True
    return not (args.store or args.result_file.with_suffix(".sqlite")).exists()


def _prefetch(judge, lean_only: bool = False) -> None:
    """Start getting the judge's leaves ready for requests; `lean_only`: only those that
    reach their model through the lean `openai` client (httpx)."""
    from ..run.cache import leaves
    from ..run.plan import Prefetching

    for leaf in leaves(judge):
        lean = getattr(getattr(leaf, "client", None), "name", None) == "openai"
        if isinstance(leaf, Prefetching) and (lean or not lean_only):
            leaf.prefetch()


def _require_matches(specs, submissions, args):
    """A run that would score nothing is bad input (exit 2), not a run that passed: checked
    before any request, reading the submissions (a `SubmissionStream`) only up to the first
    that names an incident with a spec. Returns that (spec, submission) pair."""
    from ground_truth.errors import InputError

    by_id = {spec.id: spec for spec in specs}
    if isinstance(submissions, SubmissionStream):
        first = submissions.find(lambda sub: sub.incident_id in by_id)
        submissions = submissions.read
    else:
        first = next((sub for sub in submissions or [] if sub.incident_id in by_id), None)
    if not submissions:
        raise InputError(args.outputs, "no submission found here: nothing to score")
    if first is not None:
        return by_id[first.incident_id], first
    theirs = sorted({sub.incident_id for sub in submissions})
    ours = sorted(by_id)
    raise InputError(
        args.outputs,
        f"none of the {len(submissions)} submissions names an incident under "
        f"{args.ground_truth}: they name {_some(theirs)}; the specs are {_some(ours)}",
    )


def _some(ids: list[str], most: int = 5) -> str:
    shown = ", ".join(repr(i) for i in ids[:most])
    return shown + (f" and {len(ids) - most} more" if len(ids) > most else "") if ids else "none"


def _dry_run(args, specs, submissions, rubric, renderer) -> int:
    from ..api import render_prompts
    from ..checklist.results import write_json_atomic

    target = args.prompts_file or args.result_file.with_suffix(".prompts.jsonl")
    check_writable([("--prompts-file", target)], _inputs(args))
    prompts = render_prompts(specs, submissions, rubric, renderer, args.granularity)
    lines = [
        json.dumps(
            {
                "incident_id": s.incident_id,
                "trial": s.trial,
                "dimension_id": d.id,
                "question_ids": [q.id for q in d.questions],
                "prompt_hash": p.hash,
                "messages": p.messages,
            }
        )
        for s, d, p in prompts
    ]
    write_json_atomic(target, "\n".join(lines) + "\n")
    print(f"dry run: wrote {len(lines)} prompts to {target}; no judge was called")
    return EXIT_OK


def announce(judge, args, out) -> None:
    """Say which judge answers (and where), before anything is asked."""
    if judge.name == "rules":
        out.line(
            "Judge: rules (offline and deterministic; no model configured. "
            "Set JUDGE_MODEL or --judge-model to use an LLM judge.)"
        )
        return
    members = getattr(judge, "members", None)
    what = (
        f"panel of {', '.join(m.name for m in members)} (tie: {args.tie})"
        if members
        else judge.name
    )
    out.line(f"Judge: {what}" + (f" at {args.api_base}" if args.api_base else ""))


def _panel_agreement(result, out) -> None:
    """How often the panel's members agree with each other and with the panel, per question."""
    from agreement import agreement_report, read_result, render_table

    table = read_result(result.model_dump(mode="json"), by_judge=True)
    report = agreement_report([table], levels=["question"], B=200, breakdown=False)
    out.print(render_table(report, "question"))


def _run_eval(args, judge, specs, submissions, rubric, renderer, latch) -> int:
    from ..api import EvalOptions, evaluate_async, run_sync
    from ..checklist.results import write_result
    from ..report.safe_text import markup_safe

    out = LazyConsole(stderr=args.json)
    announce(judge, args, out)
    store = store_path(args, judge, out)
    batch = batch_options(args, judge, store)
    check_writable(
        [
            ("--result-file", args.result_file),
            ("--store", store),
            *((f"--{name}", getattr(args, name, None)) for name in EXPORTS),
            *itbench_targets(args, "--result-file"),
        ],
        _inputs(args),
    )
    limits, control, storage = run_options(args, latch, store, batch)
    control.on_started = _summary_imports(args)
    options = EvalOptions(
        k=args.k,
        shard=args.shard,
        granularity=args.granularity,
        limits=limits,
        control=control,
        storage=storage,
    )
    config = {"ground_truth": str(args.ground_truth), "outputs": str(args.outputs)}
    if isinstance(submissions, SubmissionStream):  # held all run long only if read again
        submissions.keep = _reads_submissions_again(judge, args)
    latch.defer()  # from here a signal ends in a result and exports written in full
    result = run_sync(evaluate_async(specs, submissions, rubric, judge, renderer, options, config))
    result.warnings.extend(getattr(args, "input_warnings", []))
    self_graded = _self_grading(judge, submissions)
    if self_graded is not None:
        result.warnings.append(self_graded)
        out.print(f"[yellow]warning: {markup_safe(self_graded)}[/yellow]")
    code, reason = run_outcome(result, args, latch)
    result.exit_code, result.exit_reason = code, reason
    write_result(result, args.result_file)
    itbench = write_itbench(result, args, args.result_file)
    if any(getattr(args, name, None) for name in EXPORTS):  # their modules take 0.17 s to import
        write_exports(result, args, specs, list(submissions))
    if args.json:
        print(result.overall.model_dump_json(indent=2))
    else:
        from ..report.display import print_result  # not before: the first request waits for none

        print_result(result, out.rich)
        if result.cascade is not None:
            from ..report.calibration_tables import cascade_table

            out.print(cascade_table(result.cascade))
        elif getattr(judge, "members", None):
            _panel_agreement(result, out)
        if result.resolution:
            from .resolve import resolution_table

            out.print(resolution_table(result.resolution))
        out.print(f"Wrote {args.result_file}")
        if itbench is not None:
            out.print(f"Wrote {itbench} (ITBench's evaluation_results shape)")
    if latch.received is not None and code != EXIT_INTERRUPTED:  # came while writing
        code, reason = EXIT_INTERRUPTED, _late_signal(latch)
        result.exit_code, result.exit_reason = code, reason
        write_result(result, args.result_file)  # so the file says how the command ended
    report_outcome(code, reason)
    return code


def _reads_submissions_again(judge, args) -> bool:
    """Whether the submissions are read after the run: by the exports or `_self_grading`."""
    from ..run.cache import judge_models

    return any(getattr(args, name, None) for name in EXPORTS) or bool(judge_models(judge))


def _summary_imports(args) -> Callable[[], None]:
    """Starts importing, in a background thread, the modules `_run_eval` needs once the run
    is done (the self-grading check, the bootstrap's random numbers, the summary's tables):
    called when the run's first call has ended and it waits for replies, it takes ~0.1 s
    from between the last reply and the exit."""
    from importlib import import_module

    from ..judges.clients.loading import Background

    names = ["judge.audit.families", "numpy.random"]
    if not args.json:
        names.append("judge.report.display")
    return Background("summary", lambda: [import_module(name) for name in names]).start


def _self_grading(judge, submissions) -> str | None:
    """The warning for submissions whose agent's model is of the judge's family, if any."""
    from ..audit.families import self_grading
    from ..run.cache import judge_models

    models = judge_models(judge)
    return self_grading(list(submissions), models).warning if models else None


def run_options(args, latch, store: Path | None, batch):
    """The run's `Limits`, `Control` and `Storage` from the run-control flags
    (`add_run_control_arguments`), signals handled through `latch`."""
    from ..run.options import Control, Limits, Storage

    limits = Limits(
        max_concurrent=args.max_concurrent,
        rpm=args.rpm,
        tpm=args.tpm,
        cooldown_after=args.cooldown_after,
        cooldown=args.cooldown,
        max_errors=args.max_errors,
        max_cost=args.max_cost,
    )
    control = Control(
        pause_file=args.pause_file,
        handle_signals=True,
        signal_latch=latch,
        grace=args.grace,
        progress=not args.no_progress,
    )
    storage = Storage(store=store, refresh=args.refresh, batch=batch, log_text=args.log_text)
    return limits, control, storage


def _late_signal(latch) -> str:
    return (
        f"interrupted by {latch.received.name} after the last call; "
        "the result and exports were still written in full"
    )


def _inputs(args):
    return inputs_of(args, "ground_truth", "outputs", "rubric", "prompt_template", "replay_store")


def store_path(args, judge, out, default: Path | None = None) -> Path | None:
    """The store for judges worth caching (LLM judges); None for rules and replay runs.
    Unless `--store` names one: `default`, else the result file's with suffix .sqlite."""
    from ground_truth.errors import InputError

    from ..run.cache import is_cacheable, leaves

    if args.no_store and (args.resume or args.refresh or args.store):
        raise InputError("--no-store", "cannot be combined with --store, --resume or --refresh")
    if args.resume and args.refresh:
        raise InputError("--resume", "--resume keeps stored answers, --refresh drops them")
    if args.no_store or not any(is_cacheable(leaf) for leaf in leaves(judge)):
        return None
    path = args.store or default or args.result_file.with_suffix(".sqlite")
    if args.resume:
        if not path.is_file():
            raise InputError(path, "nothing to resume: no store here", field="--resume")
        out.line(f"Resuming from {path}")
    return path


def batch_options(args, judge, store: Path | None):
    """`--batch`'s settings; exit 2 when the judge or the store cannot run a batch."""
    from ground_truth.errors import InputError

    if not args.batch:
        return None
    from ..run.batch import BatchOptions, batch_provider

    try:
        batch_provider(judge)
    except ValueError as exc:
        raise InputError("--batch", str(exc)) from None
    if store is None:
        raise InputError("--batch", "needs a store to record its batch (drop --no-store)")
    return BatchOptions(poll=args.batch_poll, max_poll=max(60.0, args.batch_poll))


def run_outcome(result, args, latch=None) -> tuple[int, str | None]:
    """The exit code and, for any code but 0, why. Checked in this order: a stopped run
    (130 or 3), a signal after the last call (130), a failed provider (3: every call failed,
    or credentials refused), too many questions lost to failed calls (3, `--max-unscored`),
    `--fail-under` (1)."""
    stopped = result.stopped
    if stopped is not None:
        return (
            EXIT_INTERRUPTED if stopped.kind == "interrupted" else EXIT_PROVIDER,
            f"the run stopped before it was done: {stopped.message}; "
            f"{len(result.incomplete)} case(s) incomplete; rerun the same command "
            "(or add --resume) to continue where it stopped",
        )
    if latch is not None and latch.received is not None:
        return EXIT_INTERRUPTED, _late_signal(latch)
    calls = result.calls
    failed = [c for c in calls if c.error_kind]  # one pass: a large run's are read from a file
    if calls and (len(failed) == len(calls) or any(c.error_kind == "auth" for c in failed)):
        return (
            EXIT_PROVIDER,
            f"the judge failed on {len(failed)} of {len(calls)} calls; "
            f"first error: {failed[0].error}",
        )
    o = result.overall
    asked = o.n_scored_questions + o.n_unscored_questions
    if asked and o.n_failed_questions / asked > args.max_unscored:
        kinds = ", ".join(f"{k}: {v}" for k, v in sorted(result.errors.items()))
        return (
            EXIT_PROVIDER,
            f"{o.n_failed_questions} of {asked} questions are unscored because their calls "
            f"failed ({kinds}), more than --max-unscored {args.max_unscored:g}",
        )
    rate = o.pass_rate.value
    if args.fail_under is not None and (rate is None or rate < args.fail_under):
        shown = f"{rate:.3f}" if rate is not None else "n/a"
        return EXIT_FAIL_UNDER, f"pass rate {shown} is below --fail-under {args.fail_under:g}"
    return EXIT_OK, None


def report_outcome(code: int, reason: str | None) -> None:
    """Why the command exits with `code`, on stderr: stdout is the summary a pipe reads."""
    if reason is None:
        return
    from ..report.safe_text import markup_safe

    style = "red" if code != EXIT_FAIL_UNDER else "yellow"
    console(stderr=True).print(f"[{style}]exit {code}: {markup_safe(reason)}[/{style}]")
