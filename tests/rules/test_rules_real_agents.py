"""Issue 22's failure modes of the rules judge, each tested on text real agents published: the
FORGE study's answers on Online Boutique (tests/fixtures/real_agents/, MIT, see SOURCE.md),
judged against the study's own fault labels, read by the project's FORGE adapter."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from helpers import CORPUS, EXAMPLE, FIXTURES
from helpers.rules import AGENTS, MODELS, published, study, verbatim_at_word_bounds

from ground_truth import IncidentSpec, Submission, load_specs
from judge import JudgeTask, RulesJudge, evaluate_submission, load_rubric
from judge.checklist.prompts import Prompt
from judge.judges.rules import SizePolicy
from judge.judges.rules.truth import parse_truth


def answers(model: str, fault: str, truth: IncidentSpec | str | None = None) -> dict[str, str]:
    """`model`'s answer on `fault`, judged against the study's label or against `truth`."""
    spec, sub = published(model, fault)
    if isinstance(truth, str):
        spec = IncidentSpec(id=spec.id, ground_truth=truth)
    elif truth is not None:
        spec = truth
    case = evaluate_submission(spec, sub)
    return {j.question_id: j.answer or "unscored" for j in case.judgments}


# 1 --------------------------------------------- fault type by mechanism, not shared vocabulary


@pytest.mark.parametrize(
    ("model", "fault", "why"),
    [
        ("qwen", "20", "node CPU load at node-5; the disk I/O is only in the metrics it cites"),
        ("qwen", "40", "node CPU load at node-6; the I/O activity is only in the metrics it cites"),
        ("llama", "11", "container memory load; CPU usage only in the alert it quotes"),
    ],
)
def test_1_a_mechanism_named_only_in_the_evidence_is_not_the_claimed_one(
    model: str, fault: str, why: str
) -> None:
    got = answers(model, fault)
    assert got["D2-Q1"] == got["D2-Q3"] == "No", why


def test_1_the_same_mechanism_in_the_headline_is_credited() -> None:
    got = answers("qwen", "12")  # node CPU load at node-6, as injected
    assert got["D2-Q1"] == got["D2-Q3"] == "Yes"


# 2 --------------------------------------------------------- blame needs a causal claim


@pytest.mark.parametrize(
    ("model", "fault", "how"),
    [
        ("deepseek", "7", "a service on the blamed node that shows alerts, in the path"),
        ("deepseek", "17", "the pod whose logs are cited as evidence"),
        ("deepseek", "33", "a callee of the blamed pod, inside an RPC method name"),
        ("qwen", "1", "the instance the blamed host's contention degraded"),
        ("llama", "32", "where a fault in frontend 'could propagate to'"),
        ("deepseek", "0", "a lower-ranked hypothesis and the propagation path"),
        ("qwen", "0", "the second hypothesis"),
    ],
)
def test_2_the_origin_mentioned_without_a_causal_claim_is_not_blamed(
    model: str, fault: str, how: str
) -> None:
    got = answers(model, fault)
    assert got["D1-Q1"] == got["D1-Q2"] == "No", how


def test_2_a_caller_named_as_what_the_fault_caused_is_not_blamed() -> None:
    """qwen, fault 49: "This high CPU usage could be the root cause of the performance degradation
    (PD) observed in trace alerts between frontend and productcatalogservice"."""
    got = answers("qwen", "49")
    assert got["D1-Q1"] == got["D1-Q3"] == got["D3-Q1"] == "Yes"


def test_2_a_claim_before_which_indicates_stays_a_claim() -> None:
    """Observations split from what they indicate only when they are observations."""
    truth = "level=service; fault_entity=frontend; fault_type=container memory load"
    said = "Metrics show frontend is OOMKilled, which indicates its memory limit is too low."
    case = evaluate_submission(
        IncidentSpec(id="m", ground_truth=truth), Submission(incident_id="m", diagnosis=said)
    )
    got = {j.question_id: j.answer for j in case.judgments}
    assert got["D1-Q1"] == got["D2-Q1"] == "Yes"


# 3 ---------------------------------------------------- structured truths with no prose


