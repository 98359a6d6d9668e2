"""RCAEval (github.com/phamquiluan/RCAEval, MIT; PyPI `RCAEval`): fault cases and ranked answers.

Ground truth: RCAEval's datasets (RE1, RE2, RE3, online-boutique, sock-shop, train-ticket as its
`main.py` downloads them) lay a case out as `<dataset>/<service>_<fault>/<n>/`, the folder
holding `inject_time.txt` (the injection's Unix time) beside the case's telemetry
(`data.csv`, `metrics.csv`, `simple_metrics.csv`, logs, traces). The folder names are the truth
RCAEval scores against: the faulty service and the fault (`cpu`, `mem`, `disk`, `delay`,
`loss`, `socket`, ...). One case -> one `IncidentSpec`, id `<service>_<fault>_<n>` (the name of
the case's result file): `fault_origin` = the service, `mechanism` / `problem_class` = the
fault, `parameters` = the injection time and the dataset.

Answers: `main.py` writes one result file per case, `<service>_<fault>_<n>.json` =
`{"0": ["<service>_<metric>", ...]}`, the method's ranking, best first
(`<service>_<fault>_<n>_failed.json` = `{"error": ...}` when the method failed; EventADL's adds
`ground_truth`). The file's name says the case; its content says it is a result. The ranking
becomes ranked entities, one per service in order of its first appearance (a `-db` suffix
dropped), as RCAEval's service-level evaluation reads it, each with the metric as fault type:
entity scoring then gives RCAEval's AC@k (`at_k[k].recall` for one faulty service) and Avg@5.
The diagnosis text lists the first ten ranked metrics. A failed run is an empty diagnosis (a
miss, never left out), with a warning. The trial is the folder below `--outputs` that holds
the results (a method's run), or `1`.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import InputError, bad_file
from ..models import ComponentRef, Entity, IncidentSpec, Submission
from ..reading import RefusedInput, input_files, parse_json, read_text
from .files import SNIFF_LIMIT, warn_format
from .registry import FunctionAdapter

FORMAT = "rcaeval"
INJECT_TIME = "inject_time.txt"
CASE_FOLDER = re.compile(r"^(?P<service>.+)_(?P<fault>[^_]+)$")
RESULT_FILE = re.compile(r"^(?P<service>.+)_(?P<fault>[^_]+)_(?P<case>[^_]+)$")
FAILED = "_failed"
FAULTS = {
    "cpu": "CPU hog",
    "mem": "memory leak",
    "disk": "disk I/O stress",
    "delay": "network delay",
    "loss": "packet loss",
    "socket": "socket exhaustion",
}
SHOWN_RANKS = 10
# How deep below a given folder case folders are looked for (RE2/RE2-OB/<service>_<fault>/<n>/).
MAX_DEPTH = 4


# ---------------------------------------------------------------- ground truth


def _inject_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path] if path.name == INJECT_TIME else []
    found: list[Path] = []
    for depth in range(MAX_DEPTH + 1):
        found.extend(sorted(path.glob("/".join(["*"] * depth + [INJECT_TIME]))))
    return [f for f in found if f.is_file() and CASE_FOLDER.match(f.parent.parent.name)]


def looks_like_rcaeval_specs(path: str | Path) -> bool:
    """Whether `path` holds RCAEval case folders (`<service>_<fault>/<n>/inject_time.txt`
    holding a Unix time), or is one."""
    return any(_inject_time(f) is not None for f in _inject_files(Path(path))[:SNIFF_LIMIT])


def _inject_time(file: Path) -> int | None:
    try:
        first = read_text(file).strip().splitlines()
    except RefusedInput:
        raise
    except InputError:
        return None
    return int(first[0].strip()) if first and first[0].strip().isdigit() else None


def load_rcaeval_specs(path: str | Path) -> list[IncidentSpec]:
    """One spec per case folder under `path`; a case whose `inject_time.txt` is not a Unix
    time is a bad file."""
    path = Path(path)
    specs = []
    for file in _inject_files(path):
        when = _inject_time(file)
        if when is None:
            bad_file(InputError(file, "expected the injection time as Unix seconds"))
            continue
        specs.append(_spec(file, when))
    if not specs:
        raise InputError(
            path, f"holds no RCAEval case (expected <service>_<fault>/<n>/{INJECT_TIME})"
        )
    return specs


def _spec(file: Path, when: int) -> IncidentSpec:
    case = file.parent
    named = CASE_FOLDER.match(case.parent.name)
    assert named is not None  # `_inject_files` keeps only such folders
    service, fault = named["service"], named["fault"]
    dataset = case.parent.parent.name
    moment = datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    what = FAULTS.get(fault.lower(), fault)
    return IncidentSpec(
        id=f"{service}_{fault}_{case.name}",
        ground_truth=(
            f"A {what} fault ({fault}) was injected into the service {service} at {moment}"
            f" (Unix time {when}), dataset {dataset}, case {case.name}."
        ),
        fault_origin=[ComponentRef(name=service, kind="Service")],
        mechanism=what,
        mechanism_keywords=[fault],
        problem_class=fault,
        parameters={"inject_time": when, "fault": fault, "dataset": dataset},
        source={"format": FORMAT, "file": str(file), "schema": "case folder"},
        extra={"rcaeval": {"service": service, "fault": fault, "case": case.name}},
    )


# ---------------------------------------------------------------- ranked answers


def _result(file: Path) -> Any:
    """A result file's content, None when it is not one (`{"0": [...]}` or `{"error": ...}`)."""
    if file.suffix.lower() != ".json":
        return None
    try:
        data = parse_json(read_text(file), file)
    except RefusedInput:
        raise
    except InputError:
        return None
    if not isinstance(data, dict):
        return None
    ranks = data.get("0")
    if isinstance(ranks, list) and all(isinstance(r, str) for r in ranks):
        return data
    return data if set(data) == {"error"} else None


