"""OpenRCA (github.com/microsoft/OpenRCA, MIT): scored agent CSVs and query files.

Agent CSVs (`rca/archive/agent-<system>.csv`: `instruction, prediction, groundtruth, passed,
failed, score, row_id, task_index`) give both specs and submissions; a query file
(`dataset/<system>/query.csv`: `task_index, instruction, scoring_points`) gives specs.

A query asks for the occurrence time, component and/or reason of one or more failures in a time
window (`task_1`..`task_7` say which of the three; OpenRCA scores component and reason by exact
string and time within 60 s). One query -> one `IncidentSpec` with id `<system>-<row_id>`
(`Bank-0`, `Market-cloudbed-1-12`):
- `fault_origin` = the root-cause component of every failure (kind from its `level`: pod, service
  or node);
- `mechanism` = the reason of the first failure, `mechanism_keywords` = all reasons;
- `parameters["failures"]` = `[{component, reason, datetime, level}]`, one per failure;
- `ground_truth` = the question and the failures as text; `extra["openrca"]` keeps the task index,
  the asked fields and the failures.

Multiple failures. A query about N > 1 failures lists all of them in its scoring points, but the
archived agent CSVs' `groundtruth` block holds one failure only. The others are recovered from
the `passed` + `failed` scoring points (together, the set of every expected value of the asked
fields): what is left after the block's values belongs to the other failure, and an asked field
with nothing left repeated the block's value (OpenRCA stores the points as a set). Recomputing
OpenRCA's own score from the recovered specs reproduces the `score` column of every archived row.
Fields the task did not ask for stay unknown for those failures. Each such row is reported once
per file as a warning.

Submissions: the `prediction` JSON (`{"1": {"root cause occurrence datetime", "root cause
component", "root cause reason"}, "2": ...}`) -> a diagnosis text listing each predicted root
cause, and its components as ranked entities. The trial is "1" (one archived run per query),
or 1, 2, ... when a run's result file (`test/result/<system>/agent-<tag>-<model>.csv`, where the
system comes from the folder) has several rows for one query (samples or re-runs, one warning);
OpenRCA's own score goes to `source["openrca_score"]`, and `load_openrca_verdicts` exports
`score == 1.0` as a rater table.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError, bad_file
from ..models import ComponentRef, Entity, IncidentSpec, Submission
from ..reading import input_files, parse_json
from .files import SNIFF_LIMIT, csv_header, files_with_suffix, read_csv_rows, warn_format
from .rca100 import is_rca100_row, rca100_answer, rca100_id, rca100_spec
from .registry import FunctionAdapter

FORMAT = "openrca"
AGENT_COLUMNS = {"instruction", "prediction", "groundtruth"}
QUERY_COLUMNS = {"instruction", "scoring_points", "task_index"}
FIELDS = ("datetime", "component", "reason")
PREDICTION_KEYS = {
    "datetime": "root cause occurrence datetime",
    "component": "root cause component",
    "reason": "root cause reason",
}
# Which fields each OpenRCA task asks for (task_specification.json).
TASK_FIELDS = {
    "task_1": ("datetime",),
    "task_2": ("reason",),
    "task_3": ("component",),
    "task_4": ("datetime", "reason"),
    "task_5": ("datetime", "component"),
    "task_6": ("component", "reason"),
    "task_7": ("datetime", "component", "reason"),
}
_POINT_PATTERNS = {
    "component": re.compile(r"The (\d+)-th predicted root cause component is ([^\n]+)"),
    "reason": re.compile(r"The (\d+)-th predicted root cause reason is ([^\n]+)"),
    "datetime": re.compile(
        r"The (\d+)-th root cause occurrence time is within 1 minutes "
        r"\(i\.e\., <=1min\) of ([^\n]+)"
    ),
}
_ONLY = re.compile(r"The only ")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")
_NUMBERS = {"a single": 1, "single": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_COUNT = re.compile(
    r"\b(a single|single|one|two|three|four|five|\d+)\s+(?:\w+\s+)?failures?\b", re.I
)
LEVEL_KINDS = {"pod": "Pod", "service": "Service", "node": "Node"}
# OpenRCA's datasets (`dataset/<system>/`; Market's two clouds are `Market/cloudbed-N/`).
# What a run writes in passed/failed/score before its evaluation finishes.
NOT_SCORED = "N/A"
SYSTEMS = ("Bank", "Telecom", "Market-cloudbed-1", "Market-cloudbed-2")

__all__ = [
    "load_openrca_specs",
    "load_openrca_submissions",
    "load_openrca_verdicts",
    "looks_like_openrca_specs",
    "looks_like_openrca_submissions",
]


def _kind_of(file: Path) -> str | None:
    header = set(csv_header(file)) if file.suffix.lower() == ".csv" else set()
    if header >= AGENT_COLUMNS:
        return "agent"
    if header >= QUERY_COLUMNS:
        return "query"
    return None


def looks_like_openrca_specs(path: str | Path) -> bool:
    """Whether one of the first CSVs under `path` is an OpenRCA query or agent-results file."""
    return any(_kind_of(f) for f in _csv_files(Path(path))[:SNIFF_LIMIT])


def looks_like_openrca_submissions(path: str | Path) -> bool:
    """Whether one of the first CSVs under `path` is an OpenRCA agent-results file."""
    return any(_kind_of(f) == "agent" for f in _csv_files(Path(path))[:SNIFF_LIMIT])


def _csv_files(path: Path) -> list[Path]:
    """The CSVs of `path`; a folder without any directly inside (a run archive's
    `test/result/`) is searched below, where `<system>/agent-<tag>-<model>.csv` files live."""
    files = files_with_suffix(path, (".csv",))
    if files or not path.is_dir():
        return files
    return input_files(path, lambda p: p.suffix.lower() == ".csv")[: SNIFF_LIMIT * 10]


def _files(path: Path, kinds: set[str]) -> list[Path]:
    files = [f for f in _csv_files(path) if _kind_of(f) in kinds]
    if not files:
        raise InputError(
            path,
            "holds no OpenRCA CSV (expected columns instruction, prediction, "
            "groundtruth or instruction, scoring_points, task_index)",
        )
    return files


def _system(file: Path) -> str:
    """`agent-Bank.csv` -> Bank (the archive); `Bank/agent-<tag>-<model>.csv` and
    `Market/cloudbed-1/agent-<tag>-<model>.csv` -> Bank, Market-cloudbed-1 (a run's result
    folder, `test/result/<dataset>/`, where the file name carries the run, not the system)."""
    stem = file.stem
    named = stem[len("agent-") :] if stem.lower().startswith("agent-") else None
    if named in SYSTEMS:
        return named
    folder = _folder_system(file)
    if folder is not None:
        return folder
    if named is None and stem.lower() in {"query", "queries"}:
        return file.parent.name
    return named or stem


def _folder_system(file: Path) -> str | None:
    parent, grand = file.parent.name, file.parent.parent.name
    if parent in SYSTEMS:
        return parent
    return f"{grand}-{parent}" if f"{grand}-{parent}" in SYSTEMS else None


def _layout(file: Path) -> str:
    """`run` (a `test/result/` file), `archive` (`rca/archive/agent-<system>.csv`) or `query`."""
    if _kind_of(file) == "query":
        return "query"
    return "run" if _run_name(file) else "archive"


def _run_name(file: Path) -> str | None:
    """`agent-<tag>-<model>` of a run's result file, None for an archive file."""
    stem = file.stem
    named = stem[len("agent-") :] if stem.lower().startswith("agent-") else None
    return named if named and named not in SYSTEMS else None


