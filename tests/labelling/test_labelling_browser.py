"""The labelling page in a real browser: Debian's headless Chromium, driven by keyboard events.

Chromium is driven through the DevTools protocol over `--remote-debugging-pipe` (file
descriptors 3 and 4, NUL-separated JSON): the standard library is enough, no websocket package
or chromedriver is needed, and the key presses are real `Input.dispatchKeyEvent` events that go
through the page's own keydown handler. The server is the real `judge labels serve` command in a
subprocess, so killing it is a real SIGKILL. Every host name but the server's maps to NOTFOUND.
Set DIAGNOSIS_JUDGE_SCREENSHOTS=DIR to keep the screenshot (the README's docs/labelling.png).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import CHROMIUM, CHROMIUM_FLAGS
from helpers.labelling import HOSTILE, HOSTILE_INCIDENT

from judge.labelling.store import read_store

FLAGS = [
    *CHROMIUM_FLAGS,
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--remote-debugging-pipe",
]
KEYS = {
    "ArrowRight": 39,
    "ArrowLeft": 37,
    "ArrowDown": 40,
    "ArrowUp": 38,
    "Enter": 13,
}
WAIT = 60.0

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class Browser:
    """One headless Chromium and one page, spoken to over the DevTools pipe."""

    def __init__(self, profile: Path):
        to_browser = os.pipe()
        from_browser = os.pipe()
        keep = (
            fcntl.fcntl(to_browser[0], fcntl.F_DUPFD, 10),
            fcntl.fcntl(from_browser[1], fcntl.F_DUPFD, 10),
        )

        def pipes_on_3_and_4() -> None:
            os.dup2(keep[0], 3)
            os.dup2(keep[1], 4)

        self.process = subprocess.Popen(
            [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,
            preexec_fn=pipes_on_3_and_4,
        )
        for fd in (*keep, to_browser[0], from_browser[1]):
            os.close(fd)
        self._out = to_browser[1]
        self._in = from_browser[0]
        self._next = 0
        self._replies: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        self.page(
            "Emulation.setDeviceMetricsOverride",
            width=1280,
            height=860,
            deviceScaleFactor=1,
            mobile=False,
        )

    def _read(self) -> None:
        buffer = b""
        while chunk := os.read(self._in, 1 << 16):
            buffer += chunk
            while b"\0" in buffer:
                message, buffer = buffer.split(b"\0", 1)
                data = json.loads(message)
                if "id" in data:
                    with self._lock:
                        self._replies.setdefault(data["id"], queue.Queue()).put(data)

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        with self._lock:
            self._next += 1
            ident = self._next
            box = self._replies.setdefault(ident, queue.Queue())
        message: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        reply = box.get(timeout=WAIT)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def page(self, method: str, **params: Any) -> dict[str, Any]:
        return self.call(method, self.session, **params)

    def go(self, url: str) -> None:
        self.page("Page.navigate", url=url)
        self.until("document.body && document.body.dataset.ready === 'yes'")

    def js(self, expression: str) -> Any:
        reply = self.page(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def until(self, expression: str) -> Any:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"never true in the page: {expression}")

    def key(self, key: str) -> None:
        if len(key) == 1:
            code, text = KEYS.get(key, ord(key.upper())), {"text": key}
        else:
            code, text = KEYS[key], {}
        common = {"key": key, "windowsVirtualKeyCode": code}
        self.page("Input.dispatchKeyEvent", type="keyDown", **common, **text)
        self.page("Input.dispatchKeyEvent", type="keyUp", **common)

    def click(self, selector: str) -> None:
        """A real mouse click at the middle of the element `selector` names."""
        box = self.js(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
            ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.page(
                "Input.dispatchMouseEvent",
                type=kind,
                x=box[0],
                y=box[1],
                button="left",
                clickCount=1,
            )

    def type(self, text: str) -> None:
        self.page("Input.insertText", text=text)

    def screenshot(self, path: Path) -> Path:
        data = self.page("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)
        os.close(self._out)


class Server:
    """`judge labels serve` in a subprocess; its URL (with the token) from its stdout."""

    def __init__(self, labelling_dataset: tuple[Path, Path, Path], store: Path, *extra: str):
        result, gt, outputs = labelling_dataset
        command = [sys.executable, "-m", "judge", "labels", "serve", str(result)]
        command += ["--ground-truth", str(gt), "--outputs", str(outputs), "--labeller", "alice"]
        command += ["--labels", str(store), "--no-browser", *extra]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("open "):
                self.url = line.split()[1]
                return
        raise AssertionError(f"labels serve exited with {self.process.wait()} before serving")

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> Iterator[Browser]:
    b = Browser(tmp_path_factory.mktemp("profile"))
    yield b
    b.close()


@pytest.fixture
def serve(labelling_dataset, tmp_path) -> Iterator[Any]:
    servers: list[Server] = []

    def start(*extra: str, store: Path | None = None) -> Server:
        servers.append(Server(labelling_dataset, store or tmp_path / "alice.jsonl", *extra))
        return servers[-1]

    yield start
    for server in servers:
        if server.process.poll() is None:
            server.kill()


def state(b: Browser) -> dict[str, Any]:
    return b.js(
        "({case: +document.body.dataset.case, revealed: document.body.dataset.revealed,"
        " current: document.querySelector('li.current').dataset.q,"
        " status: document.getElementById('status').textContent,"
        " judges: document.querySelectorAll('.judge').length,"
        " marks: document.querySelectorAll('#diagnosis mark').length})"
    )


def answer_case(b: Browser, keys: str) -> None:
    for key in keys:
        b.key(key)
    b.until("document.body.dataset.revealed === 'yes'")


def test_label_three_cases_by_keyboard_reload_and_resume(browser, serve, tmp_path):
    server = serve()
    browser.go(server.url)
    assert state(browser)["case"] == 0
    questions = browser.js("document.querySelectorAll('li.question').length")
    assert questions == 10
    for k in range(3):
        answer_case(browser, ("yyynnnuyyn", "nnnnnnnnnn", "yyyyyyyyyy")[k])
        browser.until("document.getElementById('status').textContent.startsWith('saved')")
        browser.key("l" if k % 2 else "ArrowRight")
        browser.until(f"+document.body.dataset.case === {k + 1}")
    answers = read_store(tmp_path / "alice.jsonl").answers
    assert len(answers) == 30
    assert browser.js("document.getElementById('count').textContent").endswith("3 labelled")
    browser.go(server.url)  # reload
    now = state(browser)
    assert now["case"] == 3 and now["current"] == "D1-Q1" and now["revealed"] == "no"
    browser.key("h")  # back to case 3: the answers kept, the judge shown (it is done)
    browser.until("+document.body.dataset.case === 2")
    pressed = browser.js(
        "[...document.querySelectorAll('button[aria-pressed=true]')].map(b => b.textContent)"
    )
    assert pressed == ["Yes (y)"] * questions


def test_kill_the_server_between_two_answers_nothing_lost(browser, serve, tmp_path):
    store = tmp_path / "alice.jsonl"
    first = serve()
    browser.go(first.url)
    browser.key("y")
    browser.until("document.getElementById('status').textContent.startsWith('saved')")
    first.kill()
    assert len(read_store(store).answers) == 1
    browser.key("n")  # the server is gone: the page must say so, not pretend
    browser.until("document.getElementById('status').textContent.startsWith('NOT SAVED')")
    assert browser.js("document.querySelector('li.unsaved').dataset.q") == "D1-Q2"
    second = serve()
    browser.go(second.url)
    now = state(browser)
    assert now["case"] == 0 and now["current"] == "D1-Q2"  # resumes at the first unanswered
    browser.key("n")
    browser.until("document.getElementById('status').textContent.startsWith('saved')")
    answers = read_store(store).answers
    assert [(k[2], r.answer) for k, r in answers.items()] == [("D1-Q1", "Yes"), ("D1-Q2", "No")]


def test_blind_mode_hides_the_judge_until_the_case_is_done(browser, serve, tmp_path):
    browser.go(serve().url)
    browser.key("r")  # a rationale first, saved with the answer
    browser.type("names the pod, not <the> deployment")
    browser.key("Enter")
    browser.click("li[data-q='D1-Q1'] button.no")  # the mouse works as well as the keys
    browser.until("document.querySelector('li.current').dataset.q === 'D1-Q2'")
    for key in "yyyyyyyy":  # all but the verdict
        browser.key(key)
    browser.until("document.querySelectorAll('button[aria-pressed=true]').length === 9")
    before = state(browser)
    assert before["revealed"] == "no" and before["judges"] == 0 and before["marks"] == 0
    assert browser.js("document.body.textContent.includes('judge:')") is False
    browser.key("n")
    browser.until("document.body.dataset.revealed === 'yes'")
    after = state(browser)
    assert after["judges"] == 10 and after["marks"] > 0
    records = read_store(tmp_path / "alice.jsonl").answers
    assert not any(r.judge_seen for r in records.values())
    first = next(iter(records.values()))
    assert (first.question_id, first.answer) == ("D1-Q1", "No")
    assert first.rationale == "names the pod, not <the> deployment"
    browser.go(serve("--show-judge", store=tmp_path / "shown.jsonl").url)
    shown = state(browser)
    assert shown["revealed"] == "yes" and shown["judges"] == 10


def test_a_hostile_diagnosis_stays_text(browser, serve, tmp_path):
    browser.go(serve("--incident", HOSTILE_INCIDENT, "--show-judge").url)
    title = browser.js("document.getElementById('case-title').textContent")
    assert title.startswith(f"{HOSTILE_INCIDENT} · trial hostile")
    assert browser.js("document.getElementById('diagnosis').textContent") == HOSTILE
    assert browser.js("window.__pwned === undefined && !document.body.hasAttribute('data-pwned')")
    assert browser.js("document.querySelectorAll('img, #diagnosis script').length") == 0
    assert browser.js("document.scripts.length") == 1
    assert browser.js("document.getElementById('count').textContent") == "case 1 of 1 · 0 labelled"
    answer_case(browser, "nnnnnnnnnn")
    browser.until("document.getElementById('status').textContent.startsWith('saved')")
    browser.go(browser.js("location.href"))  # reloaded with every case done: the page says so
    assert browser.js("document.getElementById('status').textContent").startswith(
        "every case here is labelled"
    )
    assert browser.js("document.getElementById('diagnosis').textContent") == HOSTILE


def test_screenshot_of_a_case_compared_with_the_judge(browser, serve, tmp_path):
    browser.go(serve("--incident", "incorrect_image").url)
    answer_case(browser, "yyynyynyyn")
    browser.key("k")
    browser.key("k")
    browser.until("document.querySelector('li.question.disagree') !== null")
    shot = browser.screenshot(tmp_path / "labelling.png")
    assert shot.stat().st_size > 20_000
    keep = os.environ.get("DIAGNOSIS_JUDGE_SCREENSHOTS")
    if keep:
        shutil.copy(shot, Path(keep) / "labelling.png")


def test_informative_order_shows_the_corrected_pass_rate_as_labels_arrive(browser, serve):
    browser.go(serve("--order", "informative").url)
    browser.until("!document.getElementById('estimate').hidden")
    text = browser.js("document.getElementById('estimate').textContent")
    assert "judge alone 0." in text and "corrected with 0 labels (PPI++) undefined" in text
    assert text.endswith("0 cases in the largest fully labelled sample, 0 labelled")
    for k in range(2):
        answer_case(browser, "yyyyyyyyyy")
        browser.until("document.getElementById('status').textContent.startsWith('saved')")
        browser.key("l")
        browser.until(f"+document.body.dataset.case === {k + 1}")
    browser.until("document.getElementById('estimate').textContent.endsWith(', 2 labelled')")
