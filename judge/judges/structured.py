"""Structured-output negotiation: ask for the strongest reply format the server accepts.

Self-hosted OpenAI-compatible servers differ in what `response_format` they take: OpenAI and
vLLM take `json_schema`; llama.cpp takes `json_object` with a `schema` key (enforced by a
grammar) and refuses `json_schema`; some gateways take `json_object` only, or nothing. A refusal
of the format is a capability answer, not a transient fault: the judge steps down to the next
mode at once and never retries the refused one. The mode that works is remembered per
(model, endpoint) for the rest of the run and reported in the result's config.

The messages are the same in every mode: the system prompt already spells out the reply's JSON
shape, so `prompt` mode (no `response_format`) differs only in that nothing enforces it, and
the reply is extracted tolerantly (`judge.judges.repair`).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, Literal

Mode = Literal["json_schema", "json_object+schema", "json_object", "prompt"]
MODES: tuple[Mode, ...] = ("json_schema", "json_object+schema", "json_object", "prompt")
CHOICES = ("auto", *MODES)
"""What `--structured-output` accepts: `auto` negotiates, a mode forces it."""

_REFUSAL_STATUS = frozenset({400, 415, 422, 500, 501})
_FORMAT_WORDS = re.compile(
    r"response_format|response format|json_schema|json_object|\bschema\b|guided_json"
    r"|guided decoding|structured output|grammar",
    re.IGNORECASE,
)


def response_format(mode: Mode, json_schema_format: dict[str, Any]) -> dict[str, Any] | None:
    """The `response_format` request field for a mode (None: send none).

    `json_schema_format` is the strict `{"type": "json_schema", "json_schema": {...}}` form."""
    if mode == "json_schema":
        return json_schema_format
    if mode == "json_object+schema":
        return {"type": "json_object", "schema": json_schema_format["json_schema"]["schema"]}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def status_code(exc: BaseException) -> int | None:
    """The HTTP status of a provider exception, from it or its response; None if it has none."""
    code = getattr(exc, "status_code", None)
    if code is None:
        code = getattr(getattr(exc, "response", None), "status_code", None)
    return code if isinstance(code, int) else None


def is_format_refusal(exc: BaseException) -> bool:
    """An HTTP 400/415/422/500/501 whose message is about the reply format: the server
    cannot do this mode (llama-cpp-python: 500 "Input should be 'text' or 'json_object'")."""
    if status_code(exc) not in _REFUSAL_STATUS:
        return False
    text = " ".join(
        str(x) for x in (exc, getattr(exc, "body", None) or "", getattr(exc, "message", ""))
    )
    return bool(_FORMAT_WORDS.search(text))


class FormatRefused(Exception):
    """The server refused a reply format the user forced with `--structured-output`."""

    def __init__(self, mode: Mode, cause: BaseException):
        super().__init__(f"the server refused response_format {mode!r}")
        self.mode = mode
        self.cause = cause


PROBE_WINDOW = 15.0
"""Seconds the other calls wait for the first request in an unconfirmed mode, from when it gets
its request slot, when its client cannot tell when the request reached the server (litellm's).
Servers refuse a format while validating the request, in milliseconds, but litellm's own first
call (its set-up inside `acompletion`) took seconds on a loaded machine: with 5 s the window ran
out before the refusal came back and every call in flight sent the refused format too."""

HEAD_START_FLOOR = 0.1
"""Seconds, at least, that the others wait once the probe's request has reached the server
(the `openai` client tells, `judge.judges.clients.sent`): a server refuses a format while it
reads the request, in milliseconds (the fake provider, llama-cpp-python, vLLM), so a refusal is
back within the network's round trips and this margin for a busy server or event loop."""
HEAD_START_ROUND_TRIPS = 4
"""The wait, in round trips (the seconds the probe's connection took to open): the refusal's
own, and three for a slow link's spread."""


class Negotiation:
    """The reply format one (model, endpoint) is asked for, shared by all of a run's calls.

    With `requested="auto"`, while no reply has confirmed the mode, the first request goes out
    alone (a probe): the others wait until it ends, or until a refusal would have come back
    (`head_start` after its request reached the server, more on a slow link), or until
    `probe_window` passes when its client cannot tell when the request went out. So a refusal
    is met once per mode, not once per call in flight, and a server that accepts the format
    costs the run a round trip or two at its start, not a whole reply's latency. A refusal
    slower than that (a server that validates after queueing the request) is met once per call
    then in flight, each stepping down at once."""

    def __init__(
        self,
        requested: str = "auto",
        probe_window: float = PROBE_WINDOW,
        head_start: float = HEAD_START_FLOOR,
    ):
        if requested not in CHOICES:
            raise ValueError(f"structured output {requested!r}: expected one of {CHOICES}")
        self.requested = requested
        self.mode: Mode = "json_schema" if requested == "auto" else requested  # type: ignore[assignment]
        self.confirmed = requested != "auto"
        self.refused: list[Mode] = []
        self.probe_window = probe_window
        self.head_start = head_start
        self._probe: asyncio.Event | None = None
        self._probing = False
        self._armed = False
        self._sent = False
        self._round_trip = 0.0

    @property
    def probing(self) -> bool:
        return self._probing

    def start_probe(self) -> None:
        self._probing = True
        self._probe = asyncio.Event()
        self._armed = False
        self._sent = False

    def arm_probe(self) -> None:
        """The probe's request has its slot and goes out now: the window starts here, not when
        the probe began, since waiting for a slot (or litellm's import) is not the server's
        answer; on a loaded machine a window started earlier ran out first and every waiting
        call sent the refused format too (four refusals instead of one, with a real server)."""
        if self._probing and self._probe is not None and not self._armed:
            self._armed = True
            asyncio.get_running_loop().call_later(self.probe_window, self._probe.set)

    def request_sent(self, connect_seconds: float | None) -> None:
        """The probe's request has reached the server (`connect_seconds`: how long its
        connection took to open, None when it was open already): the others go once a refusal
        would have come back."""
        if connect_seconds is not None:
            self._round_trip = connect_seconds
        if not self._probing or self._probe is None or self._sent:
            return
        self._sent = True
        wait = max(self.head_start, HEAD_START_ROUND_TRIPS * self._round_trip)
        asyncio.get_running_loop().call_later(wait, self._probe.set)

    def end_probe(self) -> None:
        self._probing = False
        if self._probe is not None:
            self._probe.set()

    async def wait_probe(self) -> None:
        if self._probe is not None:
            await self._probe.wait()

    def step_down(self, refused: Mode) -> Mode | None:
        """The next weaker mode after `refused` (None when nothing weaker is left, or when the
        user forced the mode)."""
        if self.requested != "auto":
            return None
        if refused not in self.refused:
            self.refused.append(refused)
        index = MODES.index(refused)
        if index + 1 < len(MODES) and MODES.index(self.mode) <= index:
            self.mode = MODES[index + 1]
        return self.mode if MODES.index(self.mode) > index else None

    def adopt(self, mode: str) -> bool:
        """Start from a mode an earlier run found to work (e.g. kept in the store's metadata)
        instead of asking again; ignored when the user forced a mode. A later refusal still
        steps down from it."""
        known = next((m for m in MODES if m == mode), None)
        if self.requested != "auto" or known is None:
            return False
        self.mode = known
        self.confirmed = True
        return True

    def describe(self) -> dict[str, Any]:
        return {
            "requested": self.requested,
            "mode": self.mode,
            "confirmed": self.confirmed,
            "refused": list(self.refused),
        }
