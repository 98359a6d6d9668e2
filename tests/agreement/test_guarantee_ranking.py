"""Confidence that ranks (issue 39): the AUROC of a judge's confidence for "this answer agrees
with its label", with an interval that resamples incidents, beside every calibration; and a
threshold that leaves answers out is refused when the confidence does not rank them better
than chance on the calibration items."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import EXAMPLE, EXAMPLE_GT, EXAMPLE_OUTPUTS
from sklearn.metrics import roc_auc_score

from agreement import (
    ConfidenceCalibration,
    SelectiveGuarantee,
    SelectiveRefusal,
    auroc,
    calibrate_cascade,
    fit_confidence_calibration,
    rank_confidence,
    select_threshold,
)
from judge.cli import main
from judge.report.calibration_tables import KIND_NAMES


def test_auroc_is_sklearns_with_ties_counted_half() -> None:
    rng = np.random.default_rng(0)
    x = rng.random(500).round(1)  # many ties
    y = rng.random(500) < 0.3 + 0.5 * x
    assert auroc(x, y) == pytest.approx(roc_auc_score(y, x))
    assert auroc([0.2, 0.9], [False, True]) == 1.0
    assert auroc([0.5, 0.5], [False, True]) == 0.5
    assert auroc([0.1, 0.9], [True, True]) is None


def test_weights_count_an_answer_that_many_times() -> None:
    x, y = [0.1, 0.5, 0.9], [False, True, False]
    assert auroc(x, y, [1, 1, 2]) == pytest.approx(auroc([0.1, 0.5, 0.9, 0.9], [0, 1, 0, 0]))


def test_a_coin_does_not_rank_and_an_informative_confidence_does() -> None:
    rng = np.random.default_rng(1)
    x = rng.random(600)
    clusters = [f"inc-{k // 3}" for k in range(600)]
    coin = rank_confidence(x, rng.random(600) < 0.8, clusters)
    assert not coin.ranks and coin.reason and "not above 0.5" in coin.reason
    good = rank_confidence(x, rng.random(600) < 0.4 + 0.6 * x, clusters)
    assert good.ranks and good.lower_bound is not None and good.lower_bound > 0.5
    assert good.ci_low is not None and good.ci_low < good.auroc < good.ci_high  # type: ignore[operator]


def test_with_no_wrong_answer_nothing_is_shown_to_rank() -> None:
    ranking = rank_confidence([0.2, 0.5, 0.9], [True, True, True])
    assert ranking.auroc is None and not ranking.ranks
    assert ranking.reason == "no answer disagreed with its label: the AUROC is undefined"


def test_a_selection_on_a_coin_is_refused() -> None:
    """Agreement 0.88 whatever the confidence: the fixed sequence happens to clear 0.85 above
    0.84 (21% of the answers), a selection that would rest on chance."""
    rng = np.random.default_rng(0)
    x, y = rng.random(300).round(2), rng.random(300) < 0.88
    alone = select_threshold(x, y, 0.85, 0.1)
    assert isinstance(alone, SelectiveGuarantee) and alone.coverage < 1
    plan = calibrate_cascade([x], [y], 0.85, 0.1, clusters=[f"i{k // 3}" for k in range(300)])
    stage = plan.stages[0]
    assert isinstance(stage.selection, SelectiveRefusal) and stage.threshold is None
    assert "does not rank" in stage.selection.reason
    assert stage.ranking is not None and not stage.ranking.ranks and stage.selects


def test_keeping_every_answer_needs_no_ranking() -> None:
    """A threshold at or below every answer selects nothing: its guarantee is the judge's
    agreement, which needs no ranking, and it says so."""
    rng = np.random.default_rng(0)
    x, y = rng.random(300).round(2), rng.random(300) < 0.97
    plan = calibrate_cascade([x], [y], 0.8, 0.1, clusters=[f"i{k // 3}" for k in range(300)])
    stage = plan.stages[0]
    assert isinstance(stage.selection, SelectiveGuarantee) and stage.selection.coverage == 1.0
    assert stage.selects is False


def test_an_unanswered_item_is_left_out_of_the_ranking() -> None:
    """An item a judge could not answer (confidence -1, never agreeing) would make any
    confidence look as if it ranked."""
    x = [-1.0] * 50 + [0.5] * 150
    y = [False] * 50 + [True] * 120 + [False] * 30
    answered = [[c >= 0 for c in x]]
    plan = calibrate_cascade([x], [y], 0.6, 0.1, clusters=list(range(200)), answered=answered)
    ranking = plan.stages[0].ranking
    assert ranking is not None and ranking.n == 150 and ranking.auroc == 0.5 and not ranking.ranks


def test_calibrate_prints_auroc_beside_ece_and_in_the_thresholds(tmp_path: Path, capsys) -> None:
    result = tmp_path / "rules.json"
    assert main(["eval", "--ground-truth", str(EXAMPLE_GT), "--outputs",
                 str(EXAMPLE_OUTPUTS), "--result-file", str(result), "--no-progress"]) == 0  # fmt: skip
    capsys.readouterr()
    cal, page = tmp_path / "cal.json", tmp_path / "cal.html"
    assert main(["calibrate", str(result), "--human", str(EXAMPLE / "labels.csv"),
                 "--target-agreement", "0.8", "--alpha", "0.2", "--fit-share", "0",
                 "--bootstrap", "50", "--calibration", str(cal), "--html", str(page)]) == 0  # fmt: skip
    html = page.read_text(encoding="utf-8")
    assert "AUROC raw" in html and "keeps every answer it gives" in html
    printed = " ".join(capsys.readouterr().out.split())
    assert "AUROC raw" in printed and "ECE raw" in printed
    assert "keeps every answer it gives" in printed
    from judge.judges.selective.file import load_calibration

    stage = load_calibration(cal).stages[0]
    assert stage.ranking is not None and stage.ranking.auroc is not None and stage.selects is False


# --- maps by answer: a Yes and a No at the same confidence are not equally often right ------


def _yes_errs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A judge whose Yes answers agree 65% of the time and its No answers 97%, whatever its
    confidence says (the rules judge's shape on real agents' text: credit from shared words)."""
    answers = np.where(rng.random(n) < 0.4, "Yes", "No")
    confidence = rng.random(n)
    agreed = rng.random(n) < np.where(answers == "Yes", 0.65, 0.97)
    return confidence, agreed, answers


