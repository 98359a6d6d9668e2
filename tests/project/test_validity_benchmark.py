"""`benchmarks/validity.py`: the numbers it prints on a tiny set, and the committed set's soundness."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml
from helpers import REPO, corpus, write_label_sheet
from helpers.validity import QUESTIONS, validity
from sklearn.metrics import cohen_kappa_score

from ground_truth import IncidentSpec, Submission, load_specs
from judge import evaluate

WEIGHTS = {"D1": 0.33, "D2": 0.33, "D3": 0.34}
IMAGE = (
    "[fault_spec] component=deployment/product-catalog; namespace=astronomy-shop || The "
    "product-catalog deployment is configured to pull a non-existent image tag (app-image:latest)."
)
PORT = (
    "[fault_spec] component=deployment/checkout; namespace=astronomy-shop || The "
    "PRODUCT_CATALOG_ADDR environment variable points to the wrong backend port (8082 instead of "
    "8080), so checkout cannot reach product-catalog."
)
SCENARIO = "tests/fixtures/formats/itbench/scenarios/scenario_2"
TINY = [
    {
        "case": "t-1",
        "incident_id": "incorrect_image",
        "ground_truth": IMAGE,
        "kind": "correct",
        "diagnosis": "deployment/product-catalog pulls app-image:latest, a tag that does not "
        "exist: ImagePullBackOff.",
    },
    {
        "case": "t-2",
        "incident_id": "incorrect_port_assignment",
        "ground_truth": PORT,
        "kind": "no_fault",
        "diagnosis": "Everything looks healthy. No faulty component found.",
    },
    {
        "case": "t-3",
        "incident_id": "scenario_2",
        "spec_path": SCENARIO,
        "kind": "correct",
        "diagnosis": "The cartFailure flag in the flagd-config ConfigMap was turned on, so cart's "
        "EmptyCart fails and frontend errors follow.",
    },
]
FLIPS = {("t-1", "D2-Q2"), ("t-2", "D1-Q1"), ("t-3", "D3-Q1")}
HAND = ["--set", "handwritten"]


def _write_root(root: Path, cases: list[dict], split: dict | None = None) -> Path:
    (root / "cases").mkdir(parents=True)
    (root / "labels").mkdir()
    (root / "cases" / "tune.yaml").write_text(yaml.safe_dump(cases, sort_keys=False))
    ids = sorted({c["incident_id"] for c in cases if "ground_truth" in c})
    (root / "split.json").write_text(json.dumps(split or {"tune": ids, "test": []}))
    return root


def _judge_answers() -> tuple[dict[tuple[str, str, str], str | None], dict[str, float | None]]:
    """The rules judge's answers on TINY, computed here independently of the script."""
    specs = [IncidentSpec(id=c["incident_id"], ground_truth=c["ground_truth"]) for c in TINY[:2]]
    itbench = load_specs(REPO / SCENARIO, format="itbench")[0]
    specs.append(itbench.model_copy(update={"id": "scenario_2"}))
    subs = [
        Submission(incident_id=c["incident_id"], trial=c["case"], diagnosis=c["diagnosis"])
        for c in TINY
    ]
    result = evaluate(specs, subs)
    answers = {(j.incident_id, j.trial, j.question_id): j.answer for j in result.judgments}
    return answers, {c.trial: c.composite for c in result.cases}


