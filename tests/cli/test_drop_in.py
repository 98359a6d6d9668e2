"""ITBench's and SREGym's own judge settings run `judge eval` unchanged but for the URL, over
real HTTP against the local fake provider (issue 24, "Drop-in for the anchors' own settings").

ITBench-Evaluations (no license, so its file is not copied here) keeps the judge settings in a
`.env` file made from its `.env.tmpl`; these are that template's three settings, in its
`export NAME="value"` syntax, with only the gateway URL replaced by the fake's. SREGym's
`llm_backend/init_backend.py` (MIT) reads `JUDGE_MODEL_ID`, `JUDGE_API_BASE` and
`JUDGE_API_KEY` from the environment; its README serves OpenAI-compatible models as
`openai/<served-model>` and its `main.py` sets the key to "dummy" for local servers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import EXAMPLE, JUDGE_SETTINGS

pytestmark = pytest.mark.slow

CALLS = 32  # 32 diagnoses, one call each (the default granularity)


def itbench_dotenv(url: str) -> str:
    return (
        f'export JUDGE_BASE_URL="{url}"\n'
        'export JUDGE_API_KEY=""\n'
        'export JUDGE_MODEL="GCP/gemini-2.5-pro"\n'
    )


def judge(cwd: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in JUDGE_SETTINGS}
    return subprocess.run(
        [sys.executable, "-m", "judge", *argv],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_itbench_dotenv_runs_the_example_with_itbench_flags(tmp_path: Path, fake_provider) -> None:
    root = fake_provider.url.removesuffix("/v1")  # the template's gateway URL has no /v1
    (tmp_path / ".env").write_text(itbench_dotenv(root))
    done = judge(
        tmp_path, {},
        "eval", "-g", str(EXAMPLE / "ground_truth"), "-o", str(EXAMPLE / "outputs"),
        "-r", "evaluation_results.json", "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "'GCP/gemini-2.5-pro' (from .env file .env) names no litellm provider" in done.stderr
    assert {c.model for c in fake_provider.calls} == {"GCP/gemini-2.5-pro"}  # the name as it is
    assert len(fake_provider.calls) == CALLS
    result = json.loads((tmp_path / "evaluation_results.json").read_text())
    assert result["config"]["judge"]["model"] == "openai/GCP/gemini-2.5-pro"
    assert result["complete"] and not result["errors"]


def test_sregym_environment_names_run_the_example(tmp_path: Path, fake_provider) -> None:
    env = {
        "JUDGE_MODEL_ID": "openai/qwen3-coder:30b",
        "JUDGE_API_BASE": fake_provider.url,
        "JUDGE_API_KEY": "dummy",
    }
    done = judge(
        tmp_path, env,
        "eval", "--ground-truth", str(EXAMPLE / "ground_truth"),
        "--outputs", str(EXAMPLE / "outputs"), "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert {c.model for c in fake_provider.calls} == {"qwen3-coder:30b"}
    assert len(fake_provider.calls) == CALLS
    result = json.loads((tmp_path / "results.json").read_text())
    assert result["config"]["judge"]["model"] == "openai/qwen3-coder:30b"
    assert result["complete"] and not result["errors"]


def test_a_dotenv_endpoint_without_a_model_stops_before_any_call(
    tmp_path: Path, fake_provider
) -> None:
    (tmp_path / ".env").write_text(
        itbench_dotenv(fake_provider.url).replace("export JUDGE_MODEL", "#")
    )
    done = judge(
        tmp_path, {},
        "eval", "-g", str(EXAMPLE / "ground_truth"), "-o", str(EXAMPLE / "outputs"),
    )  # fmt: skip
    assert done.returncode == 2
    assert "would fall back to the offline rules judge" in done.stderr
    assert fake_provider.calls == [] and not (tmp_path / "results.json").exists()
