"""An ITBench agent output written inside prose (issue 22, failure mode 2): an agent that ends
with a message holding its `agent_output.json` is judged on the text, not through the ITBench
adapter, so the rules judge reads the entities itself, as the adapter does: an entity with
`contributing_factor: true` is blamed in so many words, one with `false` is context (its
reasoning names what it saw, not a cause), and a name of any ITBench kind (`ns/Cluster/name`) is
a component.

The truth is ITBench scenario 2 (tests/fixtures/formats/itbench/synthetic/, converted from
itbench-hub/ITBench, Apache-2.0). No published MIT/Apache agent text of this shape was found (the
ITBench agents' published runs have no licence), so the answer below is written for the test in
the schema ITBench documents, after the shape of those runs."""

from __future__ import annotations

import json
import warnings

from helpers import FIXTURES

from ground_truth import Submission, load_specs
from judge import evaluate_submission

TRUTHS = FIXTURES / "formats" / "itbench" / "synthetic" / "ground_truths.json"


def judged(api_server_contributes: bool) -> dict[str, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = next(s for s in load_specs(TRUTHS, format="itbench") if s.id == "2")
    entities = [
        {
            "name": "unknown/Cluster/api-server",
            "contributing_factor": api_server_contributes,
            "reasoning": "The API server certificates are expired, causing control plane failures.",
        },
        {
            "name": "otel-demo/ConfigMap/flagd-config",
            "contributing_factor": True,
            "reasoning": "The 'cartFailure' feature flag was enabled, triggering errors in cart.",
        },
        {
            "name": "otel-demo/Service/cart",
            "contributing_factor": False,
            "reasoning": "The cart service is failing due to the failure flag enabled in flagd.",
        },
    ]
    text = (
        "The investigation is complete; the diagnosis is written to agent_output.json.\n\n"
        f"```json\n{json.dumps({'entities': entities}, indent=2)}\n```"
    )
    case = evaluate_submission(spec, Submission(incident_id=spec.id, diagnosis=text))
    return {j.question_id: j.answer or "unscored" for j in case.judgments}


def test_a_contributing_entity_outside_the_truth_is_blamed() -> None:
    got = judged(api_server_contributes=True)
    assert got["D1-Q1"] == "Yes"
    assert got["D1-Q3"] == got["D3-Q1"] == "No"


def test_an_entity_flagged_as_no_cause_is_not_blamed() -> None:
    got = judged(api_server_contributes=False)
    assert got["D1-Q1"] == got["D1-Q3"] == got["D3-Q1"] == "Yes"
