"""diagnosis-judge: score SRE agents' incident diagnoses with checklist judges.

The Python API for harnesses::

    from judge import evaluate_submission, load_rubric
    from ground_truth import IncidentSpec, Submission

    case = evaluate_submission(spec, submission)            # rules judge, sregym-v3
    case.composite, case.passed, case.judgments              # every question's answer

From async code: `await evaluate_submission_async(...)`, `await evaluate_async(...)`.
Check a judge without labels: `selftest_judge(specs)` (`judge selftest`); measure its bias and
noise on a run's cases: `audit_judge(specs, submissions, judge=...)` (`judge audit`).
Your own judge: see `help(judge.Judge)` and `register_judge`.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` is not imported by `judge --help`
    from typing import Any

# Names load on first use, so `judge --help` and `import judge.testing` stay fast.
_EXPORTS = {
    "ground_truth": ["IncidentSpec", "Submission", "load_specs", "load_submissions"],
    "judge.api": [
        "Control",
        "EvalOptions",
        "Limits",
        "Storage",
        "evaluate",
        "evaluate_async",
        "evaluate_submission",
        "evaluate_submission_async",
        "render_prompts",
        "run_sync",
    ],
    "judge.judges": [
        "Cacheable",
        "Gated",
        "Judge",
        "JudgeTask",
        "RequestGate",
        "RulesJudge",
        "make_judge",
        "register_judge",
    ],
    "judge.checklist.judgment": ["DimensionVerdict", "Judgment", "QuestionAnswer"],
    "judge.judges.cascade": ["CascadeJudge"],
    "judge.judges.selective.file": ["CalibrationFile", "load_calibration"],
    "judge.labelling.estimate": ["LabelledEstimates", "estimate_with_labels"],
    "judge.labelling.guarantee": ["GuaranteeCheck", "check_guarantee"],
    "judge.checklist.prompts": ["PromptRenderer"],
    "judge.checklist.results": ["EvalResult", "load_result", "write_result"],
    "judge.checklist.rubric": ["Rubric", "load_rubric"],
    "judge.checklist.scoring": ["CaseResult", "pass_at_k", "pass_hat_k"],
    "judge.selftest.check": ["selftest_judge", "selftest_judge_async"],
    "judge.selftest.report": ["SelftestReport"],
    "judge.audit.check": ["audit_judge", "audit_judge_async"],
    "judge.audit.report": ["AuditReport"],
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "AuditReport",
    "Cacheable",
    "CalibrationFile",
    "CascadeJudge",
    "CaseResult",
    "Control",
    "DimensionVerdict",
    "EvalOptions",
    "EvalResult",
    "Gated",
    "GuaranteeCheck",
    "IncidentSpec",
    "Judge",
    "JudgeTask",
    "Judgment",
    "LabelledEstimates",
    "Limits",
    "PromptRenderer",
    "QuestionAnswer",
    "RequestGate",
    "Rubric",
    "RulesJudge",
    "SelftestReport",
    "Storage",
    "Submission",
    "audit_judge",
    "audit_judge_async",
    "check_guarantee",
    "estimate_with_labels",
    "evaluate",
    "evaluate_async",
    "evaluate_submission",
    "evaluate_submission_async",
    "load_calibration",
    "load_result",
    "load_rubric",
    "load_specs",
    "load_submissions",
    "make_judge",
    "pass_at_k",
    "pass_hat_k",
    "register_judge",
    "render_prompts",
    "run_sync",
    "selftest_judge",
    "selftest_judge_async",
    "write_result",
]

if TYPE_CHECKING:
    from ground_truth import IncidentSpec, Submission, load_specs, load_submissions

    from .api import (
        Control,
        EvalOptions,
        Limits,
        Storage,
        evaluate,
        evaluate_async,
        evaluate_submission,
        evaluate_submission_async,
        render_prompts,
        run_sync,
    )
    from .audit.check import audit_judge, audit_judge_async
    from .audit.report import AuditReport
    from .checklist.judgment import DimensionVerdict, Judgment, QuestionAnswer
    from .checklist.prompts import PromptRenderer
    from .checklist.results import EvalResult, load_result, write_result
    from .checklist.rubric import Rubric, load_rubric
    from .checklist.scoring import CaseResult, pass_at_k, pass_hat_k
    from .judges import (
        Cacheable,
        Gated,
        Judge,
        JudgeTask,
        RequestGate,
        RulesJudge,
        make_judge,
        register_judge,
    )
    from .judges.cascade import CascadeJudge
    from .judges.selective.file import CalibrationFile, load_calibration
    from .labelling.estimate import LabelledEstimates, estimate_with_labels
    from .labelling.guarantee import GuaranteeCheck, check_guarantee
    from .selftest.check import selftest_judge, selftest_judge_async
    from .selftest.report import SelftestReport


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'judge' has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name]), name)
    globals()[name] = value
    return value