def _row_id(row: dict[str, str], index: int) -> str:
    raw = (row.get("row_id") or "").strip()
    try:
        return str(int(float(raw)))
    except ValueError:
        return str(index)


# ---------------------------------------------------------------- specs


def load_openrca_specs(path: str | Path) -> list[IncidentSpec]:
    """The specs in OpenRCA query and agent-results CSVs (a later row with the same id wins);
    failures that `groundtruth` drops from multi-failure queries are recovered from the scoring
    points, with a warning naming the lines.
    """
    specs: dict[str, IncidentSpec] = {}
    for file in _files(Path(path), {"agent", "query"}):
        recovered = []
        for index, row in enumerate(read_csv_rows(file)):
            line = index + 2
            try:
                if is_rca100_row(row):
                    spec = rca100_spec(row, file, line, _layout(file))
                else:
                    failures, asked, was_recovered = _failures(row, file, line)
                    if was_recovered:
                        recovered.append(str(line))
                    spec = _spec(row, file, line, _row_id(row, index), failures, asked)
            except InputError as exc:
                bad_file(exc)
                continue
            specs[spec.id] = spec
        _warn_reruns(file)
        if recovered:
            warn_format(
                file,
                f"{len(recovered)} multi-failure queries keep only one failure in "
                "`groundtruth`: the others were recovered from the passed/failed scoring points "
                f"(lines {', '.join(recovered)})",
                field="groundtruth",
            )
    return list(specs.values())


