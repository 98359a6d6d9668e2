"""SRE-Zero (github.com/DevaanshPathak/SRE-Zero, MIT): task configs and run records.

Task configs (`srezero/task_configs/*.json`, or the corpus bundle `{"tasks": {id: config}}`)
become `IncidentSpec`s; the config itself is kept verbatim in `extra["srezero"]` so the
resolution checks (`judge.resolution`) can replay a trajectory with SRE-Zero's semantics.

Run records (the JSON `eval/run_eval.py` writes: `{"agent", "overall", "by_task", "records"}`,
a bare list of records, or `eval/run_baseline_marks.py`'s `{"runs": [...]}`) become
`Submission`s. A record's trajectory lists `{"step", "action", "reward", "summary"}`, where
`action` is the simulator's canonical rendering of what the agent did (or the raw string when it
could not be parsed). The diagnosis is the root cause and fix of the last
`resolve_incident(root_cause, fix)`.

The action grammar below is SRE-Zero's (`srezero/actions.py`): `name(arg, arg, ...)`, the
arguments split like one CSV row with surrounding quotes stripped, `update_config` values coerced
to bool / int / float / str.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import InputError, bad_file, validation_error
from ..models import Action, ComponentRef, IncidentSpec, Submission, Trajectory
from ..reading import RefusedInput, input_files, parse_json, read_text
from .files import child_folders, first_readable
from .registry import FunctionAdapter

FORMAT = "srezero"

# The five services every SRE-Zero episode has (`srezero/services.py: base_services`). An action
# naming any other service is invalid.
SREZERO_SERVICES = ("web_server", "database", "cache", "message_queue", "load_balancer")
SERVICE_TOOLS = frozenset(
    {
        "inspect_logs",
        "inspect_metrics",
        "check_status",
        "inspect_config",
        "restart_service",
        "update_config",
    }
)
SREZERO_TOOLS = SERVICE_TOOLS | {"resolve_incident", "escalate"}
REMEDIATION_TOOLS = frozenset({"restart_service", "update_config"})

# How the simulator's one-line step summary says it refused an action.
_REJECTED_SUMMARIES = ("Invalid action.", "Resolution rejected.", "Episode is already done.")
# `name(args)` on one line; a newline inside the arguments makes the action unparseable.
_ACTION_RE = re.compile(r"^\s*(?P<name>[a-zA-Z_][a-zA-Z0-9_]*)\s*\((?P<args>.*)\)\s*$")


# ---------------------------------------------------------------- task configs


class SREZeroCorrectFix(BaseModel):
    """`correct_fix` of a task config."""

    model_config = ConfigDict(extra="allow")

    action_type: str
    service: str = Field(min_length=1)
    key: str | None = None
    min_numeric_value: float | None = None
    exact_value: bool | int | float | str | None = None
    fix_keywords: list[str] = Field(default_factory=list)

    @field_validator("action_type")
    @classmethod
    def _known_tool(cls, value: str) -> str:
        if value not in SREZERO_TOOLS:
            raise ValueError(f"expected one of {sorted(SREZERO_TOOLS)}, got {value!r}")
        return value


class SREZeroTaskConfig(BaseModel):
    """One SRE-Zero task config; the fields the resolution checks use are validated."""

    model_config = ConfigDict(extra="allow")

    task_id: str = Field(min_length=1)
    difficulty: str = ""
    alert: str = ""
    root_cause: str = Field(min_length=1)
    root_cause_keywords: list[str]
    relevant_evidence: list[str]
    evidence_descriptions: dict[str, str] = Field(default_factory=dict)
    correct_fix: SREZeroCorrectFix
    service_patches: dict[str, dict[str, Any]] = Field(default_factory=dict)
    expected_action_pattern: list[str] = Field(default_factory=list)
    distractors: list[str] = Field(default_factory=list)
    distractor_services: list[str] = Field(default_factory=list)
    max_steps: int = Field(8, gt=0)
    terminal_on_wrong_resolution: bool = True
    metadata: dict[str, Any] = Field(default_factory=dict)


def load_srezero_specs(path: str | Path) -> list[IncidentSpec]:
    """Read SRE-Zero task configs: a config, a list, the `{"tasks": {...}}` bundle, or a folder."""
    path = Path(path)
    files = _json_files(path, _is_config)
    if not files:
        raise InputError(path, "holds no SRE-Zero task config (*.json)")
    specs: list[IncidentSpec] = []
    for file in files:
        with _each_file(path, file, "an SRE-Zero task config"):
            specs.extend(
                config_to_spec(_validate_config(file, where, raw), raw, file)
                for where, raw in _config_items(file, _read_json(file))
            )
    return specs


def config_to_spec(
    config: SREZeroTaskConfig, raw: dict[str, Any], file: Path | None
) -> IncidentSpec:
    """Map one task config onto an `IncidentSpec`, keeping the config verbatim in `extra`."""
    fix = config.correct_fix
    patched = config.service_patches.get(fix.service, {})
    evidence = " ".join(config.evidence_descriptions.values())
    return IncidentSpec(
        id=config.task_id,
        ground_truth=f"{config.root_cause}. {evidence}".strip(),
        fault_origin=[_service_ref(fix.service)],
        mechanism=config.root_cause,
        mechanism_keywords=list(config.root_cause_keywords),
        problem_class=(
            "service crash" if fix.action_type == "restart_service" else "misconfiguration"
        ),
        parameters=dict(patched.get("config") or {}),
        affected_components=[
            _service_ref(name) for name in config.service_patches if name != fix.service
        ],
        symptoms=[config.alert] if config.alert else [],
        distractors=[_service_ref(name) for name in config.distractor_services],
        expected_fix=describe_fix(fix),
        source={"format": FORMAT, "file": str(file) if file else None, "task_id": config.task_id},
        extra={FORMAT: raw},
    )


def _service_ref(name: str) -> ComponentRef:
    spaced = name.replace("_", " ")
    return ComponentRef(name=name, kind="Service", aliases=[spaced] if spaced != name else [])


def describe_fix(fix: SREZeroCorrectFix) -> str:
    """The correct fix in words: `restart cache`, `set cache AUTH_TOKEN_VALID to true`, ..."""
    if fix.action_type == "restart_service":
        return f"restart {fix.service}"
    if fix.action_type != "update_config":
        return f"{fix.action_type} on {fix.service}"
    if fix.exact_value is not None:
        value = fix.exact_value
        shown = json.dumps(value) if isinstance(value, bool) else value
        return f"set {fix.service} {fix.key} to {shown}"
    if fix.min_numeric_value is not None:
        return f"set {fix.service} {fix.key} to at least {fix.min_numeric_value:g}"
    return f"update {fix.service} {fix.key}"


def _config_items(file: Path, data: Any) -> list[tuple[str, Any]]:
    if isinstance(data, dict) and isinstance(data.get("tasks"), dict):
        return [(f"tasks.{key}", value) for key, value in data["tasks"].items()]
    if isinstance(data, dict) and "tasks" in data:
        raise InputError(file, "expected a mapping of task id to task config", field="tasks")
    if isinstance(data, list):
        return [(f"[{i}]", item) for i, item in enumerate(data)]
    return [("", data)]


def _validate_config(file: Path, where: str, raw: Any) -> SREZeroTaskConfig:
    if not isinstance(raw, dict):
        raise InputError(
            file, "expected a JSON object (an SRE-Zero task config)", field=where or None
        )
    try:
        return SREZeroTaskConfig.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(file, exc, where) from None


# ---------------------------------------------------------------- actions


class SREZeroActionError(ValueError):
    """An action string SRE-Zero's parser would refuse (the simulator counts it as invalid)."""


