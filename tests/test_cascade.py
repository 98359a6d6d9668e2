"""`judge calibrate --target-agreement` (issue 23) end to end over real HTTP: from the rules
judge's and a fake model's runs and labels it writes a calibration file (maps, thresholds with
their bound, the label set, the rubric) with a schema and an HTML page, and refuses a target
the labels cannot support (exit 2, saying how many more labels it needs).

The labels are made so that the rules judge is right wherever its confidence is high and
often wrong below it, and the fake model right on most questions (confidence 0.95) and wrong
on a few (confidence 0.55); with `--fit-share 0` the thresholds apply to the raw confidences.
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest

from ground_truth import load_specs, load_submissions
from judge import evaluate
from judge.cli import main
from judge.judges.rules import RulesJudge
from judge.judges.selective.file import CalibrationFile, load_calibration
from judge.testing import FakeProvider, FakeProviderConfig
from judge.testing.answers import diagnosis_text, last_user_text

pytestmark = pytest.mark.slow  # real HTTP runs of the example, seconds each

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sregym-mini"
GT = EXAMPLE / "ground_truth"
OUTPUTS = EXAMPLE / "outputs"
MODEL = "openai/gpt-4o-mini"
RIGHT, WRONG = 0.95, 0.55


def _hash(*parts: str) -> int:
    return hashlib.sha256("\x1f".join(parts).encode()).digest()[0]


def _flip(answer: str) -> str:
    return "No" if answer == "Yes" else "Yes"


class World:
    """The example's cases, their labels and the fake model that knows them."""

    def __init__(self) -> None:
        specs = load_specs(GT)
        self.subs = load_submissions(OUTPUTS)
        rules = evaluate(specs, self.subs, judge=RulesJudge())
        self.rules = {(j.incident_id, j.trial, j.question_id): j for j in rules.judgments}
        self.labels = {}
        for key, j in self.rules.items():
            sure = (j.confidence_score or 0) >= 0.9
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


@pytest.fixture(autouse=True)
def _no_judge_env(monkeypatch) -> None:
    for var in ("JUDGE_MODEL", "JUDGE_BASE_URL", "JUDGE_API_KEY"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="module")
def world() -> World:
    return World()


def _eval(folder: Path, result: str, *extra: str) -> int:
    return main(["eval", "--ground-truth", str(GT), "--outputs", str(OUTPUTS), "--no-progress",
                 "--result-file", str(folder / result), *extra])  # fmt: skip


@pytest.fixture(scope="module")
def calibrated(world: World, tmp_path_factory) -> Path:
    """The rules judge's and the fake model's runs, and their calibration at 0.9 / 0.1."""
    folder = tmp_path_factory.mktemp("cascade")
    labels = world.write_labels(folder / "labels.csv")
    with world.provider() as provider:
        assert _eval(folder, "rules.json") == 0
        assert _eval(folder, "mini.json", "--judge-model", MODEL, "--api-base", provider.url) == 0
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
