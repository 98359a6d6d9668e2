"""ITBench's flags: `judge eval --result-format itbench` and `judge report --itbench FILE` write
the result in ITBench-Evaluations' `evaluation_results.json` shape (`judge.report.itbench_result`),
and ITBench's own flags (`-e/--eval-criteria`, `-d/--domain`, `-v/--verbose`) are accepted, so an
ITBench user switches by adding one flag."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

DEFAULT_RESULT = Path("results.json")
ITBENCH_RESULT = Path("evaluation_results.json")
DOMAINS = ("sre", "finops", "ciso")


def criterion(text: str) -> str:
    """An ITBench criterion this tool computes; one it does not is refused by name."""
    from ..report.itbench_result import COMPUTED, NOT_COMPUTED

    name = text.strip().upper()
    if name in COMPUTED:
        return name
    if name in NOT_COMPUTED:
        raise argparse.ArgumentTypeError(
            f"{text!r} is judged by ITBench's LLM judge and not computed here; judge eval writes"
            " ROOT_CAUSE_ENTITY (precision/recall/F1 and @1..@5, computed in code) and its"
            " checklist scores under checklist_*"
        )
    raise argparse.ArgumentTypeError(
        f"expected one of {', '.join(COMPUTED)} (ITBench's {', '.join(NOT_COMPUTED)} are not"
        f" computed here), got {text!r}"
    )


def domain(text: str) -> str:
    """ITBench's `--domain`: only `sre`, what the checklist judges."""
    name = text.strip().lower()
    if name == "sre":
        return name
    if name in DOMAINS:
        raise argparse.ArgumentTypeError(
            f"{text!r}: ITBench's {name} domain is not judged here; judge eval scores SRE"
            " incident diagnoses (--domain sre)"
        )
    raise argparse.ArgumentTypeError(f"expected sre, got {text!r}")


def add_itbench_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """ITBench's flags on `judge eval` (`command` "eval") or `judge report`."""
    group = parser.add_argument_group("ITBench's result file (evaluation_results.json)")
    if command == "eval":
        group.add_argument(
            "--result-format",
            choices=("judge", "itbench"),
            default="judge",
            help="itbench: write --result-file (default then evaluation_results.json) in"
            " ITBench-Evaluations' shape (raw_results, statistics, config), and the full result"
            " beside it as <name>.judge.json",
        )
    else:
        group.add_argument(
            "--itbench",
            type=Path,
            metavar="FILE",
            help="write the result in ITBench-Evaluations' evaluation_results.json shape here",
        )
    group.add_argument(
        "-e",
        "--eval-criteria",
        nargs="+",
        type=criterion,
        metavar="CRITERION",
        help="ITBench criteria to write: ROOT_CAUSE_ENTITY (computed in code; the others are"
        " ITBench's LLM judge's and refused)",
    )
    if command == "eval":
        group.add_argument(
            "-d", "--domain", type=domain, default="sre", help="ITBench's domain: sre only"
        )
        group.add_argument(
            "-v",
            "--verbose",
            action="store_true",
            help="log each HTTP request to the provider (method, URL, status) on stderr",
        )


def resolve_result_files(args: argparse.Namespace) -> None:
    """Fix `--result-file` and the ITBench file before anything runs: with `--result-format
    itbench` the ITBench file is `--result-file` (ITBench's default name), the full result
    `<name>.judge.json` and the store `<name>.sqlite`, as ITBench users' scripts expect."""
    args.itbench = None
    if getattr(args, "verbose", False):  # httpx logs no header, so no key, at INFO
        logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
        logging.getLogger("httpx").setLevel(logging.INFO)
    if args.result_format != "itbench":
        args.result_file = args.result_file or DEFAULT_RESULT
        return
    args.itbench = args.result_file or ITBENCH_RESULT
    args.result_file = args.itbench.with_suffix(".judge.json")
    if args.store is None and not args.no_store:
        args.store = args.itbench.with_suffix(".sqlite")


def itbench_targets(args: argparse.Namespace, flag: str) -> list[tuple[str, Path | None]]:
    """The ITBench file as an output `check_writable` must check."""
    return [(flag, getattr(args, "itbench", None))]


def write_itbench(result: Any, args: argparse.Namespace, result_file: Path) -> Path | None:
    """Write the ITBench file when one is asked for (`result_file`: the full result it comes
    from, named in it); its path, else None."""
    if getattr(args, "itbench", None) is None:
        return None
    from ..report.itbench_result import write_itbench_result

    return write_itbench_result(
        args.itbench,
        result,
        eval_criteria=args.eval_criteria or ["ROOT_CAUSE_ENTITY"],
        k=getattr(args, "k", None) or 3,
        domain=getattr(args, "domain", "sre"),
        result_file=str(result_file),
    )
