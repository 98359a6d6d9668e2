"""The result file and its schema are what they were before the run machinery moved house
(issue 25): the bundled example scored by the rules judge through `judge eval` gives the result
that main's code wrote before the move, except the time and the tool version, and `judge schema
result` prints the same bytes.

The fixtures were made from the code before the move with
    judge eval --ground-truth examples/sregym-mini/ground_truth \\
        --outputs examples/sregym-mini/outputs --result-file before.json --no-progress
    gzip -9 -n before.json     # tests/fixtures/results/sregym-mini-rules.before.json.gz
    judge schema result > tests/fixtures/results/result.schema.json
A deliberate change to the rules judge's answers or to the result schema makes them again (last
for issue 39's schema version 2: one judgment per question, the members' in `member_judgments`,
each case's format and diagnosis length; then for issue 39's confidence that ranks, which
changed the rules judge's `confidence_score` only, every other byte of the judgments the same;
merged with issue 40's `identity` on every judgment; and again when the rules judge's
confidence was refitted on signals chosen by cross-validation, its `confidence_score` only).
The run asks per dimension, as that command did then; one call per submission (the default
since issue 26) gives the rules judge's same answers (`tests/run/test_granularity.py`).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
from pathlib import Path

import pytest
from helpers import FIXTURES, REPO

from judge.cli import main

RESULTS = FIXTURES / "results"
CHANGES_EVERY_RUN = ("created_at", "tool_version")


def _judge(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    return code, out.getvalue()


def _comparable(result: dict) -> dict:
    return {k: v for k, v in result.items() if k not in CHANGES_EVERY_RUN}


def test_the_bundled_examples_result_is_the_one_written_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)  # the result records the input paths as given
    target = tmp_path / "after.json"
    code, _ = _judge(
        [
            "eval",
            "--ground-truth",
            "examples/sregym-mini/ground_truth",
            "--outputs",
            "examples/sregym-mini/outputs",
            "--result-file",
            str(target),
            "--no-progress",
            "--granularity",
            "dimension",  # the default before issue 26, when the fixture was written
        ]
    )
    before = json.loads(
        gzip.decompress((RESULTS / "sregym-mini-rules.before.json.gz").read_bytes())
    )
    after = json.loads(target.read_text(encoding="utf-8"))
    assert code == 0
    assert list(after) == list(before)  # the same fields in the same order
    assert _comparable(after) == _comparable(before)


def test_the_result_schema_is_byte_identical() -> None:
    code, out = _judge(["schema", "result"])
    assert code == 0
    assert out == (RESULTS / "result.schema.json").read_text(encoding="utf-8")