def parse_srezero_action(text: str) -> tuple[str, dict[str, Any]]:
    """Parse `tool(arg, ...)` into (tool, args) exactly as SRE-Zero's `parse_action` does."""
    match = _ACTION_RE.match(text if isinstance(text, str) else "")
    if match is None:
        raise SREZeroActionError(
            "Action must use function-call syntax, for example inspect_logs(web_server)."
        )
    return match["name"], srezero_args(match["name"], split_srezero_args(match["args"]))


def split_srezero_args(arg_text: str) -> list[str]:
    """An action's argument text split as SRE-Zero does (comma-separated, quotes stripped);
    [] for blank text, SREZeroActionError when it cannot be parsed.
    """
    if not arg_text.strip():
        return []
    try:
        row = next(csv.reader([arg_text], skipinitialspace=True))
    except csv.Error as exc:
        raise SREZeroActionError(f"Could not parse action arguments: {exc}") from None
    return [_strip_quotes(item.strip()) for item in row]


def _strip_quotes(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in {"'", '"'}:
        return value[1:-1]
    return value


def coerce_srezero_value(value: Any) -> Any:
    """`true`/`false` -> bool, then int, then float, else the string (SRE-Zero's coercion)."""
    if not isinstance(value, str):
        return value
    lowered = value.lower()
    if lowered in {"true", "false"}:
        return lowered == "true"
    for number in (int, float):
        try:
            return number(value)
        except ValueError:
            continue
    return value


_ARITY = {
    "inspect_logs": ("service",),
    "inspect_metrics": ("service",),
    "check_status": ("service",),
    "restart_service": ("service",),
    "inspect_config": ("service", "key?"),
    "update_config": ("service", "key", "value"),
    "resolve_incident": ("root_cause", "fix"),
    "escalate": ("reason",),
}


def srezero_args(tool: str, positional: list[str]) -> dict[str, Any]:
    """Name positional arguments and apply SRE-Zero's arity and emptiness rules."""
    if tool not in _ARITY:
        raise SREZeroActionError(f"Unknown action: {tool}")
    names = _ARITY[tool]
    required = [n for n in names if not n.endswith("?")]
    if not len(required) <= len(positional) <= len(names):
        raise SREZeroActionError(
            f"{tool} takes arguments ({', '.join(names)}), got {len(positional)}"
        )
    args = {name.rstrip("?"): value for name, value in zip(names, positional, strict=False)}
    return validate_srezero_args(tool, args)


def validate_srezero_args(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Check structured arguments the way SRE-Zero's `_validate_action` does; coerce values."""
    if tool not in SREZERO_TOOLS:
        raise SREZeroActionError(f"Unknown action: {tool}")
    args = {k: v for k, v in args.items() if v is not None}
    if "value" in args:
        args["value"] = coerce_srezero_value(args["value"])
    for name in ("service", "key", "root_cause", "fix", "reason"):
        if name in args and not isinstance(args[name], str):
            raise SREZeroActionError(f"{tool}: {name} must be text")
    if tool in SERVICE_TOOLS and "service" not in args:
        raise SREZeroActionError(f"{tool} requires a service.")
    if tool == "update_config" and ("key" not in args or "value" not in args):
        raise SREZeroActionError("update_config requires key and value.")
    if tool == "resolve_incident" and not (args.get("root_cause") and args.get("fix")):
        raise SREZeroActionError("resolve_incident requires root_cause and fix.")
    if tool == "escalate" and not args.get("reason"):
        raise SREZeroActionError("escalate requires a reason.")
    return args


def format_srezero_action(tool: str, args: dict[str, Any]) -> str:
    """SRE-Zero's canonical rendering (`format_action`), used to spot repeated actions."""
    match tool:
        case "inspect_config" if args.get("key") is not None:
            return f"inspect_config({args['service']}, {args['key']})"
        case "update_config":
            return f"update_config({args['service']}, {args['key']}, {args['value']})"
        case "resolve_incident":
            return f"resolve_incident({args['root_cause']}, {args['fix']})"
        case "escalate":
            return f"escalate({args['reason']})"
        case _:
            return f"{tool}({args['service']})"


# ---------------------------------------------------------------- run records


def load_srezero_submissions(path: str | Path) -> list[Submission]:
    """Read SRE-Zero run records (one JSON file, or a folder of them) into submissions."""
    path = Path(path)
    files = _json_files(path, _is_run)
    if not files:
        raise InputError(path, "holds no SRE-Zero run record (*.json)")
    subs: list[Submission] = []
    for file in files:
        with _each_file(path, file, "an SRE-Zero run record"):
            subs.extend(
                sub
                for where, run in _runs(file, _read_json(file))
                for sub in _run_submissions(file, where, run)
            )
    return subs


@contextmanager
def _each_file(path: Path, file: Path, what: str) -> Iterator[None]:
    """Read one file of a folder: one that cannot be used is a bad file (`bad_file`, which
    `judge check` lists, every one), saying what it was expected to be; a lone file raises."""
    try:
        yield
    except RefusedInput:
        raise
    except InputError as exc:
        if path == file:
            raise
        bad_file(InputError(exc.path, f"{exc.message} (expected {what})", field=exc.field))


def _runs(file: Path, data: Any) -> list[tuple[str, dict[str, Any]]]:
    if isinstance(data, list):
        return [("", {"records": data})]
    if not isinstance(data, dict):
        raise InputError(file, "expected a JSON object with 'records' (an SRE-Zero run record)")
    if isinstance(data.get("runs"), list):
        return [(f"runs[{i}].", run) for i, run in enumerate(data["runs"]) if isinstance(run, dict)]
    if "records" not in data:
        raise InputError(file, "expected 'records' (an SRE-Zero run record)", field="records")
    return [("", data)]


def _run_submissions(file: Path, where: str, run: dict[str, Any]) -> list[Submission]:
    records = run.get("records")
    if not isinstance(records, list):
        raise InputError(file, "expected a list of episode records", field=f"{where}records")
    agent = _agent_label(run)
    episodes: Counter[str] = Counter()
    subs = []
    for i, record in enumerate(records):
        field = f"{where}records[{i}]"
        try:
            if not isinstance(record, dict):
                raise InputError(file, "expected an episode record object", field=field)
            task_id = record.get("task_id")
            if not isinstance(task_id, str) or not task_id:
                raise InputError(file, "expected the task id as text", field=f"{field}.task_id")
            episodes[task_id] += 1
            trial = str(episodes[task_id]) if not where else f"{agent}#{episodes[task_id]}"
            subs.append(_record_submission(file, field, record, task_id, trial, agent))
        except InputError as exc:
            bad_file(exc)  # one bad record: the others are still read (and each bad one named)
    return subs


def _agent_label(run: dict[str, Any]) -> str | None:
    parts = [str(run[k]) for k in ("agent", "model") if run.get(k)]
    if not run.get("model") and run.get("model_override"):
        parts.append(str(run["model_override"]))
    return "/".join(parts) or None


def _record_submission(
    file: Path, field: str, record: dict[str, Any], task_id: str, trial: str, agent: str | None
) -> Submission:
    steps = record.get("trajectory", [])
    if not isinstance(steps, list):
        raise InputError(file, "expected a list of steps", field=f"{field}.trajectory")
    actions = [_step_action(file, f"{field}.trajectory[{i}]", step) for i, step in enumerate(steps)]
    metrics = record.get("metrics", {})
    if not isinstance(metrics, dict):
        raise InputError(file, "expected an object of episode metrics", field=f"{field}.metrics")
    metrics = dict(metrics)
    if "evidence_coverage" in record:
        metrics["evidence_coverage"] = record["evidence_coverage"]
    final_state = {"agent_error": record["agent_error"]} if record.get("agent_error") else {}
    return Submission(
        incident_id=task_id,
        trial=trial,
        diagnosis=_diagnosis(actions),
        agent=agent,
        trajectory=Trajectory(actions=actions, final_state=final_state, metrics=metrics),
        source={"format": FORMAT, "file": str(file), "record": field},
    )


def _step_action(file: Path, field: str, step: Any) -> Action:
    if not isinstance(step, dict):
        raise InputError(file, "expected a step object", field=field)
    raw = step.get("action")
    if raw is not None and not isinstance(raw, str):
        raise InputError(file, "expected the action as text", field=f"{field}.action")
    summary = step.get("summary")
    accepted = None if summary is None else not str(summary).startswith(_REJECTED_SUMMARIES)
    tool, args, note = _parse_recorded(raw or "", accepted)
    extra: dict[str, Any] = {}
    if "reward" in step:
        extra["reward"] = step["reward"]
    if note:
        extra["parse_note"] = note
    return Action(
        step=step.get("step") if isinstance(step.get("step"), int) else None,
        raw=raw,
        tool=tool,
        args=args,
        accepted=accepted,
        observation=None if summary is None else str(summary),
        **extra,
    )


def _parse_recorded(
    raw: str, accepted: bool | None
) -> tuple[str | None, dict[str, Any], str | None]:
    """Parse a recorded action; recover what the canonical rendering lost, when we can.

    The record stores `format_action(...)`, which drops the quotes around arguments. An argument
    that held a comma then re-parses with too many arguments although the simulator accepted it.
    We then keep the first argument(s) and join the rest into the last one, and say so.
    """
    try:
        tool, args = parse_srezero_action(raw)
        return tool, args, None
    except SREZeroActionError:
        if accepted is not True:
            return None, {}, None
    match = _ACTION_RE.match(raw)
    if match is None:
        return None, {}, None
    tool = match["name"]
    names = [n.rstrip("?") for n in _ARITY.get(tool, ())]
    try:
        parts = split_srezero_args(match["args"])
    except SREZeroActionError:
        return None, {}, None
    if not names or len(parts) <= len(names):
        return None, {}, None
    joined = [*parts[: len(names) - 1], ", ".join(parts[len(names) - 1 :])]
    try:
        args = validate_srezero_args(tool, dict(zip(names, joined, strict=True)))
    except SREZeroActionError:
        return None, {}, None
    return tool, args, "canonical form lost quoting; extra commas joined into the last argument"


def _diagnosis(actions: list[Action]) -> str:
    for action in reversed(actions):
        if action.tool == "resolve_incident":
            return f"Root cause: {action.args['root_cause']}\nFix: {action.args['fix']}"
    return ""


# ---------------------------------------------------------------- detection and files


def looks_like_srezero(path: str | Path) -> bool:
    """True for an SRE-Zero task config / bundle / run record, or a folder holding them."""
    return _sniff(Path(path), lambda data: _is_config(data) or _is_run(data))


def looks_like_srezero_specs(path: str | Path) -> bool:
    """True for SRE-Zero task configs (one, a list, the bundle, or a folder of them)."""
    return _sniff(Path(path), _is_config)


def looks_like_srezero_submissions(path: str | Path) -> bool:
    """True for an SRE-Zero run record (or a folder whose first JSON file is one)."""
    return _sniff(Path(path), _is_run)


def _sniff(path: Path, test: Any) -> bool:
    """Whether the first readable JSON file of `path` (or of the folder one level below it
    that holds such files, as `srezero/` holds `task_configs/`) passes `test`."""
    return bool(test(first_readable(_json_files(path, test), _readable_json)))


def _readable_json(file: Path) -> Any:
    try:
        return _read_json(file)
    except RefusedInput:
        raise
    except InputError:
        return None


def _is_config(data: Any) -> bool:
    if isinstance(data, dict) and isinstance(data.get("tasks"), dict):
        data = next(iter(data["tasks"].values()), None)
    elif isinstance(data, list):
        data = data[0] if data else None
    return isinstance(data, dict) and {"task_id", "correct_fix", "root_cause_keywords"} <= set(data)


def _is_run(data: Any) -> bool:
    if isinstance(data, dict) and isinstance(data.get("runs"), list):
        data = data["runs"][0] if data["runs"] else None
    records = data.get("records") if isinstance(data, dict) else data
    if not isinstance(records, list) or not records:
        return False
    first = records[0]
    return isinstance(first, dict) and {"task_id", "trajectory"} <= set(first)


def _json_files(path: Path, test: Any) -> list[Path]:
    """The JSON files to read: `path` itself; the files directly in the folder when the first
    readable one is what `test` recognises; else those of the folders one level below whose
    first readable file it recognises (`srezero/` above `task_configs/`); else the folder's own
    (each then named when it cannot be used)."""
    if path.is_file():
        return [path]
    here = _folder_json(path)
    if here and test(first_readable(here, _readable_json)):
        return here
    below = child_folders(
        path, lambda child: test(first_readable(_folder_json(child), _readable_json))
    )
    return [file for child in below for file in _folder_json(child)] or here


def _folder_json(path: Path) -> list[Path]:
    if not path.is_dir():
        return []
    return input_files(path, lambda p: p.suffix == ".json", recursive=False)


def _read_json(path: Path) -> Any:
    return parse_json(read_text(path), path)


ADAPTER = FunctionAdapter(
    FORMAT,
    {
        "specs": "task-config JSON (task_id, correct_fix, root_cause_keywords)",
        "submissions": "run-record JSON (records with task_id and trajectory)",
    },
    looks_like_srezero_specs,
    looks_like_srezero_submissions,
    load_srezero_specs,
    load_srezero_submissions,
)
