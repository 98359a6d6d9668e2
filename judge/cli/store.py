"""`judge store stats|export|explain|logs|recover`: look inside a judgment store without the
sqlite3 shell, and rebuild one that was damaged."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .common import EXIT_OK, console


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `store` subcommand and its `stats`, `export`, `explain` and `logs` actions."""
    p = commands.add_parser("store", help="inspect a judgment store (the SQLite cache)")
    sub = p.add_subparsers(dest="store_command", metavar="ACTION", required=True)
    s = sub.add_parser("stats", help="answers by judge, errors by kind, tokens and cost")
    s.add_argument("store", type=Path)
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(handler=cmd_store_stats)
    e = sub.add_parser("export", help="every stored answer (or error) as JSON lines")
    e.add_argument("store", type=Path)
    e.add_argument("--errors", action="store_true", help="export the failed calls instead")
    e.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    e.set_defaults(handler=cmd_store_export)
    x = sub.add_parser(
        "explain", help="the stored answers for a case, with the key parts they were stored under"
    )
    x.add_argument("store", type=Path)
    x.add_argument("--incident", required=True)
    x.add_argument("--trial")
    x.add_argument("--dimension")
    x.set_defaults(handler=cmd_store_explain)
    g = sub.add_parser(
        "logs",
        help="every provider request: the prompt sent and the raw reply as it arrived",
        description="Each provider request the store logged, oldest first: which call, the "
        "prompt as sent, the reply text exactly as it arrived (before any repair), latency, "
        "tokens and cost, or the error of a request that failed.",
    )
    g.add_argument("store", type=Path)
    g.add_argument("--incident", metavar="ID", help="only the requests of this incident")
    g.add_argument(
        "--question", metavar="QID", help="only the requests of calls that asked this question"
    )
    g.add_argument(
        "--failed",
        action="store_true",
        help="only failed requests: no reply (an error) or a reply that could not be read",
    )
    g.add_argument("--json", action="store_true", help="one JSON object per request per line")
    g.set_defaults(handler=cmd_store_logs)
    r = sub.add_parser(
        "recover",
        help="rebuild a readable store from a damaged one (an overwritten header, a truncated file)",
        description="Read what is left of a damaged store page by page (its -wal file's "
        "committed pages too) and write every row still readable into a new store; the "
        "damaged file is only read. Rename the new store to the old name to use it.",
    )
    r.add_argument("store", type=Path)
    r.add_argument(
        "-o", "--output", type=Path, help="the new store (default: NAME.recovered.sqlite beside it)"
    )
    r.set_defaults(handler=cmd_store_recover)


def _open(path: Path):
    """The store at `path`, read-only; a missing file is exit 2 naming it (the store's own
    check names `--replay-store`, the flag it is read through during a run)."""
    from ground_truth.errors import InputError

    from ..store import Store

    if not path.is_file():
        raise InputError(path, "no such store file (the STORE argument)")
    return Store(path, readonly=True)


def cmd_store_recover(args: argparse.Namespace) -> int:
    """`judge store recover`: a readable store rebuilt from a damaged one (`judge.store.recover`);
    nothing written when the store is readable as it is."""
    from ground_truth.errors import InputError

    from ..errors import StorageError
    from ..store import Store
    from ..store.recover import Unrecoverable, describe, looks_like_a_store, recover
    from .writable import check_writable, inputs_of

    if not args.store.is_file():
        raise InputError(args.store, "no such store file (the STORE argument)")
    try:
        Store(args.store, readonly=True).close()
    except (StorageError, InputError):
        pass
    else:
        print(f"{args.store} is readable: nothing to recover")
        return EXIT_OK
    target = args.output or args.store.with_name(f"{args.store.stem}.recovered{args.store.suffix}")
    if target.exists():
        raise InputError(target, "exists; refusing to write over it (name another with -o)")
    check_writable([("-o", target)], inputs_of(args, "store"))
    if not looks_like_a_store(args.store):
        raise InputError(args.store, "not a judgment store: no store schema in it to recover")
    try:
        found = recover(args.store, target)
        Store(target).close()  # migrated to this version and its pages checked
    except Unrecoverable as exc:
        target.unlink(missing_ok=True)
        raise StorageError(args.store, f"nothing could be recovered: {exc}") from None
    counts = describe(found)
    lost = f"; {counts['lost_pages']} pages could not be read" if counts["lost_pages"] else ""
    print(
        f"recovered {counts['answers']} answers, {counts['failed_calls']} failed calls and "
        f"{counts['logged_requests']} logged requests from {args.store} into {target}{lost}. "
        f"The damaged file was left as it was: rename {target} to {args.store} to use it."
    )
    return EXIT_OK


def cmd_store_stats(args: argparse.Namespace) -> int:
    """`judge store stats`: answers by judge, failed calls by kind, tokens and cost."""
    from ..run.progress import cost_text

    with _open(args.store) as store:
        stats = store.stats()
    if args.json:
        print(json.dumps(stats, indent=2))
        return EXIT_OK
    out = console()
    out.print(f"{stats['path']}: {stats['judgments']} answers for {stats['cases']} cases")
    for row in stats["by_judge"]:
        out.print(f"  {row['judge']} ({row['model']}): {row['judgments']}")
    errors = ", ".join(f"{k} {n}" for k, n in stats["errors"].items()) or "none"
    out.print(f"failed calls kept for the record: {errors}")
    tokens = stats["prompt_tokens"] + stats["completion_tokens"]
    out.print(f"tokens {tokens:,}, cost {cost_text(stats['cost_usd'])}")
    log = stats["replies"]
    out.print(
        f"requests logged {log['requests']:,} ({log['with_text']:,} with their prompt and "
        f"reply text, {log['texts']:,} distinct prompt pieces): `judge store logs` shows them"
    )
    for batch in stats["batches"]:
        state = "open: `judge eval --batch` resumes it" if batch["open"] else "closed"
        out.print(
            f"batch {batch['id']} ({batch['model']} at {batch['api_base'] or batch['provider']}):"
            f" {batch['status']}, {batch['calls']} calls, {batch['completed']} completed, "
            f"{batch['failed']} failed, {batch['lost']} lost; {state}"
            + (f" ({batch['note']})" if batch["note"] else "")
        )
    return EXIT_OK


