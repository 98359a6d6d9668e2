"""OpenRCA: agent CSVs and query files, with several failures per query."""

from __future__ import annotations

import csv
import itertools
import json
from datetime import datetime
from pathlib import Path

import pytest
from helpers import FIXTURES, corpus, quiet

from ground_truth.formats.openrca import (
    load_openrca_specs,
    load_openrca_submissions,
    load_openrca_verdicts,
    looks_like_openrca_specs,
    looks_like_openrca_submissions,
)

TELECOM = FIXTURES / "formats" / "openrca" / "agent-Telecom.csv"


def test_single_failure_queries_from_the_telecom_csv():
    assert looks_like_openrca_specs(TELECOM) and looks_like_openrca_submissions(TELECOM)
    specs, found = quiet(load_openrca_specs, TELECOM)
    assert len(specs) == 51 and not found
    spec = specs[1]
    assert spec.id == "Telecom-1"
    assert spec.parameters["failures"] == [
        {
            "component": "docker_004",
            "reason": "CPU fault",
            "datetime": "2020-04-11 01:40:00",
            "level": "pod",
        }
    ]
    assert [(o.name, o.kind) for o in spec.fault_origin] == [("docker_004", "Pod")]
    assert spec.mechanism == "CPU fault" and spec.extra["openrca"]["asked"] == [
        "datetime",
        "reason",
    ]
    assert (
        "Root cause 1: component docker_004 (pod) at 2020-04-11 01:40:00 reason: CPU fault."
        in spec.ground_truth
    )


def test_predictions_become_submissions_and_verdicts():
    subs, _ = quiet(load_openrca_submissions, TELECOM)
    sub = subs[1]
    assert sub.key == ("Telecom-1", "1")
    assert (
        sub.diagnosis
        == "Root cause 1: component os_021; reason: network delay; occurred at 2020-04-11 01:44:00."
    )
    assert [e.name for e in sub.entities] == ["os_021"]
    assert sub.source["openrca_score"] == 0.0
    verdicts = load_openrca_verdicts(TELECOM)
    assert verdicts[0] == {"incident_id": "Telecom-0", "trial": "1", "verdict": True, "score": 1.0}


@pytest.mark.corpus
def test_second_failures_are_recovered_and_reported():
    folder = corpus("openrca")
    specs, found = quiet(load_openrca_specs, folder)
    by_id = {s.id: s for s in specs}
    assert len(specs) == 335
    assert sum(len(s.parameters["failures"]) == 2 for s in specs) == 74
    assert {Path(w.path).name for w in found} == {
        "agent-Bank.csv",
        "agent-Market-cloudbed-1.csv",
        "agent-Market-cloudbed-2.csv",
    }
    assert all(w.field == "groundtruth" for w in found)
    # task_6 (component + reason): the shared component appears once among the scoring points
    assert by_id["Bank-27"].parameters["failures"][1] == {
        "component": "apache02",
        "reason": "network latency",
        "datetime": None,
        "level": None,
    }
    # task_1 (time only): the other failure's time is the one left over
    assert by_id["Bank-11"].parameters["failures"][1]["datetime"] == "2021-03-07 16:29:00"
    assert [o.name for o in by_id["Market-cloudbed-1-6"].fault_origin] == [
        "node-1",
        "recommendationservice",
    ]


def _openrca_score(failures, asked, predictions):
    """OpenRCA's `evaluate()`: best permutation, exact component/reason, time within 60 s."""

    def close(a, b):
        try:
            delta = datetime.strptime(a, "%Y-%m-%d %H:%M:%S") - datetime.strptime(
                b, "%Y-%m-%d %H:%M:%S"
            )
        except (TypeError, ValueError):
            return False
        return abs(delta.total_seconds()) <= 60

    best = 0
    if len(predictions) == len(failures):
        for perm in itertools.permutations(predictions):
            hits = sum(
                close(f["datetime"], p.get("datetime"))
                if field == "datetime"
                else f[field] == p.get(field)
                for f, p in zip(failures, perm, strict=True)
                for field in asked
            )
            best = max(best, hits)
    return best / (len(failures) * len(asked))


@pytest.mark.parametrize("where", ["fixture", pytest.param("corpus", marks=pytest.mark.corpus)])
def test_recovered_ground_truth_reproduces_openrcas_own_scores(where):
    folder = TELECOM.parent if where == "fixture" else corpus("openrca")
    specs = {s.id: s for s in quiet(load_openrca_specs, folder)[0]}
    subs = quiet(load_openrca_submissions, folder)[0]
    rows = {}
    for file in sorted(folder.glob("agent-*.csv")):
        with file.open(encoding="utf-8", newline="") as handle:
            rows.update(
                {(str(file), f"line {i}"): r for i, r in enumerate(csv.DictReader(handle), 2)}
            )
    keys = {
        "component": "root cause component",
        "reason": "root cause reason",
        "datetime": "root cause occurrence datetime",
    }
    for sub in subs:
        spec = specs[sub.incident_id]
        row = rows[(sub.source["file"], sub.source["field"])]
        predictions = [
            {f: item.get(k) for f, k in keys.items()}
            for item in json.loads(row["prediction"]).values()
        ]
        ours = _openrca_score(
            spec.parameters["failures"], spec.extra["openrca"]["asked"], predictions
        )
        assert ours == pytest.approx(sub.source["openrca_score"], abs=1e-9), sub.incident_id


def test_query_file_with_scoring_points(tmp_path):
    folder = tmp_path / "Market" / "cloudbed-1"
    folder.mkdir(parents=True)
    with (folder / "query.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["task_index", "instruction", "scoring_points"])
        writer.writerow(
            [
                "task_6",
                "Two failures happened between 12:00 and 12:30.",
                "The 1-th predicted root cause component is node-1\n"
                "The 1-th predicted root cause reason is node disk read I/O consumption\n"
                "The 2-th predicted root cause component is frontend\n"
                "The 2-th predicted root cause reason is container CPU load",
            ]
        )
        writer.writerow(
            ["task_3", "One failure.", "The only predicted root cause component is cartservice"]
        )
    assert looks_like_openrca_specs(folder) and not looks_like_openrca_submissions(folder)
    specs, _ = quiet(load_openrca_specs, folder)
    assert [s.id for s in specs] == ["Market-cloudbed-1-0", "Market-cloudbed-1-1"]
    assert [o.name for o in specs[0].fault_origin] == ["node-1", "frontend"]
    assert specs[0].mechanism_keywords == ["node disk read I/O consumption", "container CPU load"]
    assert specs[1].parameters["failures"][0]["component"] == "cartservice"


def test_unparseable_prediction_warns(tmp_path):
    path = tmp_path / "agent-Toy.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["instruction", "prediction", "groundtruth", "score", "row_id", "task_index"]
        )
        writer.writerow(
            [
                "One failure.",
                "I think it is the database",
                "level: pod\ncomponent: db_1\nreason: CPU fault\ndatetime: 2020-01-01 00:00:00",
                "0.0",
                "0.0",
                "task_3",
            ]
        )
    (sub,), found = quiet(load_openrca_submissions, path)
    assert sub.diagnosis == "" and sub.entities == []
    assert found[0].field == "line 2.prediction"
