"""How litellm is set up for the llm judge, and the benchmark that measures its CPU per call
(issue 16, "Leaner calls"; `benchmarks/README.md`, "CPU time per judgment")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

SETUP = """
import json, os
from judge.judges.llm import import_litellm
litellm = import_litellm()
print(json.dumps({
    "banner_off": litellm.suppress_debug_info,
    "local_cost_map": os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP"),
}))
"""


@pytest.mark.slow
def test_import_litellm_turns_the_banner_off_and_reads_the_bundled_price_map() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SETUP],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "banner_off": True,
        "local_cost_map": "True",
    }
    assert "raw.githubusercontent.com" not in done.stderr  # no fetch of the remote price map


@pytest.mark.slow
def test_cpu_profile_writes_the_numbers_the_benchmark_driver_reads(tmp_path: Path) -> None:
    out = tmp_path / "cpu.json"
    options = ["--client", "litellm", "--granularity", "dimension", "--json", str(out)]
    done = subprocess.run(
        [sys.executable, "benchmarks/cpu_profile.py", "2", *options],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    numbers = json.loads(out.read_text())
    assert set(numbers) >= {"cpu_ms_per_call", "own_ms_per_call", "calls"}
    assert numbers["calls"] == 6  # 2 submissions x 3 dimensions
    assert numbers["cpu_ms_per_call"] > 0 and numbers["own_ms_per_call"] > 0
    assert 0 <= numbers["worker_threads_ms_per_call"] <= numbers["cpu_ms_per_call"]
    assert "in worker threads" in done.stdout and "litellm's phases" in done.stdout
