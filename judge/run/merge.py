"""`judge merge`: put the results of `judge eval --shard I/N` runs back together.

The merged result is the one a single run would have written: the shards' judgments, calls and
usage are put back in the single run's order (incidents, trials, rubric dimensions) and the
scores are computed again from the judgments with `judge.checklist.scoring`, so every number (means,
pass@k, bootstrap intervals, per agent) is the single run's. Shards are refused (bad input, exit
2) when they were cut from different inputs, judged under another rubric, judge, template or
parameters, overlap, or leave a shard out; the message says which file and which field.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ground_truth.errors import InputError
from ground_truth.matching import trial_order

from ..checklist.judgment import Judgment
from ..checklist.results import (
    CallRecord,
    EvalResult,
    IncompleteCase,
    RunUsage,
    load_result,
    tool_version,
)
from ..checklist.rubric import WHOLE, Rubric, load_rubric
from ..checklist.scoring import (
    Submitted,
    score_case,
    summarize_by_agent,
    summarize_incidents,
    summarize_overall,
)
from .batch import merge_batch_usage
from .granularity import DEFAULT as DEFAULT_GRANULARITY
from .shard import unit_bucket

SAME = ("rubric", "judge", "prompt_template", "dimensions", "granularity", "seed")
"""The config fields every shard must share (the judge's endpoint `api_base` aside: shards may
ask the same model at different addresses)."""

Unit = tuple[str, str, str]


def merge_results(paths: list[Path], rubric: Rubric | None = None) -> EvalResult:
    """The single run's result from its shards' result files (in any order)."""
    shards = [(Path(p), load_result(p)) for p in paths]
    if not shards:
        raise InputError("judge merge", "no result file to merge")
    _check_shards(shards)
    first = shards[0][1]
    rubric = _rubric(first.config, shards[0][0], rubric)
    return _merged(shards, rubric)


# ------------------------------------------------------------------ refusing what cannot merge


def _shard(path: Path, result: EvalResult) -> dict[str, Any]:
    shard = result.config.get("shard")
    if not isinstance(shard, dict):
        raise InputError(
            path, "not a shard's result (run `judge eval --shard I/N`)", field="config.shard"
        )
    return shard


def _check_shards(shards: list[tuple[Path, EvalResult]]) -> None:
    (first_path, first) = shards[0]
    seen: dict[int, Path] = {}
    reference = _shard(first_path, first)
    for path, result in shards:
        shard = _shard(path, result)
        _check_same(path, result, first_path, first, ("granularity",))  # cuts other units
        for name in ("count", "fingerprint", "units", "k"):
            if shard.get(name) != reference.get(name):
                raise InputError(path, _differs(name, shard, reference, first_path), "config.shard")
        _check_same(path, result, first_path, first, SAME)
        if shard["index"] in seen:
            raise InputError(
                path,
                f"shard {shard['index']}/{shard['count']} is given twice "
                f"(also {seen[shard['index']]}): the shards overlap",
                "config.shard",
            )
        seen[shard["index"]] = path
    absent = [
        f"{i}/{reference['count']}" for i in range(1, reference["count"] + 1) if i not in seen
    ]
    if absent:
        raise InputError(
            "judge merge",
            f"shard(s) {', '.join(absent)} missing: a merge needs every shard of the run",
        )


def _check_same(
    path: Path, result: EvalResult, first_path: Path, first: EvalResult, names: tuple[str, ...]
) -> None:
    for name in names:
        if _same(result.config.get(name), name) != _same(first.config.get(name), name):
            raise InputError(
                path, _differs(name, result.config, first.config, first_path), f"config.{name}"
            )


RUN_OBSERVATIONS = frozenset(
    {"api_base", "structured_output", "structured_output_negotiation", "replies", "repairs"}
)
"""What a judge met during its run, not what it is: its endpoint, the reply format the server
accepted, how its replies parsed. Shards may differ in these; the merge adds up the counts."""


def _same(value: Any, name: str) -> Any:
    if name == "judge" and isinstance(value, dict):
        return _identity(value)
    if name == "granularity":
        return value or DEFAULT_GRANULARITY  # results written before granularity was recorded
    return value


def _identity(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _identity(v) for k, v in value.items() if k not in RUN_OBSERVATIONS}
    if isinstance(value, list):
        return [_identity(v) for v in value]
    return value


def _observed_together(judges: list[Any]) -> Any:
    """One judge description for the merged run: the first shard's, with reply and repair
    counts added up over every shard (panel members one by one)."""
    first = judges[0]
    if isinstance(first, list):
        return [_observed_together([j[i] for j in judges]) for i in range(len(first))]
    if not isinstance(first, dict):
        return first
    merged = {k: _observed_together([j.get(k) for j in judges]) for k in first}
    if isinstance(first.get("replies"), dict):
        from ..judges.llm import reply_shares

        merged["replies"] = reply_shares(
            Counter({o: sum(j["replies"].get(o, 0) for j in judges) for o in REPLY_OUTCOMES})
        )
    if isinstance(first.get("repairs"), dict):
        total: Counter[str] = Counter()
        for judge in judges:
            total.update(judge["repairs"])
        merged["repairs"] = dict(sorted(total.items()))
    return merged


REPLY_OUTCOMES = ("clean", "repaired", "reasked", "unscored")


def _differs(name: str, mine: dict[str, Any], theirs: dict[str, Any], where: Path) -> str:
    return (
        f"{name} is {_same(mine.get(name), name)!r}, but {_same(theirs.get(name), name)!r} "
        f"in {where}: shards of one run share their inputs, rubric, judge and parameters"
    )


def _rubric(config: dict[str, Any], path: Path, given: Rubric | None) -> Rubric:
    """The rubric the shards were scored with: `given`, or the shipped one of that name; its
    content hash must be the one the shards recorded."""
    recorded = config.get("rubric") or {}
    rubric = given
    if rubric is None:
        try:
            rubric = load_rubric(recorded.get("name") or "")
        except InputError:
            raise InputError(
                path,
                f"rubric {recorded.get('name')!r} is not a shipped rubric: give it with --rubric",
                field="config.rubric.name",
            ) from None
    if rubric.hash != recorded.get("hash"):
        raise InputError(
            rubric.path or rubric.name,
            f"rubric hash {rubric.hash}, but the shards were scored with {recorded.get('hash')}",
            field="--rubric",
        )
    dimensions = config.get("dimensions")
    if dimensions and dimensions != [d.id for d in rubric.dimensions]:
        rubric = rubric.select(dimensions)
    return rubric


# ------------------------------------------------------------------ the single run's result


class _Parts:
    """The shards' pieces, keyed by unit, each unit's pieces in its shard's order."""

    def __init__(self, granularity: str):
        self.whole = granularity == "submission"
        """A shard's unit is a whole submission (`--granularity submission`), else a
        (submission, dimension)."""
        self.answers: dict[Unit, list[Judgment]] = defaultdict(list)
        self.members: dict[Unit, list[Judgment]] = defaultdict(list)
        self.calls: dict[Unit, list[CallRecord]] = defaultdict(list)
        self.owner: dict[Unit, Path] = {}
        self.agents: dict[tuple[str, str], str | None] = {}
        self.submitted: dict[tuple[str, str], Submitted] = {}
        self.missing_dims: set[Unit] = set()

    def add(self, path: Path, result: EvalResult) -> None:
        shard = result.config["shard"]
        for j in result.judgments:
            unit = (j.incident_id, j.trial, j.dimension_id)
            self._own((*unit[:2], WHOLE) if self.whole else unit, path, shard)
            self.answers[unit].append(j)
        for j in result.member_judgments:
            self.members[(j.incident_id, j.trial, j.dimension_id)].append(j)
        for call in result.calls:
            self.calls[(call.incident_id, call.trial, call.dimension_id)].append(call)
        for case in result.cases:
            self.agents[(case.incident_id, case.trial)] = case.agent
            self.submitted[(case.incident_id, case.trial)] = Submitted(
                case.format, case.diagnosis_chars
            )
        for gap in result.incomplete:
            self.missing_dims.update((gap.incident_id, gap.trial, d) for d in gap.dimensions)

    def _own(self, unit: Unit, path: Path, shard: dict[str, Any]) -> None:
        owner = self.owner.setdefault(unit, path)
        if owner != path:
            raise InputError(path, f"{'/'.join(unit)} was judged in {owner} too: shards overlap")
        if unit_bucket(*unit, shard["count"]) != shard["index"] - 1:
            raise InputError(
                path,
                f"{'/'.join(unit)} does not belong to shard {shard['index']}/{shard['count']}",
                field="judgments",
            )