def cmd_store_export(args: argparse.Namespace) -> int:
    """`judge store export`: every stored answer (or failed call) as JSON lines."""
    from ..checklist.results import write_json_atomic

    with _open(args.store) as store:
        lines = [json.dumps(row) for row in store.rows("errors" if args.errors else "judgments")]
    text = "".join(line + "\n" for line in lines)
    if args.output:
        write_json_atomic(args.output, text)
        print(f"wrote {len(lines)} rows to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_store_explain(args: argparse.Namespace) -> int:
    """Which judge, model, params, prompt, schema, rubric and granularity each stored answer
    belongs to: compare them with a new run's `cache_miss` to see why it asked again. With
    `--dimension`, whole-submission answers (dimension `*`) hold that dimension's too."""
    from ..checklist.rubric import WHOLE

    with _open(args.store) as store:
        rows = [
            row
            for row in store.rows("judgments")
            if row["incident_id"] == args.incident
            and (args.trial is None or row["trial"] == args.trial)
            and (args.dimension is None or row["dimension_id"] in (args.dimension, WHOLE))
        ]
        for row in rows:
            row["params"] = store.params(row["params_hash"])
    out = console()
    if not rows:
        out.print(f"no stored answers for incident {args.incident}")
        return EXIT_OK
    for row in rows:
        answers = " ".join(f"{a['question_id']}={a.get('answer')}" for a in row["answers"])
        out.print(
            f"[bold]{row['incident_id']} trial {row['trial']} {row['dimension_id']}[/bold] "
            f"(granularity {'submission' if row['dimension_id'] == WHOLE else 'dimension'}) "
            f"by {row['judge']} at {row['created_at']}: {answers}\n"
            f"  key {row['key'][:16]}  model {row['model']}  params {row['params_hash']} "
            f"{json.dumps(row['params'], sort_keys=True)}\n"
            f"  prompt {row['prompt_hash'][:16]}  schema {row['schema_hash']}  "
            f"rubric {row['rubric_hash']}"
        )
    return EXIT_OK


def cmd_store_logs(args: argparse.Namespace) -> int:
    """`judge store logs`: the logged requests as text (control characters in the prompt or
    reply made visible) or as JSON lines."""
    from ..store import LogFilter

    where = LogFilter(incident_id=args.incident, question_id=args.question, failed=args.failed)
    shown = 0
    with _open(args.store) as store:
        for logged in store.logs(where):
            text = json.dumps(logged.model_dump()) if args.json else _log_text(logged)
            sys.stdout.write(text + "\n")
            shown += 1
        logged_any = store.reply_stats()["requests"]
    if not shown:
        what = "logged requests" if not logged_any else "logged requests that match"
        print(f"no {what} in {args.store}", file=sys.stderr)
    return EXIT_OK


def _log_text(logged) -> str:
    """One logged request for a terminal."""
    from ..report.safe_text import visible
    from ..run.progress import cost_text

    def safe(text: str) -> str:
        """Control characters visible, and a lone surrogate (a reply may hold one) as its
        escape, which no terminal encoding refuses."""
        shown = visible(text, keep="\n\t")
        return shown.encode("utf-8", "backslashreplace").decode("utf-8")

    head = (
        f"#{logged.id} {logged.created_at} {logged.judge} "
        f"{logged.incident_id} trial {logged.trial} {logged.dimension_id} "
        f"({' '.join(logged.questions)}) request {logged.request}"
    )
    facts = [f"key {logged.key[:16]}"]
    if logged.latency_s is not None:
        facts.append(f"latency {logged.latency_s:.3f} s")
    if logged.prompt_tokens is not None or logged.completion_tokens is not None:
        cached = f" ({logged.cached_tokens} cached)" if logged.cached_tokens else ""
        facts.append(
            f"tokens {logged.prompt_tokens}{cached} prompt + {logged.completion_tokens} completion"
        )
    if logged.error_kind is None or logged.reply is not None:
        facts.append(f"cost {cost_text(logged.cost_usd)}")
    if logged.finish_reason:
        facts.append(f"finish {logged.finish_reason}")
    lines = [f"=== {safe(head)}", safe(" | ".join(facts))]
    if logged.error_kind:
        lines.append(safe(f"error: {logged.error_kind}: {logged.error}"))
    if logged.messages is None:
        lines.append("(prompt and reply not logged: --no-log-text)")
        return "\n".join(lines)
    for message in logged.messages:
        lines += [f"--- {safe(message['role'])}", safe(message["content"])]
    if logged.reply is not None:
        lines += ["--- reply (as it arrived)", safe(logged.reply)]
    elif not logged.error_kind:
        lines.append("--- reply: no text")
    return "\n".join(lines)
