"""Flat exports of a result: CSV (one row per case), JSONL (one judgment per line), JUnit XML.

Each is produced and written piece by piece (a row, a line, a testcase at a time), so an
export of 10,000 cases never sits in memory as one text.

JUnit: one `<testsuite>` holding one `<testcase classname=INCIDENT name=TRIAL>` per case.
- verdict pass: an empty testcase;
- verdict fail: `<failure type="verdict">`, the message naming the composite, the threshold and
  the questions answered No; the body lists each with its evidence;
- incomplete (a dimension with no scored question, so no verdict) because a call failed (the
  provider, an unusable reply, the judge) or was never made once the run stopped for a fault
  (a provider that cannot be reached, `--max-errors`, storage): `<error>`, typed by the failed
  calls' kinds, with the unscored questions and their reasons. An unscored question is never a
  No, so this is not a `<failure>`; and CI systems read `<skipped>` as fine, which a case the
  provider failed is not;
- incomplete only because the user stopped the run before its calls were made (a signal, the
  `--max-cost` budget): `<skipped>`, with the reason;
- an incident with no submission: one testcase named `(no submission)`, `<skipped>` (nothing
  was there to judge).
"""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..checklist.judgment import Judgment
from ..checklist.results import EvalResult, write_json_atomic
from ..checklist.scoring import CaseResult
from ..checklist.texts import case_key
from .cases import ByCase, case_status
from .safe_text import csv_cell
from .view import optional_sections

BASE_COLUMNS = ["incident_id", "trial", "agent", "status", "passed", "composite"]
NO_SUBMISSION = "(no submission)"
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """`text` without the characters XML 1.0 cannot carry at all (control characters)."""
    return _NOT_XML.sub("\ufffd", text)


def csv_columns(result: EvalResult) -> list[str]:
    """The CSV header: case columns, one per dimension, unscored count, failing questions and,
    when the result has a resolution section, its success and evidence coverage.
    """
    dims = _dimension_ids(result)
    columns = [*BASE_COLUMNS, *dims, "n_unscored", "failing_questions"]
    if "resolution" in optional_sections(result):
        columns += ["resolution_success", "evidence_coverage"]
    return columns


def _dimension_ids(result: EvalResult) -> list[str]:
    dims = list(result.config.get("dimensions") or [])
    for case in result.cases:
        dims += [d.dimension_id for d in case.dimensions if d.dimension_id not in dims]
    return dims


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else csv_cell(str(value))


def csv_text(result: EvalResult) -> str:
    """One row per case; dimension columns hold the score (empty when it has none)."""
    return "".join(csv_rows(result))


def csv_rows(result: EvalResult) -> Iterator[str]:
    """`csv_text` a line at a time: the header, then a row per case."""
    columns = csv_columns(result)
    judgments = _judgments_by_case(result)
    resolution = _resolution_by_case(result)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    yield _drain(out)
    for case in result.cases:
        key = case_key(case.incident_id, case.trial)
        mine = judgments.get(key)
        row: dict[str, Any] = {
            "incident_id": case.incident_id,
            "trial": case.trial,
            "agent": case.agent,
            "status": case_status(case),
            "passed": case.passed,
            "composite": case.composite,
            **{d.dimension_id: d.score for d in case.dimensions},
            "n_unscored": sum(j.answer is None for j in mine),
            "failing_questions": " ".join(j.question_id for j in mine if j.answer == "No"),
        }
        if "resolution_success" in columns:
            res = resolution.get(key) or {}
            row["resolution_success"] = res.get("success")
            row["evidence_coverage"] = res.get("evidence_coverage")
        writer.writerow({k: _cell(row.get(k)) for k in columns})
        yield _drain(out)


def _drain(out: io.StringIO) -> str:
    text = out.getvalue()
    out.seek(0)
    out.truncate()
    return text


