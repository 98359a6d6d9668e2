"""`examples/custom_judge.py`, the README's "Write your own judge", runs as written: from Python,
and from the CLI as `--judge-model custom_judge:OriginJudge`, with the same scores."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import EXAMPLES, REPO

pytestmark = pytest.mark.slow


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGE_")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(EXAMPLES)])
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )


def test_the_custom_judge_example_scores_the_bundled_set_from_python_and_the_cli(
    tmp_path: Path,
) -> None:
    script = run(str(EXAMPLES / "custom_judge.py"), cwd=tmp_path)
    assert script.returncode == 0, script.stderr
    found = re.fullmatch(r"(\d+) cases, pass rate (\d\.\d\d)\n", script.stdout)
    assert found, script.stdout
    assert found[1] == "32"

    result = tmp_path / "results.json"
    cli = run(
        "-m",
        "judge",
        "eval",
        "--judge-model",
        "custom_judge:OriginJudge",
        "--ground-truth",
        str(EXAMPLES / "sregym-mini" / "ground_truth"),
        "--outputs",
        str(EXAMPLES / "sregym-mini" / "outputs"),
        "--result-file",
        str(result),
        "--no-progress",
        cwd=tmp_path,
    )
    assert cli.returncode == 0, cli.stderr
    data = json.loads(result.read_text())
    assert data["config"]["judge"]["name"] == "origin"
    assert {j["judge"] for j in data["judgments"]} == {"origin"}
    assert f"{data['overall']['pass_rate']['value']:.2f}" == found[2]
    assert 0 < data["overall"]["pass_rate"]["value"] < 1  # it tells diagnoses apart
