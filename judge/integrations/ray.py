"""Judging a Ray Dataset of submissions on a Ray cluster, in shards (`pip install
"diagnosis-judge[ray]"`).

The dataset's rows are submissions: an `incident_id` column, a `trial` column (optional:
trial "1"), and either a `submission` column holding a `Submission` as JSON
(`submissions_dataset` makes such a dataset) or the submission's own fields as columns
(`diagnosis`, `agent`, ...). The run is cut as `judge eval --shard I/N` cuts it: a row goes to
the shard of each of its units (`judge.run.shard`), Ray groups the rows by shard and a pool of
`workers` actors judges one whole shard per call (`map_groups`, a `map_batches` whose batch is
one group), each shard a run of its own with its own store:

- `evaluate_ray(...)` writes each shard's result and store into `work_dir` (a folder every
  worker and the driver can reach) and merges them with `judge merge`'s code into the result
  one process would have written (`RayRun.result`, `result.json`, `store.sqlite`);
- `judgment_rows(...)` returns the answers as a Ray Dataset, one row per (case, question) with
  the result's judgment fields (`JUDGMENT_COLUMNS`), for pipelines that stay in Ray.

One provider budget is split across the workers in equal shares, so that the whole job never
exceeds what it was given (`worker_limits`): each shard's run gets `max_concurrent // workers`
requests in flight and `rpm / workers`, `tpm / workers` (at most `workers` shards run at
once), and `max_cost / shards`, `max_errors / shards` (each shard's run is metered on its own).
Shares are not moved between workers: a worker that finishes early or spends less leaves its
share unused, and a shard that reaches its cost share stops as a run past `--max-cost` does
(its result `complete: false`, the unasked questions unscored); running the job again with
the same `work_dir` serves every stored answer and asks only the rest.

Submissions with a simulator trajectory or structured entities are refused: their resolution
and entity sections need every submission at once (`judge eval --shard` computes them in
every shard from the files).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import pyarrow as pa
import ray.data

from ground_truth.errors import InputError
from ground_truth.models import IncidentSpec, Submission

from ..api import EvalOptions, evaluate_async, run_sync
from ..checklist.prompts import PromptRenderer
from ..checklist.results import EvalResult, write_result
from ..checklist.rubric import Rubric, load_rubric
from ..judges import Judge, make_judge
from ..run.intake import Intake
from ..run.limits import ErrorBudget
from ..run.merge import merge_results
from ..run.options import Limits
from ..run.shard import Shard, unit_bucket
from ..store import merge_stores

__all__ = [
    "JUDGMENT_COLUMNS",
    "RayRun",
    "evaluate_ray",
    "judgment_rows",
    "submissions_dataset",
    "worker_limits",
]

JudgeSpec = str | Callable[[], Judge]
"""A judge for the workers to build: a `make_judge` model string, or a function returning a
judge (each shard builds its own: a judge's HTTP client belongs to one event loop)."""

JUDGMENT_COLUMNS = pa.schema(
    [
        ("incident_id", pa.string()),
        ("trial", pa.string()),
        ("dimension_id", pa.string()),
        ("question_id", pa.string()),
        ("answer", pa.string()),
        ("evidence", pa.string()),
        ("confidence", pa.string()),
        ("confidence_score", pa.float64()),
        ("unscored_reason", pa.string()),
        ("judge", pa.string()),
        ("prompt_hash", pa.string()),
        ("identity", pa.string()),
        ("stage", pa.string()),
        ("abstained", pa.bool_()),
    ]
)
"""The rows `judgment_rows` returns: a result's `Judgment` fields (`identity` as JSON)."""

SHARD_COLUMN = "_shard"
WORKER_CPUS = 0.5
"""CPUs each worker actor reserves. Less than one: the actors are started before the shuffle
that groups the rows by shard, whose tasks need CPUs too (on a 2-CPU machine two 1-CPU
workers left none, and the job waited for ever); a judge waiting on a provider needs little."""


@dataclass
class RayRun:
    """What `evaluate_ray` wrote: the merged result (also in `result_file`), the merged store,
    and each shard's result file and store (in shard order)."""

    result: EvalResult
    result_file: Path
    store: Path
    shard_results: list[Path]
    shard_stores: list[Path]


def submissions_dataset(submissions: Iterable[Submission]) -> ray.data.Dataset:
    """A Ray Dataset of `submissions`, one row each (`incident_id`, `trial`, `submission`)."""
    return ray.data.from_items(
        [
            {"incident_id": s.incident_id, "trial": s.trial, "submission": s.model_dump_json()}
            for s in submissions
        ]
    )


def worker_limits(limits: Limits, workers: int, shards: int) -> Limits:
    """One shard's share of the job's `limits` (see the module docstring): in-flight requests
    and rates split over the workers that run at once, cost and error budgets over the shards."""
    if workers < 1 or shards < 1:
        raise ValueError(f"workers and shards must be at least 1, got {workers} and {shards}")
    in_flight = limits.max_concurrent // workers
    if in_flight < 1:
        raise ValueError(
            f"max_concurrent {limits.max_concurrent} cannot be shared by {workers} workers: "
            "give each at least one request in flight"
        )
    errors = limits.max_errors
    if isinstance(errors, str):
        errors = ErrorBudget.parse(errors)
    if errors is not None and not errors.fraction:
        errors = ErrorBudget(errors.limit / shards, False)
    return replace(
        limits,
        max_concurrent=in_flight,
        rpm=limits.rpm / workers if limits.rpm else None,
        tpm=limits.tpm / workers if limits.tpm else None,
        max_cost=limits.max_cost / shards if limits.max_cost is not None else None,
        max_errors=errors,
    )


def evaluate_ray(
    dataset: ray.data.Dataset,
    specs: list[IncidentSpec],
    work_dir: str | Path,
    *,
    rubric: Rubric | str | Path | None = None,
    judge: JudgeSpec = "rules",
    judge_options: dict[str, Any] | None = None,
    options: EvalOptions | None = None,
    workers: int = 2,
    shards: int | None = None,
    num_cpus: float = WORKER_CPUS,
) -> RayRun:
    """Judge `dataset`'s submissions on the Ray cluster (`ray.init()` first) in `shards`
    shards (default: one per worker), each with its own store, and merge them into one result.

    `judge`: a model string for `make_judge` (with `judge_options`: `api_base`, `timeout`, ...)
    or a function returning the judge. `options`: as for `evaluate`; its limits are the whole
    job's (`worker_limits` splits them), and its store and shard are the job's to set.
    `num_cpus`: what each worker actor reserves (`WORKER_CPUS`). Writes `shard-I-of-N.json`
    and `.sqlite` per shard, then `result.json` and `store.sqlite`, into `work_dir`."""
    folder = Path(work_dir)
    folder.mkdir(parents=True, exist_ok=True)
    job = _Job.plan(
        dataset, specs, rubric, judge, judge_options, options, workers, shards, num_cpus
    )
    done = {row["shard"]: row for row in job.run(dataset, folder, rows=False).take_all()}
    for index in range(1, job.shards + 1):  # a shard no unit fell in: no group, no worker
        if index not in done:
            done[index] = _ShardWorker(job, folder, rows=False).shard(
                Shard(index=index, count=job.shards), []
            )
    by_shard = [done[index] for index in sorted(done)]
    shard_results = [Path(row["result"]) for row in by_shard]
    shard_stores = [Path(row["store"]) for row in by_shard]
    result = merge_results(shard_results, job.rubric)
    result_file, store = folder / "result.json", folder / "store.sqlite"
    write_result(result, result_file)
    merge_stores(store, shard_stores)
    return RayRun(result, result_file, store, shard_results, shard_stores)


def judgment_rows(
    dataset: ray.data.Dataset,
    specs: list[IncidentSpec],
    *,
    rubric: Rubric | str | Path | None = None,
    judge: JudgeSpec = "rules",
    judge_options: dict[str, Any] | None = None,
    options: EvalOptions | None = None,
    workers: int = 2,
    shards: int | None = None,
    work_dir: str | Path | None = None,
    num_cpus: float = WORKER_CPUS,
) -> ray.data.Dataset:
    """`dataset`'s answers as a (lazy) Ray Dataset with `JUDGMENT_COLUMNS`, one row per
    (case, question), judged as `evaluate_ray` judges them; with `work_dir`, each shard keeps
    its store there (`shard-I-of-N.sqlite`), and running again asks nothing stored."""
    folder = Path(work_dir) if work_dir is not None else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    job = _Job.plan(
        dataset, specs, rubric, judge, judge_options, options, workers, shards, num_cpus
    )
    return job.run(dataset, folder, rows=True)


# ------------------------------------------------------------------ the driver's plan


@dataclass
class _Job:
    """What every shard's worker needs, worked out once on the driver from the dataset's
    `incident_id` and `trial` columns: the whole run's units (for each shard's record), the
    specs no submission answers and the submissions no spec asks for (every shard's result
    lists them, as `judge eval --shard` does)."""

    specs: list[IncidentSpec]
    rubric: Rubric
    judge: JudgeSpec
    judge_options: dict[str, Any]
    options: EvalOptions
    workers: int
    shards: int
    num_cpus: float
    dimension_ids: list[str]
    record: dict[str, Any]
    missing: list[str]
    orphans: list[Submission]

    @classmethod
    def plan(
        cls,
        dataset: ray.data.Dataset,
        specs: list[IncidentSpec],
        rubric: Rubric | str | Path | None,
        judge: JudgeSpec,
        judge_options: dict[str, Any] | None,
        options: EvalOptions | None,
        workers: int,
        shards: int | None,
        num_cpus: float,
    ) -> _Job:
        options = options or EvalOptions()
        if options.shard is not None or options.storage.store is not None:
            raise ValueError("the Ray path sets each shard's `shard` and `store`: give neither")
        if not isinstance(rubric, Rubric):
            rubric = load_rubric(rubric) if rubric is not None else load_rubric()
        if options.dimensions:
            rubric = rubric.select(options.dimensions)
        count = shards or workers
        worker_limits(options.limits, workers, count)  # a budget that cannot be split fails here
        keys = _keys(dataset)
        intake = Intake(
            specs, keys, rubric, PromptRenderer(), options.granularity, Shard(index=1, count=count)
        )
        for _ in intake.units():  # every unit's key, for the shards' record
            pass
        dimension_ids = [d.id for d in intake.dimensions]
        matching = intake.matching()
        record = {**(intake.shard_record() or {}), "k": options.k}
        orphans = _orphans(dataset, {o.incident_id for o in matching.orphans})
        return cls(
            specs, rubric, judge, dict(judge_options or {}), options, workers, count, num_cpus,
            dimension_ids, record, matching.missing, orphans,
        )  # fmt: skip

    def run(self, dataset: ray.data.Dataset, folder: Path | None, rows: bool) -> ray.data.Dataset:
        spec_ids = {spec.id for spec in self.specs}
        routed = dataset.map_batches(
            cast(Any, _route),  # Ray's stubs do not see fn_kwargs
            batch_format="pyarrow",
            fn_kwargs={"spec_ids": spec_ids, "dimension_ids": self.dimension_ids,
                       "shards": self.shards},
        )  # fmt: skip
        return routed.groupby(SHARD_COLUMN, num_partitions=self.shards).map_groups(
            _ShardWorker,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=self.workers),
            num_cpus=self.num_cpus,
            fn_constructor_kwargs={"job": self, "folder": folder, "rows": rows},
        )