LABEL_FORMS = [
    "level=node; fault_entity=node-6; fault_type=node CPU load",
    "fault_level: node\nfault_entity: node-6\nfault_type: node CPU load",
    '{"fault_level": "node", "fault_entity": "node-6", "fault_type": "node CPU load"}',
    "level: node\ncomponent: node-6\ntimestamp: 1647755511\nreason: node CPU load",
    "A node CPU load fault was injected into the node node-6 at 2022-03-20 13:51:51 "
    "(Online-Boutique-cloudbed-1).",
]


@pytest.mark.parametrize("truth", LABEL_FORMS)
def test_3_a_label_row_as_text_names_the_origin_and_the_fault_type(truth: str) -> None:
    structured = answers("qwen", "12")
    got = answers("qwen", "12", truth)
    assert "unscored" not in got.values()
    assert got == structured


def test_3_a_label_row_with_another_origin_is_read_as_such() -> None:
    got = answers("qwen", "12", "level=pod; fault_entity=node-5; fault_type=node CPU load")
    assert "unscored" not in got.values() and got["D1-Q1"] == "No" and got["D2-Q1"] == "Yes"


FORMAT_SPECS = [
    ("forge", FIXTURES / "formats/forge/label_Online-Boutique-cloudbed-1.csv"),
    ("forge", FIXTURES / "formats/forge/fault-alerts/MicroSS/label.csv"),
    ("openrca", FIXTURES / "formats/openrca"),
    ("aiopslab", FIXTURES / "formats/aiopslab/ground_truth.excerpt.yaml"),
    ("aiopslab", FIXTURES / "formats/aiopslab/source"),
    ("itbench", FIXTURES / "formats/itbench/scenarios"),
    ("itbench", FIXTURES / "formats/itbench/ground_truths_flat"),
    ("itbench", FIXTURES / "formats/itbench/silver_truths"),
    ("cloud-opsbench", FIXTURES / "formats/cloud-opsbench"),
    ("sregym", FIXTURES / "formats/sregym/problems"),
]


def unscored_share(specs: list[IncidentSpec]) -> float:
    rubric, judge = load_rubric(), RulesJudge()
    total = unscored = 0
    for spec in specs:
        origin = spec.fault_origin[0].name if spec.fault_origin else "the service"
        said = f"The root cause is {origin}: {spec.mechanism or 'a fault'}. Requests fail."
        sub = Submission(incident_id=spec.id, diagnosis=said)
        for dimension in rubric.dimensions:
            task = JudgeTask(spec, sub, dimension, Prompt(messages=[], hash=""))
            for answer in judge.answer(task).answers:
                total += 1
                unscored += answer.answer is None
    return unscored / total


@pytest.mark.slow
@pytest.mark.parametrize(("fmt", "path"), FORMAT_SPECS, ids=lambda v: str(v).split("formats/")[-1])
def test_3_every_format_leaves_under_5_percent_unscored(fmt: str, path: Path) -> None:
    """As the adapter reads the spec, and from its ground-truth text alone."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        specs = load_specs(path, format=fmt)
    text_only = [IncidentSpec(id=s.id, ground_truth=s.ground_truth) for s in specs]
    assert unscored_share(specs) < 0.05
    assert unscored_share(text_only) < 0.05


def test_3_a_rendered_label_states_its_fault_type_not_the_query_around_it() -> None:
    """OpenRCA's record as the adapter renders it: the query's dates and `Root cause 1` are no
    injected details (the window's start, 14:30, is not the failure's time, 14:57), `high
    memory usage` is the fault type."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = next(
            s
            for s in load_specs(FIXTURES / "formats/openrca", format="openrca")
            if s.id == "Bank-0"
        )
    for truth in (spec, IncidentSpec(id=spec.id, ground_truth=spec.ground_truth)):
        said = "Root cause 1: component Mysql02; reason: high CPU usage; occurred at 2021-03-04 14:30:00."
        case = evaluate_submission(truth, Submission(incident_id=spec.id, diagnosis=said))
        got = {j.question_id: j.answer for j in case.judgments}
        assert got["D1-Q1"] == "Yes" and got["D2-Q1"] == got["D2-Q2"] == got["D2-Q3"] == "No"


