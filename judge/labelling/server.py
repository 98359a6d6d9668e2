"""The labelling page's HTTP server: the standard library's `ThreadingHTTPServer`.

Why no framework: the server has seven routes, one writer and one user on 127.0.0.1; the
standard library serves that with no new dependency for every install of the package, and the
security that matters here (token, Host check, CSP, escaping) is a few explicit lines either way.

Safe by default: it binds 127.0.0.1 only; every request must carry the session's random token
(`?token=`, as Jupyter does) and a Host of 127.0.0.1 or localhost (against DNS rebinding);
answers are POSTed as JSON only (no form can forge one); each response carries a strict
Content-Security-Policy (scripts, styles and requests from this server only, no inline code),
`no-store` and `no-referrer`. The page builds its DOM with `textContent` only, so no text from a
spec, a diagnosis or a judge is ever parsed as HTML.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pydantic import BaseModel, ValidationError

from ..errors import StorageError
from .cases import LabelCase
from .ordering import labelled
from .store import AnswerRecord, HumanAnswer, LabelStore, SessionRecord

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
STATIC = {"/app.js": "text/javascript", "/app.css": "text/css"}
MAX_BODY = 64 * 1024
MAX_RATIONALE = 1000


class AnswerIn(BaseModel):
    """A labeller's answer as posted by the page; answer None clears it."""

    case: int
    question_id: str
    answer: HumanAnswer | None
    rationale: str = ""


class LabellingApp:
    """The session: its cases in order, the store, whether the judge is shown from the start,
    and (`--order informative`) the corrected pass rate as labels arrive."""

    def __init__(
        self,
        cases: list[LabelCase],
        store: LabelStore,
        session: SessionRecord,
        estimate: Callable[[], dict[str, Any]] | None = None,
    ):
        self.cases = cases
        self.store = store
        self.session = session
        self.estimate = estimate
        self.show_judge = session.mode == "show-judge"
        self.token = secrets.token_urlsafe(24)
        self.lock = threading.Lock()

    def revealed(self, case: LabelCase) -> bool:
        return self.show_judge or labelled(case, self.store.contents)

    def overview(self) -> dict[str, Any]:
        done = [labelled(c, self.store.contents) for c in self.cases]
        start = next((i for i, d in enumerate(done) if not d), 0)
        return {
            "labeller": self.session.labeller,
            "mode": self.session.mode,
            "store": str(self.store.path),
            "start": start,
            "estimate": self.estimate is not None,
            "cases": [
                {"key": c.key, "incident_id": c.incident_id, "trial": c.trial, "done": d}
                for c, d in zip(self.cases, done, strict=True)
            ],
        }

    def case_view(self, index: int) -> dict[str, Any]:
        case = self.cases[index]
        answers = {
            q.id: {"answer": rec.answer, "rationale": rec.rationale}
            for q in case.questions
            if (rec := self.store.contents.answers.get((case.incident_id, case.trial, q.id)))
        }
        view = case.model_dump(
            mode="json", exclude={"judge", "judges_split", "split_questions", "composite"}
        )
        view.update(index=index, answers=answers, done=labelled(case, self.store.contents))
        view["judge"] = self._judge(case) if self.revealed(case) else None
        return view

    def _judge(self, case: LabelCase) -> dict[str, Any]:
        return {qid: a.model_dump(mode="json") for qid, a in case.judge.items()}

    def answer(self, given: AnswerIn) -> dict[str, Any]:
        if not 0 <= given.case < len(self.cases):
            raise LookupError(f"no case {given.case}")
        case = self.cases[given.case]
        question = next((q for q in case.questions if q.id == given.question_id), None)
        if question is None:
            raise LookupError(f"{case.key} has no question {given.question_id!r}")
        with self.lock:
            record = AnswerRecord(
                labeller=self.session.labeller,
                incident_id=case.incident_id,
                trial=case.trial,
                question_id=question.id,
                dimension_id=question.dimension_id,
                question_text=question.text,
                answer=given.answer,
                rationale=" ".join(given.rationale.split())[:MAX_RATIONALE],
                judge_seen=self.revealed(case),
            )
            self.store.append(record)
            return self.case_view(given.case)


class Handler(BaseHTTPRequestHandler):
    """The labelling page's HTTP handler: a request needs the session token and a local Host."""

    server: LabellingServer
    server_version = "judge-labels"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the token is in every request line, and the terminal is the user's."""

    def do_GET(self) -> None:
        path = self._authorised()
        if path is None:
            return
        app = self.server.app
        if path == "/":
            page = files(__package__).joinpath("static/index.html").read_text(encoding="utf-8")
            body = page.replace("{{TOKEN}}", app.token).encode("utf-8")  # url-safe base64
            self._send(HTTPStatus.OK, "text/html; charset=utf-8", body)
        elif path in STATIC:
            body = files(__package__).joinpath("static" + path).read_bytes()
            self._send(HTTPStatus.OK, f"{STATIC[path]}; charset=utf-8", body)
        elif path == "/api/session":
            self._json(HTTPStatus.OK, app.overview())
        elif path == "/api/estimate" and app.estimate is not None:
            with app.lock:
                self._json(HTTPStatus.OK, app.estimate())
        elif path == "/api/case":
            index = self._query_int("i")
            if index is None or not 0 <= index < len(app.cases):
                self._json(HTTPStatus.NOT_FOUND, {"error": "no such case"})
            else:
                self._json(HTTPStatus.OK, app.case_view(index))
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})

    def do_POST(self) -> None:
        path = self._authorised()
        if path is None:
            return
        if path != "/api/answer":
            self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})
            return
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            self._json(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, {"error": "send application/json"})
            return
        length_text = self.headers.get("Content-Length") or "0"
        length = int(length_text) if length_text.isdigit() else 0
        if not 0 < length <= MAX_BODY:
            self._json(HTTPStatus.BAD_REQUEST, {"error": "empty or too large body"})
            return
        try:
            given = AnswerIn.model_validate_json(self.rfile.read(length))
            self._json(HTTPStatus.OK, self.server.app.answer(given))
        except (ValidationError, LookupError) as exc:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc).splitlines()[0]})
        except StorageError as exc:
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"not saved: {exc}"})

    def _authorised(self) -> str | None:
        """The request's path when it carries the token and a local Host; else a 403, None."""
        url = urlsplit(self.path)
        token = (parse_qs(url.query).get("token") or [""])[0]
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
        if host not in ("127.0.0.1", "localhost") or not hmac.compare_digest(
            token.encode(), self.server.app.token.encode()
        ):
            self._send(
                HTTPStatus.FORBIDDEN,
                "text/plain; charset=utf-8",
                b"forbidden: open the URL `judge labels serve` printed, with its token\n",
            )
            return None
        return url.path

    def _query_int(self, name: str) -> int | None:
        value = (parse_qs(urlsplit(self.path).query).get(name) or [""])[0]
        return int(value) if value.isdigit() else None

    def _json(self, status: HTTPStatus, data: Any) -> None:
        self._send(status, "application/json", json.dumps(data).encode("utf-8"))

    def _send(self, status: HTTPStatus, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Frame-Options", "DENY")
        self.end_headers()
        self.wfile.write(body)


class LabellingServer(ThreadingHTTPServer):
    """The labelling HTTP server, on 127.0.0.1 only (port 0 picks a free one); `url` carries
    the token.
    """

    daemon_threads = True

    def __init__(self, app: LabellingApp, port: int = 0):
        self.app = app
        super().__init__(("127.0.0.1", port), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/?token={self.app.token}"
