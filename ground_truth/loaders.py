"""Read specs and submissions from disk: the native formats, and dispatch to format adapters.

Native specs: a YAML/JSON file holding one `IncidentSpec` mapping, a list of them, or
`{"incidents": [...]}`; or a directory of such files.
Native submissions: the ITBench layout `<outputs>/<incident_id>/<trial>/[outputs/]agent_output.json`
(JSON with `diagnosis`, optional `agent`, `entities`, `trajectory`), or a JSONL / JSON list of
full `Submission` objects.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from .errors import InputError
from .models import IncidentSpec, Submission

SPEC_SUFFIXES = {".yaml", ".yml", ".json"}
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader when libyaml is there
AGENT_OUTPUT = "agent_output.json"


def read_text(path: Path) -> str:
    """Read a file as UTF-8, or fail naming the file and the offending byte."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            path, f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
        ) from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None


def read_data(path: Path) -> Any:
    """Parse a YAML or JSON file, naming the line of a syntax error."""
    text = read_text(path)
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"invalid JSON: {exc.msg}", field=f"line {exc.lineno}") from None
    try:
        return yaml.load(text, Loader=YAML_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(path, f"invalid YAML: {problem}", field=where) from None


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
    if not path.exists():
        raise InputError(path, "no such file or directory", field="--ground-truth")
    if format == "auto":
        format = "native" if _looks_native_specs(path) else _detect("spec", path)
    specs = _load_native_specs(path) if format == "native" else _adapter("spec", path, format)
    if not specs:
        raise InputError(path, "holds no incident specs (expected YAML/JSON spec files)")
    _reject_duplicate_ids(specs)
    return specs


def _spec_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SPEC_SUFFIXES)


def _spec_items(data: Any) -> tuple[list[Any], str]:
    if isinstance(data, dict) and "incidents" in data:
        return list(data["incidents"] or []), "incidents"
    if isinstance(data, list):
        return data, ""
    return [data], ""


def _looks_native_specs(path: Path) -> bool:
    files = _spec_files(path)
    if not files:
        return True  # let the native loader say what is missing
    items, _ = _spec_items(read_data(files[0]))
    return bool(items) and isinstance(items[0], dict) and "ground_truth" in items[0]


def _load_native_specs(path: Path) -> list[IncidentSpec]:
    specs: list[IncidentSpec] = []
    for file in _spec_files(path):
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
    if not path.exists():
        raise InputError(path, "no such file or directory", field="--outputs")
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
        first = json.loads(text.splitlines()[0]) if path.suffix == ".jsonl" else json.loads(text)
    except (json.JSONDecodeError, IndexError):
        return True  # let the native loader report the syntax error
    if isinstance(first, list):
        first = first[0] if first else {}
    return isinstance(first, dict) and key in first


def _agent_output_files(root: Path) -> Iterable[Path]:
    return sorted(root.glob(f"*/*/{AGENT_OUTPUT}")) + sorted(
        root.glob(f"*/*/outputs/{AGENT_OUTPUT}")
    )


def _load_native_dir(root: Path) -> list[Submission]:
    subs = []
    for file in _agent_output_files(root):
        trial_dir = file.parent.parent if file.parent.name == "outputs" else file.parent
        data = read_data(file)
        if not isinstance(data, dict):
            raise InputError(file, "expected a JSON object with a 'diagnosis' field")
        data = {"incident_id": trial_dir.parent.name, "trial": trial_dir.name, **data}
        data["source"] = _source(file, data.get("source"))
        subs.append(validate(Submission, data, file))
    return subs


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
        try:
            rows.append((f"line {number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise InputError(path, f"invalid JSON: {exc.msg}", field=f"line {number}") from None
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
