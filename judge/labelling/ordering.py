"""Which cases a session shows, and in what order: filters, a stratified sample, the order.

Everything is deterministic given the seed, so a restarted server shows the same cases in the
same order, and the session record says exactly what was labelled and how it was chosen.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

from pydantic import BaseModel

from .cases import LabelCase
from .store import StoreContents


class Filters(BaseModel):
    """Which cases to show: only unlabelled, only where judges disagree, one incident or agent."""

    unlabelled: bool = False
    disagreements: bool = False
    incident: str | None = None
    agent: str | None = None


def labelled(case: LabelCase, contents: StoreContents) -> bool:
    """Every question of the case (the verdict included) has an answer, Unsure counting."""
    return all(
        (rec := contents.answers.get((case.incident_id, case.trial, q.id))) is not None
        and rec.answer is not None
        for q in case.questions
    )


def disagrees(case: LabelCase, contents: StoreContents) -> bool:
    """The judges split on some question (a panel's members, or `--compare` results), or this
    person answered apart from the judge."""
    if case.judges_split:
        return True
    for q in case.questions:
        rec = contents.answers.get((case.incident_id, case.trial, q.id))
        judge = case.judge.get(q.id)
        if rec and judge and rec.answer in ("Yes", "No") and judge.answer not in (None, rec.answer):
            return True
    return False


def apply_filters(
    cases: list[LabelCase], filters: Filters, contents: StoreContents
) -> list[LabelCase]:
    """The cases passing every filter, in their order."""
    kept = [
        c
        for c in cases
        if (filters.incident is None or c.incident_id == filters.incident)
        and (filters.agent is None or c.agent == filters.agent)
        and not (filters.unlabelled and labelled(c, contents))
        and not (filters.disagreements and not disagrees(c, contents))
    ]
    return kept


def order_cases(cases: list[LabelCase], order: str, seed: int) -> list[LabelCase]:
    """The cases as-is or shuffled with `seed`; ValueError for another `order` (`informative`
    is a draw, `judge.labelling.active`)."""
    if order == "as-is":
        return list(cases)
    if order == "random":
        shuffled = list(cases)
        random.Random(seed).shuffle(shuffled)
        return shuffled
    raise ValueError(f"unknown order {order!r}; expected as-is or random")


def stratified_sample(
    cases: list[LabelCase], n: int, seed: int
) -> tuple[list[LabelCase], dict[str, Any]]:
    """`n` cases spread evenly over (judge verdict, incident) strata, and how they were chosen.

    Strata are visited round-robin in a seeded order, each giving its next (seeded) case, so
    every verdict and incident is represented before any gives a second case. The returned
    cases keep their input order; the description goes into the session record.
    """
    rng = random.Random(seed)
    strata: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, case in enumerate(cases):
        strata[(case.verdict, case.incident_id)].append(index)
    keys = list(strata)
    queues = [rng.sample(strata[k], len(strata[k])) for k in keys]
    seeded = rng.sample(range(len(keys)), len(keys))
    # verdicts interleave: the k-th stratum of each verdict comes before the (k+1)-th of any,
    # so a small sample has passes and fails alike
    seen: dict[str, int] = defaultdict(int)
    rank: dict[int, int] = {}
    for i in seeded:
        rank[i] = seen[keys[i][0]]
        seen[keys[i][0]] += 1
    order = sorted(seeded, key=rank.__getitem__)
    chosen: list[int] = []
    while len(chosen) < min(n, len(cases)):
        for i in order:
            if queues[i] and len(chosen) < n:
                chosen.append(queues[i].pop())
    picked = [cases[i] for i in sorted(chosen)]
    return picked, {
        "n": len(picked),
        "requested": n,
        "seed": seed,
        "population": len(cases),
        "strata": "judge verdict x incident, round-robin",
        "by_verdict": _count(picked, lambda c: c.verdict),
        "population_by_verdict": _count(cases, lambda c: c.verdict),
        "cases": [c.key for c in picked],
    }


def _count(cases: list[LabelCase], key: Any) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for case in cases:
        counts[key(case)] += 1
    return dict(sorted(counts.items()))