def _warn_reruns(file: Path) -> None:
    """One warning per file whose queries have several rows: a run's result CSV gains a row per
    attempt (`--sample_num`, or a re-run appending to it). Specs keep the last row (the query is
    the same); submissions keep every row, as trials 1, 2, ... in file order."""
    counts: dict[str, int] = {}
    for index, row in enumerate(read_csv_rows(file)):
        key = _incident_id(row, index, file).removeprefix(f"{_system(file)}-")
        counts[key] = counts.get(key, 0) + 1
    repeated = sorted((k for k, n in counts.items() if n > 1), key=_natural)
    if repeated:
        warn_format(
            file,
            f"{len(repeated)} queries have more than one row (re-runs or samples; row_id"
            f" {', '.join(repeated[:5])}{', ...' if len(repeated) > 5 else ''}): the ground"
            " truth is read from the last row, each row's prediction is a trial (1, 2, ... in"
            " file order)",
            field="row_id",
        )


def _natural(key: str) -> tuple[int, str]:
    return (int(key), "") if key.isdigit() else (1 << 30, key)


def _failures(
    row: dict[str, str], file: Path, line: int
) -> tuple[list[dict[str, Any]], tuple[str, ...], bool]:
    task = (row.get("task_index") or "").strip()
    asked = TASK_FIELDS.get(task)
    if asked is None:
        raise InputError(
            file,
            f"unknown task index {task!r} (expected OpenRCA's task_1..task_7, or RCA-100's"
            " t001.. with a JSON groundtruth)",
            field=f"line {line}.task_index",
        )
    if "scoring_points" in row:
        return _failures_from_points(row["scoring_points"], file, line), asked, False
    first = _parse_block(row.get("groundtruth") or "")
    if not first.get("component") and not first.get("reason"):
        raise InputError(
            file,
            "expected a groundtruth block with component and reason",
            field=f"line {line}.groundtruth",
        )
    count = _failure_count(row.get("instruction") or "")
    if count <= 1:
        return [first], asked, False
    return _recover(first, count, asked, row), asked, True


def _parse_block(text: str) -> dict[str, Any]:
    """`level: pod\\ncomponent: Mysql02\\n...` -> dict."""
    out: dict[str, Any] = {}
    for raw in text.splitlines():
        key, sep, value = raw.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _failure_count(instruction: str) -> int:
    match = _COUNT.search(instruction)
    if not match:
        return 1
    word = match.group(1).lower()
    return int(word) if word.isdigit() else _NUMBERS.get(word, 1)


