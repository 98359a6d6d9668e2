"""Read specs and submissions from disk: the native formats, and dispatch to format adapters.

Native specs: a YAML/JSON file holding one `IncidentSpec` mapping, a list of them, or
`{"incidents": [...]}`; or a directory of such files.
Native submissions: the ITBench layout `<outputs>/<incident_id>/<trial>/[outputs/]agent_output.json`
(JSON with `diagnosis`, optional `agent`, `entities`, `trajectory`), or a JSONL / JSON list of
full `Submission` objects.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import InputError, bad_file, validation_error, warn_format
from .formats.registry import FormatAdapter, Kind, detect, get_adapter, read
from .models import IncidentSpec, Submission
from .reading import (
    FolderSet,
    RefusedInput,
    input_files,
    parse_json,
    read_data,
    read_text,
    regular_file_size,
)

SPEC_SUFFIXES = {".yaml", ".yml", ".json"}
AGENT_OUTPUT = "agent_output.json"


def validate(model: type[BaseModel], data: Any, path: Path, prefix: str = "") -> Any:
    """`data` validated as `model`; InputError naming `path` and the first bad field otherwise."""
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
    specs = read(_adapter(path, format, "specs"), path, "specs") if _has_files(path) else []
    if not specs:
        raise InputError(path, "holds no incident specs (expected YAML/JSON spec files)")
    return _without_duplicate_ids(specs)


def _spec_files(path: Path) -> list[Path]:
    if not path.is_dir():
        return [path]
    return input_files(path, lambda p: p.suffix.lower() in SPEC_SUFFIXES)


def _has_files(path: Path) -> bool:
    return not path.is_dir() or any(p.is_file() for p in path.rglob("*"))


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


def _native_spec_confidence(path: Path) -> float:
    """1 for YAML/JSON specs with `ground_truth`; less for a mapping with an `id` (a native spec
    missing a field, which the native loader then names); 0 for anything else."""
    files = _spec_files(path)
    if not files or files[0].suffix.lower() not in SPEC_SUFFIXES:
        return 0.0
    items, _ = _spec_items(_first_readable(files, read_data))
    first = items[0] if items else None
    if not isinstance(first, dict):
        return 0.0
    return 1.0 if "ground_truth" in first else 0.3 if "id" in first else 0.0


def _load_native_specs(path: Path) -> list[IncidentSpec]:
    specs: list[IncidentSpec] = []
    for file in _spec_files(path):
        try:
            items, key = _spec_items(read_data(file))
        except InputError as exc:
            bad_file(exc)
            continue
        for i, item in enumerate(items):
            prefix = f"{key}[{i}]" if key else (f"[{i}]" if len(items) > 1 else "")
            try:
                specs.append(_native_spec(item, file, prefix))
            except InputError as exc:
                bad_file(exc)
    return specs


def _native_spec(item: Any, file: Path, prefix: str) -> IncidentSpec:
    if not isinstance(item, dict):
        raise InputError(file, "expected a mapping (an incident spec)", field=prefix or None)
    spec = validate(IncidentSpec, item, file, prefix)
    return spec.model_copy(update={"source": _source(file, spec.source)})


def _without_duplicate_ids(specs: Iterable[IncidentSpec]) -> list[IncidentSpec]:
    """The specs, each id once; a second spec with an id is a bad file (`bad_file`)."""
    seen: dict[str, IncidentSpec] = {}
    for spec in specs:
        if spec.id in seen:
            first = _loaded_from(seen[spec.id]) or "?"
            bad_file(
                InputError(
                    _loaded_from(spec),
                    f"duplicate incident id {spec.id!r} (also in {first})",
                    field="id",
                )
            )
            continue
        seen[spec.id] = spec
    return list(seen.values())


# ---------------------------------------------------------------- submissions


def load_submissions(path: str | Path, format: str = "auto") -> list[Submission]:
    """Load every submission under `path`: an outputs directory, or a JSONL/JSON file."""
    return list(iter_submissions(path, format))


def iter_submissions(path: str | Path, format: str = "auto") -> Iterator[Submission]:
    """`load_submissions` one submission at a time, in the order they are found: an outputs
    folder in the native layout is read file by file as the caller asks for the next one, so
    that a run can start on the first submissions while later ones are still being read.
    A native JSONL file is read whole and parsed a line at a time; other formats are read
    whole at the first request. A bad file (or a duplicate) is met
    when the iteration reaches it; no submission at all is an `InputError` at the end."""
    path = Path(path)
    _check_input(path, "--outputs")
    adapter = _adapter(path, format, "submissions")
    if adapter is NATIVE and path.is_dir():
        found: Iterable[Submission] = _native_dir_submissions(path)
    elif adapter is NATIVE:
        found = _native_file_submissions(path)
    else:
        found = read(adapter, path, "submissions")
    seen: dict[tuple[str, str], str] = {}
    for sub in found:
        where = _loaded_from(sub)
        if sub.key in seen:
            bad_file(
                InputError(
                    where,
                    f"duplicate submission for incident {sub.incident_id!r} trial "
                    f"{sub.trial!r} (also in {seen[sub.key] or '?'})",
                    field="trial",
                )
            )
            continue
        seen[sub.key] = where or ""
        yield sub
    if not seen:
        raise InputError(
            path,
            f"holds no submissions (expected <incident>/<trial>/{AGENT_OUTPUT}, or a JSONL file)"
            + _empty_trials_note(path),
        )


def _empty_trials_note(path: Path) -> str:
    """Trial folders found without an agent output, said in the error itself: the warnings
    about each are lost when loading fails."""
    trials = list(_trial_dirs(path)) if path.is_dir() else []
    if not trials:
        return ""
    first = trials[0].relative_to(path)
    return f"; {len(trials)} trial folder(s) have no {AGENT_OUTPUT}, e.g. {first}"


def _native_submission_confidence(path: Path) -> float:
    """1 when the first submission has a `diagnosis`; less for what the native loader can still
    explain (an `agent_output.json` or a row without one, trial folders without any output)."""
    if path.is_file():
        if path.suffix.lower() not in {".jsonl", ".json"}:
            return 0.0
        return _first_row_confidence(path)
    outputs = _agent_output_files(path, SNIFF_FILES)
    if outputs:
        return max(_first_readable(outputs, _first_row_confidence), 0.3)
    return 0.1 if any(p.is_dir() for p in path.glob("*/*")) else 0.0


T = TypeVar("T")
SNIFF_FILES = 10
"""Files sniffing reads past a bad first one: a folder whose first file is broken is still
recognised, and loading names each bad file instead of calling the folder unrecognised."""


def _first_readable(files: list[Path], read: Callable[[Path], T]) -> T:
    """`read` of the first of `files` that reads without an `InputError` (among the first
    `SNIFF_FILES`); the first file's error when none does."""
    first_error = None
    for file in files[:SNIFF_FILES]:
        try:
            return read(file)
        except RefusedInput:
            raise
        except InputError as exc:
            first_error = first_error or exc
    assert first_error is not None
    raise first_error


