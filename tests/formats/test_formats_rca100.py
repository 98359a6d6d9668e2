"""RCA-100 run CSVs (forks of OpenRCA named `openrca_rca100`): OpenRCA's columns, tasks `t001`..,
JSON answers. The fixture is an excerpt of a published run (see ATTRIBUTION.md)."""

from __future__ import annotations

import shutil

from helpers import FIXTURES, quiet

from ground_truth import load_specs, load_submissions, match_submissions
from ground_truth.entities import score_entities
from ground_truth.formats.openrca import load_openrca_verdicts
from ground_truth.formats.registry import detect

RUN = FIXTURES / "formats" / "rca100" / "test" / "result" / "rca100"


def test_tasks_are_specs_from_the_json_groundtruth():
    assert detect(RUN, "specs").name == "openrca"
    specs, _ = quiet(load_specs, RUN)
    by_id = {s.id: s for s in specs}
    assert sorted(by_id) == ["rca100-t001", "rca100-t009"]
    t001 = by_id["rca100-t001"]
    assert [c.name for c in t001.fault_origin] == ["payment"]
    assert (t001.mechanism, t001.mechanism_keywords) == ("httpError5xx", ["httpError5xx"])
    assert "checkout 错误次数告警" in t001.ground_truth  # the alert the agent was given


def test_each_row_is_a_trial_with_ranked_entities():
    assert detect(RUN, "submissions").name == "openrca"
    specs, _ = quiet(load_specs, RUN)
    subs, found = quiet(load_submissions, RUN)
    assert [s.key for s in subs] == [("rca100-t001", str(n)) for n in (1, 2, 3)] + [
        ("rca100-t009", str(n)) for n in (1, 2, 3)
    ]
    assert any("more than one row" in str(w) for w in found)
    scores = {s.key: score_entities(spec, s) for spec, s in match_submissions(specs, subs).pairs}
    assert not scores[("rca100-t001", "1")].top_is_origin  # checkout, not payment
    hit = scores[("rca100-t009", "1")]
    assert hit.top_is_origin and hit.f1 == 1.0
    sub = next(s for s in subs if s.key == ("rca100-t009", "1"))
    assert sub.diagnosis == (
        "Root cause entities: inventory.\nRoot cause types: memoryPressure, threadExhaustion."
    )
    assert [r["verdict"] for r in load_openrca_verdicts(RUN)] == [False] * 3 + [True] * 3


def test_two_runs_of_the_same_tasks_are_trials_named_after_each_run(tmp_path):
    shutil.copy(RUN / "agent-batch1-gpt-4o.csv", tmp_path / "agent-batch1-gpt-4o.csv")
    shutil.copy(RUN / "agent-batch1-gpt-4o.csv", tmp_path / "agent-rerun-gpt-4o.csv")
    subs, _ = quiet(load_submissions, tmp_path)
    assert len(subs) == 12 and len({s.key for s in subs}) == 12
    assert {s.trial.split("/")[0] for s in subs} == {"batch1-gpt-4o", "rerun-gpt-4o"}
