"""Read specs and submissions from disk: the native formats, and dispatch to format adapters.

Native specs: a YAML/JSON file holding one `IncidentSpec` mapping, a list of them, or
`{"incidents": [...]}`; or a directory of such files.
Native submissions: the ITBench layout `<outputs>/<incident_id>/<trial>/[outputs/]agent_output.json`
(JSON with `diagnosis`, optional `agent`, `entities`, `trajectory`), or a JSONL / JSON list of
full `Submission` objects.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from .errors import InputError, warn_format
from .models import IncidentSpec, Submission
from .reading import YAML_LOADER, input_files, parse_json, read_data, read_text, regular_file_size

__all__ = ["YAML_LOADER", "load_specs", "load_submissions", "read_data", "read_text"]

SPEC_SUFFIXES = {".yaml", ".yml", ".json"}
AGENT_OUTPUT = "agent_output.json"


def validation_error(path: Path, exc: ValidationError, prefix: str = "") -> InputError:
    """Turn pydantic's error into one line naming the first bad field and what was expected."""
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    field = f"{prefix}.{loc}" if prefix and loc else (prefix or loc or None)
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return InputError(path, f"{first['msg']}{more}", field=field)


def validate(model: type[BaseModel], data: Any, path: Path, prefix: str = "") -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(path, exc, prefix) from None


def _source(path: Path, given: Any) -> dict[str, Any]:
    """Provenance of a loaded item. The item's own `source` (say, the upstream problem file in
    `file`) is kept; `loaded_from` always names the file it was read from, for error messages."""
    if given is not None and not isinstance(given, dict):
        return given  # left for validation to reject, naming the field
    return {"format": "native", "file": str(path), **(given or {}), "loaded_from": str(path)}


def _loaded_from(item: IncidentSpec | Submission) -> str | None:
    return item.source.get("loaded_from") or item.source.get("file")


# ---------------------------------------------------------------- specs


def load_specs(path: str | Path, format: str = "auto") -> list[IncidentSpec]:
    """Load every incident spec under `path` (a file or a directory)."""
    path = Path(path)
    _check_input(path, "--ground-truth")
    files = _spec_files(path) if format in ("auto", "native") else []
    if format == "auto":
        format = "native" if _looks_native_specs(files) else _detect("spec", path)
    specs = _load_native_specs(files) if format == "native" else _adapter("spec", path, format)
    if not specs:
        raise InputError(path, "holds no incident specs (expected YAML/JSON spec files)")
    _reject_duplicate_ids(specs)
    return specs


def _spec_files(path: Path) -> list[Path]:
    if not path.is_dir():
        return [path]
    return input_files(path, lambda p: p.suffix.lower() in SPEC_SUFFIXES)


def _check_input(path: Path, flag: str) -> None:
    """`path` exists and is a directory or a regular file (a FIFO would hang, a device never end)."""
    if not path.exists() and not path.is_symlink():
        raise InputError(path, "no such file or directory", field=flag)
    if not path.is_dir():
        regular_file_size(path)


def _spec_items(data: Any) -> tuple[list[Any], str]:
    if isinstance(data, dict) and "incidents" in data:
        return list(data["incidents"] or []), "incidents"
    if isinstance(data, list):
        return data, ""
    return [data], ""


def _looks_native_specs(files: list[Path]) -> bool:
    if not files:
        return True  # let the native loader say what is missing
    items, _ = _spec_items(read_data(files[0]))
    return bool(items) and isinstance(items[0], dict) and "ground_truth" in items[0]


def _load_native_specs(files: list[Path]) -> list[IncidentSpec]:
    specs: list[IncidentSpec] = []
    for file in files:
        items, key = _spec_items(read_data(file))
        for i, item in enumerate(items):
            prefix = f"{key}[{i}]" if key else (f"[{i}]" if len(items) > 1 else "")
            if not isinstance(item, dict):
                raise InputError(
                    file, "expected a mapping (an incident spec)", field=prefix or None
                )
            spec = validate(IncidentSpec, item, file, prefix)
            specs.append(spec.model_copy(update={"source": _source(file, spec.source)}))
    return specs


def _reject_duplicate_ids(specs: Iterable[IncidentSpec]) -> None:
    seen: dict[str, IncidentSpec] = {}
    for spec in specs:
        if spec.id in seen:
            first = _loaded_from(seen[spec.id]) or "?"
            raise InputError(
                _loaded_from(spec),
                f"duplicate incident id {spec.id!r} (also in {first})",
                field="id",
            )
        seen[spec.id] = spec


# ---------------------------------------------------------------- submissions


def load_submissions(path: str | Path, format: str = "auto") -> list[Submission]:
    """Load every submission under `path`: an outputs directory, or a JSONL/JSON file."""
    path = Path(path)
    _check_input(path, "--outputs")
    if format == "auto":
        format = "native" if _looks_native_submissions(path) else _detect("submission", path)
    if format == "native":
        subs = _load_native_file(path) if path.is_file() else _load_native_dir(path)
    else:
        subs = _adapter("submission", path, format)
    if not subs:
        raise InputError(
            path,
            f"holds no submissions (expected <incident>/<trial>/{AGENT_OUTPUT}, or a JSONL file)",
        )
    _reject_duplicate_submissions(subs)
    return subs