def _composite(labels: dict[tuple[str, str, str], str], trial: str) -> float:
    total = 0.0
    for dim, weight in WEIGHTS.items():
        mine = [a for (_, t, q), a in labels.items() if t == trial and q.startswith(dim)]
        total += weight * mine.count("Yes") / 3
    return total


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_main_prints_and_writes_the_numbers(tmp_path):
    root = _write_root(tmp_path / "v", TINY)
    judged, judge_composites = _judge_answers()
    # Labeller a agrees with the judge wherever it answered; b differs from a on three labels.
    a = {key: answer or "Yes" for key, answer in judged.items()}
    b = {
        key: ("No" if v == "Yes" else "Yes") if (key[1], key[2]) in FLIPS else v
        for key, v in a.items()
    }
    write_label_sheet(root / "labels" / "tune.a.csv", a, "a")
    write_label_sheet(root / "labels" / "tune.b.csv", b, "b")
    scored = [k for k, v in judged.items() if v is not None]
    assert {judged[k] for k in scored} == {"Yes", "No"}, "the tiny set must give both answers"

    out = io.StringIO()
    code = validity.main(
        [
            "--set",
            "handwritten",
            "--half",
            "tune",
            "--root",
            str(root),
            "--json",
            str(tmp_path / "r.json"),
            "--bootstrap",
            "50",
        ],
        out=out,
    )
    assert code == 0
    report = json.loads((tmp_path / "r.json").read_text())["handwritten"]
    text = out.getvalue()

    assert report["cases"] == 3 and report["incidents"] == 3
    assert report["labellers"] == ["a", "b"]
    unscored = len(judged) - len(scored)
    assert report["unscored"] == unscored and report["questions_asked"] == 27
    vs_a = report["vs_labellers"][0]
    assert vs_a["reference"] == "a"
    assert vs_a["pooled"]["n"] == len(scored)
    assert vs_a["pooled"]["kappa"]["value"] == pytest.approx(1.0)
    mae = [abs(judge_composites[t] - _composite(a, t)) for t in ("t-1", "t-2", "t-3")]
    assert vs_a["composite_mae"]["value"] == pytest.approx(sum(mae) / 3)
    verdicts_a = {t: _composite(a, t) >= 0.7 for t in ("t-1", "t-2", "t-3")}
    judge_pass = {t: judge_composites[t] >= 0.7 for t in ("t-1", "t-2", "t-3")}
    accuracy = sum(verdicts_a[t] == judge_pass[t] for t in verdicts_a) / 3
    assert vs_a["verdict_accuracy"]["value"] == pytest.approx(accuracy)

    ceiling = report["human_ceiling"][0]
    keys = sorted(a)
    expected = cohen_kappa_score([a[k] for k in keys], [b[k] for k in keys], labels=["No", "Yes"])
    assert ceiling["pooled"]["n"] == 27
    assert ceiling["pooled"]["kappa"]["value"] == pytest.approx(expected)
    d1 = [k for k in keys if k[2].startswith("D1")]
    expected_d1 = cohen_kappa_score([a[k] for k in d1], [b[k] for k in d1], labels=["No", "Yes"])
    d1_row = next(d for d in ceiling["dimensions"] if d["unit"] == "D1")
    assert d1_row["kappa"]["value"] == pytest.approx(expected_d1)

    pooled_line = next(line for line in text.splitlines() if "Human ceiling" in line)
    assert "a vs labeller b (3 cases" in pooled_line
    rows = [line for line in text.splitlines() if line.strip().startswith("all questions")]
    assert rows[0].split()[2:4] == [str(len(scored)), "3"] and "1.00" in rows[0]
    assert len(rows) == 3 and f"{expected:.2f}" in rows[2]  # judge-a, judge-b, a-b
    assert f"composite MAE {sum(mae) / 3:.3f}" in text
    assert f"Unscored: {unscored} of 27 questions" in text


def test_labeller_verdict_uses_the_rubric_weights_and_threshold():
    from judge import load_rubric

    rubric = load_rubric("sregym-v3")
    answers = dict(zip(QUESTIONS, [*["Yes"] * 5, *["No"] * 4], strict=True))
    assert validity.labelled_composite(answers, rubric) == pytest.approx(0.33 + 0.22)
    answers = dict(zip(QUESTIONS, [*["Yes"] * 7, "No", "No"], strict=True))
    assert validity.labelled_composite(answers, rubric) == pytest.approx(0.66 + 0.34 / 3)
    answers["D3-Q3"] = None
    assert validity.labelled_composite(answers, rubric) is None


