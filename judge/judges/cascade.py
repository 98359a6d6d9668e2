"""The `cascade` judge: the cheapest judge first, a stronger one only where it is not sure.

    judge eval --judge-model cascade:rules,openai/gpt-4o-mini,openai/gpt-4o \\
        --calibration calibration.json ...

After Jung, Brahman and Choi, "Trust or Escalate" (ICLR 2025). Each stage's answers are kept
where its calibrated confidence reaches the threshold `judge calibrate --target-agreement`
chose for it (`judge.judges.selective.route`); a stage the calibration gave no threshold (its
labels could not support the target) would never be kept, so it is not asked. What no stage
settles is left unscored with the reason `below_guarantee`, never counted as No. On what is
answered, agreement with the labels is at least the calibration's target with probability at
least 1 - alpha, for cases drawn like the labelled ones; after the run, the shift check
(`judge.judges.selective.shift`) compares the run with the calibration set, and the result
says the guarantee is not established when they differ. Each stage is an ordinary judge, so the
run stores its calls under its own name as it would alone (a rerun is free), and its own
answers are kept in the result's `member_judgments`; the result's `judgments` hold the
cascade's, each naming the stage it came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ground_truth.errors import InputError

from ..checklist.judgment import DimensionVerdict, QuestionAnswer
from .base import Judge, JudgeTask, ask, check_judge
from .panel import total_usage

NOT_JUDGED = "not_judged"
"""The run's mark of a call it never made (`judge.run.cache.NOT_JUDGED`)."""


@dataclass
class CascadeTally:
    """What the cascade did in a run: per item (question or case), the stage that answered it
    (None: no stage did), and per stage the calls it was asked."""

    answered: dict[tuple[str, str, str], int | None] = field(default_factory=dict)
    calls: list[int] = field(default_factory=list)


