"""SREGym (github.com/SREGym/SREGym, MIT): root-cause strings, agent submissions, results CSVs.

Ground truth. SREGym hands its LLM judge one string per problem,
`[fault_spec] component=<kind/name, name, ...>; namespace=<ns> || <description>`. It is read from
- a SREGym checkout as published: its problem registry and problem classes, parsed with `ast`,
  never imported (`sregym_registry`; 115 of the 123 problems at ba07faf);
- a problem list: `{"problems": [...]}` or a bare list, each item with `problem_id` and
  `root_cause_text` (or `root_cause`), e.g. the registry extraction `root_causes_all_123.yaml`
  and `ground_truth_40.json`;
- a mapping `{problem_id: "[fault_spec] ..."}`;
- an agent-submissions file, from its `ground_truth_root_cause_text`.

-> `IncidentSpec`: `id` = problem_id; `ground_truth` = the exact string (what SREGym's judge is
shown); `fault_origin` = the components of the `[fault_spec]` (several for correlated faults:
`deployments/frontend, geo, profile` gives three Deployments) in its namespace; `mechanism` =
the first sentence of the description; `expected_fix` = its sentences about the fix, if any;
`problem_class` = the Problem List type; `parameters` = the problem's scalar parameters (or
constructor kwargs); the rest (application, oracles, Lite membership, ...) -> `extra["sregym"]`.
A root cause without the `[fault_spec]` prefix is loaded as text with no fault origin.

Agent submissions (`{"problem_id", "diagnoses": [{"agent", "non_empty_submissions_in_order"}]}`)
-> one `Submission` per agent: the diagnosis is the first non-empty submission (SREGym grades the
first POST /submit of the diagnosis stage; later ones belong to mitigation), the others are kept
in `source["later_submissions"]`. The trial is the agent's short name (`codex`, `stratus-2`),
so several agents on one problem stay distinct; `agent` is its full name.

Results CSV (`<pid>_<agent>_results.csv`, `<agent>_ALL_results.csv`): one row per attempt,
`problem_id`, `attempt` and the stage result dicts flattened to `Diagnosis.<key>` /
`Mitigation.<key>` columns whose cells are Python `str()` values (parsed with
`ast.literal_eval`, never `eval`). SREGym's results do not record the agent's diagnosis text, so
rows become submissions only when a text column is present (`Diagnosis.solution`, `solution`,
...); the Mitigation results and TTx timings go to the trajectory's `final_state` / `metrics`.
SREGym's own judge verdicts are exported as a rater table by `load_sregym_verdicts`
(`Diagnosis.success`; a judge error or missing judge is None, not False) and its per-question
answers by `load_sregym_checklist`.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..fault_spec import parse_fault_spec
from ..models import ComponentRef, IncidentSpec, Submission, Trajectory
from .files import (
    STRUCTURED_SUFFIXES,
    any_file,
    csv_header,
    matching_files,
    read_csv_rows,
    read_structured,
    sniff_structured,
    warn_format,
)
from .registry import FunctionAdapter
from .sregym_registry import extract_root_causes, registry_file
from .sregym_traces import any_trace, load_trace_submissions

FORMAT = "sregym"
TEXT_COLUMNS = (
    "Diagnosis.solution",
    "Diagnosis.submission",
    "Diagnosis.diagnosis",
    "solution",
    "diagnosis",
    "submission",
)
STAGES = ("Diagnosis", "Mitigation", "Detection", "Localization", "NOOP Detection")
_PLACEHOLDER = re.compile(r"<[^<>]*run time[^<>]*>|\{self\.[^}]*\}")
_FIX_SENTENCE = re.compile(r"\b(fix|remediat|mitigat)\w*\b.*\b(is|are|to)\b", re.I)

__all__ = [
    "load_sregym_checklist",
    "load_sregym_specs",
    "load_sregym_submissions",
    "load_sregym_verdicts",
    "looks_like_sregym_specs",
    "looks_like_sregym_submissions",
    "parse_cell",
    "parse_fault_spec",
]


# ---------------------------------------------------------------- ground truth


def _problem_items(data: Any) -> list[dict[str, Any]] | None:
    """Problem dicts with a root-cause string, or None when `data` is not such a list."""
    if isinstance(data, dict) and isinstance(data.get("problems"), list):
        data = data["problems"]
    if isinstance(data, dict) and "ground_truth_root_cause_text" in data:
        return [
            {
                "problem_id": data.get("problem_id"),
                "root_cause_text": data["ground_truth_root_cause_text"],
            }
        ]
    if (
        isinstance(data, dict)
        and data
        and all(isinstance(v, str) and v.lstrip().startswith("[fault_spec]") for v in data.values())
    ):
        return [{"problem_id": k, "root_cause_text": v} for k, v in data.items()]
    if isinstance(data, list) and data and all(isinstance(p, dict) for p in data):
        first = data[0]
        if "problem_id" in first and ("root_cause_text" in first or "root_cause" in first):
            return data
    return None


def _is_specs_file(file: Path) -> bool:
    return _problem_items(sniff_structured(file)) is not None


def looks_like_sregym_specs(path: str | Path) -> bool:
    """Whether `path` is a SREGym registry (checkout, problems folder or file) or problem files."""
    path = Path(path)
    return registry_file(path) is not None or any_file(path, STRUCTURED_SUFFIXES, _is_specs_file)


def load_sregym_specs(path: str | Path) -> list[IncidentSpec]:
    """The specs of SREGym problems, from its registry (parsed, never imported) or from files
    of root-cause strings; InputError when `path` holds neither.
    """
    registry = registry_file(Path(path))
    if registry is not None:
        return [
            _problem_to_spec(item, registry, f"PROBLEM_REGISTRY[{item['problem_id']!r}]")
            for item in extract_root_causes(Path(path))
        ]
    specs = []
    for file in matching_files(
        Path(path), STRUCTURED_SUFFIXES, _is_specs_file, "SREGym root-cause strings"
    ):
        data = read_structured(file)
        key = "problems" if isinstance(data, dict) and "problems" in data else ""
        for i, item in enumerate(_problem_items(data) or []):
            where = f"{key}[{i}]" if key else f"[{i}]"
            specs.append(_problem_to_spec(item, file, where))
    return specs


def _problem_to_spec(item: dict[str, Any], file: Path, where: str) -> IncidentSpec:
    pid = item.get("problem_id")
    text = item.get("root_cause_text") or item.get("root_cause")
    if not pid:
        raise InputError(file, "expected a problem_id", field=f"{where}.problem_id")
    if not isinstance(text, str) or not text.strip():
        raise InputError(
            file, "expected a non-empty root-cause string", field=f"{where}.root_cause_text"
        )
    field = f"{where}.root_cause_text"
    placeholder = _PLACEHOLDER.search(text)
    if placeholder:
        warn_format(
            file,
            f"contains the placeholder {placeholder.group(0)!r} (a value SREGym fills "
            "at run time, or an unformatted f-string): the judge will see it verbatim",
            field=field,
        )
    parsed = parse_fault_spec(text)
    components: list[ComponentRef]
    if parsed is None:
        warn_format(
            file,
            "no `[fault_spec] component=...; namespace=... ||` prefix: loaded as "
            "text, with no fault origin",
            field=field,
        )
        components, namespace, description = [], item.get("namespace"), text.strip()
    else:
        components, namespace, description = parsed
        if not components:
            warn_format(file, "the [fault_spec] names no component", field=field)
    problem_list = item.get("problem_list")
    parameters = item.get("parameters") or item.get("constructor_kwargs") or {}
    return IncidentSpec(
        id=str(pid),
        ground_truth=text.strip(),
        fault_origin=components,
        mechanism=_first_sentence(description),
        problem_class=problem_list.get("type") if isinstance(problem_list, dict) else None,
        parameters=parameters if isinstance(parameters, dict) else {"args": parameters},
        expected_fix=_fix_sentences(description),
        source={
            "format": FORMAT,
            "file": str(file),
            "field": where,
            **{k: item[k] for k in ("problem_class", "source_path") if item.get(k)},
            "schema": "registry" if file.suffix == ".py" else "extracted",
        },
        extra={
            "sregym": {
                "namespace": namespace,
                **{
                    k: item[k]
                    for k in (
                        "application",
                        "in_sregym_lite",
                        "in_sregym_0508_cohort",
                        "diagnosis_oracle",
                        "mitigation_oracle",
                        "inject_fault_calls",
                        "injector_fault_types",
                        "problem_list",
                        "notes",
                    )
                    if item.get(k) is not None
                },
            }
        },
    )


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`'\"(])", text) if s.strip()]


def _first_sentence(text: str) -> str | None:
    sentences = _sentences(text)
    return sentences[0] if sentences else None


def _fix_sentences(text: str) -> str | None:
    found = [s for s in _sentences(text) if _FIX_SENTENCE.search(s) and "fix" in s.lower()]
    return " ".join(found) or None


# ---------------------------------------------------------------- submissions


def _is_submissions_file(file: Path) -> bool:
    data = sniff_structured(file) if file.suffix.lower() == ".json" else None
    return (
        isinstance(data, dict) and isinstance(data.get("diagnoses"), list) and "problem_id" in data
    )


def _is_results_csv(file: Path) -> bool:
    header = csv_header(file) if file.suffix.lower() == ".csv" else []
    return "problem_id" in header and any(
        col.startswith(f"{stage}.") for col in header for stage in STAGES
    )


def _is_submission_source(file: Path) -> bool:
    return _is_submissions_file(file) or _is_results_csv(file)


def looks_like_sregym_submissions(path: str | Path) -> bool:
    """Whether `path` is, or its first files include, SREGym submissions JSON, a results CSV or
    an agent trace (`sregym_traces`)."""
    path = Path(path)
    return any_file(path, (".json", ".csv"), _is_submission_source) or any_trace(path)


def load_sregym_submissions(path: str | Path) -> list[Submission]:
    """Submissions from SREGym submission JSON and results CSVs; InputError when there are none."""
    path = Path(path)
    if not any_file(path, (".json", ".csv"), _is_submission_source) and any_trace(path):
        return load_trace_submissions(path)
    subs: list[Submission] = []
    for file in matching_files(
        path,
        (".json", ".csv"),
        _is_submission_source,
        "SREGym agent submissions, results CSVs or agent traces",
    ):
        subs.extend(
            _csv_submissions(file) if file.suffix.lower() == ".csv" else _json_submissions(file)
        )
    return subs


def _json_submissions(file: Path) -> list[Submission]:
    data = read_structured(file)
    pid = str(data["problem_id"])
    slugs: Counter[str] = Counter()
    subs = []
    for i, entry in enumerate(data["diagnoses"]):
        where = f"diagnoses[{i}]"
        if not isinstance(entry, dict):
            raise InputError(file, "expected an object with agent and submissions", field=where)
        agent = str(entry.get("agent") or f"agent-{i + 1}")
        texts = [t for t in entry.get("non_empty_submissions_in_order") or [] if str(t).strip()]
        if not texts:
            warn_format(
                file,
                "no non-empty submission: empty diagnosis",
                field=f"{where}.non_empty_submissions_in_order",
            )
        elif len(texts) > 1:
            warn_format(
                file,
                f"{len(texts)} submissions: the first is taken as the diagnosis "
                "(SREGym grades the first submit of the diagnosis stage)",
                field=f"{where}.non_empty_submissions_in_order",
            )
        slug = re.split(r"[\s(]", agent.strip(), maxsplit=1)[0].lower() or f"agent-{i + 1}"
        slugs[slug] += 1
        trial = slug if slugs[slug] == 1 else f"{slug}-{slugs[slug]}"
        subs.append(
            Submission(
                incident_id=pid,
                trial=trial,
                diagnosis=str(texts[0]) if texts else "",
                agent=agent,
                source={
                    "format": FORMAT,
                    "file": str(file),
                    "field": where,
                    "later_submissions": [str(t) for t in texts[1:]],
                    **{k: entry[k] for k in ("fixture_path", "note") if entry.get(k)},
                },
            )
        )
    return subs


def parse_cell(value: str | None) -> Any:
    """A results-CSV cell: `True`, `3.5`, `None`, `{'a': 1}` -> Python values (literal_eval)."""
    if value is None:
        return None
    text = value.strip()
    if text == "":
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return value


def _rows(file: Path) -> list[tuple[int, dict[str, str], str, str]]:
    """(line, row, problem id, trial) per results row; trial = `attempt` or the nth occurrence."""
    seen: Counter[str] = Counter()
    out = []
    for line, row in enumerate(read_csv_rows(file), start=2):
        pid = (row.get("problem_id") or "").strip()
        if not pid:
            warn_format(file, "row without problem_id: skipped", field=f"line {line}")
            continue
        seen[pid] += 1
        attempt = parse_cell(row.get("attempt"))
        trial = str(int(attempt)) if isinstance(attempt, (int, float)) else str(seen[pid])
        out.append((line, row, pid, trial))
    return out


def _stage(row: dict[str, str], stage: str) -> dict[str, Any]:
    prefix = f"{stage}."
    return {k[len(prefix) :]: parse_cell(v) for k, v in row.items() if k and k.startswith(prefix)}


def _csv_submissions(file: Path) -> list[Submission]:
    subs = []
    for line, row, pid, trial in _rows(file):
        column = next((c for c in TEXT_COLUMNS if (row.get(c) or "").strip()), None)
        if column is None:
            continue
        metrics = {k: parse_cell(v) for k, v in row.items() if k in {"TTD", "TTL", "TTA", "TTM"}}
        diagnosis_result = _stage(row, "Diagnosis")
        subs.append(
            Submission(
                incident_id=pid,
                trial=trial,
                diagnosis=row[column],
                trajectory=Trajectory(
                    final_state=_stage(row, "Mitigation"),
                    metrics={
                        **metrics,
                        **{f"Diagnosis.{k}": v for k, v in diagnosis_result.items()},
                    },
                ),
                source={"format": FORMAT, "file": str(file), "field": f"line {line}.{column}"},
            )
        )
    if not subs:
        raise InputError(
            file,
            "this SREGym results CSV records stage results and verdicts but not the agents' "
            "diagnosis text (no Diagnosis.solution column): load the agent submissions instead, "
            "or read its verdicts as a rater table (load_sregym_verdicts)",
            field="columns",
        )
    return subs


def load_sregym_verdicts(path: str | Path) -> list[dict[str, Any]]:
    """SREGym's own judge verdicts from a results CSV: `incident_id`, `trial`, `verdict`.

    `verdict` is `Diagnosis.success` as a bool; None when the judge was not run, failed
    (`judgment` "Error"/None) or the file predates the judge (no `Diagnosis.*` columns).
    """
    file = Path(path)
    rows = _rows(file)
    if rows and not any(k.startswith("Diagnosis.") for k in rows[0][1]):
        warn_format(
            file,
            "no Diagnosis.* columns (results from before SREGym's diagnosis judge): "
            "every verdict is None",
            field="columns",
        )
    verdicts = []
    for _, row, pid, trial in rows:
        result = _stage(row, "Diagnosis")
        success = result.get("success")
        judged = result.get("judgment") not in (None, "Error") or "judgment" not in result
        verdict = (
            success if isinstance(success, bool) and judged and "error" not in result else None
        )
        verdicts.append({"incident_id": pid, "trial": trial, "verdict": verdict})
    return verdicts


def load_sregym_checklist(path: str | Path) -> list[dict[str, Any]]:
    """SREGym's per-question judge answers: `incident_id`, `trial`, `question_id`, `answer`."""
    file = Path(path)
    out = []
    for line, row, pid, trial in _rows(file):
        checklist = _stage(row, "Diagnosis").get("checklist")
        if checklist is None:
            continue
        if not isinstance(checklist, list):
            warn_format(
                file,
                "not a list of question answers: skipped",
                field=f"line {line}.Diagnosis.checklist",
            )
            continue
        for item in checklist:
            if isinstance(item, dict) and item.get("id"):
                answer = item.get("answer")
                out.append(
                    {
                        "incident_id": pid,
                        "trial": trial,
                        "question_id": str(item["id"]),
                        "answer": answer if answer in ("Yes", "No") else None,
                    }
                )
    return out


ADAPTER = FunctionAdapter(
    FORMAT,
    {
        "specs": "a SREGym checkout (sregym/conductor/problems/registry.py and its"
        " problem modules), or YAML/JSON mapping problem ids to root-cause strings",
        "submissions": "result CSV or JSON with per-problem diagnosis text, or agent traces"
        " (session files whose tool calls POST /submit)",
    },
    looks_like_sregym_specs,
    looks_like_sregym_submissions,
    load_sregym_specs,
    load_sregym_submissions,
)