def _first_row_confidence(path: Path) -> float:
    text = read_text(path).lstrip()
    lines = text.splitlines()
    first = parse_json(lines[0] if path.suffix == ".jsonl" and lines else text, path)
    if isinstance(first, list):
        first = first[0] if first else {}
    if not isinstance(first, dict):
        return 0.0
    return 1.0 if "diagnosis" in first else 0.3 if "incident_id" in first else 0.0


def _agent_output_files(root: Path, most: int) -> list[Path]:
    """The first `most` agent outputs, in the order the loader reads them, in either layout
    (looking no further: sniffing a folder of 10,000 trials must not list them all)."""
    found: list[Path] = []
    for layout in (AGENT_OUTPUT, f"outputs/{AGENT_OUTPUT}"):
        for incident in _sorted_folders(root):
            for trial in _sorted_folders(incident):
                if (trial / layout).is_file():
                    found.append(trial / layout)
                    if len(found) == most:
                        return found
    return found


def _sorted_folders(folder: Path) -> Iterator[Path]:
    with os.scandir(folder) as entries:
        names = sorted(entry.name for entry in entries if entry.is_dir())
    return (folder / name for name in names)


def _trial_dirs(root: Path) -> Iterator[Path]:
    """`<root>/<incident>/<trial>/` folders, symbolic links to folders followed, one incident's
    listed as the caller reaches it. A folder reached again (through a link to one already
    read) and a broken link are warnings."""
    seen = FolderSet(root)
    for incident in seen.subfolders(root):
        for trial in seen.subfolders(incident):
            if seen.first_visit(trial):
                yield trial


