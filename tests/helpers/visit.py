"""A page opened in Debian's headless Chromium, for the tests of the HTML report (and its
sections): its DOM or a screenshot, and the requests the page itself made."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import CHROMIUM, CHROMIUM_FLAGS

VISIT_FLAGS = [*CHROMIUM_FLAGS, "--host-resolver-rules=MAP * ~NOTFOUND"]


@dataclass
class Visit:
    dom: str
    page_requests: list[str]
    screenshot: Path | None


def visit(page: Path, work: Path, screenshot: bool = False) -> Visit:
    """Open `page` once in a fresh headless Chromium: its DOM (or a screenshot) and its requests."""
    work.mkdir(parents=True, exist_ok=True)
    netlog = work / "netlog.json"
    shot = work / "shot.png"
    action = [f"--screenshot={shot}", "--window-size=1280,2000"] if screenshot else ["--dump-dom"]
    run = subprocess.run(
        [
            str(CHROMIUM),
            *VISIT_FLAGS,
            f"--user-data-dir={work / 'profile'}",
            f"--log-net-log={netlog}",
            *action,
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return Visit(run.stdout, page_requests(netlog), shot if screenshot else None)


def page_requests(netlog: Path) -> list[str]:
    """URLs of requests the page itself started (not the browser's own background fetches)."""
    log = json.loads(netlog.read_text(encoding="utf-8"))
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [
        event["params"]["url"]
        for event in log["events"]
        if event["type"] == start
        and "url" in event.get("params", {})
        and event["params"].get("initiator") != "not an origin"
    ]
