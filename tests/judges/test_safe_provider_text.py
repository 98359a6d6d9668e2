"""A provider's words reach the terminal escaped (issue 27): the body of a 401 or a 500 can
hold escape sequences (an OSC title, a screen clear), NUL bytes, bidi controls and rich
markup, all printed as text, never obeyed. The provider is a local server on 127.0.0.1 that
answers every request with such a body."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from helpers import one_incident_args

from judge.cli import main

HOSTILE = "nope \x1b]0;owned\x07\x1b[2J\x00 [bold red]styled[/bold red] \u202eevil"
RAW = ("\x1b", "\x07", "\x00", "\u202e")


def hostile_server(status: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            body = json.dumps({"error": {"message": HOSTILE, "type": "x"}}).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)


@pytest.fixture(params=[401, 500], ids=["401", "500"])
def hostile_provider_url(request, monkeypatch) -> Iterator[str]:
    server = hostile_server(request.param)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_provider_error_body_is_printed_escaped(
    hostile_provider_url: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # the exit line unwrapped, whatever the client's words
    args = one_incident_args(
        tmp_path / "r.json", "--judge-model", "openai/fake", "--api-base", hostile_provider_url,
        "--max-retries", "0", "--cooldown-after", "1", "--cooldown", "0.01",
    )  # fmt: skip
    assert main(args) == 3
    captured = capsys.readouterr()
    printed = captured.out + captured.err
    assert not [c for c in RAW if c in printed]
    assert "exit 3:" in captured.err and "exit 3:" not in captured.out  # the exit line
    assert "\\x1b]0;owned\\x07\\x1b[2J\\x00" in captured.err
    assert "[bold red]styled[/bold red]" in captured.err  # markup shown, not applied
    assert "\\x1b]0;owned" in captured.err  # the progress notes
