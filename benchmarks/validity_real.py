"""The real-agent validity set (`benchmarks/validity/real/`): its cases, texts, specs, submissions,
label sheets and split, loaded as a user's `judge eval` would load the same files.

A case file `cases/<source>.yaml` lists one source's cases (one agent or model on one benchmark).
A case names its benchmark `format`, its `incident_id` and either `spec_path` (the benchmark's own
ground-truth file; `corpus:<path>` is under the shared corpus, anything else repo-relative) or
`ground_truth` (SREGym's `[fault_spec]` text); specs are loaded with the project's format adapters
and the incident picked out of multi-incident files. The diagnosis is the case's own text or, for a
source without a licence (`diagnosis: null`), the text `real/extract.py` rebuilt into `.cache/`,
or one rebuilt here from the corpus; a case with no text is reported, never dropped silently.
ITBench agent outputs become submissions through the ITBench adapter, as `judge eval --outputs`
reads an `agent_output.json`; every other case's text is the diagnosis as it stands.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ground_truth import IncidentSpec, InputError, Submission, load_specs, load_submissions

REPO = Path(__file__).resolve().parents[1]
REAL = REPO / "benchmarks" / "validity" / "real"
SPLITS = ("test", "tune")
ITBENCH = "itbench"


def _extract_module() -> ModuleType:
    """`real/extract.py`, the one place that knows how a source's text is cut out of its file."""
    name = "validity_real_extract"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REAL / "extract.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


extract = _extract_module()
REBUILD_COMMAND = extract.REBUILD


class RealCase(BaseModel):
    """One entry of `cases/<source>.yaml`."""

    model_config = ConfigDict(extra="forbid")

    case: str = Field(min_length=1)
    source: str = Field(min_length=1)
    agent: str
    benchmark: str
    format: str = Field(min_length=1)
    incident_id: str = Field(min_length=1)
    spec_path: str | None = None
    ground_truth: str | None = None
    diagnosis: str | None = None
    diagnosis_sha256: str | None = None
    cut: str | None = None
    benchmark_outcome: Any = None
    origin: dict[str, Any]

    @model_validator(mode="after")
    def _one_spec(self) -> RealCase:
        if (self.ground_truth is None) == (self.spec_path is None):
            raise ValueError("give exactly one of spec_path and ground_truth")
        return self

    @property
    def spec_key(self) -> tuple[str, str]:
        """What the incident's spec is loaded from: (format, file or the ground-truth text)."""
        return (self.format, self.spec_path or f"text:{self.ground_truth}")


class Loaded(BaseModel):
    """A case whose text was found, and where from (shipped, cache or corpus)."""

    case: RealCase
    text: str
    place: str


class MissingText(BaseModel):
    case: str
    source: str
    reason: str


# --- cases and split -------------------------------------------------------------------------


def load_source(path: Path) -> list[RealCase]:
    """One source's cases; InputError naming the file and field on a bad entry."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError(path, f"cannot read the cases: {exc}") from exc
    if not isinstance(data, list) or not data:
        raise InputError(path, "expected a non-empty YAML list of cases")
    cases = []
    for i, entry in enumerate(data):
        try:
            case = RealCase.model_validate(entry)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"])
            raise InputError(path, error["msg"], field=f"[{i}].{where}".rstrip(".")) from exc
        if case.source != path.stem:
            raise InputError(path, f"source {case.source!r} is not the file's", f"[{i}].source")
        cases.append(case)
    return cases


def read_split(root: Path = REAL) -> dict[str, list[str]]:
    """`{split: sources}` from `split.json`, every case file in exactly one split."""
    path = root / "split.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(path, f"cannot read the split: {exc}") from exc
    split = {name: list(data.get(name) or []) for name in SPLITS}
    files = {p.stem for p in (root / "cases").glob("*.yaml")}
    listed = [s for name in SPLITS for s in split[name]]
    twice = sorted({s for s in listed if listed.count(s) > 1})
    if twice:
        raise InputError(path, f"source(s) in more than one split: {', '.join(twice)}")
    if unlisted := sorted(files - set(listed)):
        raise InputError(path, f"case file(s) in no split: {', '.join(unlisted)}")
    if absent := sorted(set(listed) - files):
        raise InputError(path, f"no cases/<source>.yaml for: {', '.join(absent)}")
    return split


def select_sources(
    split: dict[str, list[str]], splits: Sequence[str], sources: Sequence[str] | None
) -> dict[str, list[str]]:
    """`{split: sources}` restricted to `splits` and, when given, to `sources`."""
    known = {s for names in split.values() for s in names}
    if sources and (unknown := sorted(set(sources) - known)):
        raise InputError(None, f"unknown source(s) {', '.join(unknown)}", field="--source")
    return {
        name: [s for s in split[name] if not sources or s in sources]
        for name in splits
        if any(not sources or s in sources for s in split[name])
    }


# --- texts -----------------------------------------------------------------------------------


def find_texts(
    cases: Iterable[RealCase], cache: Path | None, corpus: Path
) -> tuple[list[Loaded], list[MissingText]]:
    """Each case's diagnosis: its own text, else `cache/<case>.txt` (checked against its
    sha256), else rebuilt from the corpus; the cases with none, each with the reason."""
    loaded, missing = [], []
    for case in cases:
        try:
            text, place = case_text(case, cache, corpus)
        except extract.Unavailable as exc:
            missing.append(MissingText(case=case.case, source=case.source, reason=str(exc)))
            continue
        loaded.append(Loaded(case=case, text=text, place=place))
    return loaded, missing


def case_text(case: RealCase, cache: Path | None, corpus: Path) -> tuple[str, str]:
    if case.diagnosis is not None:
        return case.diagnosis, "shipped"
    cached = cache / f"{case.case}.txt" if cache is not None else None
    if cached is not None and cached.is_file():
        text = cached.read_text(encoding="utf-8")
        if case.diagnosis_sha256 and extract.sha256(text) != case.diagnosis_sha256:
            raise extract.Unavailable(f"{cached} does not match diagnosis_sha256: rebuild it")
        return text, "cache"
    try:
        return extract.rebuild(case.model_dump(), extract.Sources(corpus=corpus)).text, "corpus"
    except extract.Unavailable as exc:
        where = f"not in {cache}; " if cache is not None else ""
        raise extract.Unavailable(f"not shipped (no licence); {where}{exc}") from exc


# --- specs -----------------------------------------------------------------------------------


def spec_file(spec_path: str, corpus: Path) -> Path:
    if spec_path.startswith("corpus:"):
        return corpus / spec_path.removeprefix("corpus:")
    return REPO / spec_path


def build_specs(cases: Sequence[RealCase], corpus: Path) -> list[IncidentSpec]:
    """One spec per incident, loaded by the case's format adapter from its file or text."""
    chosen: dict[str, tuple[tuple[str, str], IncidentSpec]] = {}
    for key, group in _by_spec(cases).items():
        specs = _load_group(key, group, corpus)
        for case in group:
            spec = specs.get(case.incident_id)
            if spec is None:
                raise InputError(
                    spec_file(key[1], corpus) if case.spec_path else None,
                    f"case {case.case}: incident {case.incident_id!r} is not among the"
                    f" {len(specs)} incidents the {case.format} adapter reads here",
                    field="incident_id",
                )
            first = chosen.setdefault(case.incident_id, (key, spec))
            if first[0] != key:
                raise InputError(
                    None,
                    f"case {case.case}: incident {case.incident_id!r} has another spec in"
                    f" another case ({first[0][1][:80]})",
                    field="spec_path",
                )
    return [spec for _, spec in chosen.values()]


