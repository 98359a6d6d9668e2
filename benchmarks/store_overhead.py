"""Should the rules judge go through the store? Its answer time against a store's lookup and
write time, per (submission, dimension).

    python benchmarks/store_overhead.py [N_SUBMISSIONS]      # default 1000
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.synth import EXAMPLE, write_submissions  # noqa: E402


class CachedRules:
    """The rules judge made cacheable, to measure what caching it would cost."""

    def __init__(self) -> None:
        from judge.judges.rules import RulesJudge

        self.inner = RulesJudge()
        self.name = "rules"

    def describe(self) -> dict:
        return self.inner.describe()

    def cache_identity(self) -> dict:
        return {"model": None, "params": {"rules": self.inner.describe()["params"]}, "schema": ""}

    async def judge(self, task):
        return await self.inner.judge(task)


def main() -> None:
    from ground_truth import load_specs, load_submissions
    from ground_truth.matching import match_submissions
    from judge.checklist.prompts import PromptRenderer
    from judge.checklist.rubric import load_rubric
    from judge.judges.base import JudgeTask
    from judge.run.cache import RecordedJudge
    from judge.store import Store

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with tempfile.TemporaryDirectory() as tmp:
        specs = load_specs(EXAMPLE / "ground_truth")
        subs = load_submissions(write_submissions(n, Path(tmp)))
        renderer, rubric = PromptRenderer(), load_rubric()
        pairs = match_submissions(specs, subs).pairs
        tasks = [
            JudgeTask(spec, sub, dim, renderer.render(spec, sub, dim))
            for spec, sub in pairs
            for dim in rubric.dimensions
        ]
        judge = CachedRules()

        async def answer_all(j) -> float:
            start = time.process_time()
            for task in tasks:
                await j.judge(task)
            return (time.process_time() - start) / len(tasks)

        plain = asyncio.run(answer_all(judge))
        with Store(Path(tmp) / "s.sqlite") as store:
            first = asyncio.run(answer_all(RecordedJudge(judge, lambda call: None, store)))
            again = asyncio.run(answer_all(RecordedJudge(judge, lambda call: None, store)))
    print(f"{len(tasks)} (submission, dimension) units, CPU per unit:")
    print(f"  rules judge alone           {1000 * plain:6.3f} ms")
    print(f"  + store, every unit a miss  {1000 * first:6.3f} ms  ({first / plain:.2f}x)")
    print(f"  store hit instead of rules  {1000 * again:6.3f} ms  ({again / plain:.2f}x)")


if __name__ == "__main__":
    main()