def jsonl_lines(result: EvalResult) -> Iterator[str]:
    """One judgment per line, exactly the result file's `judgments` entries."""
    return (j.model_dump_json() + "\n" for j in result.judgments)


def _judgments_by_case(result: EvalResult) -> ByCase[Judgment]:
    return ByCase(result.judgments)


def _resolution_by_case(result: EvalResult) -> dict[str, dict[str, Any]]:
    section = optional_sections(result).get("resolution") or {}
    return {
        case_key(str(c.get("incident_id")), str(c.get("trial"))): c
        for c in section.get("cases", [])
        if isinstance(c, dict)
    }


def junit_xml(result: EvalResult, suite_name: str = "diagnosis-judge") -> str:
    """The result as a JUnit XML testsuite: a testcase per case (failed verdict = failure,
    incomplete case = error, or skipped when the user stopped the run before it) and a
    skipped testcase per incident with no submission.
    """
    return "".join(junit_parts(result, suite_name))


def junit_parts(result: EvalResult, suite_name: str = "diagnosis-judge") -> Iterator[str]:
    """`junit_xml` a testcase at a time, laid out as `ET.indent` lays out the whole suite."""
    judgments = _judgments_by_case(result)
    incomplete = _Incomplete.of(result)
    threshold = (result.config.get("rubric") or {}).get("threshold")
    suite = ET.Element("testsuite", name=suite_name, timestamp=result.created_at, time="0")
    for name, count in _junit_counts(result, judgments, incomplete).items():
        suite.set(name, str(count))
    properties = ET.Element("properties")
    for name, value in _properties(result).items():
        ET.SubElement(properties, "property", name=name, value=value)
    suite.text = _INDENT
    head = ET.tostring(_sanitised(suite), encoding="unicode").removesuffix("</testsuite>")
    yield '<?xml version="1.0" encoding="UTF-8"?>\n' + head
    children = (
        properties,
        *(
            _testcase(
                case,
                judgments.get(case_key(case.incident_id, case.trial)),
                threshold,
                incomplete,
            )
            for case in result.cases
        ),
        *(_no_submission(incident_id) for incident_id in result.missing),
    )
    last = len(result.cases) + len(result.missing)
    for n, child in enumerate(children):
        ET.indent(child, level=1)
        child.tail = "\n" if n == last else _INDENT
        yield ET.tostring(_sanitised(child), encoding="unicode")
    yield "</testsuite>\n"


_INDENT = "\n  "


USER_STOPS = frozenset({"interrupted", "max_cost"})
"""Why a run stopped when the calls it did not make were left out by the user's choice."""
NOT_JUDGED = "not judged: "


@dataclass
class _Incomplete:
    """What JUnit needs to tell an incomplete case the judge failed from one the user left out:
    why the run stopped, and each case's failed calls' kinds."""

    user_stopped: bool
    kinds: dict[str, set[str]]

    @classmethod
    def of(cls, result: EvalResult) -> _Incomplete:
        kinds: dict[str, set[str]] = defaultdict(set)
        for call in result.calls:
            if call.error_kind and call.error:
                kinds[case_key(call.incident_id, call.trial)].add(call.error_kind)
        stopped = result.stopped.kind if result.stopped is not None else None
        return cls(stopped in USER_STOPS, kinds)

    def left_out(self, unscored: list[Judgment]) -> bool:
        """Whether every unscored question is one the user's stop kept from being asked."""
        return self.user_stopped and all(
            (j.unscored_reason or "").startswith(NOT_JUDGED) for j in unscored
        )

    def kind(self, case: CaseResult) -> str:
        found = self.kinds.get(case_key(case.incident_id, case.trial))
        return ",".join(sorted(found)) if found else "unscored"


