"""The Slurm array job and the Kubernetes Indexed Job of `examples/distributed/` run as they
are, with the index their scheduler would give each task (SLURM_ARRAY_TASK_ID,
JOB_COMPLETION_INDEX from 0), against the rules judge: every shard is one `--shard` accepts,
and their merge is the result of one run."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import EXAMPLE_GT, EXAMPLE_OUTPUTS, REPO

from ground_truth import load_specs, load_submissions
from judge import evaluate

pytestmark = pytest.mark.slow

EXAMPLES = REPO / "examples" / "distributed"
CONTENT = ("judgments", "cases", "incidents", "overall", "by_agent", "complete", "missing",
           "orphans")  # fmt: skip


def _env(**extra: str) -> dict[str, str]:
    """The environment with this interpreter's `judge` first on PATH."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, **extra}


def _run(command: list[str], **env: str) -> None:
    done = subprocess.run(command, env=_env(**env), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


def _one_run() -> dict:
    result = evaluate(load_specs(EXAMPLE_GT), load_submissions(EXAMPLE_OUTPUTS))
    return {part: json.loads(result.model_dump_json())[part] for part in CONTENT}


def _merged(path: Path) -> dict:
    data = json.loads(path.read_text())
    return {part: data[part] for part in CONTENT}


def test_the_slurm_array_job_merges_into_one_run(tmp_path):
    script = (EXAMPLES / "judge-array.sbatch").read_text()
    first, last = map(int, re.search(r"#SBATCH --array=(\d+)-(\d+)", script).groups())
    assert first == 0  # the script adds 1: an array from 0 gives shards 1..N
    count = last - first + 1
    inputs = {"GROUND_TRUTH": str(EXAMPLE_GT), "OUTPUTS": str(EXAMPLE_OUTPUTS),
              "RUN_DIR": str(tmp_path)}  # fmt: skip
    for task in range(first, last + 1):
        _run(["bash", str(EXAMPLES / "judge-array.sbatch")], SLURM_ARRAY_TASK_ID=str(task),
             SLURM_ARRAY_TASK_COUNT=str(count), **inputs)  # fmt: skip
    names = sorted(p.name for p in tmp_path.glob("shard-*.json"))
    assert names == sorted(f"shard-{i}-of-{count}.json" for i in range(1, count + 1))
    _run(["bash", str(EXAMPLES / "merge.sbatch")], RUN_DIR=str(tmp_path))
    assert _merged(tmp_path / "result.json") == _one_run()


def _container(manifest: Path) -> tuple[dict, dict]:
    (job,) = yaml.safe_load_all(manifest.read_text())
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return job, container


def _pod(container: dict, data: Path, **env: str) -> None:
    """The container's command, run as its pod would run it (its env, DATA here)."""
    values = {e["name"]: e["value"] for e in container["env"]}
    _run([*container["command"], *container["args"]], **{**values, "DATA": str(data), **env})


def test_the_kubernetes_indexed_job_merges_into_one_run(tmp_path):
    job, container = _container(EXAMPLES / "judge-indexed-job.yaml")
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    shards = {e["name"]: e["value"] for e in container["env"]}["SHARDS"]
    assert int(shards) == spec["completions"]
    shutil.copytree(EXAMPLE_GT, tmp_path / "ground_truth")
    shutil.copytree(EXAMPLE_OUTPUTS, tmp_path / "outputs")
    for index in range(spec["completions"]):
        _pod(container, tmp_path, JOB_COMPLETION_INDEX=str(index))
    _, merge = _container(EXAMPLES / "judge-merge-job.yaml")
    _pod(merge, tmp_path)
    assert _merged(tmp_path / "runs" / "result.json") == _one_run()