def _recover(
    first: dict[str, Any], count: int, asked: tuple[str, ...], row: dict[str, str]
) -> list[dict[str, Any]]:
    points = [
        p.strip()
        for col in ("passed", "failed")
        for p in (row.get(col) or "").splitlines()
        if p.strip() and p.strip() != NOT_SCORED
    ]
    left = list(dict.fromkeys(points))
    for field in asked:
        if first.get(field) in left:
            left.remove(first[field])
    others: list[dict[str, Any]] = [{"level": None} for _ in range(count - 1)]
    for field in asked:
        values = [v for v in left if _field_of(v, field)]
        for i, other in enumerate(others):
            other[field] = values[i] if i < len(values) else first.get(field)
    return [first, *others]


def _field_of(value: str, field: str) -> bool:
    if field == "datetime":
        return bool(_DATETIME.match(value))
    if _DATETIME.match(value):
        return False
    looks_like_reason = " " in value
    return looks_like_reason if field == "reason" else not looks_like_reason


def _failures_from_points(points: str, file: Path, line: int) -> list[dict[str, Any]]:
    text = _ONLY.sub("The 1-th ", points)
    failures: dict[int, dict[str, Any]] = {}
    for field, pattern in _POINT_PATTERNS.items():
        for idx, value in pattern.findall(text):
            failures.setdefault(int(idx), {"level": None})[field] = value.strip()
    if not failures:
        raise InputError(file, "no scoring points found", field=f"line {line}.scoring_points")
    return [failures[i] for i in sorted(failures)]


def _spec(
    row: dict[str, str],
    file: Path,
    line: int,
    row_id: str,
    failures: list[dict[str, Any]],
    asked: tuple[str, ...],
) -> IncidentSpec:
    system = _system(file)
    origin = [
        ComponentRef(name=f["component"], kind=LEVEL_KINDS.get(str(f.get("level") or "").lower()))
        for f in failures
        if f.get("component")
    ]
    reasons = [f["reason"] for f in failures if f.get("reason")]
    lines = [f"Query ({system}): {row.get('instruction', '').strip()}"]
    for i, f in enumerate(failures, 1):
        parts = [
            f"component {f['component']}" if f.get("component") else None,
            f"({f['level']})" if f.get("level") else None,
            f"at {f['datetime']}" if f.get("datetime") else None,
            f"reason: {f['reason']}" if f.get("reason") else None,
        ]
        lines.append(f"Root cause {i}: " + " ".join(p for p in parts if p) + ".")
    failures_out = [
        {k: f.get(k) for k in ("component", "reason", "datetime", "level")} for f in failures
    ]
    return IncidentSpec(
        id=f"{system}-{row_id}",
        ground_truth="\n".join(lines),
        fault_origin=origin,
        mechanism=reasons[0] if reasons else None,
        mechanism_keywords=list(dict.fromkeys(reasons)),
        parameters={"failures": failures_out},
        source={
            "format": FORMAT,
            "file": str(file),
            "field": f"line {line}",
            "schema": _layout(file),
        },
        extra={
            "openrca": {
                "system": system,
                "task_index": row.get("task_index"),
                "asked": list(asked),
                "failures": failures_out,
                "instruction": row.get("instruction"),
            }
        },
    )


# ---------------------------------------------------------------- submissions


def load_openrca_submissions(path: str | Path) -> list[Submission]:
    """Submissions from OpenRCA agent-results CSVs (RCA-100's too): a query's repeated row is
    its next trial, and several runs of one system are trials named after each run."""
    subs = []
    for file, line, row, incident_id, trial in _agent_rows(Path(path)):
        run = _run_name(file)
        if is_rca100_row(row):
            diagnosis, entities = rca100_answer(row, file, line)
        else:
            causes = _prediction(row.get("prediction") or "", file, line)
            diagnosis = _diagnosis(causes)
            entities = [
                Entity(name=c["component"], rank=i)
                for i, c in enumerate(causes, 1)
                if c.get("component")
            ]
        subs.append(
            Submission(
                incident_id=incident_id,
                trial=trial,
                diagnosis=diagnosis,
                agent=f"OpenRCA RCA-agent ({run})" if run else "OpenRCA RCA-agent",
                entities=entities,
                source={
                    "format": FORMAT,
                    "file": str(file),
                    "field": f"line {line}",
                    "schema": _layout(file),
                    "openrca_score": _score(row.get("score")),
                    "passed": row.get("passed"),
                    "failed": row.get("failed"),
                },
            )
        )
    return subs


