"""A run asks a judge to get ready (`prefetch()`: the llm judge imports litellm) only when it
has calls to make, never when the store answers all of them (issue 16)."""

from __future__ import annotations

from pathlib import Path

from helpers.lean import SMALL_SPECS, PromptReader, small_submissions

from judge import EvalOptions, RulesJudge, evaluate, make_judge
from judge.judges import PanelJudge
from judge.run.plan import Prefetching


class Preparing(PromptReader):
    def __init__(self, name: str = "reader") -> None:
        super().__init__(name)
        self.prefetched = 0

    def prefetch(self) -> None:
        self.prefetched += 1


def run(judge, store: Path | None, n: int = 3):
    options = EvalOptions(store=store, granularity="dimension")
    return evaluate(SMALL_SPECS, small_submissions(n), judge=judge, options=options)


def test_the_llm_judge_is_prefetching() -> None:
    assert isinstance(make_judge("openai/m"), Prefetching)


def test_a_judge_with_calls_to_make_is_prefetched_once_per_run(tmp_path: Path) -> None:
    judge = Preparing()
    run(judge, None)
    assert judge.prefetched == 1
    run(judge, tmp_path / "s.sqlite")
    assert judge.prefetched == 2


def test_a_rerun_from_the_store_prefetches_nothing(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    run(Preparing(), store)
    again = Preparing()
    result = run(again, store)
    assert again.prefetched == 0 and again.asked == [] and result.usage.cache_hits == 9

    more = Preparing()
    run(more, store, n=4)
    assert more.prefetched == 1 and len(more.asked) == 3


def test_only_the_panel_member_with_calls_to_make_is_prefetched(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    run(PanelJudge([RulesJudge(), Preparing("a")]), store)
    stored, fresh = Preparing("a"), Preparing("b")
    run(PanelJudge([RulesJudge(), stored, fresh]), store)
    assert stored.prefetched == 0 and fresh.prefetched == 1
