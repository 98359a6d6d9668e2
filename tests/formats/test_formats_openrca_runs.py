"""OpenRCA run result folders (`test/result/<system>/agent-<tag>-<model>.csv`, as
`rca/run_agent_standard.py` writes them): the system from the folder, several rows per query."""

from __future__ import annotations

from helpers import FIXTURES, quiet

from ground_truth import load_specs, load_submissions
from ground_truth.formats.openrca import load_openrca_verdicts
from ground_truth.formats.registry import detect

RESULT = FIXTURES / "formats" / "openrca" / "test" / "result"
BANK_RUN = RESULT / "Bank" / "agent-rerun-gpt-4o.csv"


def test_the_result_root_is_detected_and_ids_join_with_the_archive():
    assert detect(RESULT, "specs").name == "openrca"
    assert detect(RESULT, "submissions").name == "openrca"
    specs, _ = quiet(load_specs, RESULT)
    assert [s.id for s in specs] == ["Bank-0", "Bank-11", "Market-cloudbed-1-0"]


def test_a_rerun_row_is_a_second_trial_with_one_warning():
    subs, found = quiet(load_submissions, BANK_RUN)
    assert [(s.incident_id, s.trial) for s in subs] == [
        ("Bank-0", "1"),
        ("Bank-11", "1"),
        ("Bank-0", "2"),
    ]
    assert {s.agent for s in subs} == {"OpenRCA RCA-agent (rerun-gpt-4o)"}
    assert "Mysql02" in subs[2].diagnosis and "MG02" in subs[0].diagnosis
    assert subs[2].source["openrca_score"] is None  # the re-run was never scored
    (rerun,) = [w for w in found if "more than one row" in str(w)]
    assert rerun.field == "row_id" and "row_id 0" in str(rerun)


def test_specs_from_a_rerun_file_are_one_per_query():
    specs, _ = quiet(load_specs, BANK_RUN)
    by_id = {s.id: s for s in specs}
    assert list(by_id) == ["Bank-0", "Bank-11"]
    assert by_id["Bank-0"].source["field"] == "line 4"  # the last row
    assert by_id["Bank-0"].fault_origin[0].name == "Mysql02"


def test_verdicts_follow_the_same_trials():
    rows = load_openrca_verdicts(BANK_RUN)
    assert [(r["incident_id"], r["trial"], r["verdict"]) for r in rows] == [
        ("Bank-0", "1", False),
        ("Bank-11", "1", rows[1]["verdict"]),
        ("Bank-0", "2", None),
    ]
