"""ITBench agent outputs: trial folders, single files and AgentBeats leaderboard files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...entities import parse_entity_name
from ...errors import InputError
from ...models import Entity, Submission
from ...reading import RefusedInput, parse_json
from ..files import first_readable, read_text, text_or_none, warn_format
from .common import FORMAT, canonical_incident_id, join

AGENT_FILES = (
    "outputs/agent_output.json",
    "outputs/agent_response.json",
    "agent_output.json",
    "agent_response.json",
)


def _is_agent_output(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and "diagnosis" not in data
        and isinstance(data.get("entities"), list)
    )


def _is_leaderboard(data: Any) -> bool:
    results = data.get("results") if isinstance(data, dict) else None
    return isinstance(results, list) and any(
        isinstance(r, dict) and isinstance((r.get("agent_outputs") or {}).get("scenarios"), dict)
        for r in results
    )


def _is_results_only(data: Any) -> bool:
    """An AgentBeats results file holding ITBench's judge results but no agent outputs."""
    results = data.get("results") if isinstance(data, dict) else None
    return (
        isinstance(results, list)
        and any(isinstance(r, dict) and "evaluation_results" in r for r in results)
        and not _is_leaderboard(data)
    )


RESULTS_ONLY = (
    "ITBench's judge results (results[].evaluation_results) but no agent outputs"
    " (results[].agent_outputs.scenarios): there is nothing to score here; give the run's agent"
    " outputs (the leaderboard file that has them, or <incident>/<trial>/agent_output.json"
    " folders)"
)


def _trial_files(root: Path) -> list[tuple[Path, Path | None]]:
    """(trial folder, its agent-output file or None) for `<root>/<incident>/<trial>/`: the
    file of one of ITBench's names, else the first other JSON file in the trial folder (or its
    `outputs/`) whose content is an agent output."""
    out = []
    for incident in sorted(p for p in root.iterdir() if p.is_dir()):
        for trial in sorted((p for p in incident.iterdir() if p.is_dir()), key=_trial_sort):
            if trial.name == "outputs":
                continue
            named = next((trial / n for n in AGENT_FILES if (trial / n).is_file()), None)
            out.append((trial, named or _output_by_content(trial)))
    return out


def _output_by_content(trial: Path) -> Path | None:
    for folder in (trial / "outputs", trial):
        if folder.is_dir():
            for file in sorted(folder.glob("*.json")):
                if _is_agent_output(_sniff_output(file)):
                    return file
    return None


def _trial_sort(path: Path) -> tuple[int, str]:
    return (int(path.name), "") if path.name.isdigit() else (1 << 30, path.name)


def looks_like_itbench_submissions(path: str | Path) -> bool:
    """Whether `path` is an ITBench agent output or leaderboard file, or a folder of trial folders
    holding agent outputs.
    """
    path = Path(path)
    if path.is_file():
        data = _sniff_output(path)
        if _is_results_only(data):
            raise InputError(path, f"an AgentBeats results file with {RESULTS_ONLY}")
        return _is_agent_output(data) or _is_leaderboard(data)
    if not path.is_dir():
        return False
    files = [f for _, f in _trial_files(path) if f is not None]
    if files:
        return _is_agent_output(first_readable(files, _sniff_output))
    return bool(_board_files(path))


def _board_files(folder: Path) -> list[Path]:
    """The AgentBeats leaderboard files directly in `folder`; InputError when it holds only
    results files without agent outputs (what to give instead, said once for the folder)."""
    boards, results_only = [], []
    for file in sorted(folder.glob("*.json")):
        data = _sniff_output(file)
        if _is_leaderboard(data):
            boards.append(file)
        elif _is_results_only(data):
            results_only.append(file.name)
    if not boards and results_only:
        raise InputError(
            folder,
            f"holds only AgentBeats results files ({', '.join(results_only)}) with {RESULTS_ONLY}",
        )
    return boards


def _sniff_output(path: Path) -> Any:
    if path.suffix.lower() != ".json":
        return None
    try:
        return _parse_output(read_text(path), path)
    except InputError:
        return None


def _parse_output(text: str, path: Path) -> Any:
    """An agent output file: JSON, or a JSON string holding (fenced) JSON."""
    data = parse_json(text, path)
    if isinstance(data, str):
        fenced = re.search(r"```(?:json)?\s*(.*?)```", data, re.S)
        try:
            data = parse_json(fenced.group(1) if fenced else data, path)
        except InputError as exc:
            raise InputError(path, f"the JSON string holds {exc.message}") from None
    return data


