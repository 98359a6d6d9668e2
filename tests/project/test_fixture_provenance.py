"""The copied fixtures are what ATTRIBUTION.md says: verbatim files, or excerpts whose every
record is unchanged from the corpus file. Needs the shared corpus (marker `corpus`)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import FORMATS, corpus

SCENARIO_FILES = [
    f"scenario_{n}/{name}"
    for n in (1, 2, 17, 38, 102)
    for name in ("groundtruth_v1.yaml", "groundtruth.yaml")
]
VERBATIM = [
    *(
        (f"itbench/scenarios/{f}", f"itbench/ground_truth/itbench_scenarios/{f}")
        for f in SCENARIO_FILES
    ),
    (
        "sregym/service_port_conflict_hotel_reservation_submissions.json",
        "sregym/agent_diagnoses/service_port_conflict_hotel_reservation_submissions.json",
    ),
    (
        "sregym/legacy_09-10_18-40_arena_results.csv",
        "sregym/results_examples/legacy_09-10_18-40_arena_results.csv",
    ),
    ("sregym/rca_checklists.v3.0.head.yaml", "sregym/checklist/rca_checklists.v3.0.head.yaml"),
    (
        "forge/label_Online-Boutique-cloudbed-1.csv",
        "rca-llm-reasoning/label_Online-Boutique-cloudbed-1.csv",
    ),
    ("openrca/agent-Telecom.csv", "openrca/agent-Telecom.csv"),
]
# (fixture, corpus file, the list of records, the key naming a record)
EXCERPTS = [
    (
        "sregym/problems/ground_truth_40.excerpt.json",
        "sregym/problems/ground_truth_40.json",
        "problems",
        "problem_id",
    ),
    (
        "sregym-registry/root_causes_all_123.excerpt.yaml",
        "sregym-registry/root_causes_all_123.yaml",
        "problems",
        "problem_id",
    ),
    ("aiopslab/ground_truth.excerpt.yaml", "aiopslab/ground_truth.yaml", "problems", "problem_id"),
    *(
        (
            f"forge/diagnoses_{run}_Online-Boutique-cloudbed-1.excerpt.json",
            f"rca-llm-reasoning/diagnoses_{run}_Online-Boutique-cloudbed-1.json",
            "records",
            "fault_id",
        )
        for run in ("llama3.3_straight-shot", "qwen3-32b_react")
    ),
]


def _load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


@pytest.mark.corpus
@pytest.mark.parametrize(("fixture", "original"), VERBATIM, ids=[v[0] for v in VERBATIM])
def test_verbatim_fixture_equals_the_corpus_file(fixture: str, original: str) -> None:
    assert (FORMATS / fixture).read_bytes() == corpus(original).read_bytes()


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("fixture", "original", "field", "key"), EXCERPTS, ids=[e[0] for e in EXCERPTS]
)
def test_excerpt_keeps_the_header_and_whole_records(
    fixture: str, original: str, field: str, key: str
) -> None:
    mine, theirs = _load(FORMATS / fixture), _load(corpus(original))
    assert {k: v for k, v in mine.items() if k != field} == {
        k: v for k, v in theirs.items() if k != field
    }
    records = {r[key]: r for r in theirs[field]}
    assert mine[field] and all(r == records[r[key]] for r in mine[field])


@pytest.mark.corpus
def test_openrca_excerpt_rows_are_the_corpus_rows_byte_for_byte() -> None:
    mine = (FORMATS / "openrca" / "agent-Bank.csv").read_text(encoding="utf-8")
    theirs = corpus("openrca", "agent-Bank.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(mine, newline="")))
    assert rows[0] == next(csv.reader(io.StringIO(theirs, newline="")))
    for row in rows:
        line = io.StringIO()
        csv.writer(line, lineterminator="\n").writerow(row)
        assert line.getvalue() in theirs, row[:1]
    assert [r[rows[0].index("row_id")] for r in rows[1:]] == ["0.0", "11.0", "27.0"]
