"""Cloud-OpsBench agent runs: `result_raw.json` and the case trace beside it.

Cloud-OpsBench's agent (`cloudops_agent/run.py`) writes, per case,

    <save_root>/<system>/<model>_<prompt>/<fault_category>/<case>/result_raw.json
    <save_root>/<system>/<model>_<prompt>/<fault_category>/<case>/<case>.json

`result_raw.json` is `{"Completed": <final answer>, "finished", "stop_reason", "steps_used"}`,
the final answer a JSON string (maybe in a ```json fence) `{"key_evidence_summary",
"top_3_predictions": [{"rank", "fault_taxonomy", "fault_object", "root_cause"}]}`, the shape its
prompt asks for and its `evaluation.py` reads; `<case>.json` is the case state: `metadata`
(`namespace`, `fault_category`, ...) and `steps[]` (`action_name`, `action_input`,
`observation`, ...). A run result is recognised by its content, whatever its name.

-> `Submission`: incident `<system>-<category>-<case>` (the id the ground-truth cases get,
`boutique-runtime-1`), trial and agent = the `<model>_<prompt>` folder; the diagnosis lists the
ranked predictions with the evidence summary; each prediction's `fault_object` is a ranked
entity (`node/...` kind Node, `namespace/...` kind Namespace, `app/...` a workload) with its
`root_cause` as fault type, so entity scoring gives Cloud-OpsBench's top-1 / top-3 component
accuracy; the trace's steps become the trajectory. Upstream publishes no runs; the shape is
read from its writer and evaluator, and from runs published in forks.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..models import Action, Entity, Submission, Trajectory
from ..reading import RefusedInput, input_files, parse_json, read_head, read_text
from .files import SNIFF_LIMIT, text_or_none, warn_format

FORMAT = "cloud-opsbench"
KINDS = {"node": "Node", "namespace": "Namespace"}
SYSTEMS = {"train-ticket": "trainticket", "trainticket": "trainticket", "boutique": "boutique"}
# The fault categories of Cloud-OpsBench's cases (`benchmark/<app>/<category>/`).
CATEGORIES = frozenset(
    {"admission", "infrastructure", "performance", "runtime", "scheduling", "service", "startup"}
)
EXPECTED = (
    "Cloud-OpsBench run results: result_raw.json ({Completed, finished, stop_reason,"
    " steps_used}) under <system>/<model>_<prompt>/<category>/<case>/"
)


def is_run_result(data: Any) -> bool:
    """`{"Completed": ..., "stop_reason"/"finished": ...}`, what `run.py` writes."""
    return (
        isinstance(data, dict)
        and "Completed" in data
        and ("stop_reason" in data or "finished" in data)
    )


def _readable(file: Path) -> Any:
    try:
        if '"Completed"' not in read_head(file, 4096):
            return None
        return parse_json(read_text(file), file)
    except RefusedInput:
        raise
    except InputError:
        return None


def result_files(path: Path) -> list[Path]:
    """The run results at `path`: the file, or every one below the folder (by content)."""
    if path.is_file():
        return [path] if is_run_result(_readable(path)) else []
    candidates = input_files(path, lambda p: p.suffix.lower() == ".json")
    return [f for f in candidates if is_run_result(_readable(f))]


def any_result(path: Path) -> bool:
    """Whether one of the first JSON files at `path` that mention `Completed` is a run result."""
    if path.is_file():
        return is_run_result(_readable(path))
    candidates = input_files(path, lambda p: p.suffix.lower() == ".json")
    hits = (f for f in candidates if _readable(f) is not None)
    return any(is_run_result(_readable(f)) for _, f in zip(range(SNIFF_LIMIT), hits, strict=False))


def load_run_submissions(path: Path) -> list[Submission]:
    """One submission per run result at `path`; one whose case cannot be told from its folders
    is skipped with a warning naming the layout expected."""
    subs = []
    for file in result_files(path):
        where = _case_of(file)
        if where is None:
            warn_format(
                file,
                "a Cloud-OpsBench run result whose case cannot be told, skipped (expected it"
                " under <system>/<model>_<prompt>/<category>/<case number>/, the category one of"
                f" {', '.join(sorted(CATEGORIES))})",
            )
            continue
        subs.append(_submission(file, parse_json(read_text(file), file), *where))
    if not subs:
        raise InputError(path, f"holds no {EXPECTED}")
    return subs


def _case_of(file: Path) -> tuple[str, str, str, str, Path | None] | None:
    """(system, run, category, case, trace) from `<system>/<run>/<category>/<case>/`, the
    trace's `metadata` filling in what it records."""
    folders = [p.name for p in file.parents][:4]
    if len(folders) < 4:
        return None
    case, category, run, system = folders
    trace = file.parent / f"{case}.json"
    meta = _trace(trace).get("metadata") or {} if trace.is_file() else {}
    category = str(meta.get("fault_category") or category)
    if not case.isdigit() or category.lower() not in CATEGORIES:
        return None  # not a run folder: the case is a number, below one of the categories
    system = SYSTEMS.get(str(meta.get("namespace") or ""), SYSTEMS.get(system, system))
    return system, run, category, case, trace if trace.is_file() else None


