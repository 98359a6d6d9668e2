"""`judge check`: lint a benchmark's files without calling any judge.

Loads the ground truth (and the outputs, if given) exactly as `judge eval` would, and reports:
the format each was read as, every data problem the adapters warned about (file and field),
which rubric questions the offline rules judge cannot answer for each spec (the spec lacks the
field it needs), the specs whose fault-origin components it cannot normalise to a plain name
(`postgresql (table x)` is fine, `some thing` is not), and, with outputs, missing incidents, orphan submissions and empty diagnoses.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .common import (
    EXIT_FAIL_UNDER,
    EXIT_OK,
    add_input_arguments,
    collect_warnings,
    console,
    load_inputs,
)


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `check` subcommand."""
    p = commands.add_parser(
        "check",
        help="lint ground truth and outputs without calling any judge",
        description="Load a benchmark's ground truth (and outputs) as judge eval would and report "
        "every problem found. Exit 2 when something cannot be used at all; with --strict, exit 1 "
        "when there is any warning.",
    )
    add_input_arguments(p, outputs_required=False)
    p.add_argument("--rubric", default="sregym-v3", help="rubric whose questions are checked")
    p.add_argument("--strict", action="store_true", help="exit 1 when there is any warning")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.set_defaults(handler=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    """`judge check`: report input problems; exit 1 under --strict when there is any."""
    findings = check_inputs(args.ground_truth, args.outputs, args.format, args.rubric)
    if args.json:
        print(json.dumps(findings, indent=2))
    else:
        _print(findings)
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
    """Every problem in the ground truth (and outputs, if given) as a JSON-ready dict: load
    warnings, questions the rules judge cannot answer, unnormalised components and, with outputs,
    missing, orphan and empty submissions. InputError when the inputs cannot be loaded at all.
    """
    from ground_truth import match_submissions

    from ..checklist.rubric import load_rubric

    rubric = load_rubric(rubric_name)
    specs, submissions, found = load_inputs(ground_truth, outputs, fmt)
    if submissions is not None:
        found += collect_warnings(_cross_check, specs, submissions)[1]
    findings: dict[str, Any] = {
        "ground_truth": {
            "path": str(ground_truth),
            "format": _formats(specs),
            "n_specs": len(specs),
            "layouts": _layouts(specs),
        },
        "warnings": found,
        "rules_unanswerable": _unanswerable(specs, rubric),
        "unnormalised_components": _unnormalised(specs),
    }
    if submissions is not None:
        matching = match_submissions(specs, submissions)
        findings["outputs"] = {
            "path": str(outputs),
            "format": _formats(submissions),
            "n_submissions": len(submissions),
            "layouts": _layouts(submissions),
        }
        findings["missing"] = matching.missing
        findings["orphans"] = [f"{o.incident_id}/{o.trial}" for o in matching.orphans]
        findings["empty_diagnoses"] = [
            f"{s.incident_id}/{s.trial}" for s in submissions if not s.diagnosis.strip()
        ]
    return findings


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
    """Per spec, the questions the rules judge must leave unscored (and why)."""
    from ground_truth import Submission

    from ..checklist.prompts import Prompt
    from ..judges import JudgeTask, RulesJudge

    judge, out = RulesJudge(), {}
    for spec in specs:
        probe = Submission(incident_id=spec.id, diagnosis="-")
        reasons = [
            f"{a.question_id}: {a.unscored_reason}"
            for dim in rubric.dimensions
            for a in judge.answer(JudgeTask(spec, probe, dim, Prompt(messages=[], hash=""))).answers
            if a.answer is None
        ]
        if reasons:
            out[spec.id] = reasons
    return out


def _print(findings: dict[str, Any]) -> None:
    from ..report.safe_text import visible

    out = console()
    gt = findings["ground_truth"]
    out.print(
        f"ground truth: {gt['n_specs']} specs read as {', '.join(gt['format'])} from {gt['path']}"
        f" ({_counted(gt['layouts'])})",
        markup=False,
    )
    if "outputs" in findings:
        o = findings["outputs"]
        out.print(
            f"outputs: {o['n_submissions']} submissions read as {', '.join(o['format'])} from {o['path']}"
            f" ({_counted(o['layouts'])})",
            markup=False,
        )
        for key, label in (
            ("missing", "incidents with no submission"),
            ("orphans", "submissions with no spec"),
            ("empty_diagnoses", "empty diagnoses"),
        ):
            if findings[key]:
                shown = ", ".join(visible(item) for item in findings[key][:10])
                out.print(
                    f"{label} ({len(findings[key])}): {shown}"
                    + (" …" if len(findings[key]) > 10 else ""),
                    markup=False,
                )
    for message in findings["warnings"]:
        out.print(f"warning: {message}", markup=False)
    unnormalised = findings["unnormalised_components"]
    if unnormalised:
        out.print(
            f"components the rules judge cannot normalise in {len(unnormalised)} of "
            f"{gt['n_specs']} specs:"
        )
        for spec_id, bad in list(unnormalised.items())[:20]:
            out.print(f"  {spec_id}: " + ", ".join(repr(b) for b in bad), markup=False)
    unanswerable = findings["rules_unanswerable"]
    if unanswerable:
        out.print(
            f"the rules judge leaves questions unscored for {len(unanswerable)} of {gt['n_specs']} specs:"
        )
        for spec_id, reasons in list(unanswerable.items())[:20]:
            out.print(f"  {visible(spec_id)}: " + "; ".join(reasons), markup=False)
    if (
        not findings["warnings"]
        and not unanswerable
        and not unnormalised
        and not any(findings.get(k) for k in ("missing", "orphans", "empty_diagnoses"))
    ):
        out.print("no problems found")
