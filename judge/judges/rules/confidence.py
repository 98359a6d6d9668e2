"""The rules judge's confidence in [0, 1]: how likely its answer is to be right, from what predicts
its errors.

The score is a sum of steps on the log-odds scale, from a common start, squashed by the
logistic function. Each step is one signal that predicts the rules judge's errors on real
agents' text:

- clauses that pull the other way (`Basis.conflicting`): an answer read from one of two
  statements that disagree;
- each further component the diagnosis blames, where a name is easily matched in the wrong
  place and blame read from a mere mention;
- a Yes on the impact question, matched on generic symptom words (errors, timeouts, latency)
  that almost any diagnosis states;
- a Yes with no component name found behind it: credit from shared vocabulary;
- a hedged claim (`might`, `possibly`, `likely` ...): the diagnosis does not commit, and the
  labels and the rules read it differently;
- and, the other way, a short diagnosis (under 300 characters: a label row, one sentence) or
  one that blames nothing, where there is little to misread.

The signals were chosen, and their weights fitted, on the tune split of the real-agent
validity set and the tune half of the hand-written set only, with the project's labels
(labeller a): an L2-regularised logistic regression of "the answer agrees with the label",
each source family held out in turn, keeping the set whose held-out AUROC was best with fewer
signals preferred (`benchmarks/confidence_rank.py`, which also shows the sets tried). The
weights are that fit on all the tune data, rounded. The score orders answers by how likely
they are to be right; `judge calibrate` maps it to a probability with labelled data.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ...checklist.judgment import QuestionAnswer
from .basis import Basis, Ruling
from .case import Case

START = 3.29
WEIGHTS: dict[str, float] = {
    "conflicting": -1.44,
    "others_blamed": -0.20,
    "yes_impact": -0.66,
    "yes_unnamed": -0.75,
    "hedged": -0.48,
    "short": 0.98,
    "no_blame": 0.81,
}
MOST_OTHERS = 5
SHORT = 300
HEDGED = re.compile(
    r"\b(?:might|may|could|possibly|perhaps|likely|probably|suspect|unclear|not sure|unknown)\b"
)


@dataclass(frozen=True)
class Shape:
    """What of the whole diagnosis bears on every answer to it."""

    blamed: int = 1
    hedged: bool = False
    short: bool = False

    @classmethod
    def of(cls, case: Case) -> Shape:
        d = case.diagnosis
        return cls(
            blamed=len({m.component.name for m in d.blamed}),
            hedged=bool(HEDGED.search(d.claim_text)),
            short=len(d.text) < SHORT,
        )


def signals(
    basis: Basis, answer: str | None, rule: str | None, shape: Shape = Shape()
) -> dict[str, float]:
    """Each error signal's value for one answer (0 where it does not apply)."""
    yes = answer == "Yes"
    return {
        "conflicting": float(basis.conflicting),
        "others_blamed": float(min(MOST_OTHERS, max(0, shape.blamed - 1))),
        "yes_impact": float(yes and rule == "symptoms_matched"),
        "yes_unnamed": float(yes and basis.name == "none"),
        "hedged": float(shape.hedged),
        "short": float(shape.short),
        "no_blame": float(shape.blamed == 0),
    }


def score(
    basis: Basis, answer: str | None = None, rule: str | None = None, shape: Shape = Shape()
) -> float:
    """The confidence for `answer` of `rule` resting on `basis`, in a diagnosis of `shape`."""
    parts = signals(basis, answer, rule, shape)
    total = START + sum(WEIGHTS[name] * value for name, value in parts.items())
    return round(1.0 / (1.0 + math.exp(-total)), 4)


def with_confidence(
    ruling: Ruling, rule: str | None = None, case: Case | None = None, shape: Shape | None = None
) -> QuestionAnswer:
    """The ruling's answer with its confidence score (an unscored answer gets none); `shape`,
    when given, is `Shape.of(case)` worked out once for all the case's rulings."""
    answer = ruling.answer
    if answer.answer is None:
        return answer
    if shape is None:
        shape = Shape.of(case) if case else Shape()
    confidence = score(ruling.basis, answer.answer, rule, shape)
    return answer.model_copy(update={"confidence_score": confidence})
