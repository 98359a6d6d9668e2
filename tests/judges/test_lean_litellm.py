"""A client's library is imported only by runs that call a provider, in the background (issue
16), and litellm only by runs whose client is litellm (issue 26: `openai/...` models and
`--api-base` endpoints go through the lean `openai` client, which speaks HTTP with httpx and
imports neither litellm nor the `openai` SDK).

Each run is its own `python` process, so `sys.modules` tells what the run itself imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import EXAMPLE

RUN = """
import json, sys
from judge.cli import main
code = main(sys.argv[1:])
print(json.dumps({
    "code": code, "litellm": "litellm" in sys.modules, "openai": "openai" in sys.modules,
}))
"""


def judge_eval(tmp_path: Path, url: str, *extra: str) -> dict:
    args = [
        "eval", "--ground-truth", str(EXAMPLE / "ground_truth"),
        "--outputs", str(EXAMPLE / "outputs"), "--result-file", str(tmp_path / "r.json"),
        "--judge-model", "openai/fake-judge", "--api-base", url, "--no-progress", "--json",
        "--max-concurrent", "8", *extra,
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", RUN, *args], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr  # litellm's import warnings stay filtered
    return json.loads(done.stdout.strip().splitlines()[-1])


CLIENTS = {
    "litellm": {"litellm": True, "openai": True},
    "auto": {"litellm": False, "openai": False},
}
"""What a run that sends requests imports, by `--client` (litellm imports the openai SDK)."""


@pytest.mark.slow
@pytest.mark.parametrize("client", list(CLIENTS))
def test_a_rerun_from_the_store_imports_no_client(tmp_path: Path, fake_provider, client) -> None:
    first = judge_eval(tmp_path, fake_provider.url, "--client", client)
    asked = len(fake_provider.calls)
    assert first == {"code": 0, **CLIENTS[client]} and asked == 32  # one call per submission
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["complete"] and result["usage"]["calls_made"] == 32
    assert result["config"]["judge"]["client"] == ("litellm" if client == "litellm" else "openai")

    for extra in ([], ["--resume"]):
        again = judge_eval(tmp_path, fake_provider.url, "--client", client, *extra)
        assert again == {"code": 0, "litellm": False, "openai": False}
        assert len(fake_provider.calls) == asked
        result = json.loads((tmp_path / "r.json").read_text())
        assert result["complete"] and result["usage"]["cache_hits"] == 32


@pytest.mark.slow
@pytest.mark.parametrize("client", list(CLIENTS))
def test_a_run_with_calls_left_imports_its_client_and_makes_them(
    tmp_path: Path, fake_provider, client
) -> None:
    per_dimension = ("--granularity", "dimension", "--client", client)
    judge_eval(tmp_path, fake_provider.url, "--dimensions", "D1", *per_dimension)
    again = judge_eval(tmp_path, fake_provider.url, *per_dimension)
    assert again == {"code": 0, **CLIENTS[client]}
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["complete"]
    assert result["usage"]["cache_hits"] == 32 and result["usage"]["calls_made"] == 64
    assert len(fake_provider.calls) == 96
