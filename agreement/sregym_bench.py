"""SREGym's 29-item judge benchmark as human verdict labels, specs and submissions.

Source: github.com/SREGym/SREGym (MIT), `sregym/conductor/oracles/llm_as_a_judge/data.yaml` at
commit 96a9057e5f4357cbb3d9993377b75d46063e54ba. Each item has `description` (the expected root
cause), `answer` (an agent's diagnosis) and `oracle`, the verdict a SREGym developer expected
from their older 4-class judge: `True` (correct diagnosis), `False` (a different problem or a
misdiagnosis), `FalsePositive` (a problem reported where none exists; absent from this file) and
`FalseNegative` ("the expected root cause describes a real fault, but the agent reported no
issues", in the wording of that judge's prompt).

Mapping to our final verdict: `True` -> Yes; `False`, `FalseNegative` and `FalsePositive` -> No.
A false negative *is* a wrong diagnosis of an incident that happened, so it fails. In the data
the two FalseNegative items are item 3 (the agent says "No faults were detected") which fits the
definition, and item 0, where the agent reports a fault (executables missing from the frontend
and geo images) but not the faulty image on all eight deployments; it is a wrong diagnosis under
either reading, so No as well. The original label is kept in the `notes` column.

Item ids are `sregym-bench-NN` (the 0-based position in the file, two digits): the YAML has no
ids, and only items 14-28 carry a trailing `# problem_id` comment, which YAML drops. That
comment is recovered from the raw text when present and kept as `source.problem_id`.

An item whose `description` is empty has no ground truth to judge against (3 of the 5 items at
SREGym commit 49852003 were written that way): it is skipped, with one `BenchWarning` naming
them all, so no spec, submission or label is written for it; the others keep their ids.
"""

from __future__ import annotations

import csv
import json
import re
import warnings
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from agreement.errors import LabelFileError
from agreement.files import parse_yaml, read_text
from agreement.ratings import VERDICT, ItemKey, RaterLabels, RatingTable
from agreement.readers import LABEL_COLUMNS, VERDICT_TEXT

ORACLE_TO_VERDICT: dict[str, Literal["Yes", "No"]] = {
    "True": "Yes",
    "False": "No",
    "FalseNegative": "No",
    "FalsePositive": "No",
}
ANNOTATOR = "sregym-developer"
REPOSITORY = "github.com/SREGym/SREGym"
COMMIT = "96a9057e5f4357cbb3d9993377b75d46063e54ba"
ORIGIN_PATH = "sregym/conductor/oracles/llm_as_a_judge/data.yaml"
FORMAT = "sregym-judge-bench"

_COMMENT = re.compile(r"^- description:.*#\s*([A-Za-z0-9_.-]+)\s*$")
_QUOTED = re.compile(r"`([^`]+)`|'([^']+)'")
_LISTED = re.compile(r"\b(deployments|services)\s*\(([^)]+)\)", re.IGNORECASE)
_KINDS = {
    "deployment": "Deployment",
    "deployments": "Deployment",
    "service": "Service",
    "services": "Service",
    "configmap": "ConfigMap",
}


class BenchWarning(UserWarning):
    """A problem in the benchmark file that the import works around (said once per file)."""


class BenchItem(BaseModel):
    """One item of SREGym's judge benchmark: the agent's answer, the oracle, the human verdict."""

    id: str
    index: int
    description: str
    answer: str
    oracle: str
    verdict: Literal["Yes", "No"]
    problem_id: str | None = None


def item_id(index: int) -> str:
    """The incident id given to benchmark item `index`: `sregym-bench-07`."""
    return f"sregym-bench-{index:02d}"


def load_bench(path: str | Path) -> list[BenchItem]:
    """Parse the YAML list; an unknown `oracle` or missing field names the item."""
    path = str(path)
    text = read_text(path)
    data = parse_yaml(text, path)
    if not isinstance(data, list):
        raise LabelFileError(path, "expected a YAML list of {description, answer, oracle} items")
    comments = _problem_ids(text)
    items, empty = [], []
    for i, raw in enumerate(data):
        field = f"[{i}]"
        if not isinstance(raw, dict) or not all(
            k in raw for k in ("description", "answer", "oracle")
        ):
            raise LabelFileError(path, "expected description, answer and oracle", field=field)
        oracle = str(raw["oracle"])
        if oracle not in ORACLE_TO_VERDICT:
            known = ", ".join(ORACLE_TO_VERDICT)
            raise LabelFileError(
                path, f"unknown oracle {oracle!r}; expected {known}", field=f"{field}.oracle"
            )
        if raw["description"] is None or not str(raw["description"]).strip():
            empty.append(i)
            continue
        items.append(
            BenchItem(
                id=item_id(i),
                index=i,
                description=str(raw["description"]),
                answer=str(raw["answer"]),
                oracle=oracle,
                verdict=ORACLE_TO_VERDICT[oracle],
                problem_id=comments.get(i),
            )
        )
    if data and not items:
        raise LabelFileError(path, "every item has an empty description: nothing to import")
    if empty:
        warnings.warn(
            BenchWarning(
                f"{path}: {len(empty)} of {len(data)} items have an empty description (the"
                f" ground truth) and are skipped: {', '.join(item_id(i) for i in empty)}"
            ),
            stacklevel=2,
        )
    return items


def _problem_ids(text: str) -> dict[int, str]:
    found: dict[int, str] = {}
    index = -1
    for line in text.splitlines():
        if line.startswith("- "):
            index += 1
            match = _COMMENT.match(line)
            if match:
                found[index] = match.group(1)
    return found


