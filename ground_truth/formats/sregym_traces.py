"""SREGym agent traces: the diagnosis an agent submitted, read out of its session file.

SREGym's agents (Claude Code, Codex, Copilot CLI, Gemini CLI, opencode, Stratus, ...) answer by
`POST /submit {"solution": "..."}` to the conductor, most with `curl` from a shell tool, Stratus
with its `submit_tool(ans=...)`. The conductor grades the first submission of the diagnosis
stage; the mitigation stage then submits an empty string. The trace of a run is the agent's own
session file (JSON lines, or one JSON document), which SREGym archives under

    results/<batch>/<tool>/<problem_id>/run_<n>/

next to `<tool>_results_<problem_id>_<timestamp>.json`. A trace is recognised by its content:
every tool call in it (any record with a tool name and its arguments, the arguments maybe a
JSON string) is read in order, and the first call that submits a non-empty solution gives the
diagnosis: a `curl` command whose `-d`/`--data` body parses as JSON (after shell unquoting)
with a `solution`, or a submit tool's `ans`/`solution`. A command the shell could not have run
(a quote left open) never reached the conductor and is passed over, as SREGym saw it.

-> `Submission`: incident = the problem id (from the run folder, the results file's name, or a
Stratus trajectory's name `<MMDD_HHMM>_<problem>_stratus_agent_trajectory.jsonl`), trial =
`<tool>/run_<n>` (or `<tool>/<timestamp>`), agent = the tool and the model the trace records.
The trajectory keeps every tool call (tool, arguments) in order, the submissions marked, and
the run's results file in `metrics["agent_run"]`; SREGym's mitigation verdict is not in a trace.
A trace whose problem cannot be told is skipped with a warning saying what was looked for.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..models import Action, Submission, Trajectory
from ..reading import RefusedInput, input_files, parse_json, read_head, read_text
from .files import SNIFF_LIMIT, warn_format

TRACE_SUFFIXES = (".jsonl", ".json")
RUN_FOLDER = re.compile(r"^run_(?P<n>\d+)$")
RESULTS_FILE = re.compile(
    r"^(?P<tool>[a-z0-9-]+)_results_(?P<problem>.+)_(?P<ts>\d{8}_\d{6})\.json$"
)
STRATUS_FILE = re.compile(
    r"^(?P<ts>\d{4}_\d{4})_(?P<problem>.+)_(?P<tool>stratus)_agent_trajectory\.jsonl$"
)
DATA_FLAGS = ("-d", "--data", "--data-raw", "--data-binary", "--json")
_NAME_KEYS = ("name", "tool", "toolName", "tool_name")
_ARG_KEYS = ("input", "args", "arguments", "parameters")
_ID_KEYS = ("id", "callID", "call_id", "toolCallId", "tool_use_id")
SUBMIT_MARKERS = ("/submit", "submit_tool")
EXPECTED = (
    "a SREGym agent trace (a session file whose tool calls include POST /submit"
    ' {"solution": ...} or a submit tool call)'
)


@dataclass(frozen=True)
class Call:
    """One tool call of a trace, in order."""

    tool: str
    args: dict[str, Any]
    call_id: str | None


def looks_like_trace(file: Path) -> bool:
    """Whether `file` is an agent trace that submits to the conductor (its first 64 kB name the
    submit endpoint or tool, and a submission is found in it)."""
    if file.suffix.lower() not in TRACE_SUFFIXES or RESULTS_FILE.match(file.name):
        return False
    try:
        head = read_head(file)
    except InputError:
        return False
    if not any(m in head for m in SUBMIT_MARKERS) or not head.lstrip().startswith(("{", "[")):
        return False
    try:
        return submitted(calls(records(file))) is not None
    except RefusedInput:
        raise
    except InputError:
        return False


def trace_files(path: Path) -> list[Path]:
    """The traces at `path`: the file itself, or every trace below the folder."""
    if path.is_file():
        return [path] if looks_like_trace(path) else []
    candidates = input_files(path, lambda p: p.suffix.lower() in TRACE_SUFFIXES)
    return [f for f in candidates if looks_like_trace(f)]


def any_trace(path: Path) -> bool:
    """Whether one of the first trace-like files at `path` is a trace."""
    if path.is_file():
        return looks_like_trace(path)
    candidates = input_files(path, lambda p: p.suffix.lower() in TRACE_SUFFIXES)
    return any(looks_like_trace(f) for f in candidates[: SNIFF_LIMIT * 5])


def records(file: Path) -> list[Any]:
    """The records of a session file: each JSON line (lines that are not JSON, such as a CLI's
    messages on stderr, skipped), or the one JSON document."""
    text = read_text(file)
    if file.suffix.lower() == ".json":
        return [parse_json(text, file)]
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("{", "[")):
            try:
                out.append(parse_json(line, file, field=f"line {number}"))
            except RefusedInput:
                raise
            except InputError:
                continue
    return out


def calls(found: list[Any]) -> list[Call]:
    """Every tool call in the records, in order; one that appears again with the same id (a
    session echoing its own calls) is kept once."""
    out: list[Call] = []
    seen: set[str] = set()
    for value in _mappings(found):
        call = _call(value)
        if call is None:
            continue
        if call.call_id is not None:
            if call.call_id in seen:
                continue
            seen.add(call.call_id)
        out.append(call)
    return out


def _mappings(value: Any) -> Iterator[dict[str, Any]]:
    """Every mapping in `value`, parents before children, in document order (no recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def _call(value: dict[str, Any]) -> Call | None:
    name = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
    args = next((value[k] for k in _ARG_KEYS if k in value), None)
    if args is None and isinstance(value.get("state"), dict):  # opencode: state.input
        args = value["state"].get("input")
    if isinstance(args, str) and args.lstrip().startswith("{"):
        try:
            args = json.loads(args)  # Codex: the arguments as a JSON string
        except ValueError:
            return None
    if not name or not isinstance(args, dict):
        return None
    call_id = next((str(value[k]) for k in _ID_KEYS if isinstance(value.get(k), str)), None)
    return Call(name, args, call_id)


def solution_of(call: Call) -> str | None:
    """The solution a call submits, None when it submits none (or one that cannot be read)."""
    for key in ("ans", "solution"):
        if "submit" in call.tool.lower() and isinstance(call.args.get(key), str):
            return str(call.args[key])
    command = call.args.get("command", call.args.get("cmd"))
    if isinstance(command, list):
        command = command[-1] if command and isinstance(command[-1], str) else None
    return curl_solution(command) if isinstance(command, str) else None


def curl_solution(command: str) -> str | None:
    """The `solution` a `curl ... /submit -d '{"solution": ...}'` command sends; None when the
    command is not one, or the shell or the JSON could not have read its body."""
    if "curl" not in command or "/submit" not in command:
        return None
    try:
        words = shlex.split(command)
    except ValueError:  # a quote left open: bash refused the command, nothing was sent
        return None
    for i, word in enumerate(words):
        body = None
        if word in DATA_FLAGS and i + 1 < len(words):
            body = words[i + 1]
        elif word.startswith(tuple(f"{flag}=" for flag in DATA_FLAGS[1:])):
            body = word.partition("=")[2]
        if body is None:
            continue
        try:
            data = json.loads(body)
        except ValueError:
            return None
        solution = data.get("solution") if isinstance(data, dict) else None
        return solution if isinstance(solution, str) else None
    return None


def submitted(found: list[Call]) -> tuple[int, str] | None:
    """(index, text) of the first call that submits a non-empty solution: the graded one."""
    for i, call in enumerate(found):
        text = solution_of(call)
        if text and text.strip():
            return i, text
    return None


def load_trace_submissions(path: Path) -> list[Submission]:
    """One submission per traced run at `path`; a trace whose problem cannot be told, or a
    second trace of one run, is skipped with a warning."""
    subs: dict[tuple[str, str], Submission] = {}
    for file in trace_files(path):
        read = records(file)
        run = _run_of(file, path) or _run_recorded(file, read)
        if run is None:
            warn_format(
                file,
                "an agent trace whose SREGym problem cannot be told, skipped (expected it under"
                " results/<batch>/<tool>/<problem_id>/run_<n>/, beside a"
                " <tool>_results_<problem_id>_<timestamp>.json, or named"
                " <MMDD_HHMM>_<problem_id>_stratus_agent_trajectory.jsonl)",
            )
            continue
        sub = _submission(file, read, *run)
        if sub.key in subs:
            warn_format(
                file,
                f"a second trace of run {sub.trial!r} of {sub.incident_id!r}: skipped (the first"
                f" is {subs[sub.key].source['file']})",
            )
            continue
        subs[sub.key] = sub
    if not subs:
        raise InputError(path, f"holds no usable SREGym agent trace (expected {EXPECTED})")
    return list(subs.values())


def _submission(
    file: Path, read: list[Any], problem: str, tool: str, run: str, results: Path | None
) -> Submission:
    found = calls(read)
    index, text = submitted(found) or (-1, "")
    model = _model(read)
    actions = [
        Action.model_validate(
            {"step": i + 1, "tool": call.tool, "args": call.args}
            | ({"submission": sent} if (sent := solution_of(call)) is not None else {})
        )
        for i, call in enumerate(found)
    ]
    metrics: dict[str, Any] = {}
    if results is not None:
        try:
            metrics["agent_run"] = parse_json(read_text(results), results)
        except InputError as exc:
            warn_format(results, f"unreadable run results, not kept ({exc.message})")
    return Submission(
        incident_id=problem,
        trial=f"{tool}/{run}",
        diagnosis=text,
        agent=f"{tool} ({model})" if model else tool,
        agent_model=model,
        trajectory=Trajectory(actions=actions, metrics=metrics),
        source={
            "format": "sregym",
            "file": str(file),
            "schema": "agent trace",
            "submitted_at_call": index + 1,
            **({"context": [str(results)]} if results is not None else {}),
        },
    )


def _run_of(file: Path, root: Path) -> tuple[str, str, str, Path | None] | None:
    """(problem id, tool, run, results file) of a trace, from where it lies."""
    stratus = STRATUS_FILE.match(file.name)
    if stratus:
        return stratus["problem"], stratus["tool"], stratus["ts"], None
    top = root if root.is_dir() else root.parent
    for folder in [file.parent, *file.parent.parents]:
        if RUN_FOLDER.match(folder.name):
            results = next(iter(sorted(folder.glob("*_results_*.json"))), None)
            return folder.parent.name, folder.parent.parent.name, folder.name, results
        for results in sorted(folder.glob("*_results_*.json")):
            named = RESULTS_FILE.match(results.name)
            if named:
                return named["problem"], named["tool"], named["ts"], results
        if folder == top or top not in folder.parents:
            break
    return None


def _run_recorded(file: Path, read: list[Any]) -> tuple[str, str, str, None] | None:
    """(problem id, tool, run, None) from a trace's own metadata record (Stratus writes
    `{"type": "metadata", "problem_id", "timestamp"}` first), when its place does not say."""
    first = read[0] if read else None
    if not isinstance(first, dict) or not isinstance(first.get("problem_id"), str):
        return None
    stratus = STRATUS_FILE.match(file.name)
    tool = stratus["tool"] if stratus else str(first.get("agent") or first.get("tool") or "agent")
    return first["problem_id"], tool, str(first.get("timestamp") or file.stem), None


def _model(read: list[Any]) -> str | None:
    """The first model name the trace records (`model`, `modelId`)."""
    for value in _mappings(read):
        for key in ("model", "modelId", "modelID", "model_name"):
            if isinstance(value.get(key), str) and value[key].strip():
                return str(value[key]).strip()
    return None
