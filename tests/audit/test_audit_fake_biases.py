"""The fake provider's planted biases (`judge.testing.biases`), its grounded answers and the
identity it gives each reply: each switch does what it says and nothing else, over real HTTP
and in-process alike, seeded, and set from the command line as its fault switches are."""

from __future__ import annotations

import json
import urllib.request

import pytest
from helpers import EXAMPLE
from pydantic import ValidationError

from ground_truth import load_specs, load_submissions
from judge import PromptRenderer
from judge.audit.arms import attributed, diagnosis_first
from judge.audit.padding import pad
from judge.checklist.rubric import load_rubric, whole_submission
from judge.testing import FakeProvider, FakeProviderConfig
from judge.testing.answers import grounded_policy, origin_names
from judge.testing.biases import PlantedBiases, apply_biases, names_family
from judge.testing.cli import build_parser, config_from_args

RUBRIC = load_rubric()
SPECS = {s.id: s for s in load_specs(EXAMPLE / "ground_truth")}
SUBMISSIONS = load_submissions(EXAMPLE / "outputs")
WHOLE = whole_submission(RUBRIC.dimensions)
IDS = [q.id for q in WHOLE.questions]


def messages(submission, renderer: PromptRenderer | None = None, rubric=RUBRIC) -> list[dict]:
    dimension = whole_submission(rubric.dimensions)
    spec = SPECS[submission.incident_id]
    return (renderer or PromptRenderer()).render(spec, submission, dimension).messages


def answers(submission, biases: PlantedBiases, seed: int = 0, request=None, **kw) -> dict:
    """The fake's answers by question id, asked in the prompt's order."""
    asked = messages(submission, **kw)
    ids = [q.id for q in whole_submission(kw.get("rubric", RUBRIC).dimensions).questions]
    given = [{"id": q, "answer": grounded_policy(q, asked)} for q in ids]
    return {a["id"]: a["answer"] for a in apply_biases(given, asked, biases, seed, request)}


def mixed(wanted=lambda given: True):
    """A submission whose plain answers hold a Yes and a No (and what `wanted` asks)."""
    return next(
        s
        for s in SUBMISSIONS
        if {"Yes", "No"} <= set((given := answers(s, PlantedBiases())).values()) and wanted(given)
    )


def test_grounded_answers_read_what_the_diagnosis_says_not_its_form() -> None:
    sub = mixed()
    plain = answers(sub, PlantedBiases())
    padded = answers(sub.model_copy(update={"diagnosis": pad(sub.diagnosis)}), PlantedBiases())
    first = answers(sub, PlantedBiases(), renderer=diagnosis_first(PromptRenderer()))
    assert plain == padded == first
    blind = sub.model_copy(update={"diagnosis": "Something failed somewhere."})
    assert set(answers(blind, PlantedBiases()).values()) == {"No"}
    assert origin_names(messages(sub)[1]["content"])  # read from the prompt's own line


def test_yes_only_to_the_first_k_questions_in_prompt_order() -> None:
    sub = mixed(lambda given: given[IDS[0]] == "Yes" and given[IDS[-1]] == "Yes")
    plain = answers(sub, PlantedBiases())
    biased = answers(sub, PlantedBiases(yes_first=3))
    assert {q: biased[q] for q in IDS[:3]} == {q: plain[q] for q in IDS[:3]}
    assert {biased[q] for q in IDS[3:]} == {"No"}
    reversed_rubric = RUBRIC.model_copy(update={"dimensions": RUBRIC.dimensions[::-1]})
    moved = answers(sub, PlantedBiases(yes_first=3), rubric=reversed_rubric)
    assert moved[IDS[0]] == "No" and moved[IDS[-1]] == "Yes"  # other questions come first now


def test_yes_only_when_the_diagnosis_is_long() -> None:
    sub = mixed()
    limit = len(sub.diagnosis) + 10
    assert set(answers(sub, PlantedBiases(yes_min_chars=limit)).values()) == {"No"}
    longer = sub.model_copy(update={"diagnosis": pad(sub.diagnosis)})
    assert answers(longer, PlantedBiases(yes_min_chars=limit)) == answers(sub, PlantedBiases())