class CascadeJudge:
    """Stages asked in order, each kept where the calibration says it is sure enough."""

    def __init__(
        self,
        stages: list[Judge],
        calibration: Any = None,
        name: str | None = None,
        tally: CascadeTally | None = None,
        allow_shift: bool = False,
    ):
        if not stages:
            raise ValueError("a cascade needs at least one judge")
        for index, stage in enumerate(stages):
            check_judge(stage, f"cascade stage {index + 1}")
        names = [s.name for s in stages]
        if len(set(names)) != len(names):
            raise ValueError(f"cascade stages need distinct names, got {names}")
        self.stages = stages
        self.name = name or "cascade:" + ",".join(names)
        self.calibration = _calibration(calibration)
        self.tally = tally or CascadeTally(calls=[0] * len(stages))
        self.allow_shift = allow_shift
        """Keep the guarantee when the run differs from the calibration set (with a warning)."""
        self._router: Any = None

    def judges(self) -> list[Judge]:
        return list(self.stages)

    def with_judges(self, judges: list[Judge]) -> CascadeJudge:
        twin = CascadeJudge(judges, self.calibration, self.name, self.tally, self.allow_shift)
        twin._router = self._router
        return twin

    def describe(self) -> dict[str, Any]:
        calibration = self.calibration
        params: dict[str, Any] = {}
        if calibration is not None:
            params = {
                "guarantee": calibration.guarantee,
                "target": calibration.target,
                "alpha": calibration.alpha,
                "thresholds": calibration.thresholds,
                "label_set": calibration.labels.hash,
            }
        return {
            "name": "cascade",
            "model": None,
            "params": params,
            "members": [s.describe() | {"member": s.name} for s in self.stages],
        }

    def check(self, rubric: Any, granularity: str) -> None:
        """Refuse (InputError, exit 2) a calibration made for another rubric, other judges or
        another granularity; then the cascade is ready to route."""
        from .selective.identity import identity_of
        from .selective.route import Router
        from .selective.verdict import rubric_shape

        calibration = self.calibration
        if calibration is None:
            raise InputError(
                "--calibration",
                f"{self.name} needs a calibration file: make one with `judge calibrate "
                "RESULTS --human LABELS --target-agreement T --alpha A`",
            )
        where = "--calibration"
        if calibration.rubric_hash != rubric.hash:
            raise InputError(
                where,
                f"the calibration was made for rubric {calibration.rubric_hash}, this run "
                f"scores rubric {rubric.name} ({rubric.hash}); calibrate with this rubric",
            )
        shape = rubric_shape(rubric)
        if not shape.same_as(calibration.rubric):
            raise InputError(
                where,
                f"the calibration was made for the rubric's dimensions "
                f"{', '.join(calibration.rubric.dimensions)} (weights, threshold as recorded), "
                f"this run scores {', '.join(shape.dimensions)}; calibrate on results made with "
                "the same --dimensions",
            )
        if calibration.guarantee == "verdict" and granularity != "submission":
            raise InputError(
                "--granularity",
                "a verdict guarantee decides whole cases, so each judge must see a whole "
                "submission at once: add --granularity submission",
            )
        if len(calibration.stages) != len(self.stages):
            raise InputError(
                where,
                f"the calibration is for {len(calibration.stages)} judge(s) "
                f"({', '.join(s.judge.name for s in calibration.stages)}), the cascade has "
                f"{len(self.stages)} ({', '.join(s.name for s in self.stages)})",
            )
        for index, (stage, calibrated) in enumerate(
            zip(self.stages, calibration.stages, strict=True)
        ):
            live = identity_of(stage.describe(), stage.name, granularity)
            differences = calibrated.judge.differences(live)
            if differences:
                raise InputError(
                    where,
                    f"stage {index + 1} ({stage.name}) is not the judge the calibration was "
                    f"made for: {'; '.join(differences)}",
                )
        self._router = Router(calibration)

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        router = self._router
        if router is None:
            raise RuntimeError("CascadeJudge.check(rubric, granularity) was not called")
        if router.guarantee == "verdict":
            return await self._by_case(task, router)
        return await self._by_question(task, router)

    async def _by_question(self, task: JudgeTask, router: Any) -> DimensionVerdict:
        pending = list(task.question_ids)
        kept: dict[str, QuestionAnswer] = {}
        last: dict[str, QuestionAnswer] = {}
        seen: dict[str, list[float | None]] = {q: [] for q in pending}
        members: dict[str, DimensionVerdict] = {}
        for index, stage in enumerate(self.stages):
            if not pending:
                break
            if router.never_answers(index):
                for qid in pending:
                    seen[qid].append(None)
                continue
            verdict = await self._ask(index, stage, task)
            members[stage.name] = verdict
            if verdict.error_kind == NOT_JUDGED:
                return verdict.model_copy(update={"members": members})
            scores = router.calibrated(index, verdict.answers)
            settled = router.kept_questions(index, verdict.answers, pending)
            for qid in pending:
                seen[qid].append(scores.get(qid))
                answer = verdict.answer_for(qid)
                if answer is not None:
                    last[qid] = answer
                if qid in settled and answer is not None:
                    kept[qid] = _calibrated(answer, settled[qid], stage.name)
                    self._record(task, qid, index)
            pending = [q for q in pending if q not in settled]
        answers = []
        for qid in task.question_ids:
            if qid in kept:
                answers.append(kept[qid])
            else:
                self._record(task, qid, None)
                answers.append(_abstained(qid, last.get(qid), router.abstain_reason(seen[qid])))
        return _verdict(answers, members)

    async def _by_case(self, task: JudgeTask, router: Any) -> DimensionVerdict:
        members: dict[str, DimensionVerdict] = {}
        seen: list[float | None] = []
        verdict: DimensionVerdict | None = None
        for index, stage in enumerate(self.stages):
            if router.never_answers(index):
                seen.append(None)
                continue
            verdict = await self._ask(index, stage, task)
            members[stage.name] = verdict
            if verdict.error_kind == NOT_JUDGED:
                return verdict.model_copy(update={"members": members})
            keep, confidence = router.keeps_case(index, verdict.answers)
            seen.append(confidence)
            if keep:
                self._record(task, "verdict", index)
                scores = router.calibrated(index, verdict.answers)
                kept = [
                    _calibrated(a, scores.get(a.question_id), stage.name) for a in verdict.answers
                ]
                return _verdict(kept, members)
        self._record(task, "verdict", None)
        reason = router.abstain_reason(seen)
        answers = [
            _abstained(q, verdict.answer_for(q) if verdict else None, reason)
            for q in task.question_ids
        ]
        return _verdict(answers, members)

    async def _ask(self, index: int, stage: Judge, task: JudgeTask) -> DimensionVerdict:
        self.tally.calls[index] += 1
        return await ask(stage, task)

    def _record(self, task: JudgeTask, item: str, stage: int | None) -> None:
        key = (task.submission.incident_id, task.submission.trial, item)
        self.tally.answered[key] = stage