def _keys(dataset: ray.data.Dataset) -> list[Submission]:
    """Each row's incident id and trial, as submissions with no diagnosis."""
    columns = [c for c in ("incident_id", "trial") if c in dataset.columns()]
    if "incident_id" not in columns:
        raise InputError("dataset", "no `incident_id` column: each row is one submission")
    rows = dataset.select_columns(columns).take_all()
    return [
        Submission(incident_id=row["incident_id"], trial=row.get("trial") or "1", diagnosis="")
        for row in rows
    ]


def _orphans(dataset: ray.data.Dataset, incident_ids: set[str]) -> list[Submission]:
    """The rows whose incident has no spec, as submissions."""
    if not incident_ids:
        return []
    found = dataset.map_batches(
        cast(Any, _rows_of), batch_format="pyarrow", fn_kwargs={"incident_ids": incident_ids}
    ).take_all()
    return [_submission(row) for row in found]


def _rows_of(batch: pa.Table, incident_ids: set[str]) -> pa.Table:
    ids = [str(i) for i in batch.column("incident_id").to_pylist()]
    return batch.filter(pa.array([i in incident_ids for i in ids], pa.bool_()))


# ------------------------------------------------------------------ on the workers


def _route(batch: pa.Table, spec_ids: set[str], dimension_ids: list[str], shards: int) -> pa.Table:
    """Each row once for every shard that holds one of its units; rows of no spec dropped
    (every shard is given the orphans anyway)."""
    picked: list[int] = []
    shard_of: list[int] = []
    for index, row in enumerate(batch.select(_key_columns(batch)).to_pylist()):
        key = Submission(incident_id=row["incident_id"], trial=row.get("trial") or "1",
                         diagnosis="")  # fmt: skip
        if key.incident_id not in spec_ids:
            continue
        held = {unit_bucket(key.incident_id, key.trial, d, shards) for d in dimension_ids}
        for bucket in sorted(held):
            picked.append(index)
            shard_of.append(bucket + 1)
    return batch.take(pa.array(picked, pa.int64())).append_column(
        SHARD_COLUMN, pa.array(shard_of, pa.int64())
    )


