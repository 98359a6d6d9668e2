"""Selective and cascaded judging with a guarantee (issue 23), end to end over real HTTP:
`judge calibrate --target-agreement` writes a calibration file from judged runs and labels,
`judge eval --judge-model cascade:rules,openai/gpt-4o-mini --calibration FILE` asks the rules
judge first and the fake model only where the rules judge is not sure enough, abstains
(`below_guarantee`, never No) where neither is, costs what the fake provider's token counts cost
at litellm's prices, and makes no call on a rerun. A target the labels cannot support is
refused (exit 2, saying how many more labels it needs); a calibration made for another rubric
or judge is refused too.

The labels are made so that the rules judge is right on its most confident sixth of answers
and often wrong below it, and the fake model right on most questions (confidence 0.95) and wrong
on a few (confidence 0.55); with `--fit-share 0` the thresholds apply to the raw confidences,
so the routing the test expects is worked out here without the project's routing code.
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest
from helpers import EXAMPLE_GT, EXAMPLE_OUTPUTS

from agreement import SelectiveRefusal
from ground_truth import load_specs, load_submissions
from judge import CalibrationFile, RulesJudge, evaluate, load_calibration
from judge.cli import main
from judge.judges.clients.litellm_client import import_litellm
from judge.judges.selective.file import write_calibration
from judge.testing import FakeProvider, FakeProviderConfig
from judge.testing.answers import diagnosis_text, last_user_text

pytestmark = pytest.mark.slow  # real HTTP runs of the example, seconds each

MODEL = "openai/gpt-4o-mini"
RIGHT, WRONG = 0.95, 0.55


def _hash(*parts: str) -> int:
    return hashlib.sha256("\x1f".join(parts).encode()).digest()[0]


def _flip(answer: str) -> str:
    return "No" if answer == "Yes" else "Yes"


class World:
    """The example's cases, their labels and the fake model that knows them."""

    def __init__(self) -> None:
        specs = load_specs(EXAMPLE_GT)
        self.subs = load_submissions(EXAMPLE_OUTPUTS)
        rules = evaluate(specs, self.subs, judge=RulesJudge())
        self.rules = {(j.incident_id, j.trial, j.question_id): j for j in rules.judgments}
        self.labels = {}
        scores = sorted(j.confidence_score or 0 for j in rules.judgments)
        cutoff = scores[len(scores) * 5 // 6]
        for key, j in self.rules.items():
            sure = (j.confidence_score or 0) >= cutoff
            wrong = not sure and _hash("label", *key) % 2 == 0
            self.labels[key] = _flip(j.answer) if wrong else j.answer  # type: ignore[arg-type]
        self.by_diagnosis = {s.diagnosis.strip(): (s.incident_id, s.trial) for s in self.subs}

    def model_right(self, key: tuple[str, str, str]) -> bool:
        return _hash("model", *key) % 10 != 0

    def case(self, messages) -> tuple[str, str]:
        return self.by_diagnosis[diagnosis_text(last_user_text(messages)).strip()]

    def policy(self, qid: str, messages) -> str:
        key = (*self.case(messages), qid)
        label = self.labels[key]
        return label if self.model_right(key) else _flip(label)

    def confidence(self, model: str, qid: str, messages, answer: str) -> float:
        return RIGHT if self.model_right((*self.case(messages), qid)) else WRONG

    def provider(self) -> FakeProvider:
        return FakeProvider(
            FakeProviderConfig(
                model_policies={MODEL.split("/")[1]: self.policy},
                confidence_policy=self.confidence,
            )
        )

    def write_labels(self, path: Path, keep=lambda key: True) -> Path:
        with path.open("w", newline="", encoding="utf-8") as handle:
            out = csv.writer(handle)
            out.writerow(["incident_id", "trial", "question_id", "answer", "annotator"])
            for key, answer in sorted(self.labels.items()):
                if keep(key):
                    out.writerow([*key, answer, "a"])
        return path


@pytest.fixture(scope="module")
def world() -> World:
    return World()


def _eval(folder: Path, result: str, *extra: str) -> int:
    """`judge eval` on the example, one call per (submission, dimension) unless `extra` says
    otherwise: the question-level cascade routes each dimension call on its own."""
    if "--granularity" not in extra:
        extra = ("--granularity", "dimension", *extra)
    return main(["eval", "--ground-truth", str(EXAMPLE_GT), "--outputs", str(EXAMPLE_OUTPUTS), "--no-progress",
                 "--result-file", str(folder / result), *extra])  # fmt: skip


@pytest.fixture(scope="module")
def calibrated(world: World, tmp_path_factory) -> Path:
    """The rules judge's and the fake model's runs, and their calibration at 0.9 / 0.1."""
    folder = tmp_path_factory.mktemp("cascade")
    labels = world.write_labels(folder / "labels.csv")
    with world.provider() as provider:
        assert _eval(folder, "rules.json") == 0
        assert _eval(folder, "mini.json", "--judge-model", MODEL, "--api-base", provider.url,
                     "--confidence", "logprobs") == 0  # fmt: skip
    code = main(["calibrate", str(folder / "rules.json"), str(folder / "mini.json"),
                 "--human", str(labels), "--target-agreement", "0.9", "--alpha", "0.1",
                 "--fit-share", "0", "--calibration", str(folder / "cal.json"),
                 "--html", str(folder / "cal.html")])  # fmt: skip
    assert code == 0
    return folder


def test_the_calibration_file_round_trips_and_has_a_schema(calibrated: Path, capsys) -> None:
    path = calibrated / "cal.json"
    loaded = load_calibration(path)
    assert CalibrationFile.model_validate_json(loaded.model_dump_json()) == loaded
    assert json.loads(path.read_text()) == json.loads(loaded.model_dump_json())
    assert [s.judge.name for s in loaded.stages] == ["rules", f"llm:{MODEL}"]
    assert loaded.target == 0.9 and loaded.alpha == 0.1 and loaded.guarantee == "question"
    assert loaded.stage_alpha == pytest.approx(0.05)
    assert all(t is not None for t in loaded.thresholds)
    assert loaded.rubric_hash and len(loaded.labels.hash) == 16 and loaded.labels.n_select == 288
    assert loaded.stages[1].judge.model == MODEL and loaded.stages[1].judge.granularity
    for stage in loaded.stages:
        assert stage.selection.status == "guaranteed"
        assert stage.selection.lower_bound >= 0.9
    assert loaded.coverage > 0.5 and loaded.agreement >= 0.9
    assert main(["schema", "calibration"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert {"stages", "rubric_hash", "labels", "target", "alpha"} <= set(schema["properties"])
    page = (calibrated / "cal.html").read_text()
    assert "<svg" in page and "Thresholds" in page and "http" not in page.split("<body>")[1][:0]


def _expected(world: World, calibration: CalibrationFile):
    """Per question the stage that should answer it (0 rules, 1 model, None), from the raw
    confidences and the thresholds alone (the maps are the identity with --fit-share 0)."""
    t_rules, t_model = calibration.thresholds
    assert t_rules is not None and t_model is not None
    routed = {}
    for key, j in world.rules.items():
        if j.confidence_score >= t_rules:  # type: ignore[operator]
            routed[key] = 0
        else:
            routed[key] = 1 if (RIGHT if world.model_right(key) else WRONG) >= t_model else None
    return routed


def test_the_cascade_escalates_abstains_costs_and_reruns_free(
    world: World, calibrated: Path
) -> None:
    calibration = load_calibration(calibrated / "cal.json")
    routed = _expected(world, calibration)
    cascade = ["--judge-model", f"cascade:rules,{MODEL}", "--calibration",
               str(calibrated / "cal.json"), "--store", str(calibrated / "cascade.sqlite")]  # fmt: skip
    with world.provider() as provider:
        assert _eval(calibrated, "cascade.json", *cascade, "--api-base", provider.url) == 0
        calls = list(provider.calls)
        assert _eval(calibrated, "again.json", *cascade, "--api-base", provider.url) == 0
        assert len(provider.calls) == len(calls), "a rerun asks nothing"
    result = json.loads((calibrated / "cascade.json").read_text())
    escalated = {(k[0], k[1], k[2][:2]) for k, stage in routed.items() if stage != 0}
    assert len(calls) == len(escalated) > 0, "one model call per dimension with an escalation"
    summary = result["cascade"]
    assert summary["n_items"] == len(routed) == 288
    assert [s["answered"] for s in summary["stages"]] == [
        sum(1 for s in routed.values() if s == 0),
        sum(1 for s in routed.values() if s == 1),
    ]
    abstained = [k for k, s in routed.items() if s is None]
    assert summary["abstained"] == len(abstained) > 0
    assert summary["coverage"] == pytest.approx(1 - len(abstained) / 288)
    assert [s["calls"] for s in summary["stages"]] == [96, len(escalated)]
    own = {(j["incident_id"], j["trial"], j["question_id"]): j for j in result["judgments"]}
    assert len(own) == len(result["judgments"]) == 288, "one answer per (case, question)"
    assert {j["judge"] for j in result["judgments"]} == {result["config"]["judge"]["label"]}
    assert {j["judge"] for j in result["member_judgments"]} == {"rules", f"llm:{MODEL}"}
    model_said = {j["judge"]: j["identity"] is not None for j in result["member_judgments"]}
    assert model_said == {"rules": False, f"llm:{MODEL}": True}, "each stage's own identity"
    for key in abstained:
        assert own[key]["answer"] is None and own[key]["abstained"]
        assert own[key]["stage"] is None
        assert own[key]["unscored_reason"].startswith("below_guarantee")
    for key, stage in routed.items():
        if stage == 0:
            assert own[key]["answer"] == world.rules[key].answer
            assert own[key]["stage"] == "rules" and not own[key]["abstained"]
        elif stage == 1:
            assert own[key]["answer"] == world.policy(key[2], _messages_for(world, key))
            assert own[key]["stage"] == f"llm:{MODEL}" and not own[key]["abstained"]
            assert own[key]["identity"] is not None, "a kept answer names the stage's model"
    answered = [k for k, s in routed.items() if s is not None]
    agreed = sum(own[k]["answer"] == world.labels[k] for k in answered) / len(answered)
    assert agreed >= 0.9
    price = import_litellm().model_cost[MODEL.split("/")[1]]
    expected_cost = sum(
        (c.prompt_tokens - c.cached_tokens) * price["input_cost_per_token"]
        + c.cached_tokens * price["cache_read_input_token_cost"]
        + c.completion_tokens * price["output_cost_per_token"]
        for c in calls
    )
    assert sum(c.cached_tokens for c in calls) > 0, "the fake's prompt cache is priced too"
    assert summary["stages"][1]["cost_usd"] == pytest.approx(expected_cost, rel=1e-6)
    assert summary["stages"][0]["cost_usd"] == 0.0
    per_call = expected_cost / len(calls)
    assert summary["strongest_cost_usd"] == pytest.approx(per_call * 96, rel=0.2)
    assert summary["saved_usd"] > 0
    again = json.loads((calibrated / "again.json").read_text())
    assert _answers(again) == _answers(result)
    assert again["cascade"]["stages"][1]["calls_from_store"] == len(calls)
    assert again["usage"]["requests"] == 0


def _answers(result: dict) -> list[tuple]:
    """Every judgment but its prompt hash: a unit only the rules judge answered has one only
    when planning rendered its prompt, which it does once the store holds the model's answers."""
    every = result["judgments"] + result["member_judgments"]
    return [tuple(v for k, v in j.items() if k != "prompt_hash") for j in every]


def _messages_for(world: World, key: tuple[str, str, str]) -> list[dict]:
    """A chat holding the case's diagnosis, enough for the fake model's policy."""
    sub = next(s for s in world.subs if (s.incident_id, s.trial) == key[:2])
    return [{"role": "user", "content": f"BEGIN DIAGNOSIS t\n{sub.diagnosis}\nEND DIAGNOSIS t"}]


def test_a_target_the_labels_cannot_support_is_refused(
    world: World, calibrated: Path, capsys
) -> None:
    few = world.write_labels(calibrated / "few.csv", keep=lambda key: key[0] < "c")
    target = calibrated / "refused.json"
    code = main(["calibrate", str(calibrated / "rules.json"), str(calibrated / "mini.json"),
                 "--human", str(few), "--target-agreement", "0.95", "--fit-share", "0",
                 "--calibration", str(target)])  # fmt: skip
    assert code == 2 and not target.exists()
    err = capsys.readouterr().err
    assert "cannot support agreement >= 0.95" in err and "more labelled questions" in err


def test_a_calibration_for_other_judges_or_another_rubric_is_refused(
    calibrated: Path, capsys
) -> None:
    cal = str(calibrated / "cal.json")
    cascade = ["--judge-model", f"cascade:rules,{MODEL}", "--calibration", cal]
    cases = [
        (["--judge-model", "cascade:rules,openai/gpt-4o", "--calibration", cal], "stage 2"),
        ([*cascade, "--dimensions", "D1,D2"], "rubric"),
        (["--judge-model", f"cascade:{MODEL}", "--calibration", cal], "1 ("),
        (["--judge-model", f"cascade:rules,{MODEL}"], "needs a calibration file"),
        (["--judge-model", "rules", "--calibration", cal], "cascade judge"),
        ([*cascade, "--judge-model", "rules"], "only judge"),
    ]
    for extra, words in cases:
        assert _eval(calibrated, "refused.json", *extra, "--api-base", "http://127.0.0.1:9") == 2
        assert words in capsys.readouterr().err
        assert not (calibrated / "refused.json").exists()


def test_the_verdict_guarantee_keeps_or_escalates_whole_cases(world: World, tmp_path: Path) -> None:
    labels = world.write_labels(tmp_path / "labels.csv")
    whole = ["--granularity", "submission"]
    with world.provider() as provider:
        url = ["--api-base", provider.url]
        assert _eval(tmp_path, "rules.json", *whole) == 0
        logprobs = ["--confidence", "logprobs"]
        assert _eval(tmp_path, "mini.json", "--judge-model", MODEL, *url, *whole, *logprobs) == 0
        code = main(["calibrate", str(tmp_path / "rules.json"), str(tmp_path / "mini.json"),
                     "--human", str(labels), "--target-agreement", "0.7", "--alpha", "0.2",
                     "--guarantee", "verdict", "--fit-share", "0",
                     "--calibration", str(tmp_path / "cal.json")])  # fmt: skip
        assert code == 0
        cascade = ["--judge-model", f"cascade:rules,{MODEL}", "--calibration",
                   str(tmp_path / "cal.json"), *url]  # fmt: skip
        assert _eval(tmp_path, "no.json", *cascade) == 2, "a verdict needs whole submissions"
        assert _eval(tmp_path, "cascade.json", *cascade, *whole) == 0
    result = json.loads((tmp_path / "cascade.json").read_text())
    label = result["config"]["judge"]["label"]
    by_case: dict[tuple[str, str], dict[str, dict[str, object]]] = {}
    for j in result["judgments"] + result["member_judgments"]:
        by_case.setdefault((j["incident_id"], j["trial"]), {}).setdefault(j["judge"], {})[
            j["question_id"]
        ] = j["answer"]
    kinds = set()
    for case, answers in by_case.items():
        own = answers[label]
        if all(a is None for a in own.values()):
            kinds.add("abstained")
        else:
            source = [n for n in ("rules", f"llm:{MODEL}") if answers.get(n) == own]
            assert source, "a kept verdict keeps one judge's answers whole"
            stages = {
                j["stage"] for j in result["judgments"] if (j["incident_id"], j["trial"]) == case
            }
            assert stages == {source[-1]}, "every answer of a kept verdict names its judge"
            kinds.add(source[-1])
    summary = result["cascade"]
    assert summary["guarantee"] == "verdict" and summary["n_items"] == 32
    assert sum(s["answered"] for s in summary["stages"]) + summary["abstained"] == 32
    assert {"rules", f"llm:{MODEL}"} <= kinds, "each judge keeps some whole cases"


def _without_threshold(calibration: CalibrationFile, stage: int) -> CalibrationFile:
    """The calibration as if the labels had not supported a threshold for `stage`."""
    stages = list(calibration.stages)
    refused = SelectiveRefusal(
        target=calibration.target, alpha=calibration.stage_alpha, n=0, reason="made for a test"
    )
    stages[stage] = stages[stage].model_copy(update={"selection": refused})
    return calibration.model_copy(update={"stages": stages})


def test_a_stage_without_a_threshold_is_never_asked(world: World, calibrated: Path) -> None:
    calibration = load_calibration(calibrated / "cal.json")
    routed = _expected(world, calibration)
    cascade = ["--judge-model", f"cascade:rules,{MODEL}"]
    with world.provider() as provider:
        url = ["--api-base", provider.url]
        write_calibration(_without_threshold(calibration, 1), calibrated / "no-model.json")
        assert _eval(calibrated, "no-model.result.json", *cascade, *url,
                     "--calibration", str(calibrated / "no-model.json")) == 0  # fmt: skip
        assert provider.calls == [], "a stage that would never be kept is not asked"
        write_calibration(_without_threshold(calibration, 0), calibrated / "no-rules.json")
        assert _eval(calibrated, "no-rules.result.json", *cascade, *url,
                     "--calibration", str(calibrated / "no-rules.json")) == 0  # fmt: skip
        assert len(provider.calls) == 96, "every dimension call goes to the model"
    no_model = json.loads((calibrated / "no-model.result.json").read_text())["cascade"]
    assert [s["calls"] for s in no_model["stages"]] == [96, 0]
    assert no_model["abstained"] == sum(1 for s in routed.values() if s != 0)
    no_rules = json.loads((calibrated / "no-rules.result.json").read_text())["cascade"]
    assert [s["calls"] for s in no_rules["stages"]] == [0, 96]
    assert no_rules["stages"][0]["answered"] == 0
    assert no_rules["strongest_cost_usd"] == pytest.approx(no_rules["cost_usd"], rel=1e-6)


def test_the_python_api_runs_a_cascade_from_a_calibration_file(
    world: World, calibrated: Path
) -> None:
    from judge import CascadeJudge, EvalOptions, load_calibration, make_judge

    path = calibrated / "api.json"
    write_calibration(_without_threshold(load_calibration(calibrated / "cal.json"), 1), path)
    stage = make_judge(MODEL, api_base="http://127.0.0.1:9", logprobs=True)  # as calibrated
    cascade = CascadeJudge([RulesJudge(), stage], path)
    options = EvalOptions(granularity="dimension")  # as the calibration was made
    result = evaluate(load_specs(EXAMPLE_GT), world.subs, judge=cascade, options=options)
    routed = _expected(world, load_calibration(calibrated / "cal.json"))
    assert result.cascade is not None and result.cascade.n_items == 288
    assert [s.calls for s in result.cascade.stages] == [96, 0]
    assert result.cascade.answered == sum(1 for s in routed.values() if s == 0)
