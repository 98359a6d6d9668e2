"""Which answers a cascade keeps at each stage, by the calibration file's maps and thresholds.

With the question guarantee each question is kept from the first judge whose calibrated
confidence in its answer reaches that judge's threshold. A judge is asked one dimension (or
submission) call at a time, as the run's prompts are made, so a call reaches the next judge
when any of its questions is escalated, and only the escalated questions take that judge's
answers: the others keep the answer that already carries the guarantee.

With the verdict guarantee a whole case goes on or stops: a judge's verdict is kept, with all
of its answers, when its calibrated verdict confidence reaches the threshold
(`judge.judges.selective.verdict`); such a run asks one call per submission, since a verdict needs
every dimension's answers at once.
"""

from __future__ import annotations

import numpy as np

from agreement.reliability import ConfidenceCalibration

from ...checklist.judgment import BELOW_GUARANTEE, QuestionAnswer
from ..confidence import stated_score
from .file import CalibrationFile
from .verdict import verdict_confidence


def calibrate_answers(
    maps: ConfidenceCalibration, judge: str, answers: list[QuestionAnswer]
) -> dict[str, float]:
    """P(agree with the labels) per scored answer that has a confidence, by `judge`'s maps."""
    out = {}
    for answer in answers:
        raw = stated_score(answer)
        if raw is not None:
            chosen, _ = maps.map_for(judge, answer.question_id, answer.answer)
            out[answer.question_id] = float(chosen.predict(np.array([raw]))[0])
    return out


class Router:
    """The decisions of one calibrated cascade (`CalibrationFile`), stage by stage."""

    def __init__(self, calibration: CalibrationFile):
        self.calibration = calibration
        self.names = [stage.judge.name for stage in calibration.stages]

    @property
    def guarantee(self) -> str:
        return self.calibration.guarantee

    def calibrated(self, stage: int, answers: list[QuestionAnswer]) -> dict[str, float]:
        """P(agree) per scored answer with a confidence, by the stage's maps."""
        return calibrate_answers(self.calibration.stages[stage].maps, self.names[stage], answers)

    def never_answers(self, stage: int) -> bool:
        """The calibration gave this stage no threshold: none of its answers would be kept,
        so a cascade does not ask it."""
        return self.calibration.stages[stage].threshold is None

    def kept_questions(
        self, stage: int, answers: list[QuestionAnswer], pending: list[str]
    ) -> dict[str, float]:
        """The pending questions this stage's answers settle, with their calibrated confidence."""
        threshold = self.calibration.stages[stage].threshold
        if threshold is None:
            return {}
        scores = self.calibrated(stage, answers)
        return {q: scores[q] for q in pending if q in scores and scores[q] >= threshold}

    def case_confidence(self, stage: int, answers: list[QuestionAnswer]) -> float | None:
        """The stage's calibrated confidence in its verdict on this case; None: no verdict."""
        stage_calibration = self.calibration.stages[stage]
        raw = verdict_confidence(
            {a.question_id: a.answer for a in answers},
            self.calibrated(stage, answers),
            self.calibration.rubric,
        )
        if raw is None or stage_calibration.verdict_map is None:
            return raw
        return float(stage_calibration.verdict_map.predict(np.array([raw]))[0])

    def keeps_case(self, stage: int, answers: list[QuestionAnswer]) -> tuple[bool, float | None]:
        """Whether this stage's verdict (and so all its answers) is kept, and its confidence."""
        threshold = self.calibration.stages[stage].threshold
        confidence = self.case_confidence(stage, answers)
        kept = threshold is not None and confidence is not None and confidence >= threshold
        return kept, confidence

    def abstain_reason(self, confidences: list[float | None]) -> str:
        """Why a question (or case) is left unscored after the last stage."""
        parts = []
        for name, stage, confidence in zip(
            self.names, self.calibration.stages, confidences, strict=False
        ):
            threshold = stage.threshold
            if threshold is None:
                parts.append(f"{name} not asked (no threshold)")
                continue
            shown = "no answer" if confidence is None else f"{confidence:.3f}"
            parts.append(f"{name} {shown} < {threshold:.3f}")
        what = "verdict" if self.guarantee == "verdict" else "answer"
        return (
            f"{BELOW_GUARANTEE}: no judge's calibrated confidence in its {what} reached its "
            f"threshold for agreement >= {self.calibration.target:g} at alpha "
            f"{self.calibration.alpha:g} ({'; '.join(parts)})"
        )