def _trace(file: Path) -> dict[str, Any]:
    try:
        data = parse_json(read_text(file), file)
    except RefusedInput:
        raise
    except InputError as exc:
        warn_format(file, f"unreadable case trace, not kept ({exc.message})")
        return {}
    return data if isinstance(data, dict) else {}


def _submission(
    file: Path,
    data: dict[str, Any],
    system: str,
    run: str,
    category: str,
    case: str,
    trace: Path | None,
) -> Submission:
    answer = _answer(data.get("Completed"), file)
    predictions = sorted(
        (p for p in answer.get("top_3_predictions") or [] if isinstance(p, dict)),
        key=_rank,
    )
    lines = (
        [f"Key evidence: {answer['key_evidence_summary']}"]
        if answer.get("key_evidence_summary")
        else []
    )
    entities = []
    for rank, p in enumerate(predictions, 1):
        obj, cause = str(p.get("fault_object") or "").strip(), text_or_none(p.get("root_cause"))
        taxonomy = f" ({p['fault_taxonomy']})" if p.get("fault_taxonomy") else ""
        lines.append(f"Rank {rank}: {cause or 'unspecified root cause'} at {obj or '?'}{taxonomy}.")
        prefix, _, name = obj.partition("/")
        if obj:
            entities.append(
                Entity(
                    name=name or obj,
                    kind=KINDS.get(prefix) if name else None,
                    rank=rank,
                    fault_type=cause,
                    raw=obj,
                )
            )
    if not predictions:
        warn_format(
            file, "no top_3_predictions in the final answer: empty diagnosis", field="Completed"
        )
    steps = (_trace(trace).get("steps") or []) if trace else []
    return Submission(
        incident_id=f"{system}-{category}-{case}",
        trial=run,
        diagnosis="\n".join(lines),
        agent=run,
        entities=entities,
        trajectory=Trajectory(
            actions=[_action(i, s) for i, s in enumerate(steps) if isinstance(s, dict)],
            final_state={k: data.get(k) for k in ("finished", "stop_reason", "steps_used")},
        ),
        source={
            "format": FORMAT,
            "file": str(file),
            "schema": "run result",
            **({"context": [str(trace)]} if trace else {}),
        },
    )


def _rank(prediction: dict[str, Any]) -> int:
    rank = prediction.get("rank")
    return rank if isinstance(rank, int) else 1 << 30


def _answer(value: Any, file: Path) -> dict[str, Any]:
    """The final answer as a mapping: a mapping, or JSON text (maybe fenced) holding one."""
    if isinstance(value, dict):
        return value
    text = str(value or "").strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    try:
        data = parse_json((fenced.group(1) if fenced else text) or "{}", file, field="Completed")
    except RefusedInput:
        raise
    except InputError:
        return {}
    return data if isinstance(data, dict) else {}


def _action(i: int, step: dict[str, Any]) -> Action:
    args = step.get("action_input")
    return Action(
        step=step.get("step_id") if isinstance(step.get("step_id"), int) else i + 1,
        tool=text_or_none(step.get("action_name")) or text_or_none(step.get("action_type")),
        args=args if isinstance(args, dict) else {},
        accepted=None if step.get("error") is None else False,
        observation=text_or_none(step.get("observation") or step.get("error")),
    )