def test_maps_by_answer_rank_what_the_answer_predicts() -> None:
    rng = np.random.default_rng(3)
    fit_on, held_out = _yes_errs(rng, 600), _yes_errs(rng, 600)
    judges, questions = ["rules"] * 600, ["Q1"] * 600
    plain = fit_confidence_calibration(*fit_on[:2], judges, questions)
    by_answer = fit_confidence_calibration(*fit_on[:2], judges, questions, answers=fit_on[2])
    x, y, values = held_out
    assert rank_confidence(x, y).auroc < 0.6
    assert rank_confidence(plain.predict(x, judges, questions), y).auroc < 0.6
    ranked = rank_confidence(by_answer.predict(x, judges, questions, values), y, seed=0)
    assert ranked.auroc > 0.7 and ranked.ci_low > 0.5


def test_an_answer_takes_the_narrowest_map_there_is() -> None:
    rng = np.random.default_rng(4)
    x, y, values = _yes_errs(rng, 200)
    questions = np.where(np.arange(200) < 175, "Q1", "Q2")  # Q2: 25 answers
    maps = fit_confidence_calibration(
        x, y, ["rules"] * 200, list(questions), answers=values, min_count=30
    )
    n_q2_yes = int(((questions == "Q2") & (values == "Yes")).sum())
    assert n_q2_yes < 30
    assert maps.map_for("rules", "Q1", "Yes")[1] == "question-answer"
    assert maps.map_for("rules", "Q2", "Yes")[1] == "answer"
    assert maps.map_for("rules", "Q1")[1] == "question"
    assert maps.map_for("rules", "Q2")[1] == "judge"
    assert maps.map_for("other", "Q1", "Yes")[1] == "pooled"


def test_maps_written_before_the_answer_maps_still_read(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    x, y, _ = _yes_errs(rng, 100)
    old = fit_confidence_calibration(x, y, ["rules"] * 100, ["Q1"] * 100).model_dump()
    del old["answers"]
    for entry in old["questions"]:
        del entry["answer"]
    read = ConfidenceCalibration.model_validate(old)
    assert read.map_for("rules", "Q1", "Yes")[1] == "question"


def test_calibrate_records_the_kind_of_maps_it_chose_and_why(tmp_path: Path, capsys) -> None:
    result = tmp_path / "rules.json"
    assert main(["eval", "--ground-truth", str(EXAMPLE_GT), "--outputs",
                 str(EXAMPLE_OUTPUTS), "--result-file", str(result), "--no-progress"]) == 0  # fmt: skip
    capsys.readouterr()
    cal = tmp_path / "cal.json"
    assert main(["calibrate", str(result), "--human", str(EXAMPLE / "labels.csv"),
                 "--target-agreement", "0.8", "--alpha", "0.2", "--bootstrap", "50",
                 "--calibration", str(cal)]) == 0  # fmt: skip
    from judge.judges.selective.file import load_calibration

    choice = load_calibration(cal).stages[0].maps.choice
    assert choice is not None and set(choice.auroc) == {"judge", "question", "question-answer"}
    printed = " ".join(capsys.readouterr().out.split())
    assert f"rules: {KIND_NAMES[choice.kind]}, chosen by" in printed
    assert "held-out incidents" in printed
