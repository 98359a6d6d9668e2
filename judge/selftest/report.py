"""What a selftest found: per probe kind and per question, the share of probes that behaved
as expected, every failing check with the judge's evidence, and what could not be judged.

A probe *behaved as expected* when every question it checks got the expected answer and its
verdict (pass or fail at the rubric's threshold) is the expected one. A probe one of whose
checked answers is unscored (a provider failure, an unusable reply, a question the judge
does not answer) is *unscored*: counted apart, never as behaving, never as failing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field, PrivateAttr

from ..checklist.results import EvalResult, RunStop, RunUsage
from ..checklist.scoring import CaseResult
from .cases import CallPlan, CaseRun
from .probes import DEFAULT_FAIL_UNDER, DERIVED_KINDS, Expected, Probe, Skipped, VerdictExpected

SCHEMA_VERSION = "1"
VERDICT = "verdict"
"""The `question_id` of a failing check on the case's verdict rather than one question."""
KIND_ORDER = (*DERIVED_KINDS, "golden-pass", "golden-fail")


class ProbeResult(BaseModel):
    """One probe as the judge answered it."""

    id: str
    spec_id: str
    kind: str
    composite: float | None
    passed: bool | None
    behaved: bool | None = Field(description="None: unscored (see `unscored`).")
    answers: dict[str, Literal["Yes", "No"] | None]
    unscored: dict[str, str] = Field(
        default_factory=dict, description="Checked questions left unscored, with the reason."
    )


class Failure(BaseModel):
    """One check a probe failed: a question (or `verdict`), what was expected and given."""

    probe_id: str
    spec_id: str
    kind: str
    question_id: str
    expected: Expected | VerdictExpected
    answer: str | None
    evidence: str | None
    note: str = ""
    diagnosis: str = Field(description="The probe's diagnosis (its first 300 characters).")


class KindSummary(BaseModel):
    """One probe kind: how many probes, how many scored, behaved, passed the threshold."""

    kind: str
    probes: int
    scored: int
    behaved: int
    share: float | None = Field(description="behaved / scored; None when none is scored.")
    passed: int
    pass_rate: float | None = Field(description="Share of the verdicts that reached the threshold.")
    below: bool = Field(description="Below `fail_under`, or nothing scored.")


class QuestionSummary(BaseModel):
    """One question under one probe kind: the probes that check it and how many got it."""

    kind: str
    question_id: str
    expected: Expected
    checked: int
    behaved: int
    share: float | None


class SelftestReport(BaseModel):
    """A selftest's whole outcome (`judge selftest --json`; `judge schema selftest`)."""

    schema_version: str = SCHEMA_VERSION
    judge: str
    rubric: dict[str, str]
    ground_truth: str | None = None
    goldens: str | None = None
    seed: int = 0
    fail_under: float = DEFAULT_FAIL_UNDER
    ok: bool = Field(description="Every probe kind at or above `fail_under`.")
    kinds: list[KindSummary]
    questions: list[QuestionSummary]
    failures: list[Failure]
    probes: list[ProbeResult]
    skipped: list[Skipped] = Field(default_factory=list)
    plan: CallPlan | None = None
    usage: RunUsage | None = None
    errors: dict[str, int] = Field(default_factory=dict, description="Failed calls by kind.")
    n_failed_questions: int = 0
    stopped: RunStop | None = None
    exit_code: int | None = Field(None, description="The exit code `judge selftest` gave.")
    exit_reason: str | None = None
    _result: EvalResult | None = PrivateAttr(default=None)

    @property
    def run_result(self) -> EvalResult | None:
        """The run behind the report, every judgment and call in it (not part of the JSON)."""
        return self._result

    @property
    def below(self) -> list[str]:
        """The probe kinds under `fail_under`."""
        return [k.kind for k in self.kinds if k.below]


