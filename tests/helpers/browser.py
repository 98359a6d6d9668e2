"""A headless Chromium spoken to over the DevTools pipe (`--remote-debugging-pipe`: file
descriptors 3 and 4, NUL-separated JSON): the standard library is enough, no websocket package
or chromedriver is needed, and key presses and clicks are real input events. Used by the
browser-marked tests of the labelling page and of the report's pictures."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from . import CHROMIUM, CHROMIUM_FLAGS

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
