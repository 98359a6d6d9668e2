"""`judge merge`: the shards of a `judge eval --shard I/N` run put back together."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import EXIT_OK, console
from .writable import check_writable, inputs_of


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `merge` subcommand."""
    p = commands.add_parser(
        "merge",
        help="merge the results (and stores) of `judge eval --shard I/N` runs",
        description="Merge every shard's result file into the result a single run would have "
        "written (scores computed again from the judgments), and/or several judgment stores "
        "into one. Result files (JSON) and stores (SQLite) may be given together.",
    )
    p.add_argument("files", nargs="+", type=Path, help="shard result files and/or stores")
    p.add_argument("-O", "--output", "-o", type=Path, help="the merged result file")
    p.add_argument("--store", type=Path, help="the merged store (SQLite) to write")
    p.add_argument(
        "--rubric", help="the shards' rubric, when it is not a shipped one (name or YAML path)"
    )
    p.set_defaults(handler=cmd_merge)


def cmd_merge(args: argparse.Namespace) -> int:
    """`judge merge`: merge shard results (needs -o) and/or stores (needs --store)."""
    from ground_truth.errors import InputError

    from ..store import is_sqlite_file

    stores = [f for f in args.files if is_sqlite_file(f)]
    results = [f for f in args.files if f not in stores]
    if results and args.output is None:
        raise InputError("--output", "result files to merge need -O FILE for the merged result")
    if stores and args.store is None:
        raise InputError("--store", "stores to merge need --store FILE for the merged store")
    if args.output is None and args.store is None:
        raise InputError("judge merge", "nothing to write: give -O and/or --store")
    check_writable([("--output", args.output), ("--store", args.store)], inputs_of(args, "files"))
    out = console()
    result = _merge_results(results, args) if results else None
    if stores:
        _merge_stores(stores, args.store, out)
    if result is not None:
        from ..checklist.results import write_result
        from ..report.display import print_result

        write_result(result, args.output)
        print_result(result, out)
        out.print(f"Wrote {args.output} ({len(results)} shards)")
    return EXIT_OK


def _merge_results(paths: list[Path], args: argparse.Namespace):
    from ..checklist.rubric import load_rubric
    from ..run.merge import merge_results

    return merge_results(paths, load_rubric(args.rubric) if args.rubric else None)


def _merge_stores(paths: list[Path], target: Path, out) -> None:
    from ..store import merge_stores

    done = merge_stores(target, paths)
    out.print(
        f"Wrote {target}: {done.added} answers added from {len(paths)} stores, "
        f"{done.duplicates} already there ({done.conflicts} with different answers: the first "
        f"store's kept), {done.errors} failed calls kept for the record, {done.batches} "
        "provider batches"
    )
