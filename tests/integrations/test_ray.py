"""`judge.integrations.ray` on a local Ray cluster (2 CPUs, started once for the module): the
result through Ray, merged from its shards' stores and results or returned as rows, is the one
a single process writes, and the one `judge eval --shard 1/2, 2/2` + `judge merge` write; the
provider is asked no more than one process asks plus the requests in flight; the budget is
split so that the whole job keeps it."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLE_GT, EXAMPLE_OUTPUTS

from ground_truth import Submission, load_specs, load_submissions
from judge import evaluate, make_judge
from judge.api import EvalOptions
from judge.cli import main
from judge.run.options import Limits
from judge.testing import FakeProvider, FakeProviderConfig

ray = pytest.importorskip("ray", reason="the `ray` extra: pip install -e '.[test,ray]'")

from judge.integrations.ray import (  # noqa: E402  (after the extra is known to be there)
    evaluate_ray,
    judgment_rows,
    submissions_dataset,
    worker_limits,
)

pytestmark = [pytest.mark.ray, pytest.mark.slow]

# What a run's content is: the scores, every answer, and what could not be paired.
CONTENT = ("judgments", "cases", "incidents", "overall", "by_agent", "complete", "missing",
           "orphans", "incomplete", "errors")  # fmt: skip
IN_FLIGHT = 4


@pytest.fixture(scope="module", autouse=True)
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="warning")
    logging.getLogger("ray").setLevel(logging.WARNING)  # Ray Data's debug lines: pages a test
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def inputs():
    return load_specs(EXAMPLE_GT), load_submissions(EXAMPLE_OUTPUTS)


@pytest.fixture(scope="module")
def provider():
    with FakeProvider(FakeProviderConfig(seed=5)) as server:
        yield server


def _content(result: Any) -> dict[str, Any]:
    data = json.loads(result.model_dump_json()) if not isinstance(result, dict) else result
    return {part: data[part] for part in CONTENT}


def _calls(result: Any) -> list[tuple]:
    """The calls asked, and how (timing and `cached` aside: a single run serves a prompt it
    already asked, shards in two processes ask both)."""
    data = json.loads(result.model_dump_json()) if not isinstance(result, dict) else result
    return [
        (c["incident_id"], c["trial"], c["dimension_id"], c["judge"], c["prompt_hash"],
         c["attempts"], c["error_kind"])
        for c in data["calls"]
    ]  # fmt: skip


def _rows(result: Any) -> list[dict[str, Any]]:
    """A result's judgments as `judgment_rows` gives them."""
    rows = [j.model_dump(mode="json") for j in result.judgments]
    for row in rows:
        row["identity"] = None if row["identity"] is None else json.dumps(row["identity"])
    return _sorted(rows)


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r["incident_id"], r["trial"], r["dimension_id"],
                                       r["question_id"]))  # fmt: skip


