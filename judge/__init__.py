"""diagnosis-judge: score SRE agents' incident diagnoses with checklist judges.

The Python API for harnesses::

    from judge import evaluate_submission, load_rubric
    from ground_truth import IncidentSpec, Submission

    case = evaluate_submission(spec, submission)            # rules judge, sregym-v3
    case.composite, case.passed, case.judgments              # every question's answer
"""

from ground_truth import IncidentSpec, Submission, load_specs, load_submissions

from .engine import EvalOptions, evaluate, evaluate_async, evaluate_submission, render_prompts
from .judges import Judge, JudgeTask, RulesJudge, make_judge
from .judgment import DimensionVerdict, Judgment, QuestionAnswer
from .prompts import PromptRenderer
from .results import EvalResult, load_result, write_result
from .rubric import Rubric, load_rubric
from .scoring import CaseResult, pass_at_k, pass_hat_k

__all__ = [
    "CaseResult",
    "DimensionVerdict",
    "EvalOptions",
    "EvalResult",
    "IncidentSpec",
    "Judge",
    "JudgeTask",
    "Judgment",
    "PromptRenderer",
    "QuestionAnswer",
    "Rubric",
    "RulesJudge",
    "Submission",
    "evaluate",
    "evaluate_async",
    "evaluate_submission",
    "load_result",
    "load_rubric",
    "load_specs",
    "load_submissions",
    "make_judge",
    "pass_at_k",
    "pass_hat_k",
    "render_prompts",
    "write_result",
]
