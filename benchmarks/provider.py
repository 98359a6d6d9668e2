"""Run the fake provider in its own process (so it does not share our GIL) for a benchmark."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def provider_process(*args: str) -> Iterator[tuple[str, Path]]:
    """Yields (base URL, call log path) of `python -m judge.testing.fake_provider ARGS`."""
    with tempfile.TemporaryDirectory() as tmp:
        url_file, log = Path(tmp) / "url", Path(tmp) / "calls.jsonl"
        command = [
            sys.executable, "-m", "judge.testing.fake_provider",
            "--url-file", str(url_file), "--log", str(log), *args,
        ]  # fmt: skip
        process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL)
        try:
            while not url_file.exists():
                if process.poll() is not None:
                    raise RuntimeError("the fake provider did not start")
                time.sleep(0.05)
            yield url_file.read_text().strip(), log
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
