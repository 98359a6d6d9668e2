"""What a run asks, made as its submissions arrive: each is matched to its spec and becomes its
units (`judge.run.units`) at once, so that the run's workers start on the first submissions
while later ones are still being read (`ground_truth.iter_submissions`).

Submissions given as a list are taken in the result's order (by incident, then trial), as a
whole run always was; any other iterable in the order it yields them, and the run puts its
units in the result's order at the end (`Run.reorder`). The matching (pairs, missing specs,
orphans) and the shard's record are whole once the units are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ground_truth.matching import Matcher, Matching, submission_order, trial_order
from ground_truth.models import IncidentSpec, Submission

from ..checklist.prompts import PromptRenderer
from ..checklist.rubric import Rubric, whole_submission
from .granularity import Granularity
from .shard import Shard, shard_record
from .units import Done, Unit


class Intake:
    """One run's submissions becoming its units (`units()`), and the matching they made."""

    def __init__(
        self,
        specs: list[IncidentSpec],
        submissions: Iterable[Submission],
        rubric: Rubric,
        renderer: PromptRenderer,
        granularity: Granularity,
        shard: Shard | None = None,
        paired: Callable[[Submission], bool] | None = None,
    ):
        renderer.check_granularity(granularity)
        self.dimensions = rubric.dimensions
        if granularity == "submission":
            self.dimensions = [whole_submission(rubric.dimensions)]
        self.renderer = renderer
        self.shard = shard
        self.streamed = not isinstance(submissions, list | tuple)
        self._submissions = (
            submissions if self.streamed else sorted(submissions, key=submission_order)
        )
        self._matcher = Matcher(specs, keep=paired)
        self._keys: list[tuple[str, str, str]] = []
        self._done = False

    def units(self) -> Iterator[Unit]:
        """Each matched submission's units (those of the shard), as the submissions come."""
        for sub in self._submissions:
            spec = self._matcher.add(sub)
            if spec is None:
                continue
            for dimension in self.dimensions:
                unit = Unit(spec, sub, dimension, self.renderer)
                if self.shard is not None:
                    key = unit.key()
                    self._keys.append(key)
                    if not self.shard.holds(*key):
                        continue
                yield unit
        self._done = True

    @staticmethod
    def order(unit: Unit | Done) -> tuple[str, int, str]:
        """A unit's place in the result (its dimensions keep their order: the sort is stable)."""
        incident_id, trial, _ = unit.key()
        return (incident_id, *trial_order(trial))

    def matching(self) -> Matching:
        """The whole matching, but for `pairs`: only those whose submission `paired` says yes
        to (all without it). A run's sections read few submissions (those with a trajectory or
        entities); holding all of them, each with its diagnosis, until the run ends was most of
        a large run's memory."""
        assert self._done, "the matching is whole once every unit was taken"
        return self._matcher.matching()

    def shard_record(self) -> dict[str, Any] | None:
        """What the result records of its shard (`judge.run.shard.shard_record`)."""
        return None if self.shard is None else shard_record(self.shard, self._keys)