def _agent_rows(
    path: Path, warn: bool = True
) -> Iterator[tuple[Path, int, dict[str, str], str, str]]:
    """(file, line, row, incident id, trial) of every row of the agent CSVs under `path`.

    A query's rows in one file are trials 1, 2, ... in file order. When several files answer
    the same queries (several runs of one system, as a result folder holds them), each such
    file's trials are named after its run (`rca-gpt-4o/1`), so that none is taken for another."""
    files = _files(path, {"agent"})
    ids = {f: [_incident_id(r, i, f) for i, r in enumerate(read_csv_rows(f))] for f in files}
    owners = Counter(i for f in files for i in set(ids[f]))
    for file in files:
        if warn:
            _warn_reruns(file)
        shared = any(owners[i] > 1 for i in ids[file])
        prefix = f"{_run_name(file) or file.stem}/" if shared else ""
        trials: Counter[str] = Counter()
        for index, row in enumerate(read_csv_rows(file)):
            incident_id = ids[file][index]
            trials[incident_id] += 1
            yield file, index + 2, row, incident_id, f"{prefix}{trials[incident_id]}"


def _incident_id(row: dict[str, str], index: int, file: Path) -> str:
    if is_rca100_row(row):
        return rca100_id(row, file)
    return f"{_system(file)}-{_row_id(row, index)}"


def _prediction(text: str, file: Path, line: int) -> list[dict[str, Any]]:
    try:
        data = parse_json(text, file, field=f"line {line}")
    except InputError:
        data = None
    if isinstance(data, dict):
        items = [
            data[k] for k in sorted(data, key=lambda k: (not str(k).isdigit(), str(k).zfill(4)))
        ]
        causes = [
            {f: str(item[key]) for f, key in PREDICTION_KEYS.items() if item.get(key)}
            for item in items
            if isinstance(item, dict)
        ]
        if causes:
            return causes
    causes = []
    for block in re.findall(r"\{[^{}]*\}", text):
        found = {
            f: m.group(1)
            for f, key in PREDICTION_KEYS.items()
            if (m := re.search(rf'"{key}":\s*"(.*?)"', block))
        }
        if found:
            causes.append(found)
    if not causes:
        warn_format(
            file,
            "prediction is not the expected JSON: empty diagnosis",
            field=f"line {line}.prediction",
        )
    return causes


def _diagnosis(causes: list[dict[str, Any]]) -> str:
    lines = []
    for i, c in enumerate(causes, 1):
        parts = [
            f"component {c['component']}" if c.get("component") else None,
            f"reason: {c['reason']}" if c.get("reason") else None,
            f"occurred at {c['datetime']}" if c.get("datetime") else None,
        ]
        lines.append(f"Root cause {i}: " + "; ".join(p for p in parts if p) + ".")
    return "\n".join(lines)


def _score(value: str | None) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


def load_openrca_verdicts(path: str | Path) -> list[dict[str, Any]]:
    """OpenRCA's own scoring as a rater table: `verdict` = (score == 1.0), plus `score`."""
    out = []
    for _file, _line, row, incident_id, trial in _agent_rows(Path(path), warn=False):
        score = _score(row.get("score"))
        out.append(
            {
                "incident_id": incident_id,
                "trial": trial,
                "verdict": None if score is None else score == 1.0,
                "score": score,
            }
        )
    return out


ADAPTER = FunctionAdapter(
    FORMAT,
    {
        "specs": "CSV with instruction, prediction, groundtruth (agent-*.csv) or with"
        " instruction, scoring_points, task_index (query.csv)",
        "submissions": "CSV with instruction, prediction, groundtruth (agent-*.csv)",
    },
    looks_like_openrca_specs,
    looks_like_openrca_submissions,
    load_openrca_specs,
    load_openrca_submissions,
)