def test_no_when_the_diagnosis_comes_before_the_ground_truth() -> None:
    sub = mixed()
    bias = PlantedBiases(no_diagnosis_first=True)
    assert answers(sub, bias) == answers(sub, PlantedBiases())
    first = answers(sub, bias, renderer=diagnosis_first(PromptRenderer()))
    assert set(first.values()) == {"No"}


def test_yes_when_the_prompt_names_the_family() -> None:
    sub = mixed()
    bias = PlantedBiases(yes_family="gpt")
    assert answers(sub, bias) == answers(sub, PlantedBiases())
    named = sub.model_copy(update={"diagnosis": attributed(sub.diagnosis, "gpt-4o-mini")})
    other = sub.model_copy(update={"diagnosis": attributed(sub.diagnosis, "claude-sonnet-4")})
    assert set(answers(named, bias).values()) == {"Yes"}
    assert answers(other, bias) == answers(sub, PlantedBiases())
    assert names_family("written with GPT-4o", "gpt") and not names_family("chatgpt", "gpt")


def test_flips_are_seeded_per_request_and_fresh_for_another_seed() -> None:
    bias = PlantedBiases(flip_rate=0.3)
    flips = []
    for sub in SUBMISSIONS:
        plain = answers(sub, PlantedBiases())
        once = answers(sub, bias, seed=1, request={"seed": 0, "temperature": 0.0})
        again = answers(sub, bias, seed=1, request={"seed": 0, "temperature": 0.0})
        other = answers(sub, bias, seed=1, request={"seed": 1000, "temperature": 0.0})
        assert once == again
        flips += [plain[q] != once[q] for q in IDS] + [plain[q] != other[q] for q in IDS]
    assert 0.2 < sum(flips) / len(flips) < 0.4  # 576 draws at 0.3


def test_the_switches_refuse_what_they_cannot_mean() -> None:
    for bad in ({"flip_rate": 1.5}, {"yes_first": -1}, {"yes_family": ""}, {"surprise": 1}):
        with pytest.raises(ValidationError):
            PlantedBiases(**bad)


def test_over_http_the_reply_carries_the_biased_answers_and_the_identity() -> None:
    sub = mixed()
    config = FakeProviderConfig(
        answer_policy=grounded_policy,
        biases=PlantedBiases(yes_first=2),
        model_version="gpt-4o-mini-2024-07-18",
        system_fingerprint="fp_44709d6fcb",
    )
    body = {"model": "gpt-4o-mini", "messages": messages(sub), "seed": 0}
    with FakeProvider(config) as server:
        request = urllib.request.Request(
            f"{server.url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as reply:
            payload = json.load(reply)
    given = json.loads(payload["choices"][0]["message"]["content"])["answers"]
    assert {a["id"]: a["answer"] for a in given} == answers(sub, PlantedBiases(yes_first=2))
    assert payload["model"] == "gpt-4o-mini-2024-07-18"
    assert payload["system_fingerprint"] == "fp_44709d6fcb"
    assert (
        "system_fingerprint"
        not in FakeProvider(FakeProviderConfig(system_fingerprint=None))
        .serve_completion("/v1/chat/completions", json.dumps(body).encode(), None)
        .payload
    )


def test_the_command_line_sets_the_biases() -> None:
    args = build_parser().parse_args(
        ["--answer", "grounded", "--yes-first", "4", "--yes-min-chars", "300",
         "--no-diagnosis-first", "--yes-family", "claude", "--flip-rate", "0.1",
         "--model-version", "m-2026", "--system-fingerprint", "fp_x"]
    )  # fmt: skip
    config = config_from_args(args)
    assert config.biases == PlantedBiases(
        yes_first=4, yes_min_chars=300, no_diagnosis_first=True, yes_family="claude", flip_rate=0.1
    )
    assert config.answer_policy is grounded_policy
    assert (config.model_version, config.system_fingerprint) == ("m-2026", "fp_x")
