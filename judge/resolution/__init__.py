"""Programmatic resolution checks over simulator trajectories, next to the judge's diagnosis.

    result = check_resolution(spec, submission)      # None when the submission has no trajectory
    summary = summarize_resolution(results)
    table = side_by_side({key: passed, ...}, {key: result, ...})

Checks are registered per format (`register_check`, or `CHECKS`, the registry shape formats and
judges use, with its `diagnosis_judge.checks` entry points); SRE-Zero's semantics and an
SREGym-style `Mitigation.success` check ship built in. Importing this package registers them.
"""

from . import sregym as _sregym  # noqa: F401  (registers the SREGym check)
from . import srezero_checks as _srezero_checks  # noqa: F401  (registers the SRE-Zero checks)
from .engine import check_resolution, resolution_format, summarize_resolution
from .marks import Marks, aggregate_srezero, score_marks
from .models import (
    CheckAggregate,
    CheckOutcome,
    Discrepancy,
    ResolutionResult,
    ResolutionSummary,
    SREZeroAggregate,
)
from .parity import compare_metrics
from .registry import (
    ANY_FORMAT,
    CHECKS,
    CheckFn,
    register_check,
    registered_checks,
    run_checks,
    unregister_check,
)
from .side_by_side import ConditionalRate, CoverageView, SideBySide, Table2x2, side_by_side
from .srezero import SREZeroEpisode, SREZeroMetrics, replay_srezero

__all__ = [
    "ANY_FORMAT",
    "CHECKS",
    "CheckAggregate",
    "CheckFn",
    "CheckOutcome",
    "ConditionalRate",
    "CoverageView",
    "Discrepancy",
    "Marks",
    "ResolutionResult",
    "ResolutionSummary",
    "SREZeroAggregate",
    "SREZeroEpisode",
    "SREZeroMetrics",
    "SideBySide",
    "Table2x2",
    "aggregate_srezero",
    "check_resolution",
    "compare_metrics",
    "register_check",
    "registered_checks",
    "replay_srezero",
    "resolution_format",
    "run_checks",
    "score_marks",
    "side_by_side",
    "summarize_resolution",
    "unregister_check",
]