def summarise(
    probes: Sequence[Probe],
    run: CaseRun,
    *,
    judge: str,
    rubric: dict[str, str],
    fail_under: float = DEFAULT_FAIL_UNDER,
    skipped: Sequence[Skipped] = (),
    plan: CallPlan | None = None,
    goldens: str | None = None,
    seed: int = 0,
) -> SelftestReport:
    """The report of `probes` answered in `run` by `judge` on `rubric` (its name and hash)."""
    results, failures = [], []
    for probe in probes:
        case = run.by_case.get((probe.spec_id, probe.id))
        result, failed = _judge_probe(probe, case)
        results.append(result)
        failures += failed
    kinds = _kinds(probes, results, fail_under)
    outcome: EvalResult = run.result
    report = SelftestReport(
        judge=judge,
        rubric=rubric,
        goldens=goldens,
        seed=seed,
        fail_under=fail_under,
        ok=not any(k.below for k in kinds),
        kinds=kinds,
        questions=_questions(probes, results),
        failures=failures,
        probes=results,
        skipped=list(skipped),
        plan=plan,
        usage=outcome.usage,
        errors=outcome.errors,
        n_failed_questions=outcome.overall.n_failed_questions,
        stopped=outcome.stopped,
    )
    report._result = outcome
    return report


def _judge_probe(probe: Probe, case: CaseResult | None) -> tuple[ProbeResult, list[Failure]]:
    judgments = {j.question_id: j for j in (case.judgments if case else [])}
    answers = {qid: j.answer for qid, j in judgments.items()}
    unscored: dict[str, str] = {}
    failures: list[Failure] = []
    for qid, expected in probe.expected.items():
        if expected == "any":
            continue
        judgment = judgments.get(qid)
        if judgment is None or judgment.answer is None:
            reason = judgment.unscored_reason if judgment else "not judged"
            unscored[qid] = reason or "unscored"
        elif judgment.answer != expected:
            failures.append(_failure(probe, qid, expected, judgment.answer, judgment.evidence))
    passed = case.passed if case else None
    if probe.verdict != "any":
        if passed is None:
            unscored.setdefault(VERDICT, "the case has no composite score")
        elif passed != (probe.verdict == "pass"):
            shown = f"{'pass' if passed else 'fail'} (composite {case.composite:.2f})"  # type: ignore[union-attr]
            failures.append(_failure(probe, VERDICT, probe.verdict, shown, None))
    behaved = None if unscored else not failures
    result = ProbeResult(
        id=probe.id,
        spec_id=probe.spec_id,
        kind=probe.kind,
        composite=case.composite if case else None,
        passed=passed,
        behaved=behaved,
        answers=answers,
        unscored=unscored,
    )
    return result, failures if behaved is False else []


def _failure(
    probe: Probe, qid: str, expected: str, answer: str | None, evidence: str | None
) -> Failure:
    return Failure(
        probe_id=probe.id,
        spec_id=probe.spec_id,
        kind=probe.kind,
        question_id=qid,
        expected=expected,  # type: ignore[arg-type]
        answer=answer,
        evidence=evidence,
        note=probe.note,
        diagnosis=probe.diagnosis[:300],
    )


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _kinds(
    probes: Sequence[Probe], results: Sequence[ProbeResult], fail_under: float
) -> list[KindSummary]:
    summaries = []
    present = {p.kind for p in probes}
    for kind in (k for k in KIND_ORDER if k in present):
        mine = [r for r in results if r.kind == kind]
        scored = [r for r in mine if r.behaved is not None]
        behaved = sum(bool(r.behaved) for r in scored)
        verdicts = [r.passed for r in mine if r.passed is not None]
        share = _share(behaved, len(scored))
        summaries.append(
            KindSummary(
                kind=kind,
                probes=len(mine),
                scored=len(scored),
                behaved=behaved,
                share=share,
                passed=sum(verdicts),
                pass_rate=_share(sum(verdicts), len(verdicts)),
                below=share is None or share < fail_under - 1e-12,
            )
        )
    return summaries


def _questions(probes: Sequence[Probe], results: Sequence[ProbeResult]) -> list[QuestionSummary]:
    counts: dict[tuple[str, str, str], list[int]] = {}
    for probe, result in zip(probes, results, strict=True):
        for qid, expected in probe.expected.items():
            answer = result.answers.get(qid)
            if expected == "any" or answer is None:
                continue
            tally = counts.setdefault((probe.kind, qid, expected), [0, 0])
            tally[0] += 1
            tally[1] += answer == expected
    order: dict[str, int] = {kind: i for i, kind in enumerate(KIND_ORDER)}
    return [
        QuestionSummary(
            kind=kind,
            question_id=qid,
            expected=expected,  # type: ignore[arg-type]
            checked=checked,
            behaved=behaved,
            share=_share(behaved, checked),
        )
        for (kind, qid, expected), (checked, behaved) in sorted(
            counts.items(), key=lambda item: (order.get(item[0][0], 99), item[0][1])
        )
    ]