def _merged(shards: list[tuple[Path, EvalResult]], rubric: Rubric) -> EvalResult:
    first = shards[0][1]
    config = {k: v for k, v in first.config.items() if k != "shard"}
    config["judge"] = _observed_together([r.config["judge"] for _, r in shards])
    shard = first.config["shard"]
    parts = _Parts(_same(config.get("granularity"), "granularity"))
    for path, result in shards:
        parts.add(path, result)
    if len(parts.owner) != shard["units"]:
        raise InputError(
            "judge merge",
            f"the shards hold {len(parts.owner)} of the run's {shard['units']} units",
        )
    order = sorted(parts.agents, key=lambda key: (key[0], trial_order(key[1])))
    units = [(i, t, d.id) for i, t in order for d in rubric.dimensions]
    cases = [
        score_case(i, t, [j for d in rubric.dimensions for j in parts.answers[(i, t, d.id)]],
                   rubric, parts.agents[(i, t)], parts.submitted[(i, t)])
        for i, t in order
    ]  # fmt: skip
    incidents, k = summarize_incidents(cases, rubric, shard.get("k"))
    seed = config.get("seed", 20261126)
    overall = summarize_overall(
        cases, incidents, rubric, k, len(first.missing), len(first.orphans), seed
    )
    overall.n_failed_questions = sum(r.overall.n_failed_questions for _, r in shards)
    call_units = [(i, t, WHOLE) for i, t in order] if parts.whole else units
    calls = [c for u in call_units for c in parts.calls.get(u, [])]
    incomplete = _incomplete(units, parts.missing_dims)
    stopped = next((r.stopped for _, r in shards if r.stopped is not None), None)
    config["merged_from"] = [
        {"file": str(p), "shard": f"{r.config['shard']['index']}/{shard['count']}"}
        for p, r in shards
    ]
    return EvalResult(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        tool_version=tool_version(),
        complete=not incomplete and not overall.n_failed_questions,
        config=config,
        overall=overall,
        incidents=incidents,
        cases=cases,
        judgments=[j for c in cases for j in c.judgments],
        member_judgments=[j for u in units for j in parts.members.get(u, [])],
        calls=calls,
        errors=dict(Counter(c.error_kind for c in calls if c.error_kind)),
        attempt_errors=dict(sum((Counter(r.attempt_errors) for _, r in shards), Counter())),
        stopped=stopped if incomplete else None,
        incomplete=incomplete,
        usage=_usage([r.usage for _, r in shards]),
        missing=first.missing,
        orphans=first.orphans,
        warnings=list(dict.fromkeys(w for _, r in shards for w in r.warnings)),
        by_agent=summarize_by_agent(cases, rubric, k, seed),  # the k the incidents resolved
        entities=first.entities,
        resolution=_resolution(first.resolution, cases),
    )


