"""`benchmarks/confidence_rank.py`, which chose the rules judge's error signals: its held-out
fits never see the family they score, its per-family AUROC weighs each family by its wrong
answers, and the signals it calls kept are the ones the judge's confidence weighs."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import BENCHMARKS, load_script

from judge.judges.rules import confidence as C
from judge.judges.rules.basis import Basis

bench = load_script(BENCHMARKS / "confidence_rank.py", "confidence_rank_bench")


def _answers(family: str, n: int, rng: np.random.Generator, flip: bool = False) -> list:
    """Answers whose signal `s` predicts a wrong answer (the reverse when `flip`)."""
    out = []
    for i in range(n):
        s = float(rng.random() < 0.5)
        wrong = rng.random() < (0.6 if (s == 1.0) != flip else 0.05)
        out.append(
            bench.Answer(family, family, f"{family}-{i // 3}", "Q", "Yes", not wrong, 0.5, {"s": s})
        )
    return out


def test_a_family_is_scored_by_a_fit_on_the_others_only() -> None:
    rng = np.random.default_rng(0)
    points = _answers("a", 300, rng) + _answers("b", 300, rng) + _answers("c", 300, rng, flip=True)
    scores = bench.held_out(points, ["s"], 1.0)
    from sklearn.metrics import roc_auc_score

    flipped = [i for i, p in enumerate(points) if p.family == "c"]
    y = [points[i].agreed for i in flipped]
    assert roc_auc_score(y, scores[flipped]) < 0.3  # the others' fit, which c contradicts
    assert bench.per_family_auroc(points, scores) < bench.per_family_auroc(
        [p for p in points if p.family != "c"], scores[:600]
    )


def test_a_family_with_no_wrong_answer_adds_nothing() -> None:
    rng = np.random.default_rng(1)
    points = _answers("a", 200, rng)
    perfect = [
        bench.Answer("z", "z", f"z{i}", "Q", "No", True, 0.5, {"s": float(i % 2)})
        for i in range(50)
    ]
    scores = np.array([-p.signals["s"] for p in points + perfect])
    assert bench.per_family_auroc(points + perfect, scores) == pytest.approx(
        bench.per_family_auroc(points, scores[:200])
    )


def test_the_kept_signals_are_the_judges() -> None:
    names = bench.signal_sets(sorted({**C.signals(Basis(), "Yes", None), "x_other": 0.0}))
    assert sorted(names["kept (confidence.py)"]) == sorted(C.WEIGHTS)
    assert set(bench.EARLIER) - set(C.WEIGHTS) <= {n for n in bench.EARLIER if n.startswith("x_")}
