"""The rules judge on agents' answers as they write them (issue 22, phase 2): readings of language
and of ground-truth formats that the labelling guide (benchmarks/validity/real/GUIDE.md) states,
each tested on published agent text (tests/fixtures/real_agents/, MIT, see SOURCE.md)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from helpers import CORPUS
from test_rules_real_agents import AGENTS, MODELS, published

from ground_truth import IncidentSpec, Submission, load_specs, load_submissions
from judge import evaluate_submission


def judged(spec: IncidentSpec, text: str) -> dict[str, str]:
    case = evaluate_submission(spec, Submission(incident_id=spec.id, diagnosis=text))
    return {j.question_id: j.answer or "unscored" for j in case.judgments}


def as_json(model: str, fault: str, indent: int | None = 2, bare: bool = False) -> str:
    """The answer as the agent returned it (`{"root_causes": [...]}`), not as the adapter
    renders it."""
    record = next(r for r in _records(model) if r["fault_id"] == fault)
    root_causes = record["root_causes"]
    return json.dumps(root_causes if bare else {"root_causes": root_causes}, indent=indent)


def _records(model: str) -> list[dict]:
    return json.loads((AGENTS / MODELS[model]).read_text(encoding="utf-8"))["records"]


def json_answers(model: str, fault: str, **how: object) -> dict[str, str]:
    spec, _ = published(model, fault)
    return judged(spec, as_json(model, fault, **how))  # type: ignore[arg-type]


# A list of root causes is ranked: the first item is the claim ------------------------------


def test_a_json_list_of_root_causes_claims_its_first_item() -> None:
    """qwen, fault 48 (node-1's CPU load): the first item blames productcatalogservice-0's
    memory; node-1's CPU load is only the second item, an alternative."""
    got = json_answers("qwen", "48")
    assert got["D1-Q1"] == got["D2-Q1"] == got["D2-Q3"] == got["D3-Q2"] == "No"


def test_lower_ranked_items_cost_nothing() -> None:
    """qwen, fault 52 (node-6's CPU spike): the first item is right; the others blame other
    nodes and services."""
    got = json_answers("qwen", "52")
    assert got["D1-Q1"] == got["D1-Q3"] == got["D3-Q1"] == got["D2-Q1"] == "Yes"


@pytest.mark.parametrize("how", [{"indent": None}, {"bare": True}], ids=["one-line", "bare-list"])
def test_a_json_answer_reads_the_same_on_one_line_or_as_a_bare_list(how: dict) -> None:
    for model, fault in (("qwen", "48"), ("qwen", "52"), ("deepseek", "0")):
        assert json_answers(model, fault, **how) == json_answers(model, fault), (model, fault)


# D2-Q2 on a label row still counts any concrete value the text holds, so quoting differs.
UNREAD_DETAILS = {"D2-Q2"}


def _agree(path: Path) -> list[tuple[str, str, str, str]]:
    """(incident, question, prose answer, JSON answer) where the adapter's prose and the JSON
    answer are judged differently."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        specs = {s.id: s for s in load_specs(path, format="forge")}
        subs = {s.incident_id: s for s in load_submissions(path, format="forge")}
    records = json.loads(path.read_text(encoding="utf-8"))["records"]
    out = []
    for record in records:
        incident = f"Online-Boutique-cloudbed-1-{record['fault_id']}"
        if incident not in subs:
            continue
        prose = judged(specs[incident], subs[incident].diagnosis)
        text = judged(specs[incident], json.dumps({"root_causes": record["root_causes"]}, indent=2))
        out += [
            (incident, q, prose[q], text[q])
            for q in prose
            if prose[q] != text[q] and q not in UNREAD_DETAILS
        ]
    return out


def test_the_json_answer_and_the_adapters_prose_are_judged_alike() -> None:
    for model in MODELS:
        assert _agree(AGENTS / MODELS[model]) == [], model


@pytest.mark.corpus
def test_the_json_answer_and_the_adapters_prose_agree_on_every_published_answer() -> None:
    for path in sorted((CORPUS / "rca-llm-reasoning").glob("diagnoses_*.json")):
        assert _agree(path) == [], path.name