def load_itbench_submissions(path: str | Path) -> list[Submission]:
    """Submissions from one agent output or leaderboard file, or from every trial folder under
    `path`; trial folders with no or unreadable agent output are skipped with a warning.
    """
    path = Path(path)
    if path.is_file():
        data = _parse_output(read_text(path), path)
        if _is_results_only(data):
            raise InputError(
                path,
                f"an AgentBeats results file with {RESULTS_ONLY}",
                field="results[].agent_outputs",
            )
        if _is_leaderboard(data):
            return _leaderboard_submissions(data, path)
        trial_dir = path.parent.parent if path.parent.name == "outputs" else path.parent
        return [
            _output_to_submission(
                data, canonical_incident_id(trial_dir.parent.name), trial_dir.name, path, None
            )
        ]
    trials = _trial_files(path)
    if not any(file for _, file in trials):
        boards = _board_files(path)
        if boards:
            return [
                sub
                for file in boards
                for sub in _leaderboard_submissions(
                    _parse_output(read_text(file), file),
                    file,
                    f"{file.stem}/" if len(boards) > 1 else "",
                )
            ]
    subs = []
    for trial_dir, file in trials:
        if file is None:
            warn_format(
                trial_dir,
                "no agent output in this trial folder (expected agent_output.json or"
                " agent_response.json, here or in outputs/): a bad run, skipped",
            )
            continue
        try:
            data = _parse_output(read_text(file), file)
        except RefusedInput:
            raise
        except InputError as exc:
            warn_format(
                file,
                f"unreadable agent output, skipped as a bad run ({exc.message}; expected a JSON"
                " object with entities[], as ITBench's agents write)",
                field=exc.field,
            )
            continue
        subs.append(
            _output_to_submission(
                data, canonical_incident_id(trial_dir.parent.name), trial_dir.name, file, None
            )
        )
    if not subs:
        raise InputError(
            path, "holds no ITBench agent outputs (<incident>/<trial>/agent_output.json)"
        )
    return subs


def _leaderboard_submissions(data: dict[str, Any], file: Path, run: str = "") -> list[Submission]:
    """The agent outputs of a leaderboard file; the trial is the result's position (1, ...),
    after `run` (the file's name when a folder holds several)."""
    agent = (data.get("participants") or {}).get("agent")
    subs = []
    for i, result in enumerate(data.get("results") or []):
        scenarios = (result.get("agent_outputs") or {}).get("scenarios") or {}
        for name, output in scenarios.items():
            subs.append(
                _output_to_submission(
                    output,
                    canonical_incident_id(name),
                    f"{run}{i + 1}",
                    file,
                    agent,
                    where=f"results[{i}].agent_outputs.scenarios.{name}",
                )
            )
    if not subs:
        raise InputError(file, "holds no agent outputs", field="results[].agent_outputs")
    return subs


def _output_to_submission(
    data: Any, incident_id: str, trial: str, file: Path, agent: str | None, where: str = ""
) -> Submission:
    if not isinstance(data, dict):
        raise InputError(
            file, "expected a JSON object (an ITBench agent output)", field=where or None
        )
    entities, by_id, id_only = [], {}, []
    for i, raw in enumerate(data.get("entities") or []):
        entity = _entity(raw) or _id_entity(raw)
        if entity is None:
            warn_format(file, "entity without a name: skipped", field=join(where, f"entities[{i}]"))
            continue
        written = entity.raw
        if written is None:
            id_only.append(f"entities[{i}]")
        entities.append(entity)
        if isinstance(raw, dict) and raw.get("id"):
            by_id[str(raw["id"])] = written or entity.name
    if id_only:
        warn_format(
            file,
            f"{len(id_only)} entit{'y' if len(id_only) == 1 else 'ies'} ({', '.join(id_only[:3])}"
            f"{', ...' if len(id_only) > 3 else ''}) named only by a topology id (the ITBench"
            " paper's output schema): kept with the id as name, which no ground-truth name or"
            " filter can match",
            field=where or None,
        )
    diagnosis = _diagnosis(data, entities, by_id)
    if not diagnosis:
        warn_format(
            file,
            "agent output names no entities, propagations or alerts: empty diagnosis",
            field=where or None,
        )
    return Submission(
        incident_id=incident_id,
        trial=trial,
        diagnosis=diagnosis,
        agent=agent,
        entities=entities,
        source={
            "format": FORMAT,
            "file": str(file),
            "schema": _schema(data),
            **({"field": where} if where else {}),
        },
    )