def _result_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return input_files(path, lambda p: p.suffix.lower() == ".json")


def looks_like_rcaeval_submissions(path: str | Path) -> bool:
    """Whether the first readable result-like JSON at `path` is an RCAEval result."""
    files = _result_files(Path(path))
    return any(_result(f) is not None for f in files[:SNIFF_LIMIT])


def load_rcaeval_submissions(path: str | Path) -> list[Submission]:
    """One submission per result file under `path`; a result file whose name does not say its
    case is skipped with a warning."""
    path = Path(path)
    subs = []
    for file in _result_files(path):
        data = _result(file)
        if data is None:
            continue
        named = RESULT_FILE.match(file.stem.removesuffix(FAILED))
        if named is None:
            warn_format(
                file,
                "an RCAEval result whose name does not say its case, skipped (expected"
                " <service>_<fault>_<case>.json, as RCAEval's main.py names it)",
            )
            continue
        subs.append(_submission(file, data, named, _trial(file, path)))
    if not subs:
        raise InputError(
            path, 'holds no RCAEval result (expected <service>_<fault>_<case>.json: {"0": [...]})'
        )
    return subs


def _trial(file: Path, root: Path) -> str:
    if root.is_file():
        return "1"
    parts = [p for p in file.parent.relative_to(root).parts if p not in {"output", "results"}]
    return "/".join(parts) or "1"


def _submission(file: Path, data: dict[str, Any], named: re.Match[str], trial: str) -> Submission:
    ranks = [str(r) for r in data.get("0") or []]
    if "error" in data or not ranks:
        warn_format(
            file, f"the method failed or ranked nothing ({data.get('error', 'no ranks')}): a miss"
        )
    entities: list[Entity] = []
    for metric in ranks:
        service, _, kind = metric.partition("_")
        service = service.removesuffix("-db")
        if service and all(e.name != service for e in entities):
            entities.append(
                Entity(name=service, rank=len(entities) + 1, fault_type=kind or None, raw=metric)
            )
    shown = ranks[:SHOWN_RANKS]
    diagnosis = (
        "Ranked root-cause candidates (service_metric, most likely first): "
        + ", ".join(f"{i}. {m}" for i, m in enumerate(shown, 1))
        + (f" (and {len(ranks) - len(shown)} lower-ranked)" if len(ranks) > len(shown) else "")
        if ranks
        else ""
    )
    return Submission(
        incident_id=f"{named['service']}_{named['fault']}_{named['case']}",
        trial=trial,
        diagnosis=diagnosis,
        agent=trial if trial != "1" else None,
        entities=entities,
        source={"format": FORMAT, "file": str(file), "schema": "ranked result"},
    )


ADAPTER = FunctionAdapter(
    FORMAT,
    {
        "specs": f"RCAEval case folders <service>_<fault>/<n>/{INJECT_TIME}",
        "submissions": 'RCAEval results <service>_<fault>_<case>.json ({"0": [ranked metrics]})',
    },
    looks_like_rcaeval_specs,
    looks_like_rcaeval_submissions,
    load_rcaeval_specs,
    load_rcaeval_submissions,
)