def _calibrated(answer: QuestionAnswer, probability: float | None, stage: str) -> QuestionAnswer:
    """A kept answer names its stage and carries its calibrated confidence: the probability
    that it agrees with the labels (the stage's own raw score is in the stage's answers)."""
    update: dict[str, object] = {"stage": stage}
    if probability is not None and answer.answer is not None:
        update["confidence_score"] = round(probability, 6)
    return answer.model_copy(update=update)


def _abstained(qid: str, last: QuestionAnswer | None, reason: str) -> QuestionAnswer:
    """A question no stage settled: unscored. When the last judge asked could not answer it
    (a failed call, a tie), its own reason says why; else the reason is `below_guarantee`."""
    if last is not None and last.answer is None:
        return last
    return QuestionAnswer(question_id=qid, unscored_reason=reason)


def _verdict(
    answers: list[QuestionAnswer], members: dict[str, DimensionVerdict]
) -> DimensionVerdict:
    """The cascade's verdict. A question left unscored by the failed call of the last judge
    asked carries that call's error, so it counts as a failed question, not an abstention."""
    last = list(members.values())[-1] if members else None
    failed = (
        last is not None
        and last.error_kind is not None
        and any(
            a.answer is None and a.unscored_reason == b.unscored_reason
            for a in answers
            if (b := last.answer_for(a.question_id)) is not None
        )
    )
    error = last if failed else None
    return DimensionVerdict(
        answers=answers,
        attempts=sum(v.attempts for v in members.values()),
        error=error.error if error else None,
        error_kind=error.error_kind if error else None,
        usage=total_usage(list(members.values())),
        members=members,
    )


def _calibration(calibration: Any) -> Any:
    if calibration is None or not isinstance(calibration, str | Path):
        return calibration
    from .selective.file import load_calibration

    return load_calibration(calibration)


def cascade_judge(args: str = "", **options: Any) -> CascadeJudge:
    """`cascade:A,B,C`: judges A, B, C (any `--judge-model` names but `replay`), cheapest
    first, built with the LLM options; `calibration=` a calibration file or its path;
    `allow_shift=True` keeps the guarantee on a run unlike the calibration set."""
    from . import make_judge

    calibration = options.pop("calibration", None)
    allow_shift = bool(options.pop("allow_shift", False))
    names = [n.strip() for n in args.split(",") if n.strip()]
    if not names:
        raise ValueError("cascade: name its judges, cheapest first: cascade:rules,MODEL,...")
    stages = []
    for name in names:
        if name == "cascade" or name.startswith(("cascade:", "replay")):
            raise ValueError(f"cascade: {name!r} cannot be a stage of a cascade")
        stages.append(make_judge(name, **options))
    return CascadeJudge(stages, calibration, allow_shift=allow_shift)