def _junit_counts(
    result: EvalResult, judgments: ByCase[Judgment], incomplete: _Incomplete
) -> dict[str, int]:
    statuses = [case_status(case) for case in result.cases]
    left_out = sum(
        incomplete.left_out(_unscored(judgments, case))
        for case in result.cases
        if case_status(case) == "incomplete"
    )
    return {
        "tests": len(statuses) + len(result.missing),
        "failures": statuses.count("fail"),
        "errors": statuses.count("incomplete") - left_out,
        "skipped": left_out + len(result.missing),
    }


def _unscored(judgments: ByCase[Judgment], case: CaseResult) -> list[Judgment]:
    return [j for j in judgments.get(case_key(case.incident_id, case.trial)) if j.answer is None]


def _no_submission(incident_id: str) -> ET.Element:
    testcase = ET.Element("testcase", classname=incident_id, name=NO_SUBMISSION, time="0")
    ET.SubElement(testcase, "skipped", message="no submission for this incident")
    return testcase


def _sanitised(element: ET.Element) -> ET.Element:
    for node in element.iter():
        node.text = xml_safe(node.text) if node.text else node.text
        for name, value in node.attrib.items():
            node.set(name, xml_safe(value))
    return element


def _properties(result: EvalResult) -> dict[str, str]:
    rubric = result.config.get("rubric") or {}
    judge = result.config.get("judge") or {}
    o = result.overall
    props = {
        "rubric": f"{rubric.get('name')} v{rubric.get('version')}",
        "rubric_hash": str(rubric.get("hash")),
        "threshold": _cell(rubric.get("threshold")),
        "judge": str(judge.get("name")),
        "model": str(judge.get("model") or ""),
        "pass_rate": _cell(o.pass_rate.value),
        "mean_composite": _cell(o.mean_composite.value),
        "tool_version": result.tool_version,
    }
    return props


def _testcase(
    case: CaseResult,
    judgments: Sequence[Judgment],
    threshold: float | None,
    incomplete: _Incomplete,
) -> ET.Element:
    testcase = ET.Element("testcase", classname=case.incident_id, name=case.trial, time="0")
    status = case_status(case)
    if status == "pass":
        return testcase
    if status == "incomplete":
        unscored = [j for j in judgments if j.answer is None]
        message = (
            f"incomplete: {len(unscored)} question(s) unscored "
            f"({', '.join(j.question_id for j in unscored)}); no verdict"
        )
        if incomplete.left_out(unscored):
            element = ET.SubElement(testcase, "skipped", message=message)
        else:
            reason = unscored[0].unscored_reason if unscored else None
            element = ET.SubElement(
                testcase,
                "error",
                type=incomplete.kind(case),
                message=f"{message}: {reason}" if reason else message,
            )
        element.text = "\n".join(f"{j.question_id}: {j.unscored_reason}" for j in unscored)
        return testcase
    failing = [j for j in judgments if j.answer == "No"]
    limit = f" < threshold {threshold:.2f}" if threshold is not None else ""
    failure = ET.SubElement(
        testcase,
        "failure",
        type="verdict",
        message=f"composite {case.composite:.2f}{limit}; answered No: "
        + (", ".join(j.question_id for j in failing) or "none"),
    )
    failure.text = "\n".join(
        f"{j.dimension_id} {j.question_id}: No ({j.confidence or 'no confidence'})"
        + (f" — evidence: {j.evidence}" if j.evidence else "")
        for j in failing
    )
    return testcase


def write_csv(path: str | Path, result: EvalResult) -> Path:
    """Write the result's CSV to `path` atomically; returns the path."""
    write_json_atomic(path, csv_rows(result))
    return Path(path)


def write_jsonl(path: str | Path, result: EvalResult) -> Path:
    """Write one judgment per line to `path` atomically; returns the path."""
    write_json_atomic(path, jsonl_lines(result))
    return Path(path)


def write_junit(path: str | Path, result: EvalResult) -> Path:
    """Write the JUnit XML to `path` atomically; returns the path."""
    write_json_atomic(path, junit_parts(result))
    return Path(path)
