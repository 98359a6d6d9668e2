"""The store's schema version: a version 1 store (built here with version 1's DDL) is migrated in
place with its rows kept and then runs batch mode; a store from a newer version is refused with
exit 2 and left as it was."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from helpers import EXAMPLE_GT
from helpers.batch import FAST_BATCH, batch_provider
from helpers.fake_runs import EXAMPLE_SPECS, llm_judge, submissions, write_submissions

from ground_truth import InputError
from judge import EvalOptions, evaluate
from judge.cli import main
from judge.store import STORE_VERSION, Store

V1_DDL = """
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE judgments (
    key TEXT PRIMARY KEY, judge TEXT NOT NULL, model TEXT, params_hash TEXT NOT NULL,
    prompt_hash TEXT NOT NULL, schema_hash TEXT NOT NULL, rubric_hash TEXT NOT NULL,
    incident_id TEXT NOT NULL, trial TEXT NOT NULL, dimension_id TEXT NOT NULL,
    answers TEXT NOT NULL, attempts INTEGER NOT NULL, requests INTEGER NOT NULL, usage TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX judgments_case ON judgments (incident_id, trial, dimension_id);
CREATE INDEX judgments_prompt ON judgments (prompt_hash, rubric_hash);
CREATE TABLE errors (
    id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, judge TEXT NOT NULL, model TEXT,
    prompt_hash TEXT NOT NULL, incident_id TEXT NOT NULL, trial TEXT NOT NULL,
    dimension_id TEXT NOT NULL, error_kind TEXT, error TEXT, attempts INTEGER NOT NULL,
    requests INTEGER NOT NULL, attempt_errors TEXT NOT NULL, usage TEXT, created_at TEXT NOT NULL
);
CREATE TABLE params (params_hash TEXT PRIMARY KEY, params TEXT NOT NULL);
CREATE TABLE leases (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL);
"""
"""Version 1's tables, as diagnosis-judge created them before the batch tables existed."""

OLD_ANSWER = json.dumps([{"question_id": "D1-Q1", "answer": "Yes", "evidence": "old"}])


def old_store(path: Path, version: str = "1") -> Path:
    with sqlite3.connect(path) as db:
        db.executescript(V1_DDL)
        db.execute("INSERT INTO meta VALUES ('store_version', ?)", (version,))
        db.execute(
            "INSERT INTO judgments VALUES ('k-old', 'llm:old', 'old', 'p', 'h', 's', 'r',"
            " 'inc', 't', 'D1', ?, 1, 1, NULL, '2026-01-01T00:00:00')",
            (OLD_ANSWER,),
        )
        db.execute(
            "INSERT INTO errors (key, judge, prompt_hash, incident_id, trial, dimension_id,"
            " error_kind, error, attempts, requests, attempt_errors, created_at) VALUES"
            " ('k-err', 'llm:old', 'h', 'inc', 't', 'D2', 'server', 'down', 1, 1, '{}', 'x')"
        )
    db.close()
    return path


def version_of(path: Path) -> str:
    with sqlite3.connect(path) as db:
        (found,) = db.execute("SELECT value FROM meta WHERE name = 'store_version'").fetchone()
    db.close()
    return str(found)


def test_a_version_1_store_is_migrated_in_place_and_then_runs_a_batch(tmp_path: Path) -> None:
    path = old_store(tmp_path / "old.sqlite")
    with batch_provider() as server:
        result = evaluate(
            EXAMPLE_SPECS,
            submissions(2),
            judge=llm_judge(server),
            options=EvalOptions(store=path, batch=FAST_BATCH, granularity="dimension"),
        )
    assert STORE_VERSION == "5" and version_of(path) == "5"
    assert result.complete and {c.batch_id for c in result.calls} == {"batch_fake000000"}
    with Store(path) as store:
        kept = [r for r in store.rows() if r["key"] == "k-old"]
        stats = store.stats()
    assert kept and kept[0]["answers"] == json.loads(OLD_ANSWER)
    assert stats["judgments"] == 1 + 6 and stats["errors"] == {"server": 1}
    assert [b["id"] for b in stats["batches"]] == ["batch_fake000000"]


def test_a_version_1_store_reads_without_being_written(tmp_path: Path, capsys) -> None:
    path = old_store(tmp_path / "old.sqlite")
    assert main(["store", "stats", str(path), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["judgments"] == 1 and stats["batches"] == []
    assert version_of(path) == "1"  # reading migrates nothing


def test_a_store_from_a_newer_version_is_refused_and_left_alone(tmp_path: Path, capsys) -> None:
    path = old_store(tmp_path / "new.sqlite", version="6")
    with pytest.raises(InputError, match="newer diagnosis-judge") as refused:
        Store(path)
    assert refused.value.field == "meta.store_version"
    assert main(["store", "stats", str(path)]) == 2
    assert "store version 6 was written by a newer diagnosis-judge" in capsys.readouterr().err
    outputs = write_submissions(tmp_path / "subs.jsonl", 1)
    code = main(
        ["eval", "--ground-truth", str(EXAMPLE_GT), "--outputs", str(outputs),
         "--result-file", str(tmp_path / "r.json"), "--store", str(path), "--no-progress",
         "--judge-model", "openai/fake-judge", "--api-base", "http://127.0.0.1:9/v1"]
    )  # fmt: skip
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2 and "upgrade diagnosis-judge" in err and str(path) in err
    assert not (tmp_path / "r.json").exists()
    assert version_of(path) == "6"
    with sqlite3.connect(path) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert db.execute("SELECT count(*) FROM judgments").fetchone() == (1,)
    db.close()
    assert "batches" not in tables  # nothing of this version's schema was written into it


def test_an_unknown_version_is_refused(tmp_path: Path) -> None:
    path = old_store(tmp_path / "odd.sqlite", version="beta")
    with pytest.raises(InputError, match="store version 'beta', expected one of '5'"):
        Store(path)
    with pytest.raises(InputError, match="expected one of '1', '2', '3', '4', '5'"):
        Store(path, readonly=True)
