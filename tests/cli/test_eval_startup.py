"""What `judge eval` does before its first request: only what that request needs. rich (the
summary's tables) is imported after it, litellm not at all on the lean client's path; the
summary's modules are imported while the replies are awaited.

Each run is its own `python` process: an audit hook notes the modules imported when the first
connection to the provider opens, and those imported when the run (`Run.run`) ends."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import EXAMPLE

RUN = """
import json, sys
seen = {}
def hook(event, args):
    if event == "socket.connect" and "first" not in seen:
        seen["first"] = sorted(sys.modules)
sys.addaudithook(hook)
import judge.run.loop as loop
run = loop.Run.run
async def noted(self):
    try:
        return await run(self)
    finally:
        seen["end"] = sorted(sys.modules)
loop.Run.run = noted
from judge.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, **seen}))
"""


def eval_modules(tmp_path: Path, url: str, *extra: str) -> dict:
    args = [
        "eval", "--ground-truth", str(EXAMPLE / "ground_truth"),
        "--outputs", str(EXAMPLE / "outputs"), "--result-file", str(tmp_path / "r.json"),
        "--judge-model", "openai/fake-judge", "--api-base", url, "--no-progress", *extra,
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", RUN, *args], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_first_request_waits_for_no_summary_module(tmp_path: Path, fake_provider) -> None:
    seen = eval_modules(tmp_path, fake_provider.url)
    assert seen["code"] == 0 and len(fake_provider.calls) == 32
    first = set(seen["first"])
    assert "httpx" in first  # the request's own client
    assert not {"rich", "litellm", "openai", "judge.report.display"} & first
    # imported in the background while the replies were awaited, not after the last one
    assert {"judge.report.display", "judge.audit.families", "numpy.random"} <= set(seen["end"])


@pytest.mark.slow
def test_json_output_does_not_import_the_summary_table(tmp_path: Path, fake_provider) -> None:
    seen = eval_modules(tmp_path, fake_provider.url, "--json")
    assert seen["code"] == 0
    assert "judge.report.display" not in seen["end"]
    assert "judge.audit.families" in seen["end"]
