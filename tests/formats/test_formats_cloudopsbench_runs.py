"""Cloud-OpsBench agent runs (`result_raw.json` and the case state beside it), in the shape its
agent writes (hand-written fixtures: the repository has no licence; see their README)."""

from __future__ import annotations

import json
import shutil

from helpers import FIXTURES, quiet

from ground_truth import load_specs, load_submissions, match_submissions
from ground_truth.entities import score_entities
from ground_truth.formats.registry import detect

RUNS = FIXTURES / "formats" / "cloud-opsbench-runs" / "results"
CASES = FIXTURES / "formats" / "cloud-opsbench-cases"


def test_runs_join_the_cases_and_rank_the_fault_object():
    assert detect(RUNS, "submissions").name == "cloud-opsbench"
    specs, _ = quiet(load_specs, CASES)
    subs, found = quiet(load_submissions, RUNS)
    assert sorted(s.key for s in subs) == [
        ("shop-admission-3", "tiny-model_base"),
        ("shop-admission-4", "tiny-model_base"),
        ("shop-infrastructure-2", "tiny-model_base"),
    ]
    matching = match_submissions(specs, subs)
    assert [s.incident_id for s in matching.orphans] == ["shop-admission-4"]  # no such case
    scores = {sub.incident_id: score_entities(spec, sub) for spec, sub in matching.pairs}
    node = scores["shop-infrastructure-2"]
    assert node.top_is_origin and node.at(1).recall == 1.0  # Cloud-OpsBench's top-1 component
    namespace = scores["shop-admission-3"]
    assert [namespace.at(k).recall for k in (1, 2, 3)] == [0.0, 0.0, 1.0]  # right at rank 3
    (empty,) = [w for w in found if "no top_3_predictions" in str(w)]
    assert empty.field == "Completed" and empty.path.endswith("4/result_raw.json")


def test_the_answer_becomes_text_entities_and_trajectory():
    subs, _ = quiet(load_submissions, RUNS)
    sub = next(s for s in subs if s.incident_id == "shop-admission-3")
    assert sub.diagnosis.splitlines()[0].startswith("Key evidence: The new replica set")
    assert "Rank 3: resource_quota_exhausted at namespace/shop (Admission_Fault)." in sub.diagnosis
    assert [(e.name, e.kind, e.rank, e.fault_type) for e in sub.entities][2] == (
        "shop",
        "Namespace",
        3,
        "resource_quota_exhausted",
    )
    actions = sub.trajectory.actions
    assert [(a.tool, a.accepted) for a in actions] == [
        ("GetResources", None),
        ("DescribeResource", False),
        ("Submit", None),
    ]
    assert actions[1].observation == "missing_required_param:name"
    assert sub.trajectory.final_state == {
        "finished": True,
        "stop_reason": "submit",
        "steps_used": 3,
    }
    assert sub.source["context"][0].endswith("3/3.json")


def test_a_renamed_result_is_found_by_content_and_a_shallow_one_is_skipped(tmp_path):
    run = tmp_path / "shop" / "m_base" / "infrastructure" / "2"
    run.mkdir(parents=True)
    shutil.copy(RUNS / "shop/tiny-model_base/infrastructure/2/result_raw.json", run / "final.json")
    (sub,), _ = quiet(load_submissions, tmp_path)
    assert sub.key == ("shop-infrastructure-2", "m_base")
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "result_raw.json").write_text(json.dumps({"Completed": "", "stop_reason": "x"}))
    subs, found = quiet(load_submissions, tmp_path, "cloud-opsbench")
    assert len(subs) == 1
    assert any("whose case cannot be told" in str(w) for w in found)