def _schema(data: dict[str, Any]) -> str:
    entities = [e for e in data.get("entities") or [] if isinstance(e, dict)]
    if any("id" in e and not e.get("name") for e in entities):
        return "paper"
    return "legacy" if any("id" in e for e in entities) or "incident_summary" in data else "current"


def _entity(raw: Any) -> Entity | None:
    if not isinstance(raw, dict) or not str(raw.get("name") or "").strip():
        return None
    full = str(raw["name"]).strip()
    namespace, kind, name = parse_entity_name(full)
    flag = raw.get("contributing_factor")
    return Entity(
        name=name,
        kind=kind,
        namespace=namespace,
        contributing_factor=flag if isinstance(flag, bool) else None,
        reasoning=text_or_none(raw.get("reasoning")),
        evidence=text_or_none(raw.get("evidence")),
        raw=full,
        **_extra(raw),
    )


def _id_entity(raw: Any) -> Entity | None:
    """A paper-era entity, `{id: <topology hash>, root_cause: true}`: the id is all it has."""
    if not isinstance(raw, dict) or not str(raw.get("id") or "").strip():
        return None
    flag = raw.get("root_cause", raw.get("contributing_factor"))
    return Entity(
        name=str(raw["id"]).strip(),
        kind=text_or_none(raw.get("kind")),
        namespace=text_or_none(raw.get("namespace")),
        contributing_factor=flag if isinstance(flag, bool) else None,
        reasoning=text_or_none(raw.get("reasoning")),
        evidence=text_or_none(raw.get("evidence")),
        **_extra(raw),
    )


def _extra(raw: dict[str, Any]) -> dict[str, Any]:
    """The entity's keys that `Entity` does not declare, kept as they are. A key named like a
    declared field is read by the caller, with its type checked, or (`raw`, `rank`) is not the
    file's to set."""
    return {k: v for k, v in raw.items() if k not in Entity.model_fields}


def _diagnosis(data: dict[str, Any], entities: list[Entity], by_id: dict[str, str]) -> str:
    lines = _summary_lines(data.get("incident_summary"))
    causes = [e for e in entities if e.contributing_factor]
    others = [e for e in entities if not e.contributing_factor]
    for title, group in (
        ("Root cause entities (contributing factors):", causes),
        ("Other entities examined (not contributing):", others),
    ):
        if group:
            lines.append(title)
            lines.extend(f"- {_entity_line(e)}" for e in group)
    propagations = [p for p in data.get("propagations") or [] if isinstance(p, dict)]
    if propagations:
        lines.append("Propagation:")
        for p in propagations:
            source = p.get("source_name") or by_id.get(str(p.get("source")), p.get("source"))
            target = p.get("target_name") or by_id.get(str(p.get("target")), p.get("target"))
            condition, effect = p.get("condition") or "", p.get("effect") or ""
            lines.append(f"- {source} -> {target}: {condition}; effect: {effect}")
    alerts = [a for a in data.get("alerts_explained") or [] if isinstance(a, dict)]
    if alerts:
        lines.append("Alerts explained:")
        for a in alerts:
            state = "explained" if a.get("explained") else "not explained"
            lines.append(f"- {a.get('alert')}: {a.get('explanation') or ''} ({state})")
    return "\n".join(lines)


def _summary_lines(summary: Any) -> list[str]:
    if not isinstance(summary, dict):
        return []
    lines = [f"Summary: {summary['title']}"] if summary.get("title") else []
    if summary.get("impact"):
        lines.append(f"Impact: {summary['impact']}")
    causes = summary.get("root_causes") or []
    if causes:
        lines.append("Root causes:")
        lines.extend(f"- {c}" for c in causes)
    factors = [f for f in summary.get("contributing_factors") or [] if isinstance(f, dict)]
    if factors:
        lines.append("Contributing factors:")
        lines.extend(f"- {f.get('name')}: {f.get('description') or ''}" for f in factors)
    return lines


def _entity_line(entity: Entity) -> str:
    text = entity.raw or entity.name
    if entity.reasoning:
        text += f": {entity.reasoning}"
    if entity.evidence:
        text += f" Evidence: {entity.evidence}"
    return text