def _incomplete(units: list[Unit], missing: set[Unit]) -> list[IncompleteCase]:
    gaps: dict[tuple[str, str], list[str]] = {}
    for i, t, d in units:
        if (i, t, d) in missing:
            gaps.setdefault((i, t), []).append(d)
    return [IncompleteCase(incident_id=i, trial=t, dimensions=d) for (i, t), d in gaps.items()]


def _usage(usages: list[RunUsage | None]) -> RunUsage | None:
    present = [u for u in usages if u is not None]
    if not present:
        return None
    total = RunUsage()
    for name in RunUsage.model_fields:
        if name not in {"cost_usd", "batch"}:
            setattr(total, name, sum(getattr(u, name) for u in present))
    total.batch = merge_batch_usage(u.batch for u in present)
    costs = [u.cost_usd for u in present]
    total.cost_usd = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)
    return total


def _resolution(section: dict[str, Any] | None, cases: list) -> dict[str, Any] | None:
    """Every shard checks every trajectory; only the side-by-side table needs the merged
    verdicts, so it is built again from them."""
    if section is None:
        return None
    from ..resolution.section import ResolutionSection
    from ..resolution.side_by_side import side_by_side

    parsed = ResolutionSection.model_validate(section)
    if parsed.side_by_side is not None:
        passed: dict[tuple[str, str], bool | None] = {
            (c.incident_id, c.trial): c.passed for c in cases
        }
        parsed.side_by_side = side_by_side(passed, {r.key: r for r in parsed.cases})
    return parsed.model_dump(mode="json")


__all__ = ["merge_results"]
