"""Not one run of a credential's characters leaves the process (issue 35). The provider here
is a local server that echoes the key each request carried: whole and in slices, in an
answer's evidence, in a reply that is no JSON, in a 500's body and in a response header. The
key comes from the environment, a `.env` file (`OPENAI_API_KEY`, sent by the client when no
judge key is set) or `--api-key-env`, at several lengths; every file and stream the run and
the commands after it write is searched for it: the result, the store's every table (its
compressed reply log unpacked), the HTML, JSONL, CSV and JUnit exports, `judge report`'s,
`judge store export`, `judge store logs`, stdout and stderr."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from helpers import EXAMPLE, eval_args

from judge.cli import main
from judge.judges.mask import MIN_RUN
from judge.testing.answers import last_user_text, question_ids

GROUND_TRUTH = EXAMPLE / "ground_truth" / "incorrect_image.yaml"


def make_key(length: int) -> str:
    alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    return "sk-" + "".join(alphabet[(i * 7 + length) % len(alphabet)] for i in range(length - 3))


def leaked(text: str, key: str) -> str | None:
    """The first run of the key's characters in `text` that would give it away: the key itself
    when it is short, else any `MIN_RUN` characters of it."""
    if len(key) < MIN_RUN:
        return key if key in text else None
    grams = {key[i : i + MIN_RUN] for i in range(len(key) - MIN_RUN + 1)}
    return next((g for g in grams if g in text), None)


class Echo:
    """Answers request i by `MODES[i % 4]`, echoing the bearer token it was sent."""

    MODES = ("evidence", "not json", "500", "header")

    def __init__(self) -> None:
        self.seen: list[str] = []
        echo = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                key = (self.headers.get("authorization") or "").removeprefix("Bearer ")
                mode = echo.MODES[len(echo.seen) % len(echo.MODES)]
                echo.seen.append(key)
                ids = question_ids(last_user_text(body["messages"]))
                status, text = echo.reply(mode, key, ids)
                raw = json.dumps(text).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("x-echo-authorization", f"Bearer {key}")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @staticmethod
    def reply(mode: str, key: str, ids: list[str]) -> tuple[int, dict]:
        if mode == "500":
            return 500, {"error": {"message": f"upstream refused token {key} ({key[2:12]})"}}
        if mode == "not json":
            content = f"I cannot answer. Your token was {key}; its tail is {key[-10:]}."
        else:
            quote = f"key {key}" if mode == "evidence" else f"part {key[1:11]} and {key[-9:]}"
            answers = [
                {"id": q, "answer": "Yes", "evidence": quote, "confidence": "High"} for q in ids
            ]
            content = json.dumps({"answers": answers})
        message = {"role": "assistant", "content": content}
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        return 200, {
            "id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": usage,
        }  # fmt: skip

    def __enter__(self) -> Echo:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


def store_texts(path: Path) -> Iterator[str]:
    """Every value of every table of the store, a compressed one unpacked, and the file's raw
    bytes."""
    yield path.read_bytes().decode("latin-1")
    with sqlite3.connect(path) as db:
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                for value in row:
                    if isinstance(value, bytes):
                        with contextlib.suppress(zlib.error):
                            value = zlib.decompress(value)
                        value = value.decode("utf-8", "replace")
                    yield str(value)
    db.close()


def parts_of(texts: list[str]) -> str:
    """zlib keeps the reply log's text in parts: a whole piece is only readable joined."""
    return "\n".join(texts)


SOURCES = ["environment", ".env file", "--api-key-env"]
LENGTHS = [6, 9, 24, 64, 160]