def _trial_outputs(trial_dir: Path) -> list[Path]:
    """The trial's agent output files; none (with a warning saying why) when there is none."""
    found, broken = [], False
    for file in (trial_dir / AGENT_OUTPUT, trial_dir / "outputs" / AGENT_OUTPUT):
        if file.is_symlink() and not file.exists():
            warn_format(file, "broken or looping symbolic link, skipped")
            broken = True
        elif file.exists():
            try:
                regular_file_size(file)
            except InputError as exc:
                bad_file(exc)
                broken = True
                continue
            found.append(file)
    if not found and not broken:
        warn_format(trial_dir, f"trial folder without {AGENT_OUTPUT}, skipped")
    return found


def _native_dir_submissions(root: Path) -> Iterator[Submission]:
    for trial_dir in _trial_dirs(root):
        for file in _trial_outputs(trial_dir):
            try:
                sub = _load_agent_output(file, trial_dir)
            except InputError as exc:
                bad_file(exc)
                continue
            sub.source.setdefault("format", NATIVE.name)
            yield sub


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
    return list(_native_file_submissions(path))


def _native_file_submissions(path: Path) -> Iterator[Submission]:
    """A JSONL or JSON file's submissions; a JSONL file's a line at a time, so that a run
    (or a report's texts) of 100,000 submissions never holds every row and model at once."""
    if path.suffix.lower() == ".jsonl":
        rows: Iterable[tuple[str, Any]] = _jsonl_rows(path)
    else:
        data = read_data(path)
        rows = [(f"[{i}]", r) for i, r in enumerate(data if isinstance(data, list) else [data])]
    for where, row in rows:
        try:
            yield _native_row(row, path, where)
        except InputError as exc:
            bad_file(exc)


def _native_row(row: Any, path: Path, where: str) -> Submission:
    if not isinstance(row, dict):
        raise InputError(path, "expected a JSON object (a submission)", field=where)
    row = {**row, "source": _source(path, row.get("source"))}
    return validate(Submission, row, path, where)


def _jsonl_rows(path: Path) -> Iterator[tuple[str, Any]]:
    """Each row with its line; a line that does not parse is a bad row (`bad_file`)."""
    for number, line in enumerate(_lines(read_text(path)), start=1):
        if not line.strip():
            continue
        try:
            yield f"line {number}", parse_json(line, path, field=f"line {number}")
        except InputError as exc:
            bad_file(exc)


def _lines(text: str) -> Iterator[str]:
    """`text.splitlines()`, a line at a time."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        yield from text[start:end].splitlines()
        start = end


# ---------------------------------------------------------------- dispatch


class NativeAdapter:
    """The project's own formats, as a format adapter (see `ground_truth.formats.registry`)."""

    name = "native"
    looks_for: ClassVar[dict[str, str]] = {
        "specs": "YAML/JSON incident specs (mappings with id and ground_truth)",
        "submissions": f"<incident>/<trial>/{AGENT_OUTPUT} or JSONL/JSON rows with a diagnosis",
    }

    def sniff(self, path: Path, kind: str) -> float:
        if kind == "specs":
            return _native_spec_confidence(path)
        return _native_submission_confidence(path)

    def load_specs(self, path: Path) -> list[IncidentSpec]:
        return _load_native_specs(path)

    def load_submissions(self, path: Path) -> list[Submission]:
        return _load_native_file(path) if path.is_file() else list(_native_dir_submissions(path))


NATIVE = NativeAdapter()


def _adapter(path: Path, format: str, kind: Kind) -> FormatAdapter:
    return detect(path, kind) if format == "auto" else get_adapter(format, path)
