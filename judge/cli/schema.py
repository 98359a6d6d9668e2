"""`judge schema KIND`: the JSON Schema of each file format."""

from __future__ import annotations

import argparse
import json

from .common import EXIT_OK


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `schema` subcommand."""
    p = commands.add_parser("schema", help="print the JSON Schema of a file format")
    p.add_argument(
        "kind",
        choices=[
            "spec",
            "submission",
            "result",
            "rubric",
            "calibration",
            "goldens",
            "selftest",
            "audit",
        ],
        metavar="KIND",
        help="one of: %(choices)s",
    )
    p.set_defaults(handler=cmd_schema)


def cmd_schema(args: argparse.Namespace) -> int:
    """`judge schema`: print the JSON Schema of a spec, submission, result, rubric,
    calibration or goldens file, or of `judge selftest --json`'s or `judge audit --json`'s
    report."""
    from pydantic import BaseModel

    from ground_truth.models import IncidentSpec, Submission

    from ..audit.report import AuditReport
    from ..checklist.results import EvalResult
    from ..checklist.rubric import Rubric
    from ..judges.selective.file import CalibrationFile
    from ..selftest.goldens import GoldenFile
    from ..selftest.report import SelftestReport

    models: dict[str, type[BaseModel]] = {
        "spec": IncidentSpec,
        "submission": Submission,
        "result": EvalResult,
        "rubric": Rubric,
        "calibration": CalibrationFile,
        "goldens": GoldenFile,
        "selftest": SelftestReport,
        "audit": AuditReport,
    }
    print(json.dumps(models[args.kind].model_json_schema(), indent=2))
    return EXIT_OK