@pytest.mark.slow
@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("source", SOURCES)
def test_no_run_of_the_key_in_any_output(
    source: str, length: int, tmp_path: Path, capsys, monkeypatch
) -> None:
    key = make_key(length)
    monkeypatch.chdir(tmp_path)
    extra: list[str] = []
    if source == "environment":
        monkeypatch.setenv("JUDGE_API_KEY", key)
    elif source == ".env file":
        (tmp_path / ".env").write_text(f"OPENAI_API_KEY={key}\n")  # the lean client sends it
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    else:
        monkeypatch.setenv("MY_PROVIDER_PASS", key)
        extra = ["--api-key-env", "MY_PROVIDER_PASS"]
    out = tmp_path / "out"
    with Echo() as echo:
        args = eval_args(
            GROUND_TRUTH, EXAMPLE / "outputs", out / "r.json",
            "--judge-model", "openai/m", "--api-base", echo.url, "--max-concurrent", "1",
            "--max-retries", "1", "--cooldown-after", "0", "--html", str(out / "r.html"),
            "--csv", str(out / "r.csv"), "--jsonl", str(out / "r.jsonl"),
            "--junit", str(out / "r.xml"), *extra,
        )  # fmt: skip
        code = main(args)
        assert echo.seen and set(echo.seen) == {key}  # the key went out, as sent, and came back
    printed = [capsys.readouterr()]
    assert code in (0, 3)
    store = out / "r.sqlite"
    for command in (
        ["report", str(out / "r.json"), "--ground-truth", str(GROUND_TRUTH),
         "--outputs", str(EXAMPLE / "outputs"), "--html", str(out / "again.html"),
         "--csv", str(out / "again.csv"), "--jsonl", str(out / "again.jsonl"),
         "--junit", str(out / "again.xml")],
        ["store", "export", str(store)],
        ["store", "export", str(store), "--errors"],
        ["store", "logs", str(store)],
        ["store", "logs", str(store), "--json"],
        ["store", "stats", str(store)],
        ["store", "explain", str(store), "--incident", "incorrect_image"],
    ):  # fmt: skip
        assert main(command) == 0, command
        printed.append(capsys.readouterr())
    texts = [c.out for c in printed] + [c.err for c in printed]
    texts += [p.read_bytes().decode("utf-8", "replace") for p in out.iterdir()]
    texts += list(store_texts(store))
    for text in [*texts, parts_of(texts)]:
        assert leaked(text, key) is None, (leaked(text, key), text[:2000])
    logged = "\n".join(c.out for c in printed)
    assert "***" in logged  # where the key was, the mask is


def test_a_batch_line_echoing_the_key_is_masked(tmp_path: Path, capsys, monkeypatch) -> None:
    """A provider batch's output file is read like a live reply, masked as it arrives."""
    from judge.testing import FakeProvider, FakeProviderConfig, fake_provider

    key = make_key(40)
    real = fake_provider.build_answers

    def echoing(messages, ids, policy):  # type: ignore[no-untyped-def]
        answers = real(messages, ids, policy)
        return [{**a, "evidence": f"{a['evidence']} {key}"} for a in answers]

    monkeypatch.setattr(fake_provider, "build_answers", echoing)
    monkeypatch.setenv("JUDGE_API_KEY", key)
    out = tmp_path / "out"
    with FakeProvider(FakeProviderConfig(api_key=key, batch_delay=0.1)) as provider:
        args = eval_args(
            GROUND_TRUTH, EXAMPLE / "outputs", out / "r.json", "--judge-model",
            "openai/fake-judge", "--api-base", provider.url, "--batch", "--batch-poll", "0.05",
            "--no-progress", "--jsonl", str(out / "r.jsonl"),
        )  # fmt: skip
        assert main(args) == 0
    assert main(["store", "export", str(out / "r.sqlite")]) == 0
    printed = capsys.readouterr()
    texts = [
        printed.out,
        printed.err,
        *(p.read_bytes().decode("utf-8", "replace") for p in out.iterdir()),
    ]
    texts += list(store_texts(out / "r.sqlite"))
    for text in texts:
        assert leaked(text, key) is None, text[:1000]
    assert "***" in (out / "r.jsonl").read_text()


def test_secrets_mask_every_credential_the_environment_names() -> None:
    from judge.judges.mask import Secrets

    environ = {
        "OPENAI_API_KEY": "sk-a1",  # an API key, however short (from 4 characters)
        "GITHUB_TOKEN": "ghp_0123456789abcdef",
        "DB_PASSWORD": "hunter2hunter2",
        "PIP_NO_KEY": "1",  # too short to be a secret: never masked
        "HOME": "/root/somewhere/long",
    }
    secrets = Secrets.of("judge-key-0123456789", environ)
    text = (
        "sk-a1 ghp_0123456789abcdef hunter2hunter2 1 /root/somewhere/long "
        "judge-key-0123456789 and a slice: key-01234567"
    )
    assert secrets.mask(text) == "*** *** *** 1 /root/somewhere/long *** and a slice: ***"
    assert not Secrets.of(None, {"HOME": "/x"})  # nothing held: every text as it is
