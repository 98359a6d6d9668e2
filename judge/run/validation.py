"""What the engine accepts from a judge, whoever wrote it: one answer per question asked.

Every leaf judge's verdict (rules, llm, replay, a panel's members, a user's own judge class)
passes `checked_verdict` before it is stored or scored, and a judge that raises gets
`judge_error_verdict` instead of ending the run.

- a question the judge did not answer is unscored (`judge_omitted`), the others keep theirs;
- an answer to a question that was not asked, or two answers to one question, make the whole
  verdict unusable, like an unparseable reply: every question unscored, the reason names the id.
"""

from __future__ import annotations

from collections import Counter

from ..checklist.judgment import DimensionVerdict, QuestionAnswer, unscored

JUDGE_OMITTED = "judge_omitted"
JUDGE_ERROR = "judge_error"
UNPARSEABLE = "unparseable"


def checked_verdict(verdict: object, question_ids: list[str], judge: str) -> DimensionVerdict:
    """`verdict` if it answers each of `question_ids` exactly once; otherwise the repaired or
    rejected verdict described in the module docstring (usage and attempts are kept)."""
    if not isinstance(verdict, DimensionVerdict):
        reason = f"{judge} returned {type(verdict).__name__}, not a DimensionVerdict"
        return unscored(question_ids, reason, JUDGE_ERROR)
    ids = [a.question_id for a in verdict.answers]
    counts = Counter(ids)
    unknown = sorted(set(ids) - set(question_ids))
    duplicate = sorted(i for i, n in counts.items() if n > 1)
    if unknown or duplicate:
        problems = [
            f"{label} {', '.join(values)}"
            for label, values in (("unknown question id", unknown), ("duplicate id", duplicate))
            if values
        ]
        reason = f"{judge} answered {'; '.join(problems)}: the verdict is rejected"
        return _keep_accounting(verdict, unscored(question_ids, reason, UNPARSEABLE), UNPARSEABLE)
    missing = [q for q in question_ids if q not in counts]
    if not missing:
        return verdict
    by_id = {a.question_id: a for a in verdict.answers}
    omitted = f"{JUDGE_OMITTED}: {judge} gave no answer to this question"
    answers = [
        by_id.get(q) or QuestionAnswer(question_id=q, unscored_reason=omitted) for q in question_ids
    ]
    return verdict.model_copy(
        update={
            "answers": answers,
            "error": verdict.error or f"{judge} did not answer {', '.join(missing)}",
            "error_kind": verdict.error_kind or JUDGE_OMITTED,
            "attempt_errors": _plus_one(verdict.attempt_errors, JUDGE_OMITTED),
        }
    )


def judge_error_verdict(
    exc: BaseException, question_ids: list[str], judge: str
) -> DimensionVerdict:
    """A judge raised: its questions are unscored with the message, and the run goes on."""
    message = str(exc).strip() or "(no message)"
    reason = f"{JUDGE_ERROR}: {judge} raised {type(exc).__name__}: {message}"
    verdict = unscored(question_ids, reason, JUDGE_ERROR)
    return verdict.model_copy(update={"attempt_errors": {JUDGE_ERROR: 1}})


def _keep_accounting(
    original: DimensionVerdict, replaced: DimensionVerdict, kind: str
) -> DimensionVerdict:
    return replaced.model_copy(
        update={
            "attempts": original.attempts,
            "usage": original.usage,
            "requests": original.requests,
            "attempt_errors": _plus_one(original.attempt_errors, kind),
            "cached": original.cached,
        }
    )


def _plus_one(counts: dict[str, int], kind: str) -> dict[str, int]:
    return {**counts, kind: counts.get(kind, 0) + 1}
