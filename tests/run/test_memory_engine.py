"""A run does not hold its verdicts and their judgments at once, and keeps judgments compact."""

from __future__ import annotations

import pytest
from helpers import EXAMPLE

from ground_truth import load_specs, load_submissions
from judge import DimensionVerdict, evaluate
from judge.run import loop
from judge.run.cache import LeafCall
from judge.run.units import Done, Unit


def _run_example():
    specs = load_specs(EXAMPLE / "ground_truth")
    return evaluate(specs, load_submissions(EXAMPLE / "outputs"))


def test_the_run_keeps_answers_not_units_or_verdicts(monkeypatch: pytest.MonkeyPatch) -> None:
    take = loop.Run.take_answers
    held: list[int] = []
    kept: list[object] = []

    def watched(self):
        kept.extend([*self.units, *(n for numbers in self.calls.values() for n in numbers)])
        for done in take(self):
            held.append(sum(u is not None for u in self.units))
            yield done

    monkeypatch.setattr(loop.Run, "take_answers", watched)
    result = _run_example()
    units = len(result.calls)
    assert held == [units - 1 - i for i in range(units)]  # each let go of when handed over
    assert not any(isinstance(x, DimensionVerdict | LeafCall | Unit) for x in kept)
    assert all(isinstance(x, Done) for x in kept[:units])  # no submission held once answered
    assert len(kept) == 2 * units


def test_result_models_share_their_fields_sets() -> None:
    result = _run_example()
    for items in (result.judgments, result.calls, result.cases):
        assert len({id(x.__pydantic_fields_set__) for x in items}) == 1