def _key_columns(batch: pa.Table) -> list[str]:
    return [c for c in ("incident_id", "trial") if c in batch.column_names]


def _submission(row: dict[str, Any]) -> Submission:
    """A dataset row as a `Submission` (from its `submission` JSON, else from its columns)."""
    where = f"dataset row {row.get('incident_id')}/{row.get('trial') or '1'}"
    try:
        if row.get("submission") is not None:
            sub = Submission.model_validate_json(row["submission"])
        else:
            fields = {k: v for k, v in row.items() if k in Submission.model_fields}
            sub = Submission.model_validate({k: v for k, v in fields.items() if v is not None})
    except ValueError as exc:
        raise InputError(where, f"not a submission: {exc}") from None
    if sub.trajectory is not None or sub.entities:
        raise InputError(
            where,
            "carries a simulator trajectory or structured entities, which the Ray path does "
            "not check: use `judge eval --shard I/N` and `judge merge`",
        )
    return sub


class _ShardWorker:
    """One Ray actor: judges whole shards, one per call, each a run with its own store."""

    def __init__(self, job: _Job, folder: Path | None, rows: bool):
        self.job = job
        self.folder = folder
        self.rows = rows
        self.limits = worker_limits(job.options.limits, job.workers, job.shards)

    def __call__(self, group: pa.Table) -> pa.Table:
        shard = Shard(index=int(group.column(SHARD_COLUMN)[0].as_py()), count=self.job.shards)
        subs = [_submission(row) for row in group.drop_columns([SHARD_COLUMN]).to_pylist()]
        if self.rows:
            return _judgment_table(self._judged(shard, subs))
        return pa.Table.from_pylist([self.shard(shard, subs)])

    def shard(self, shard: Shard, subs: list[Submission]) -> dict[str, Any]:
        """Judge `subs` as `shard` and write its result; where its result and store are."""
        assert self.folder is not None
        path = self.folder / f"shard-{shard.index}-of-{shard.count}.json"
        write_result(self._judged(shard, subs), path)
        return {"shard": shard.index, "result": str(path), "store": str(self._store(shard))}

    def _store(self, shard: Shard) -> Path | None:
        if self.folder is None:
            return None
        return self.folder / f"shard-{shard.index}-of-{shard.count}.sqlite"

    def _judged(self, shard: Shard, subs: list[Submission]) -> EvalResult:
        job = self.job
        asked = {sub.incident_id for sub in subs} | set(job.missing)
        specs = [spec for spec in job.specs if spec.id in asked]
        options = replace(
            job.options,
            shard=shard,
            limits=self.limits,
            storage=replace(job.options.storage, store=self._store(shard)),
        )
        judge = job.judge() if callable(job.judge) else make_judge(job.judge, **job.judge_options)
        config = {"ray": {"workers": job.workers, "shards": job.shards}}
        result = run_sync(
            evaluate_async(specs, subs + job.orphans, job.rubric, judge, None, options, config)
        )
        # this shard saw only its submissions: the whole run's units are the driver's count
        result.config["shard"] = {**job.record, "index": shard.index}
        return result


def _judgment_table(result: EvalResult) -> pa.Table:
    rows = []
    for judgment in result.judgments:
        row = judgment.model_dump(mode="json")
        row["identity"] = json.dumps(row["identity"]) if row["identity"] is not None else None
        rows.append(row)
    return pa.Table.from_pylist(rows, schema=JUDGMENT_COLUMNS)
