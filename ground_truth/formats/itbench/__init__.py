"""ITBench (github.com/itbench-hub): ground truth v1 and agent outputs.

Ground truth, read from any of
- a v1 document, bare (`groups`, `propagations`, `alerts`, `fault`, `aliases`,
  `recommended_actions`, `metadata.version`) or in the CRD envelope (`apiVersion: itbench.io/v1`,
  `kind: GroundTruth`, `metadata.name`, `spec: {...}`, `recommendedActions` in camelCase);
- a JSON list of them (ITBench-Evaluations' `ground_truths.json`, each with an `id`);
- a scenario folder, or a folder of scenario folders (`Scenario-2`, `scenario_2` -> id `2`),
  each holding `ground_truth.yaml|yml|json`, `gt.*` or `groundtruth*.yaml`. The folder's name is
  the incident id, as in ITBench-Evaluations; an `id` or `metadata.name` inside that disagrees
  warns (ITBench's scenario_61 says `scenario-110`). When folders have both ITBench's
  `groundtruth_v1.yaml` and the newer, simpler v2 `groundtruth.yaml`, v1 is used (its groups and
  propagations are what ITBench-Evaluations' prompts judge against) and one warning per loaded
  folder says so; v2 alone, and ITBench-Scenarios' `kind: SilverTruth` draft of it, is loaded from
  its `entities` and `solutions`;
- older ITBench-Scenarios layouts: a flat folder of `incident_N.yaml` (or `scenario_N.yaml`)
  v1 files (2025-07..2026-01), and role folders `incident_N/vars/main.yaml` whose
  `docs_incident_N` variable holds the v1 body (2025-03..06).

v1 -> `IncidentSpec`:
- groups with `root_cause: true` -> `fault_origin` (name from `name`, else from the regex filter,
  else from the group id; kind; namespace; other names in the group's alias class -> aliases);
- other groups that are a propagation `source` -> `contributing_components`, the rest ->
  `affected_components`;
- the fault entry of the root cause -> `mechanism` (its `condition`, unless a placeholder such as
  "To Be Specified", else the root cause's first propagation condition) and `problem_class`
  (its `category`); all fault entries (entity, condition, category, mechanism, `changed`
  from/to) -> `parameters["faults"]`;
- alerts -> `symptoms`; recommended actions -> `expected_fix`;
- `ground_truth`: the structure rendered as readable text;
- the raw `groups`, `aliases`, `propagations`, `alerts` -> `extra["itbench"]`, which
  `ground_truth.entities` uses to score structured entities with ITBench's regex filters.

Agent outputs: `<outputs>/<incident>/<trial>/[outputs/]agent_output.json` (or
`agent_response.json`), a single such file, or an AgentBeats leaderboard result
(`results[].agent_outputs.scenarios{"Scenario-1": output}`). Both schemas are read: the current
one (`entities[{name: "ns/Kind/name", contributing_factor, reasoning, evidence}]`,
`propagations[{source, target, condition, effect}]`, `alerts_explained[]`) and the older one
(`entities[{id, name: "flagd Service", contributing_factor}]`, propagations by id with
`source_name`/`target_name`, optional `incident_summary`), and the paper-era one whose entities
are only `{id: <topology hash>, root_cause}` (kept with the id as name, with a warning). The diagnosis text is built from the
entities' names, reasoning and evidence, the propagations and the explained alerts; the
entities are kept, parsed, on `Submission.entities`.

ITBench-Evaluations' judge output (`evaluation_results.json`, or inside a leaderboard file) is
read by `load_itbench_judge_results` so its LLM-computed entity metrics can be compared with ours.
"""

from __future__ import annotations

from ..registry import FunctionAdapter
from .common import FORMAT, canonical_incident_id
from .judge_results import load_itbench_judge_results
from .outputs import load_itbench_submissions, looks_like_itbench_submissions
from .truth import load_itbench_specs, looks_like_itbench_specs

__all__ = [
    "canonical_incident_id",
    "load_itbench_judge_results",
    "load_itbench_specs",
    "load_itbench_submissions",
    "looks_like_itbench_specs",
    "looks_like_itbench_submissions",
]


ADAPTER = FunctionAdapter(
    FORMAT,
    {
        "specs": "ground_truth*/groundtruth* YAML/JSON (v1 groups and propagations, or v2"
        " entities), alone or in scenario folders",
        "submissions": "<incident>/<trial>/agent_output.json with entities, or an"
        " AgentBeats leaderboard JSON",
    },
    looks_like_itbench_specs,
    looks_like_itbench_submissions,
    load_itbench_specs,
    load_itbench_submissions,
)
