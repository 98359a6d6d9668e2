"""The rules judge on AIOpsLab's submitted answers as agents wrote them (issue 22): the labelling
guide (benchmarks/validity/real/GUIDE.md, "A bare structured answer", "Empty or no fault", "AIOpsLab
problems") reads `submit(["X"])` as the claim that X is the fault origin, with no mechanism and
no impact; `submit([])` as no claim; an analysis answer (`system_level`, `fault_type`) as a
category that names no component.

The answers are published sessions of n1k0ver3E/ai_sre_data (no licence file, so read from the
shared corpus, never copied: `aiopslab/ai_sre_data_sessions.json`, see its SOURCE.md), judged
against AIOpsLab's own problems (`aiopslab/ground_truth.yaml`, facts from microsoft/AIOpsLab, MIT).
Each text is the session's `submit(...)` call as the agent wrote it, in the code fence AIOpsLab's
clients ask for. Sessions of the models whose runs are the real-agent set's test sources (gpt-5,
gpt-5-mini) are not used."""

from __future__ import annotations

import json
import warnings
from functools import cache

import pytest
from helpers import corpus

from ground_truth import IncidentSpec, Submission, load_specs
from judge import evaluate_submission

pytestmark = pytest.mark.corpus


@cache
def _specs() -> dict[str, IncidentSpec]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        specs = load_specs(corpus("aiopslab", "ground_truth.yaml"), format="aiopslab")
    return {s.id: s for s in specs}


@cache
def _sessions() -> dict[str, dict]:
    path = corpus("aiopslab", "ai_sre_data_sessions.json")
    return {s["session_id"]: s for s in json.loads(path.read_text(encoding="utf-8"))["sessions"]}


def submitted(session: str) -> dict[str, str]:
    """The rules judge's answers on the published session whose id starts with `session`."""
    record = next(s for sid, s in _sessions().items() if sid.startswith(session))
    spec = _specs()[record["problem_id"]]
    text = f"```\nsubmit({record['submission_args']})\n```"
    case = evaluate_submission(spec, Submission(incident_id=spec.id, diagnosis=text))
    return {j.question_id: j.answer or "unscored" for j in case.judgments}


def test_a_submitted_component_is_claimed_as_the_origin() -> None:
    """deepseek-chat-v3.1 on auth_miss_mongodb-localization-1: `["url-shorten-mongodb"]`, the
    faulty MongoDB: the origin is claimed and nothing else is; no mechanism, detail or impact."""
    got = submitted("dafad27b")
    assert got["D1-Q1"] == got["D1-Q3"] == got["D3-Q1"] == "Yes"
    assert got["D2-Q1"] == got["D2-Q2"] == got["D2-Q3"] == got["D3-Q3"] == "No"


def test_a_second_submitted_component_is_blamed_too() -> None:
    """qwen3-30b-a3b on astronomy_shop_ad_service_high_cpu-localization-1: `["ad",
    "fraud-detection", "flagd"]` claims all three; fraud-detection and flagd are no origin
    (over-scoped)."""
    got = submitted("d8b76265")
    assert got["D1-Q1"] == "Yes"
    assert got["D1-Q3"] == got["D3-Q1"] == "No"


def test_a_submitted_components_name_is_no_mechanism() -> None:
    """qwen3-30b-a3b on astronomy_shop_loadgenerator_flood_homepage-localization-1 (a feature
    flag floods frontend): `["flagd"]` names the flagd service, not a feature-flag fault."""
    got = submitted("4add293b")
    assert got["D2-Q1"] == got["D2-Q3"] == "No"
    assert got["D1-Q1"] == "No"


def test_an_empty_submission_claims_nothing() -> None:
    """deepseek-chat-v3.1 on network_loss_hotel_res-localization-1: `[]`."""
    assert set(submitted("2827c44c").values()) == {"No"}


def test_an_analysis_answer_is_a_compatible_category_not_a_mechanism() -> None:
    """deepseek-chat-v3.1 on revoke_auth_mongodb-analysis-1 (the admin user's privileges revoked
    in mongodb-geo): `Application` / `Authentication Issue` fits the fault (D2-Q3) but states no
    mechanism (D2-Q1) and names no component (D1, D3-Q2)."""
    got = submitted("2be0b5b5")
    assert got["D2-Q3"] == "Yes"
    assert got["D2-Q1"] == got["D1-Q1"] == got["D3-Q2"] == "No"


def test_an_analysis_category_that_does_not_fit_is_no_characterisation() -> None:
    """qwen3-30b-a3b on k8s_target_port-misconfig-analysis-2: `fault_type: "No Fault"`."""
    assert submitted("2f83bd62")["D2-Q3"] == "No"


def test_the_dependent_service_submitted_beside_the_origin_is_over_scoped() -> None:
    """qwen3-coder-480b on revoke_auth_mongodb-localization-2: `["rate", "mongodb-rate"]`. The
    problem's description names rate as the dependent service that fails (affected, not a cause)
    and mongodb-geo only as the other instance the problem class could hit; labeller a's reading
    (real/labels/READINGS.a.md): D1-Q2, D1-Q3 and D3-Q1 No, D3-Q2 Yes."""
    got = submitted("5a7336f2")
    assert got["D1-Q1"] == got["D3-Q2"] == "Yes"
    assert got["D1-Q2"] == got["D1-Q3"] == got["D3-Q1"] == "No"