def test_a_missing_half_is_skipped_with_a_message(tmp_path, capsys):
    root = _write_root(tmp_path / "v", TINY[:1])
    assert (
        validity.main(
            [*HAND, "--half", "all", "--root", str(root), "--bootstrap", "0"], out=io.StringIO()
        )
        == 0
    )
    assert "test.yaml does not exist; skipping the test half" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda cases: cases[0].pop("diagnosis"), "[0].diagnosis"),
        (lambda cases: cases[1].update(kind="nearly_right"), "[1].kind"),
        (lambda cases: cases[1].update(case="t-1"), "[1].case"),
        (lambda cases: cases[0].update(spec_path=SCENARIO), "[0]"),
    ],
)
def test_a_bad_case_file_exits_2_naming_file_and_field(tmp_path, capsys, edit, field):
    cases = [dict(c) for c in TINY]
    edit(cases)
    root = _write_root(tmp_path / "v", cases)
    assert validity.main([*HAND, "--half", "tune", "--root", str(root)], out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert str(root / "cases" / "tune.yaml") in err and field in err


def test_the_committed_case_files_are_sound():
    assert validity.check_case_files() == []
    tune = validity.load_cases(validity.VALIDITY / "cases" / "tune.yaml")
    assert len(tune) >= 56


def test_check_case_files_reports_every_kind_of_problem(tmp_path):
    root = _write_root(tmp_path / "v", TINY, split={"tune": ["incorrect_image"], "test": []})
    labels = {(c["incident_id"], c["case"], q): "Yes" for c in TINY for q in QUESTIONS}
    del labels[("incorrect_image", "t-1", "D2-Q2")]
    labels[("ghost", "t-9", "D1-Q1")] = "No"
    write_label_sheet(root / "labels" / "tune.a.csv", labels, "a")
    (root / "cases" / "test.yaml").write_text(yaml.safe_dump([{**TINY[0], "case": "x-1"}]))
    problems = "\n".join(validity.check_case_files(root))
    assert "incorrect_port_assignment is not in split.json's 'tune' list" in problems
    assert "t-1 (incorrect_image): no label for D2-Q2" in problems
    assert "t-9 (ghost): labels a case that is not in tune.yaml" in problems
    assert "root cause incorrect_image is in both test and tune" in problems
    assert "no label sheet test.<labeller>.csv" in problems


@pytest.mark.corpus
def test_committed_sregym_ground_truths_are_the_registry_text():
    registry = yaml.safe_load(corpus("sregym-registry", "root_causes_all_123.yaml").read_text())
    texts = {p["problem_id"]: p["root_cause_text"] for p in registry["problems"]}
    for path in sorted((validity.VALIDITY / "cases").glob("*.yaml")):
        for case in validity.load_cases(path):
            if case.ground_truth is not None:
                assert case.ground_truth == texts[case.incident_id], (path.name, case.case)


class _D3Fails:
    """The rules judge, except that every D3 call fails at the provider (unscored, never No)."""

    name = "flaky"

    def __init__(self):
        from judge import RulesJudge

        self.rules = RulesJudge()

    def describe(self):
        return {"name": self.name, "label": self.name}

    async def judge(self, task):
        from judge.checklist.judgment import unscored

        if task.dimension.id == "D3":
            return unscored(task.question_ids, "HTTP 500 from the provider", "server_error")
        return await self.rules.judge(task)


def test_provider_failures_are_reported_and_left_out_of_kappa(tmp_path, monkeypatch):
    root = _write_root(tmp_path / "v", TINY[:2])
    labels = {(c["incident_id"], c["case"], q): "Yes" for c in TINY[:2] for q in QUESTIONS}
    write_label_sheet(root / "labels" / "tune.a.csv", labels, "a")
    monkeypatch.setattr(validity, "make_judge", lambda *args: _D3Fails())
    out = io.StringIO()
    code = validity.main(
        [*HAND, "--half", "tune", "--root", str(root), "--json", str(tmp_path / "r.json")], out=out
    )
    assert code == 0
    report = json.loads((tmp_path / "r.json").read_text())["handwritten"]
    assert report["unscored"] == 6 and report["unscored_rate"] == pytest.approx(6 / 18)
    assert report["provider_errors"] == {"server_error": 2}
    assert report["vs_labellers"][0]["pooled"]["n"] == 12
    assert (
        "Unscored: 6 of 18 questions (33.3%); provider errors {'server_error': 2}" in out.getvalue()
    )


def test_dev_half_may_share_root_causes_with_tune_but_not_test(tmp_path):
    split = {"tune": ["incorrect_image"], "test": [], "dev": ["incorrect_image"]}
    root = _write_root(tmp_path / "v", TINY[:1], split=split)
    labels = {(c["incident_id"], c["case"], q): "Yes" for c in TINY[:1] for q in QUESTIONS}
    write_label_sheet(root / "labels" / "tune.a.csv", labels, "a")
    (root / "cases" / "dev.yaml").write_text(yaml.safe_dump([{**TINY[0], "case": "d-1"}]))
    dev_labels = {(k[0], "d-1", k[2]): v for k, v in labels.items()}
    write_label_sheet(root / "labels" / "dev.a.csv", dev_labels, "a")
    assert validity.check_case_files(root) == []
    split = {"tune": ["incorrect_image"], "test": ["incorrect_image"], "dev": ["incorrect_image"]}
    (root / "split.json").write_text(json.dumps(split))
    (root / "cases" / "test.yaml").write_text(yaml.safe_dump([{**TINY[0], "case": "x-1"}]))
    problems = "\n".join(validity.check_case_files(root))
    assert "root cause incorrect_image is in both dev and test" in problems
    assert "in both dev and tune" not in problems
    (root / "split.json").write_text(
        json.dumps({"tune": [], "test": [], "dev": ["incorrect_image"]})
    )
    assert "dev root cause incorrect_image is not in the 'tune' list" in "\n".join(
        validity.check_case_files(root)
    )


@pytest.mark.parametrize("granularity", ["dimension", "submission"])
def test_a_stored_real_model_run_is_measured_again_offline_by_replay(tmp_path, granularity):
    """`--store` keeps a model's answers; `--judge-model replay:STORE` measures them again
    with no provider, the same numbers (how a partial real-model run is compared)."""
    from judge.testing import FakeProvider, FakeProviderConfig

    root = _write_root(tmp_path / "v", TINY[:2])
    labels = {(c["incident_id"], c["case"], q): "Yes" for c in TINY[:2] for q in QUESTIONS}
    write_label_sheet(root / "labels" / "tune.a.csv", labels, "a")
    store = tmp_path / "s.sqlite"
    common = [*HAND, "--half", "tune", "--root", str(root), "--granularity", granularity]
    with FakeProvider(FakeProviderConfig()) as server:
        live = [*common, "--judge-model", "openai/fake-judge", "--api-base", server.url]
        args = [*live, "--store", str(store), "--json", str(tmp_path / "live.json")]
        assert validity.main(args, out=io.StringIO()) == 0
        asked = len(server.calls)
    replay = [*common, "--judge-model", f"replay:{store}", "--json", str(tmp_path / "r.json")]
    assert validity.main(replay, out=io.StringIO()) == 0
    assert asked == (2 if granularity == "submission" else 6)
    live_report, replayed = (
        json.loads((tmp_path / n).read_text())["handwritten"] for n in ("live.json", "r.json")
    )
    assert replayed["unscored"] == 0
    (live_numbers,), (replayed_numbers,) = live_report["vs_labellers"], replayed["vs_labellers"]
    assert (live_numbers.pop("rater"), replayed_numbers.pop("rater")) == (
        "openai/fake-judge",
        "replay",
    )
    assert replayed_numbers == live_numbers