def label_rows(items: list[BenchItem], annotator: str = ANNOTATOR) -> list[dict[str, str]]:
    """Verdict-level rows in the label CSV format (one per item, trial 1)."""
    return [
        {
            "incident_id": item.id,
            "trial": "1",
            "dimension_id": "",
            "question_id": VERDICT,
            "question_text": VERDICT_TEXT,
            "ground_truth": item.description,
            "diagnosis": item.answer,
            "answer": item.verdict,
            "annotator": annotator,
            "notes": f"oracle={item.oracle}"
            + (f"; problem_id={item.problem_id}" if item.problem_id else ""),
        }
        for item in items
    ]


def write_labels(items: list[BenchItem], path: str | Path, annotator: str = ANNOTATOR) -> int:
    """Write the items' human verdicts as a label CSV (UTF-8 with BOM) at `path`; returns the
    number of rows written.
    """
    rows = label_rows(items, annotator)
    with open(path, "w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=LABEL_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def to_ratings(items: list[BenchItem], annotator: str = ANNOTATOR) -> RatingTable:
    """The items' human verdicts as a one-rater RatingTable, sourced to the pinned SREGym commit."""
    rater = RaterLabels(
        name=annotator, kind="human", source=f"{REPOSITORY}/{ORIGIN_PATH}@{COMMIT[:8]}"
    )
    for item in items:
        rater.labels["verdict"][ItemKey(item.id, "1", VERDICT)] = item.verdict
    return RatingTable([rater])


def _source(item: BenchItem) -> dict[str, Any]:
    source: dict[str, Any] = {
        "format": FORMAT,
        "repository": REPOSITORY,
        "path": ORIGIN_PATH,
        "commit": COMMIT,
        "license": "MIT",
        "index": item.index,
    }
    if item.problem_id:
        source["problem_id"] = item.problem_id
    return source


def components(description: str) -> dict[str, list[dict[str, str]]]:
    """Best-effort components from a one-line root cause (quoted names after a kind word).

    Quoted tokens that look like images (`:` or `/`), environment variables (UPPER_CASE),
    numbers or paths are not components. The first run of components is the fault origin; later
    ones (e.g. "causing the deployment `geo` to malfunction") are affected components.
    Unquoted names (e.g. "(mongodb-geo, mongodb-profile, ...)") are not extracted.
    """
    origin: list[dict[str, str]] = []
    affected: list[dict[str, str]] = []
    last_end = None
    kind = None
    for match in _QUOTED.finditer(description):
        name = match.group(1) or match.group(2)
        before = description[last_end or 0 : match.start()]
        word = re.findall(r"[A-Za-z]+", before)
        if word and word[-1].lower() in _KINDS:
            kind = _KINDS[word[-1].lower()]
        elif word and word[-1].lower() not in ("and", "or") and last_end is not None:
            kind = None
        after = re.match(r"\s*([A-Za-z]+)", description[match.end() :])
        own_kind = _KINDS.get(after.group(1).lower()) if after else None
        found = kind or own_kind
        if not _is_component(name) or found is None:
            last_end = match.end()
            continue
        target = origin if not affected and (not origin or _same_run(before)) else affected
        target.append({"name": name, "kind": found})
        last_end = match.end()
    listed = _LISTED.search(description)
    if not origin and listed:
        names = re.split(r",\s*(?:and\s+)?|\s+and\s+", listed.group(2))
        kind = _KINDS[listed.group(1).lower()]
        origin = [{"name": n.strip(), "kind": kind} for n in names if _is_component(n.strip())]
    return {"fault_origin": origin, "affected_components": affected}


def _same_run(between: str) -> bool:
    return re.fullmatch(r"[\s,]*(and|or)?[\s,]*", between) is not None


def _is_component(name: str) -> bool:
    return not (
        ":" in name
        or "/" in name
        or re.fullmatch(r"[A-Z0-9_]+", name)
        or re.fullmatch(r"[\d.]+", name)
        or " " in name
    )


def to_specs(items: list[BenchItem]) -> list[dict[str, Any]]:
    """IncidentSpec-shaped dicts (plain data; validate with ground_truth.models.IncidentSpec)."""
    specs = []
    for item in items:
        found = components(item.description)
        spec: dict[str, Any] = {
            "id": item.id,
            "ground_truth": item.description,
            "source": {
                **_source(item),
                "extraction": "components: agreement.sregym_bench.components",
            },
            "extra": {"oracle": item.oracle},
        }
        spec.update({k: v for k, v in found.items() if v})
        specs.append(spec)
    return specs


def to_submissions(items: list[BenchItem]) -> list[dict[str, Any]]:
    """Submission-shaped dicts, one per item, trial `1`."""
    return [
        {"incident_id": item.id, "trial": "1", "diagnosis": item.answer, "source": _source(item)}
        for item in items
    ]


def export_native(items: list[BenchItem], directory: str | Path) -> dict[str, Path]:
    """Write `specs.json` ({"incidents": [...]}), `submissions.jsonl` and `labels.csv`."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "specs": out / "specs.json",
        "submissions": out / "submissions.jsonl",
        "labels": out / "labels.csv",
    }
    paths["specs"].write_text(
        json.dumps({"incidents": to_specs(items)}, indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    paths["submissions"].write_text(
        "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in to_submissions(items)),
        encoding="utf-8",
    )
    write_labels(items, paths["labels"])
    return paths