def test_3_a_truth_that_no_fault_was_injected_is_scored() -> None:
    noop = IncidentSpec(
        id="noop", ground_truth="Fault no_op injected.\nExpected detection answer: No."
    )
    clean = evaluate_submission(
        noop, Submission(incident_id="noop", diagnosis="No faults were detected.")
    )
    blamed = evaluate_submission(
        noop, published("qwen", "12")[1].model_copy(update={"incident_id": "noop"})
    )
    assert {j.answer for j in clean.judgments} == {"Yes"}
    assert {j.answer for j in blamed.judgments} == {"No"}


# 4 ----------------------------------------------- names read within the spec's own system


def test_4_online_boutique_names_stay_in_online_boutique() -> None:
    truth = parse_truth(published("llama", "0")[0])
    assert truth.system is not None and truth.system.key == "online-boutique"
    catalog = {c.name for c in truth.catalog}
    assert {"cartservice", "redis-cart", "node-6"} <= catalog and "cart" not in catalog


def test_4_a_pod_of_the_origin_service_names_it() -> None:
    """llama, fault 0: "Container network packet latency at cartservice-0" for cartservice."""
    got = answers("llama", "0")
    assert got["D1-Q1"] == got["D1-Q3"] == "Yes"


def test_4_another_node_is_not_the_origin_node() -> None:
    """llama, fault 11: the faulty node is node-4; the answer speaks of node-6 only."""
    assert answers("llama", "11")["D1-Q1"] == "No"


def test_4_a_pod_of_a_second_deployment_is_not_the_numbered_pod() -> None:
    """qwen, fault 23: the faulty pod is frontend-2; the answer names frontend2-0."""
    assert answers("qwen", "23")["D1-Q1"] == "No"


def test_4_the_origin_pod_named_is_no_concrete_detail() -> None:
    """deepseek, fault 31: right pod (checkoutservice-2), wrong mechanism (CPU, not memory):
    the pod's number is not an injected value."""
    got = answers("deepseek", "31")
    assert got["D1-Q1"] == "Yes" and got["D2-Q1"] == got["D2-Q2"] == "No"


# 5 -------------------------------------------------------------------- impact


def test_5_an_impact_that_follows_from_the_stated_cause_counts() -> None:
    """The labels state no impact; "High CPU utilization on node-6 is causing performance
    degradation" follows from a node CPU load on node-6."""
    assert answers("qwen", "12")["D3-Q3"] == "Yes"


def test_5_slowness_is_not_what_a_full_disk_produces() -> None:
    """qwen, fault 28, node-1's disk space: "High disk usage on node-1 could slow database
    queries" states slowness only; the guide reads disk space consumption's impact as write
    failures (real/GUIDE.md, label rows, D3-Q3)."""
    assert answers("qwen", "28")["D3-Q3"] == "No"


def test_5_symptoms_of_a_component_ruled_out_are_not_the_impact() -> None:
    """qwen, fault 12's headline and description, then a sentence about a service it clears."""
    spec, sub = published("qwen", "12")
    head = "\n".join(sub.diagnosis.splitlines()[:1])
    cleared = f"{head}\nEmailservice-0 shows errors, but emailservice is healthy otherwise."
    case = evaluate_submission(spec, sub.model_copy(update={"diagnosis": cleared}))
    assert {j.question_id: j.answer for j in case.judgments}["D3-Q3"] == "No"


# 6 ----------------------------------------------------------- D2 read by meaning


def test_6_a_paraphrased_fault_type_is_the_same_mechanism() -> None:
    """llama, fault 0: "Container network packet latency" for "container network latency"."""
    assert answers("llama", "0")["D2-Q1"] == "Yes"


def test_6_the_fault_type_written_with_underscores_is_read() -> None:
    """deepseek, fault 0: "container_disk_write_I/O_load at redis-cart-0", against labels that
    put a write (then a read) I/O fault there."""
    write = answers(
        "deepseek", "0", "level=pod; fault_entity=redis-cart-0; fault_type=container write I/O load"
    )
    read = answers(
        "deepseek", "0", "level=pod; fault_entity=redis-cart-0; fault_type=container read I/O load"
    )
    assert write["D1-Q1"] == write["D2-Q1"] == "Yes"
    assert read["D2-Q1"] == "No"