def _looks_native_submissions(path: Path) -> bool:
    if path.is_file():
        return path.suffix.lower() in {".jsonl", ".json"} and _first_has(path, "diagnosis")
    outputs = list(_agent_output_files(path))
    if outputs:
        return _first_has(outputs[0], "diagnosis")
    return _detect("submission", path) == "native"


def _first_has(path: Path, key: str) -> bool:
    text = read_text(path).lstrip()
    try:
        first = parse_json(text.splitlines()[0] if path.suffix == ".jsonl" else text, path)
    except (InputError, IndexError):
        return True  # let the native loader report the syntax error
    if isinstance(first, list):
        first = first[0] if first else {}
    return isinstance(first, dict) and key in first


def _agent_output_files(root: Path) -> list[Path]:
    return sorted(root.glob(f"*/*/{AGENT_OUTPUT}")) + sorted(
        root.glob(f"*/*/outputs/{AGENT_OUTPUT}")
    )


def _trial_dirs(root: Path) -> list[Path]:
    """`<root>/<incident>/<trial>/` folders (symbolic links to folders are not followed)."""

    def dirs(folder: Path) -> list[Path]:
        return sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())

    return [trial for incident in dirs(root) for trial in dirs(incident)]


def _trial_outputs(trial_dir: Path) -> list[Path]:
    """The trial's agent output files; none (with a warning saying why) when there is none."""
    found, broken = [], False
    for file in (trial_dir / AGENT_OUTPUT, trial_dir / "outputs" / AGENT_OUTPUT):
        if file.is_symlink() and not file.exists():
            warn_format(file, "broken or looping symbolic link, skipped")
            broken = True
        elif file.exists():
            regular_file_size(file)
            found.append(file)
    if not found and not broken:
        warn_format(trial_dir, f"trial folder without {AGENT_OUTPUT}, skipped")
    return found


def _load_native_dir(root: Path) -> list[Submission]:
    return [
        _load_agent_output(file, trial_dir)
        for trial_dir in _trial_dirs(root)
        for file in _trial_outputs(trial_dir)
    ]


def _load_agent_output(file: Path, trial_dir: Path) -> Submission:
    data = read_data(file)
    if not isinstance(data, dict):
        raise InputError(file, "expected a JSON object with a 'diagnosis' field")
    data = {**data, **_folder_key(file, data, trial_dir.parent.name, trial_dir.name)}
    data["source"] = _source(file, data.get("source"))
    return validate(Submission, data, file)


def _folder_key(file: Path, data: dict[str, Any], incident: str, trial: str) -> dict[str, str]:
    """The folders name the incident and trial; a file naming others is warned about, not obeyed:
    a submission may never move itself to another incident."""
    for field, folder in (("incident_id", incident), ("trial", trial)):
        named = data.get(field)
        if named is not None and str(named) != folder:
            warn_format(
                file, f"names {named!r} but its folder says {folder!r}; the folder wins", field
            )
    return {"incident_id": incident, "trial": trial}


def _load_native_file(path: Path) -> list[Submission]:
    if path.suffix.lower() == ".jsonl":
        rows = _jsonl_rows(path)
    else:
        data = read_data(path)
        rows = [(f"[{i}]", r) for i, r in enumerate(data if isinstance(data, list) else [data])]
    subs = []
    for where, row in rows:
        if not isinstance(row, dict):
            raise InputError(path, "expected a JSON object (a submission)", field=where)
        row = {**row, "source": _source(path, row.get("source"))}
        subs.append(validate(Submission, row, path, where))
    return subs


def _jsonl_rows(path: Path) -> list[tuple[str, Any]]:
    rows = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        rows.append((f"line {number}", parse_json(line, path, field=f"line {number}")))
    return rows


def _reject_duplicate_submissions(subs: Iterable[Submission]) -> None:
    seen: dict[tuple[str, str], Submission] = {}
    for sub in subs:
        if sub.key in seen:
            first = _loaded_from(seen[sub.key]) or "?"
            raise InputError(
                _loaded_from(sub),
                f"duplicate submission for incident {sub.incident_id!r} trial {sub.trial!r}"
                f" (also in {first})",
                field="trial",
            )
        seen[sub.key] = sub


# ---------------------------------------------------------------- other formats


def _detect(kind: str, path: Path) -> str:
    """The adapter format that claims `path`; "native" when none does.

    Input that no adapter claims is most often a native file with a field missing (a spec
    without `ground_truth`, an `agent_output.json` without `diagnosis`): the native loader then
    names that file and field, which a person can act on.
    """
    try:
        from .formats import detect
    except ImportError:
        return "native"
    finder = detect.detect_spec_format if kind == "spec" else detect.detect_submission_format
    try:
        return finder(path)
    except InputError as exc:
        if exc.field != "format":
            raise
        return "native"


def _adapter(kind: str, path: Path, format: str) -> list[Any]:
    try:
        from .formats import detect
    except ImportError:
        raise InputError(path, f"format {format!r} is not supported by this installation") from None
    loader = detect.load_specs_as if kind == "spec" else detect.load_submissions_as
    return loader(path, format)