def _stored(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT key, answers FROM judgments ORDER BY key").fetchall()


def test_llm_through_ray_is_one_process_and_the_cli_shards(inputs, provider, tmp_path):
    specs, subs = inputs
    llm = {"api_base": provider.url, "retry_wait": 0.01}
    before = len(provider.calls)
    one = evaluate(
        specs,
        subs,
        judge=make_judge("openai/fake-judge", **llm),
        options=EvalOptions(max_concurrent=IN_FLIGHT, store=tmp_path / "one.sqlite"),
    )
    asked_once = len(provider.calls) - before

    before = len(provider.calls)
    run = evaluate_ray(
        submissions_dataset(subs),
        specs,
        tmp_path / "ray",
        judge="openai/fake-judge",
        judge_options=llm,
        options=EvalOptions(max_concurrent=IN_FLIGHT),
        workers=2,
    )
    asked_by_ray = len(provider.calls) - before
    assert asked_once > 0 and asked_by_ray <= asked_once + IN_FLIGHT

    shards = [tmp_path / f"cli{i}.json" for i in (1, 2)]
    for i, path in enumerate(shards, 1):
        code = main(["eval", "-g", str(EXAMPLE_GT), "-o", str(EXAMPLE_OUTPUTS), "-r", str(path),
                     "--judge-model", "openai/fake-judge", "--api-base", provider.url,
                     "--max-concurrent", "2", "--no-progress", "--shard", f"{i}/2"])  # fmt: skip
        assert code == 0
    merged = tmp_path / "cli.json"
    assert main(["merge", *map(str, shards), "-o", str(merged)]) == 0
    cli = json.loads(merged.read_text())

    assert _content(run.result) == _content(one) == _content(cli)
    assert _calls(run.result) == _calls(one) == _calls(cli)
    assert json.loads(run.result_file.read_text()) == json.loads(run.result.model_dump_json())
    assert run.result.config["judge"] == one.config["judge"]
    assert _stored(run.store) == _stored(tmp_path / "one.sqlite")
    assert [p.name for p in run.shard_results] == ["shard-1-of-2.json", "shard-2-of-2.json"]

    again = len(provider.calls)  # the shards' stores answer a rerun of the job
    rerun = evaluate_ray(
        submissions_dataset(subs), specs, tmp_path / "ray", judge="openai/fake-judge",
        judge_options=llm, options=EvalOptions(max_concurrent=IN_FLIGHT), workers=2,
    )  # fmt: skip
    assert len(provider.calls) == again
    assert _content(rerun.result) == _content(one)


def test_llm_rows_are_the_judgments_of_one_process(inputs, provider, tmp_path):
    specs, subs = inputs
    llm = {"api_base": provider.url, "retry_wait": 0.01}
    one = evaluate(specs, subs, judge=make_judge("openai/fake-judge", **llm),
                   options=EvalOptions(granularity="dimension"))  # fmt: skip
    rows = judgment_rows(
        submissions_dataset(subs),
        specs,
        judge="openai/fake-judge",
        judge_options=llm,
        options=EvalOptions(granularity="dimension", max_concurrent=IN_FLIGHT),
        workers=2,
        shards=3,
        work_dir=tmp_path,
    ).take_all()
    assert _sorted(rows) == _rows(one)
    assert sorted(p.name for p in tmp_path.glob("*.sqlite")) == [
        f"shard-{i}-of-3.sqlite" for i in (1, 2, 3)
    ]


@pytest.mark.parametrize("granularity", ["submission", "dimension"])
def test_the_rules_judge_through_ray(inputs, tmp_path, granularity):
    specs, subs = inputs
    # an incident nobody answered and an answer to no incident: every shard lists them
    orphan = Submission(incident_id="no-such-incident", trial="1", diagnosis="it was DNS")
    subs = [s for s in subs if s.incident_id != specs[0].id] + [orphan]
    options = EvalOptions(granularity=granularity)
    one = evaluate(specs, subs, options=options)
    assert one.missing == [specs[0].id] and len(one.orphans) == 1
    dataset = submissions_dataset(subs)
    run = evaluate_ray(dataset, specs, tmp_path, options=options, workers=2, shards=3)
    assert _content(run.result) == _content(one)
    assert _sorted(judgment_rows(dataset, specs, options=options).take_all()) == _rows(one)


def test_rows_of_plain_columns_are_submissions(inputs, tmp_path):
    specs, subs = inputs
    columns = [{"incident_id": s.incident_id, "trial": s.trial, "diagnosis": s.diagnosis,
                "agent": s.agent} for s in subs]  # fmt: skip
    one = evaluate(specs, [s.model_copy(update={"source": {}}) for s in subs])
    run = evaluate_ray(ray.data.from_items(columns), specs, tmp_path)
    assert _content(run.result) == _content(one)


def test_shards_no_unit_fell_in_are_merged_too(inputs, tmp_path):
    specs, subs = inputs
    one = evaluate(specs, subs[:2])
    run = evaluate_ray(submissions_dataset(subs[:2]), specs, tmp_path, shards=6)
    assert len(run.shard_results) == 6 and _content(run.result) == _content(one)


def test_the_cost_cap_holds_for_the_whole_job(inputs, provider, tmp_path):
    """A priced model (litellm's price for gpt-4o-mini) and a cap at a third of what the whole
    run costs: each of the two shards stops at its half, and the job spends no more than the
    cap, but for the calls in flight when a shard reached its share (one each)."""
    specs, subs = inputs
    llm = {"api_base": provider.url, "retry_wait": 0.01}
    full = evaluate(specs, subs, judge=make_judge("openai/gpt-4o-mini", **llm))
    assert full.usage is not None and full.usage.cost_usd
    cap = full.usage.cost_usd / 3
    run = evaluate_ray(
        submissions_dataset(subs), specs, tmp_path, judge="openai/gpt-4o-mini",
        judge_options=llm, options=EvalOptions(max_concurrent=2, max_cost=cap), workers=2,
    )  # fmt: skip
    assert run.result.usage is not None and run.result.usage.cost_usd is not None
    dearest = max((c.usage.cost_usd or 0.0) if c.usage else 0.0 for c in full.calls)
    assert run.result.usage.cost_usd <= cap + 2 * dearest
    assert not run.result.complete and run.result.stopped is not None
    assert run.result.stopped.kind == "max_cost"
    unscored = [j for j in run.result.judgments if j.answer is None]
    assert unscored and all("not judged" in (j.unscored_reason or "") for j in unscored)


def test_the_budget_is_split_in_equal_shares():
    limits = Limits(max_concurrent=5, rpm=600, tpm=90_000, max_cost=3.0, max_errors="9")
    share = worker_limits(limits, workers=2, shards=3)
    assert (share.max_concurrent, share.rpm, share.tpm) == (2, 300, 45_000)
    assert share.max_cost == pytest.approx(1.0)
    assert share.max_errors is not None and share.max_errors.limit == 3
    assert worker_limits(Limits(max_errors="10%"), 2, 3).max_errors.describe() == "10% of the calls"
    assert worker_limits(Limits(), 1, 1) == Limits()
    with pytest.raises(ValueError, match="cannot be shared by 8 workers"):
        worker_limits(Limits(max_concurrent=5), workers=8, shards=8)


def test_what_the_ray_path_cannot_do_is_refused(inputs, tmp_path):
    specs, subs = inputs
    dataset = submissions_dataset(subs)
    with pytest.raises(ValueError, match="give neither"):
        evaluate_ray(dataset, specs, tmp_path, options=EvalOptions(store=tmp_path / "s.sqlite"))
    with pytest.raises(ValueError, match="cannot be shared"):
        evaluate_ray(dataset, specs, tmp_path, options=EvalOptions(max_concurrent=1), workers=2)
    with pytest.raises(Exception, match="no `incident_id` column"):
        evaluate_ray(ray.data.from_items([{"diagnosis": "x"}]), specs, tmp_path)
    traced = subs[0].model_copy(update={"entities": []}).model_dump(mode="json")
    traced["entities"] = [{"kind": "deployment", "name": "checkout"}]
    rows = [{"incident_id": subs[0].incident_id, "trial": "9", "submission": json.dumps(traced)}]
    with pytest.raises(Exception, match="structured entities"):
        judgment_rows(ray.data.from_items(rows), specs).take_all()