def _by_spec(cases: Sequence[RealCase]) -> dict[tuple[str, str], list[RealCase]]:
    groups: dict[tuple[str, str], list[RealCase]] = {}
    for case in cases:
        groups.setdefault(case.spec_key, []).append(case)
    return groups


def _load_group(
    key: tuple[str, str], group: list[RealCase], corpus: Path
) -> dict[str, IncidentSpec]:
    fmt, where = key
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # adapters' notes on upstream quirks, known and harmless
        if not where.startswith("text:"):
            return {s.id: s for s in load_specs(spec_file(where, corpus), format=fmt)}
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "root_causes.json"
            texts = {c.incident_id: c.ground_truth for c in group}
            path.write_text(json.dumps(texts), encoding="utf-8")
            return {s.id: s for s in load_specs(path, format=fmt)}


# --- submissions -----------------------------------------------------------------------------


def build_submissions(loaded: Sequence[Loaded]) -> tuple[list[Submission], dict[str, str]]:
    """One submission per case (trial = case id), and the ITBench cases whose text the ITBench
    adapter does not read as an agent output (they are judged on the text, with the reason)."""
    subs, as_text = [], {}
    for item in loaded:
        case = item.case
        sub = None
        if case.format == ITBENCH:
            try:
                sub = itbench_submission(item.text)
            except InputError as exc:
                as_text[case.case] = _not_an_output(item.text, exc)
        if sub is None:
            sub = Submission(incident_id=case.incident_id, trial=case.case, diagnosis=item.text)
        subs.append(sub.model_copy(update={"incident_id": case.incident_id, "trial": case.case}))
    return subs, as_text


def itbench_submission(text: str) -> Submission:
    """The submission `judge eval --outputs DIR` makes of `DIR/<incident>/<trial>/agent_output.json`
    holding `text` (format auto-detected, as a user runs it)."""
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        file = Path(tmp) / "incident" / "1" / "agent_output.json"
        file.parent.mkdir(parents=True)
        file.write_text(text, encoding="utf-8")
        subs = load_submissions(Path(tmp))
    if len(subs) != 1:
        raise InputError(None, f"the agent output gives {len(subs)} submissions, not one")
    return subs[0]


def _not_an_output(text: str, exc: InputError) -> str:
    try:
        json.loads(text)
    except json.JSONDecodeError as bad:
        return f"not JSON ({bad.msg} at line {bad.lineno}: prose around the agent output?)"
    return exc.message.splitlines()[0]


# --- label sheets ----------------------------------------------------------------------------


def label_sheets(root: Path, sources: Iterable[str]) -> dict[str, dict[str, Path]]:
    """`{source: {labeller: labels/<source>.<labeller>.csv}}` for the sources that have any."""
    out: dict[str, dict[str, Path]] = {}
    for source in sources:
        for path in sorted((root / "labels").glob(f"{source}.*.csv")):
            who = path.name[len(source) + 1 : -len(".csv")]
            if who and "." not in who:
                out.setdefault(source, {})[who] = path
    return out
