"""`benchmarks/anchors.py` reads where a run's overhead is from the provider's call log: the
gap between a reply and the request that took its slot, and the time from the last reply to
the exit (a canned log written by the command timed; no benchmark runs)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from benchmarks.anchors import timed

WRITE = """
import json, sys, time
now = time.time()
with open(sys.argv[1], "a") as log:
    for arrived, latency in ((-3.0, 0.5), (-3.0, 0.5), (-2.0, 0.5), (-1.7, 0.5)):
        log.write(json.dumps({"timestamp": now + arrived, "latency": latency}) + "\\n")
"""


def test_gap_is_from_each_reply_to_the_request_that_took_its_slot(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    log.write_text(json.dumps({"timestamp": 0.0, "latency": 9.0}) + "\n")  # an earlier run's
    took = timed([sys.executable, "-c", WRITE, str(log)], dict(os.environ), tmp_path, log, 2)
    assert took.requests == 4
    # replies at -2.5, -2.5, -1.5, -1.2: the third request came 0.5 s after the first reply,
    # the fourth 0.8 s after the second
    assert took.gap == pytest.approx(0.65, abs=1e-6)
    assert took.tail is not None and took.tail >= 1.2
    assert took.wall > 0