@pytest.mark.parametrize(
    ("model", "fault", "why"),
    [
        ("llama", "7", "packet retransmission is another network fault than packet corruption"),
        ("qwen", "53", "disk write I/O is not disk space, though the description says disk usage"),
    ],
)
def test_6_another_fault_of_the_same_area_is_not_the_mechanism(
    model: str, fault: str, why: str
) -> None:
    got = answers(model, fault)
    assert got["D2-Q1"] == "No", why


# 7 ------------------------------------------------------------------ aliases


REPLICAS = "deepseek", "29"  # location: "productcatalogservice-0, productcatalogservice-1, ..."


def test_7_replicas_in_a_list_name_their_service() -> None:
    got = answers(
        *REPLICAS,
        "level=service; fault_entity=productcatalogservice; fault_type=container memory load",
    )
    assert got["D1-Q1"] == got["D1-Q3"] == got["D3-Q1"] == "Yes"


def test_7_the_origin_replica_in_a_list_is_named_beside_its_siblings() -> None:
    got = answers(
        *REPLICAS,
        "level=pod; fault_entity=productcatalogservice-1; fault_type=container memory load",
    )
    assert got["D1-Q1"] == "Yes" and got["D1-Q3"] == got["D3-Q1"] == "No"


@pytest.mark.parametrize(
    "said",
    [
        "The root cause is the mongodb-geo database: the admin user's roles were revoked.",
        "geo-db revoked the admin user's privileges, so geo queries are not authorized.",
        "The geo database revoked the geo user's access, so geo queries are not authorized.",
    ],
)
def test_7_a_database_is_named_by_its_service_and_store(said: str) -> None:
    spec = load_specs(EXAMPLE / "ground_truth" / "revoke_auth_mongodb-1.yaml")[0]
    case = evaluate_submission(spec, Submission(incident_id=spec.id, diagnosis=said))
    assert {j.question_id: j.answer for j in case.judgments}["D1-Q1"] == "Yes"


# 8 ------------------------------------------------------------------- evidence


def test_8_every_quote_on_these_answers_is_verbatim() -> None:
    for model in MODELS:
        specs, subs = study(model)
        for incident, sub in subs.items():
            case = evaluate_submission(specs[incident], sub)
            for j in case.judgments:
                if j.evidence:
                    assert verbatim_at_word_bounds(sub.diagnosis, j.evidence), j.evidence


# what an answer rests on --------------------------------------------------------


def test_each_answer_keeps_what_it_rests_on() -> None:
    rubric, judge = load_rubric(), RulesJudge(size_policy=SizePolicy(max_chars=2_000))
    spec, sub = published("llama", "0")
    text = IncidentSpec(
        id=spec.id,
        ground_truth="level=service; fault_entity=cartservice; fault_type=container network latency",
    )
    long = sub.model_copy(update={"diagnosis": sub.diagnosis + "\n" + "x " * 2_000})
    bases = {}
    for truth, diagnosis in ((spec, sub), (text, sub), (spec, long)):
        task = JudgeTask(truth, diagnosis, rubric.dimensions[0], Prompt(messages=[], hash=""))
        bases[(truth is text, diagnosis is long)] = judge.rulings(task)[0].basis
    assert bases[(False, False)].name == "instance" and bases[(False, False)].claim == "explicit"
    assert bases[(False, False)].truth == "structured" and bases[(True, False)].truth == "fields"
    assert not bases[(False, False)].cut and bases[(False, True)].cut


# provenance --------------------------------------------------------------------


@pytest.mark.corpus
def test_the_excerpts_are_the_published_records() -> None:
    for name in MODELS.values():
        excerpt = json.loads((AGENTS / name).read_text(encoding="utf-8"))
        source = json.loads(
            (CORPUS / "rca-llm-reasoning" / name.replace(".excerpt", "")).read_text(
                encoding="utf-8"
            )
        )
        by_fault = {r["fault_id"]: r for r in source["records"]}
        for record in excerpt["records"]:
            original = dict(by_fault[record["fault_id"]])
            original.pop("top1_location_equals_gt_entity", None)
            kept = len(record["root_causes"])
            assert record == {**original, "root_causes": original["root_causes"][:kept]}
        assert {k: v for k, v in excerpt["_about"].items() if k != "excerpt"} == source["_about"]
