"""The rules judge's confidence in [0, 1]: how likely its answer is to be right, from what it rests on.

The score is a sum of steps on the log-odds scale, from a common start, squashed by the
logistic function. Each step is one thing that predicts the rules judge's errors:

- the answer itself: its No answers agree with the labels far more often than its Yes (a Yes
  needs the diagnosis to say something; a No is most often "it does not say it", and agents
  mostly do not);
- a Yes that rests on vocabulary: a mechanism or fault type matched on words both texts share,
  and above all an impact matched on generic symptom words (errors, timeouts, latency), which
  almost any diagnosis states;
- a Yes with no component name found behind it, or a blame read from a clause that only
  mentions the component (`basis.Basis.claim`);
- clauses that pull the other way (`conflicting`), and a diagnosis that blames many components
  at once, where a name is easily matched in the wrong place;
- how the name was found and the blame stated, where the ground truth was read from, a
  diagnosis the size policy cut, and the rule's own High/Medium/Low.

The score orders answers by how likely they are to be right; it is not a calibrated
probability. `judge calibrate` maps it to one with labelled data. The steps were set from the
tune split of the real-agent validity set and the tune half of the hand-written set only (a
logistic fit rounded by hand): on the real-agent tune split Yes answers agreed with the
project's labels (labeller a) 0.91 of the time against 0.97 for No, impact Yes 0.76, answers
on conflicting clauses 0.60 against 0.96, and the answers that went wrong came from diagnoses
blaming 1.9 components on average against 1.2 for those that agreed.
"""

from __future__ import annotations

import math

from ...checklist.judgment import QuestionAnswer
from .basis import Basis, Ruling
from .case import Case

START = 2.0
STEPS: dict[str, dict[object, float]] = {
    "name": {"exact": 0.30, "alias": 0.25, "instance": 0.15, "container": 0.15, "none": 0.0},
    "claim": {"explicit": 0.15, "implied": 0.12, "inferred": 0.0, "mention": -0.15, "none": 0.0},
    "truth": {"structured": 0.0, "fault_spec": 0.0, "fields": -0.10, "prose": -0.25, "none": -0.45},
    "stated": {"High": 0.65, "Medium": 0.0, "Low": -0.15, None: 0.0},
    "conflicting": {True: -1.75, False: 0.0},
    "cut": {True: -0.30, False: 0.0},
}
YES = -0.8
# A Yes of a rule that matches words rather than names.
YES_BY_RULE = {"mechanism_matched": -0.4, "fault_type_consistent": -0.4, "symptoms_matched": -1.2}
YES_UNNAMED = -0.6
PER_OTHER_BLAMED, MOST_OTHERS = -0.3, 5


def score(
    basis: Basis,
    stated: str | None = None,
    answer: str | None = None,
    rule: str | None = None,
    blamed: int = 1,
) -> float:
    """The confidence for `answer` of `rule` resting on `basis`, which the rule stated as
    `stated`, on a diagnosis that blames `blamed` distinct components."""
    parts = {
        "name": basis.name,
        "claim": basis.claim,
        "truth": basis.truth,
        "stated": stated,
        "conflicting": basis.conflicting,
        "cut": basis.cut,
    }
    total = START + sum(STEPS[part].get(value, 0.0) for part, value in parts.items())
    if answer == "Yes":
        total += YES + YES_BY_RULE.get(rule or "", 0.0)
        if basis.name == "none":
            total += YES_UNNAMED
    total += PER_OTHER_BLAMED * min(MOST_OTHERS, max(0, blamed - 1))
    return round(1.0 / (1.0 + math.exp(-total)), 4)


def with_confidence(
    ruling: Ruling, rule: str | None = None, case: Case | None = None
) -> QuestionAnswer:
    """The ruling's answer with its confidence score (an unscored answer gets none)."""
    answer = ruling.answer
    if answer.answer is None:
        return answer
    blamed = len({m.component.name for m in case.diagnosis.blamed}) if case else 1
    confidence = score(ruling.basis, answer.confidence, answer.answer, rule, blamed)
    return answer.model_copy(update={"confidence_score": confidence})
