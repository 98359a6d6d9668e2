"""`judge check`: lint a benchmark's files without calling any judge.

Loads the ground truth (and the outputs, if given) exactly as `judge eval` would, and reports:
every file a run would refuse (the loaders going on past each, `collecting_bad_files`),
the format each was read as, every data problem the adapters warned about (file and field),
which rubric questions the offline rules judge cannot answer for each spec (the spec lacks the
field it needs), the specs whose fault-origin components it cannot normalise to a plain name
(`postgresql (table x)` is fine, `some thing` is not), and, with outputs, missing incidents, orphan submissions and empty diagnoses.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ground_truth.errors import InputError, collecting_bad_files

from .common import (
    EXIT_BAD_INPUT,
    EXIT_FAIL_UNDER,
    EXIT_OK,
    add_input_arguments,
    collect_warnings,
    console,
)
from .skipped import skipped_files

T = TypeVar("T")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `check` subcommand."""
    p = commands.add_parser(
        "check",
        help="lint ground truth and outputs without calling any judge",
        description="Load a benchmark's ground truth (and outputs) as judge eval would and report "
        "every problem found. Exit 2 when a file cannot be used (each one is listed, and the "
        "rest still checked); with --strict, exit 1 when there is any warning.",
    )
    add_input_arguments(p, outputs_required=False)
    p.add_argument("--rubric", default="sregym-v3", help="rubric whose questions are checked")
    p.add_argument("--strict", action="store_true", help="exit 1 when there is any warning")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.set_defaults(handler=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    """`judge check`: report input problems, every bad file among them; exit 2 when there is
    one, else 1 under --strict when there is any other problem. With --json the findings are
    printed as JSON whatever happens."""
    try:
        findings = check_inputs(args.ground_truth, args.outputs, args.format, args.rubric)
    except Exception as exc:  # a bug: still JSON on stdout, the traceback as any command's
        if args.json:
            message = f"internal error: {type(exc).__name__}: {exc}"
            failed = {
                "ground_truth": {"path": str(args.ground_truth)},
                "errors": [{"file": None, "field": None, "message": message}],
                "warnings": [],
            }
            print(json.dumps(failed, indent=2))
        raise
    if args.json:
        print(json.dumps(findings, indent=2))
    else:
        _print(findings)
    if findings["errors"]:
        return EXIT_BAD_INPUT
    problems = (
        findings["warnings"]
        or findings["unnormalised_components"]
        or findings.get("missing")
        or findings.get("orphans")
        or findings.get("empty_diagnoses")
    )
    return EXIT_FAIL_UNDER if args.strict and problems else EXIT_OK


def check_inputs(
    ground_truth: Path, outputs: Path | None, fmt: str, rubric_name: str
) -> dict[str, Any]:
    """Every problem in the ground truth (and outputs, if given) as a JSON-ready dict: every
    bad file (`errors`: each file, row or duplicate a run would refuse, the loaders going on
    past it), load warnings, questions the rules judge cannot answer, unnormalised components
    and, with outputs, missing, orphan and empty submissions. What cannot be loaded at all
    (no such folder, no format recognised) is an error too, and what it stops is left out."""
    from ground_truth import load_specs, load_submissions, match_submissions

    found: list[str] = []
    named: set[str] = set()
    bad: list[InputError] = []
    with collecting_bad_files() as collected:
        rubric = _attempt(bad, found, named, _rubric, rubric_name)
        specs = _attempt(bad, found, named, load_specs, ground_truth, fmt)
        submissions = None
        if outputs is not None:
            submissions = _attempt(bad, found, named, load_submissions, outputs, fmt)
        if specs is not None and submissions is not None:
            found += collect_warnings(_cross_check, specs, submissions)[1]
    refused = named | {e.path for e in [*collected, *bad] if e.path}
    findings: dict[str, Any] = {
        "ground_truth": _described(ground_truth, specs or [], "n_specs", refused),
        "errors": _errors([*collected, *bad]),
        "warnings": found,
        "rules_unanswerable": _unanswerable(specs, rubric) if specs and rubric else {},
        "unnormalised_components": _unnormalised(specs or []),
    }
    if outputs is not None:
        findings["outputs"] = _described(outputs, submissions or [], "n_submissions", refused)
    if specs is not None and submissions is not None:
        matching = match_submissions(specs, submissions)
        findings["missing"] = matching.missing
        findings["orphans"] = [f"{o.incident_id}/{o.trial}" for o in matching.orphans]
        findings["empty_diagnoses"] = [
            f"{s.incident_id}/{s.trial}" for s in submissions if not s.diagnosis.strip()
        ]
    return findings


def _rubric(name: str) -> Any:
    from ..checklist.rubric import load_rubric

    return load_rubric(name)


def _attempt(
    bad: list[InputError], found: list[str], named: set[str], fn: Callable[..., T], *args: Any
) -> T | None:
    """`fn(*args)`, keeping the warnings it gave (also when it fails); None when it raised an
    `InputError`, which goes into `bad`; the files the warnings name go into `named`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return fn(*args)
        except InputError as exc:
            bad.append(exc)
            return None
        finally:
            found += [str(w.message) for w in caught]
            named.update(str(path) for w in caught if (path := getattr(w.message, "path", None)))


def _errors(errors: list[InputError]) -> list[dict[str, str | None]]:
    """Each error once (sniffing and loading may meet one file twice), as JSON."""
    out: dict[str, dict[str, str | None]] = {}
    for e in errors:
        out.setdefault(str(e), {"file": e.path, "field": e.field, "message": e.message})
    return list(out.values())


def _described(path: Path, items: list[Any], count: str, refused: set[str]) -> dict[str, Any]:
    return {
        "path": str(path),
        "format": _formats(items),
        count: len(items),
        "layouts": _layouts(items),
        "skipped_files": skipped_files(path, items, refused) if items else [],
    }


def _formats(items: list[Any]) -> list[str]:
    return sorted({str(i.source.get("format", "native")) for i in items})


def _layouts(items: list[Any]) -> dict[str, int]:
    """How many items each format read in each schema and layout (`itbench v1, scenario
    folders`: 5), as the adapters record them in `source`."""
    counts: dict[str, int] = {}
    for item in items:
        parts = [item.source.get(k) for k in ("schema", "layout")]
        detail = ", ".join(str(p) for p in parts if p)
        fmt = item.source.get("format", "native")
        key = f"{fmt} {detail}" if detail else str(fmt)
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def _skipped_note(described: dict[str, Any]) -> str:
    n = len(described.get("skipped_files") or [])
    if not n:
        return ""
    return (
        f"; {n} other data file{'s' if n != 1 else ''} under it not recognised and skipped"
        " (--json lists them)"
    )


def _counted(layouts: dict[str, int]) -> str:
    return ", ".join(f"{name}: {n}" for name, n in layouts.items())


def _cross_check(specs: list[Any], submissions: list[Any]) -> None:
    try:
        from ground_truth.formats.detect import cross_check
    except ImportError:
        return
    for fmt in _formats(specs):
        cross_check(fmt, specs, submissions)


def _unnormalised(specs: list[Any]) -> dict[str, list[str]]:
    """Per spec, the fault-origin components whose name the rules judge cannot match."""
    from ground_truth.fault_spec import is_normalised

    out = {}
    for spec in specs:
        bad = [c.name for c in spec.fault_origin if not is_normalised(c)]
        if bad:
            out[spec.id] = bad
    return out


def _unanswerable(specs: list[Any], rubric: Any) -> dict[str, list[str]]:
    """Per spec, the questions the rules judge must leave unscored (and why).

    The rules judge leaves a question unscored when it has no rule for it, or when the truth
    names no fault origin (`judge.judges.rules.questions`), so a spec that names its origin is
    not asked: running the judge on each of 20,000 specs took three times as long as loading
    them. The rest are asked with a placeholder diagnosis."""
    from ground_truth import Submission

    from ..checklist.prompts import Prompt
    from ..judges import JudgeTask, RulesJudge
    from ..judges.rules import RULES, bind

    questions = [q for d in rubric.dimensions for q in d.questions]
    no_rule = [
        f"{q.id}: the rules judge has no rule for {q.id}"
        for q in questions
        if RULES.get(bind(q.rule, q.text) or "") is None
    ]
    judge, out = RulesJudge(), {}
    for spec in specs:
        if spec.fault_origin:
            reasons = no_rule
        else:
            probe = Submission(incident_id=spec.id, diagnosis="-")
            reasons = [
                f"{a.question_id}: {a.unscored_reason}"
                for dim in rubric.dimensions
                for a in judge.answer(
                    JudgeTask(spec, probe, dim, Prompt(messages=[], hash=""))
                ).answers
                if a.answer is None
            ]
        if reasons:
            out[spec.id] = list(reasons)
    return out


def _print(findings: dict[str, Any]) -> None:
    from ground_truth.errors import located

    from ..report.safe_text import visible

    out = console()
    for error in findings["errors"]:
        line = located(error["file"], error["message"], error["field"])
        print(f"error: {line}", file=sys.stderr)
    gt = findings["ground_truth"]
    out.print(
        f"ground truth: {gt['n_specs']} specs read as {', '.join(gt['format'])} from {gt['path']}"
        f" ({_counted(gt['layouts'])}){_skipped_note(gt)}",
        markup=False,
    )
    if "outputs" in findings:
        o = findings["outputs"]
        out.print(
            f"outputs: {o['n_submissions']} submissions read as {', '.join(o['format'])} from {o['path']}"
            f" ({_counted(o['layouts'])}){_skipped_note(o)}",
            markup=False,
        )
        for key, label in (
            ("missing", "incidents with no submission"),
            ("orphans", "submissions with no spec"),
            ("empty_diagnoses", "empty diagnoses"),
        ):
            if findings.get(key):
                shown = ", ".join(visible(item) for item in findings[key])
                out.print(f"{label} ({len(findings[key])}): {shown}", markup=False)
    for message in findings["warnings"]:
        out.print(f"warning: {message}", markup=False)
    unnormalised = findings["unnormalised_components"]
    if unnormalised:
        out.print(
            f"components the rules judge cannot normalise in {len(unnormalised)} of "
            f"{gt['n_specs']} specs:"
        )
        for spec_id, bad in unnormalised.items():
            out.print(f"  {spec_id}: " + ", ".join(repr(b) for b in bad), markup=False)
    unanswerable = findings["rules_unanswerable"]
    if unanswerable:
        out.print(
            f"the rules judge leaves questions unscored for {len(unanswerable)} of {gt['n_specs']} specs:"
        )
        for spec_id, reasons in unanswerable.items():
            out.print(f"  {visible(spec_id)}: " + "; ".join(reasons), markup=False)
    if findings["errors"]:
        out.print(
            f"{len(findings['errors'])} bad input file(s) or row(s), listed on stderr: "
            "judge eval would refuse these inputs (exit 2)"
        )
    elif (
        not findings["warnings"]
        and not unanswerable
        and not unnormalised
        and not any(findings.get(k) for k in ("missing", "orphans", "empty_diagnoses"))
    ):
        out.print("no problems found")
