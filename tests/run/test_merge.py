"""`judge merge`: the shards of a run merge into the result one run writes, number for number,
and shards that cannot belong together are refused (exit 2, saying which file and why)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from judge.cli import main
from judge.testing import FakeProvider, FakeProviderConfig

# Written at run time, or by the process: not the run's content.
VOLATILE = {"created_at", "config", "exit_code", "exit_reason"}


def _eval(gt: Path, outputs: Path, result: Path, *extra: str) -> None:
    code = main(["eval", "--ground-truth", str(gt), "--outputs", str(outputs),
                 "--result-file", str(result), "--no-progress", "--granularity", "dimension",
                 *extra])  # fmt: skip
    assert code == 0


def _shards(gt: Path, outputs: Path, folder: Path, n: int, *extra: str) -> list[Path]:
    paths = [folder / f"shard{i}.json" for i in range(1, n + 1)]
    for i, path in enumerate(paths, 1):
        _eval(gt, outputs, path, "--shard", f"{i}/{n}", *extra)
    return paths


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.mark.slow
def test_rules_shards_merge_into_the_single_run(example_ground_truth, example_outputs, tmp_path):
    one = tmp_path / "one.json"
    _eval(example_ground_truth, example_outputs, one)
    shards = _shards(example_ground_truth, example_outputs, tmp_path, 4)
    merged = tmp_path / "merged.json"
    assert main(["merge", *map(str, reversed(shards)), "-o", str(merged)]) == 0
    single, result = _load(one), _load(merged)
    assert {k: v for k, v in result.items() if k not in VOLATILE} == {
        k: v for k, v in single.items() if k not in VOLATILE
    }
    assert "shard" not in result["config"] and len(result["config"]["merged_from"]) == 4
    assert {k: v for k, v in result["config"].items() if k != "merged_from"} == single["config"]


def _comparable_calls(result: dict) -> list[tuple]:
    """The same calls, asked the same; `cached` aside: a single run asks two trials with the
    same diagnosis once and serves the second, shards in two processes ask both."""
    return [
        (c["incident_id"], c["trial"], c["dimension_id"], c["judge"], c["prompt_hash"],
         c["attempts"], c["error_kind"])
        for c in result["calls"]
    ]  # fmt: skip


@pytest.mark.slow
def test_llm_shards_merge_into_the_single_run(example_ground_truth, example_outputs, tmp_path):
    with FakeProvider(FakeProviderConfig(seed=5)) as server:
        llm = ("--judge-model", "openai/fake-judge", "--api-base", server.url)
        one = tmp_path / "one.json"
        _eval(example_ground_truth, example_outputs, one, *llm)
        asked_once = len(server.calls)
        shards = _shards(example_ground_truth, example_outputs, tmp_path, 3, *llm)
        assert len(server.calls) >= 2 * asked_once  # each shard asked its own units
    merged, store = tmp_path / "merged.json", tmp_path / "merged.sqlite"
    stores = [p.with_suffix(".sqlite") for p in shards]
    assert (
        main(["merge", *map(str, shards + stores), "-o", str(merged), "--store", str(store)]) == 0
    )
    single, result = _load(one), _load(merged)
    for part in ("judgments", "cases", "incidents", "overall", "by_agent", "complete"):
        assert result[part] == single[part], part
    assert _comparable_calls(result) == _comparable_calls(single)
    assert result["usage"]["calls_planned"] == single["usage"]["calls_planned"]
    assert result["config"]["judge"] == single["config"]["judge"]
    with sqlite3.connect(store) as a, sqlite3.connect(one.with_suffix(".sqlite")) as b:
        query = "SELECT key, answers FROM judgments ORDER BY key"
        assert a.execute(query).fetchall() == b.execute(query).fetchall()


@pytest.mark.slow
def test_merged_store_answers_a_rerun_without_a_call(
    example_ground_truth, example_outputs, tmp_path
):
    with FakeProvider(FakeProviderConfig(seed=5)) as server:
        llm = ("--judge-model", "openai/fake-judge", "--api-base", server.url)
        shards = _shards(example_ground_truth, example_outputs, tmp_path, 2, *llm)
        store = tmp_path / "all.sqlite"
        stores = [str(p.with_suffix(".sqlite")) for p in shards]
        assert main(["merge", *stores, "--store", str(store)]) == 0
        before = len(server.calls)
        _eval(example_ground_truth, example_outputs, tmp_path / "again.json", *llm,
              "--store", str(store))  # fmt: skip
        assert len(server.calls) == before


@pytest.fixture
def rules_shards(example_ground_truth, example_outputs, tmp_path) -> list[Path]:
    return _shards(example_ground_truth, example_outputs, tmp_path, 3)


def _refused(capsys, *args: str) -> str:
    assert main(["merge", *args]) == 2
    return capsys.readouterr().err


@pytest.mark.slow
def test_a_missing_shard_is_named(rules_shards, tmp_path, capsys) -> None:
    err = _refused(capsys, str(rules_shards[0]), str(rules_shards[2]), "-o", str(tmp_path / "m"))
    assert "shard(s) 2/3 missing" in err
    assert not (tmp_path / "m").exists()


@pytest.mark.slow
def test_overlapping_shards_are_refused(rules_shards, tmp_path, capsys) -> None:
    err = _refused(capsys, *map(str, rules_shards), str(rules_shards[1]), "-o", str(tmp_path / "m"))
    assert "shard 2/3 is given twice" in err


@pytest.mark.slow
def test_shards_of_another_split_judge_or_rubric_are_refused(
    example_ground_truth, example_outputs, rules_shards, tmp_path, capsys
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (two,) = _shards(example_ground_truth, example_outputs, other, 1)
    err = _refused(capsys, *map(str, rules_shards), str(two), "-o", str(tmp_path / "m"))
    assert "config.shard" in err and "count is 1" in err
    fewer = tmp_path / "fewer.json"
    _eval(example_ground_truth, example_outputs, fewer, "--shard", "2/3", "--dimensions",
          "D1,D2")  # fmt: skip
    shards = [str(rules_shards[0]), str(fewer), str(rules_shards[2])]
    err = _refused(capsys, *shards, "-o", str(tmp_path / "m"))
    assert str(fewer) in err and "config.shard" in err  # another set of units
    edited = _load(rules_shards[1])
    edited["config"]["judge"]["label"] = "rules-v2"
    (tmp_path / "edited.json").write_text(json.dumps(edited))
    shards = [str(rules_shards[0]), str(tmp_path / "edited.json"), str(rules_shards[2])]
    err = _refused(capsys, *shards, "-o", str(tmp_path / "m"))
    assert "config.judge" in err and "rules-v2" in err


@pytest.mark.slow
def test_an_unsharded_result_is_refused(example_ground_truth, example_outputs, tmp_path, capsys):
    one = tmp_path / "one.json"
    _eval(example_ground_truth, example_outputs, one)
    err = _refused(capsys, str(one), "-o", str(tmp_path / "m"))
    assert "not a shard's result" in err


@pytest.mark.slow
def test_a_different_rubric_file_is_refused(rules_shards, tmp_path, capsys) -> None:
    from judge.checklist.rubric import rubrics_dir

    text = (
        (rubrics_dir() / "sregym-v3.yaml")
        .read_text()
        .replace("threshold: 0.70", "threshold: 0.60", 1)
    )
    (tmp_path / "r.yaml").write_text(text)
    err = _refused(capsys, *map(str, rules_shards), "-o", str(tmp_path / "m"),
                   "--rubric", str(tmp_path / "r.yaml"))  # fmt: skip
    assert "rubric hash" in err
