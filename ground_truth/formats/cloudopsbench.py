"""Cloud-OpsBench (github.com/LLM4Ops/Cloud-OpsBench): ground truth per case.

Each case is a folder `benchmark/<app>/<category>/<n>/` whose `metadata.json` holds `namespace`,
`query` (the reported symptom), `result` (`fault_taxonomy`, `fault_object` as `app/<workload>`,
`node/<node>` or `namespace/<ns>`, `root_cause`, closed vocabularies) and `process` (expert tool
paths). Upstream has 656 cases (boutique and trainticket, 11 categories); its evaluator scores
labels: component (`fault_object`), fault type (`root_cause`) and both.

One case -> one `IncidentSpec`, id `<app>-<category>-<n>` (`boutique-runtime-1`) from the case's
folders, or from a file named `<app>_<category>_<n>_metadata.json`:
- `fault_origin`: the fault object (kind Node / Namespace for those prefixes; a workload's kind is
  not published, so none), in the case's namespace;
- `mechanism`: the root-cause label in words (`liveness probe incorrect protocol`), the label
  itself in `mechanism_keywords`; `problem_class`: the fault taxonomy;
- `symptoms`: the query; `extra["cloud_opsbench"]`: the expert tool paths.

`milestone.json` and `tool_cache.json` beside `metadata.json` are not ground truth and are not
read. The agent's runs (`result_raw.json`) are read by `cloudopsbench_runs`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..models import ComponentRef, IncidentSpec
from .cloudopsbench_runs import any_result, load_run_submissions
from .files import SNIFF_LIMIT, read_structured, sniff_structured

FORMAT = "cloud-opsbench"
RESULT_KEYS = {"fault_taxonomy", "fault_object", "root_cause"}
OBJECT_KINDS = {"node": "Node", "namespace": "Namespace"}
# <checkout>/benchmark/<app>/<category>/<n>/metadata.json: how deep below a given folder a case
# file lies (the checkout is one level above the benchmark/ folder).
MAX_DEPTH = 4
LOOKS_FOR = {
    "specs": "metadata.json with namespace, query and result{fault_taxonomy, fault_object,"
    " root_cause}, alone or in benchmark/<app>/<category>/<n>/ case folders",
    "submissions": "result_raw.json ({Completed, stop_reason}) under"
    " <system>/<model>_<prompt>/<category>/<case>/",
}


def _is_case(data: Any) -> bool:
    result = data.get("result") if isinstance(data, dict) else None
    return isinstance(result, dict) and set(result) >= RESULT_KEYS and "query" in data


def _case_files(path: Path) -> list[Path]:
    """`*metadata.json` files: `path` itself, or at most `MAX_DEPTH` folders below it (the
    cases' `raw_data/` trees are never walked)."""
    if path.is_file():
        return [path]
    found: list[Path] = []
    for depth in range(MAX_DEPTH + 1):
        found.extend(sorted(path.glob("/".join(["*"] * depth + ["*metadata.json"]))))
    return [f for f in found if f.is_file()]


def _case_id(file: Path) -> str:
    if file.name != "metadata.json":
        return file.name.removesuffix("metadata.json").strip("_-").replace("_", "-") or file.stem
    parts = [p.name for p in file.parents][:3]
    return "-".join(reversed(parts)) if len(parts) == 3 else file.parent.name


class CloudOpsBenchAdapter:
    """The format adapter (see `ground_truth.formats.registry`)."""

    name = FORMAT
    looks_for = LOOKS_FOR

    def sniff(self, path: Path, kind: str) -> float:
        if kind != "specs":
            return 1.0 if any_result(path) else 0.0
        files = _case_files(path)[:SNIFF_LIMIT]
        return 1.0 if any(_is_case(sniff_structured(f)) for f in files) else 0.0

    def load_specs(self, path: Path) -> list[IncidentSpec]:
        specs = [
            _spec(file, data)
            for file in _case_files(path)
            if _is_case(data := read_structured(file))
        ]
        if not specs:
            raise InputError(path, f"holds no Cloud-OpsBench case ({LOOKS_FOR['specs']})")
        return specs

    def load_submissions(self, path: Path) -> list[Any]:
        return load_run_submissions(path)


def _spec(file: Path, data: dict[str, Any]) -> IncidentSpec:
    result, namespace = data["result"], str(data.get("namespace") or "") or None
    fault_object, label = str(result["fault_object"]).strip(), str(result["root_cause"]).strip()
    if not fault_object or not label:
        raise InputError(file, "expected a fault_object and a root_cause", field="result")
    prefix, _, name = fault_object.partition("/")
    if not name:
        prefix, name = "", fault_object
    kind = OBJECT_KINDS.get(prefix)
    origin = ComponentRef(
        name=name, kind=kind, namespace=None if kind in {"Node", "Namespace"} else namespace
    )
    reason = label.replace("_", " ")
    taxonomy = str(result["fault_taxonomy"])
    query = str(data.get("query") or "").strip()
    text = (
        f"{taxonomy.replace('_', ' ')} in namespace {namespace}: {fault_object} has the root cause"
        f" {reason} ({label})." + (f" Reported symptom: {query}" if query else "")
    )
    return IncidentSpec(
        id=_case_id(file),
        ground_truth=text,
        fault_origin=[origin],
        mechanism=reason,
        mechanism_keywords=[label],
        problem_class=taxonomy,
        symptoms=[query] if query else [],
        parameters={"fault_object": fault_object, "root_cause": label, "fault_taxonomy": taxonomy},
        source={"format": FORMAT, "file": str(file)},
        extra={"cloud_opsbench": {"namespace": namespace, "process": data.get("process") or {}}},
    )


ADAPTER = CloudOpsBenchAdapter()
