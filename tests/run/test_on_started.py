"""`Control.on_started`: called once, when the first call asked of a judge has ended (what
`judge eval` uses to import its summary's modules while replies are awaited)."""

from __future__ import annotations

from pathlib import Path

from helpers.fake_runs import EXAMPLE_SPECS, llm_judge, submissions

from judge import EvalOptions, evaluate
from judge.run.options import Control, Storage


def test_on_started_is_called_once_after_the_first_call(fake_provider) -> None:
    seen: list[int] = []
    options = EvalOptions(control=Control(on_started=lambda: seen.append(len(fake_provider.calls))))
    result = evaluate(
        EXAMPLE_SPECS, submissions(6), judge=llm_judge(fake_provider), options=options
    )
    assert result.complete and len(seen) == 1 and seen[0] >= 1


def test_a_run_the_store_answers_in_full_never_calls_it(fake_provider, tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    judge = llm_judge(fake_provider)
    evaluate(
        EXAMPLE_SPECS, submissions(3), judge=judge, options=EvalOptions(storage=Storage(store))
    )
    seen: list[str] = []
    options = EvalOptions(
        control=Control(on_started=lambda: seen.append("called")), storage=Storage(store)
    )
    again = evaluate(EXAMPLE_SPECS, submissions(3), judge=llm_judge(fake_provider), options=options)
    assert again.usage.cache_hits > 0 and again.usage.requests == 0 and seen == []
