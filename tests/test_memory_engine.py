"""A run does not hold its verdicts and their judgments at once, and keeps judgments compact."""

from __future__ import annotations

from pathlib import Path

import pytest

from ground_truth import load_specs, load_submissions
from judge import engine
from judge.engine import evaluate

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sregym-mini"


def _run_example():
    specs = load_specs(EXAMPLE / "ground_truth")
    return evaluate(specs, load_submissions(EXAMPLE / "outputs"))


def test_each_verdict_is_let_go_when_handed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    take = engine._Run.take_verdicts
    held: list[int] = []

    def watched(self):
        for unit, verdict in take(self):
            held.append(sum(v is not None for v in self.verdicts))
            yield unit, verdict

    monkeypatch.setattr(engine._Run, "take_verdicts", watched)
    result = _run_example()
    units = len(result.calls)
    assert held == [units - 1 - i for i in range(units)]


def test_result_models_share_their_fields_sets() -> None:
    result = _run_example()
    for items in (result.judgments, result.calls, result.cases):
        assert len({id(x.__pydantic_fields_set__) for x in items}) == 1
