"""Every reply kept, to read back later (issue 24): the store logs each provider request of a
run, with the prompt as sent (its pieces kept once) and the reply text exactly as it arrived,
latency, tokens and cost; `judge store logs` prints them, the HTML report links each answer to
its call's raw reply, `--no-log-text` keeps only the numbers, and the API key is in none of it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from helpers import EXAMPLE_GT, EXAMPLE_OUTPUTS, FIXTURES, eval_args
from helpers.report import Page

from ground_truth import load_specs, load_submissions
from judge import EvalOptions, evaluate, make_judge
from judge.checklist.texts import texts_from
from judge.cli import main
from judge.judges.mask import MIN_RUN
from judge.report.html import render_html
from judge.report.view import build_view
from judge.store import LogFilter, Store, merge_stores
from judge.store.replies import pack, read_piece, unpack
from judge.testing import FakeProvider, FakeProviderConfig
from judge.testing.replies import Reply

KEY = "sk-live-" + "Zq7" * 20


class SentProvider(FakeProvider):
    """The fake provider, keeping each completion's text as it sent it (by the hash of the
    messages it answered, in order), with odd bytes added: a lone surrogate escape, accents,
    trailing blanks; with `echo_key`, a reply that quotes the key it was sent."""

    def __init__(self, config: FakeProviderConfig, echo_key: bool = False) -> None:
        super().__init__(config)
        self.sent: dict[str, list[str | None]] = {}
        self.echo_key = echo_key

    def serve_completion(self, path: str, raw: bytes, auth_header: str | None) -> Reply:
        reply = super().serve_completion(path, raw, auth_header)
        messages = json.loads(raw)["messages"]
        digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
        content = None
        if reply.payload is not None and "choices" in reply.payload:
            message = reply.payload["choices"][0]["message"]
            text = message["content"].replace('"evidence": "', '"evidence": "\ud800 é—', 1)
            if self.echo_key:
                text += f"\n(sent with {auth_header})"
            message["content"] = content = text + " \n\t "
        self.sent.setdefault(digest, []).append(content)
        return reply


def _digest(messages: list[dict[str, str]]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()


def _run(store: Path, config: FakeProviderConfig, n: int = 4, **options: Any):
    specs, subs = load_specs(EXAMPLE_GT), load_submissions(EXAMPLE_OUTPUTS)[:n]
    with SentProvider(config, echo_key=options.pop("echo_key", False)) as provider:
        judge = make_judge(
            "openai/fake-judge",
            api_base=provider.url,
            api_key=options.pop("api_key", None),
            retry_wait=0.01,
        )
        result = evaluate(
            specs,
            subs,
            judge=judge,
            options=EvalOptions(store=store, **{"granularity": "dimension", **options}),
        )
        return result, provider.sent, specs, subs


def _logs(store: Path, **where: Any):
    with Store(store, readonly=True) as opened:
        return list(opened.logs(LogFilter(**where)))


def test_each_request_is_kept_with_the_prompt_sent_and_the_reply_as_it_arrived(tmp_path):
    """A malformed reply (re-asked) and a 500 (retried) among them: every request is a row,
    its messages are exactly those the server received, and its reply exactly the text the
    server sent, before any repair."""
    store = tmp_path / "s.sqlite"
    config = FakeProviderConfig(fault_schedule=["ok", "malformed", "500"], ignore_schema=True)
    result, sent, _, _ = _run(store, config)
    logged = _logs(store)
    assert len(logged) == result.usage.requests == sum(len(v) for v in sent.values())
    seen: dict[str, int] = {}
    for row in logged:
        digest = _digest(row.messages)
        assert digest in sent, "the logged prompt is not what the server received"
        n = seen.get(digest, 0)
        seen[digest] = n + 1
        assert row.reply == sent[digest][n]
        if row.reply is None:
            assert row.error_kind == "server" and row.error.startswith("server from")
        else:
            assert row.reply.endswith(" \n\t ")
            assert row.latency_s is not None and row.latency_s >= 0
            assert row.prompt_tokens and row.completion_tokens and row.finish_reason
    assert sum("\ud800 é—" in (row.reply or "") for row in logged) >= len(logged) - 2
    kinds = [row.error_kind for row in logged]
    assert kinds.count("unparseable") == 1 and kinds.count("server") == 1
    reasked = next(r for r in logged if r.request == 2 and r.messages[-2]["role"] == "assistant")
    assert "not usable" in reasked.messages[-1]["content"]
    calls = {(c.incident_id, c.trial, c.dimension_id): c for c in result.calls}
    for row in logged:
        call = calls[(row.incident_id, row.trial, row.dimension_id)]
        assert row.prompt_hash == call.prompt_hash and row.judge == call.judge


def test_prompt_text_is_kept_once_per_piece(tmp_path):
    """The system text and each dimension's questions once for the store, a submission's case
    once for its three calls; a repeat run (--refresh) adds rows but no text."""
    store = tmp_path / "s.sqlite"
    _run(store, FakeProviderConfig(), n=5)
    with sqlite3.connect(store) as db:
        (pieces,) = db.execute("SELECT count(DISTINCT hash) FROM reply_texts").fetchone()
        (rows,) = db.execute("SELECT count(*) FROM replies").fetchone()
    assert rows == 15 and pieces == 1 + 5 + 3
    _run(store, FakeProviderConfig(), n=5, refresh=True)
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(DISTINCT hash) FROM reply_texts").fetchone() == (pieces,)
        assert db.execute("SELECT count(*) FROM replies").fetchone() == (30,)


def test_texts_round_trip_exactly_compressed_or_not():
    for text in ["", "short", "{}" * 500, "lone \ud800 surrogate", "é" * 300 + "\x00\x1b[31m"]:
        assert unpack(pack(text)) == text
    assert isinstance(pack("{}" * 500), bytes) and pack("short") == "short"


def test_store_logs_prints_the_raw_replies_and_filters_them(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    config = FakeProviderConfig(fault_schedule=["ok", "malformed", "500"])
    _, _, _, subs = _run(store, config)
    logged = _logs(store)
    capsys.readouterr()
    assert main(["store", "logs", str(store)]) == 0
    text = capsys.readouterr().out
    assert text.count("=== #") == len(logged)
    assert "--- reply (as it arrived)" in text and "\\ud800 é—" in text
    assert "\ufffd" not in text and "error: server: server from openai/fake-judge" in text
    assert main(["store", "logs", str(store), "--failed", "--json"]) == 0
    failed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert sorted(r["error_kind"] for r in failed) == ["server", "unparseable"]
    incident = subs[-1].incident_id
    assert main(["store", "logs", str(store), "--incident", incident, "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows and {r["incident_id"] for r in rows} == {incident}
    assert main(["store", "logs", str(store), "--question", "D2-Q3", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows and all(r["dimension_id"] == "D2" and "D2-Q3" in r["questions"] for r in rows)
    assert {r["reply"] for r in rows if r["reply"]} <= {r.reply for r in logged}


def test_store_logs_makes_control_characters_visible(tmp_path, capsys):
    store = tmp_path / "s.sqlite"

    class Hostile(SentProvider):
        def serve_completion(self, path, raw, auth_header):
            reply = super().serve_completion(path, raw, auth_header)
            if reply.payload is not None and "choices" in reply.payload:
                reply.payload["choices"][0]["message"]["content"] += "\x1b]0;pwned\x07\x1b[2J"
            return reply

    specs, subs = load_specs(EXAMPLE_GT), load_submissions(EXAMPLE_OUTPUTS)[:1]
    with Hostile(FakeProviderConfig()) as provider:
        judge = make_judge("openai/fake-judge", api_base=provider.url, retry_wait=0.01)
        evaluate(
            specs, subs, judge=judge, options=EvalOptions(store=store, granularity="dimension")
        )
    capsys.readouterr()
    assert main(["store", "logs", str(store)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "pwned" in out
    assert all(r.reply.endswith("\x1b]0;pwned\x07\x1b[2J") for r in _logs(store))


def test_no_log_text_keeps_the_numbers_and_no_text(tmp_path, capsys):
    out = tmp_path / "r.json"
    with FakeProvider(FakeProviderConfig()) as provider:
        code = main(
            eval_args(
                EXAMPLE_GT / "incorrect_image.yaml",
                EXAMPLE_OUTPUTS,
                out,
                "--judge-model",
                "openai/fake-judge",
                "--api-base",
                provider.url,
                "--no-log-text",
                "--no-progress",
                "--granularity",
                "dimension",
            )
        )
    assert code == 0
    store = out.with_suffix(".sqlite")
    logged = _logs(store)
    assert len(logged) == 9
    assert all(r.messages is None and r.reply is None for r in logged)
    assert all(r.latency_s is not None and r.prompt_tokens for r in logged)
    with Store(store, readonly=True) as opened:
        assert opened.stats()["replies"] == {"requests": 9, "with_text": 0, "texts": 0}
    capsys.readouterr()
    main(["store", "logs", str(store)])
    assert "prompt and reply not logged: --no-log-text" in capsys.readouterr().out


def _key_runs(text: str) -> list[str]:
    grams = {KEY[i : i + MIN_RUN] for i in range(len(KEY) - MIN_RUN + 1)}
    return [text[i : i + MIN_RUN] for i in range(len(text)) if text[i : i + MIN_RUN] in grams]


def test_the_api_key_is_nowhere_in_the_log_even_when_a_reply_or_an_error_echoes_it(tmp_path):
    """The key reaches the server (it checks it); a reply quoting the Authorization header it
    got, and a 401 whose message echoes the key, are logged with the key masked: no run of 8
    of its characters is in the store's bytes, nor in any text once decompressed."""
    store = tmp_path / "s.sqlite"
    config = FakeProviderConfig(api_key=KEY)
    result, sent, _, _ = _run(store, config, n=2, api_key=KEY, echo_key=True)
    assert result.complete and any(KEY in (t or "") for ts in sent.values() for t in ts)
    wrong = FakeProviderConfig(api_key="sk-another", echo_key_padding=10)
    _run(store, wrong, n=1, api_key=KEY, refresh=True)
    logged = _logs(store)
    assert any(r.reply and "sent with Bearer ***" in r.reply for r in logged)
    assert any(r.error_kind == "auth" and "***" in r.error for r in logged)
    with sqlite3.connect(store) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        hashes = [h for (h,) in db.execute("SELECT DISTINCT hash FROM reply_texts")]
        texts = [read_piece(db, h) or "" for h in hashes]
        texts += [unpack(t) for (t,) in db.execute("SELECT reply FROM replies") if t is not None]
    dumped = "".join(json.dumps(r.model_dump()) for r in logged) + "".join(texts)
    raw = "".join(f.read_bytes().decode("latin-1") for f in tmp_path.glob("s.sqlite*"))
    assert _key_runs(dumped) == [] and _key_runs(raw) == []


def test_the_report_links_each_answer_to_its_raw_reply(tmp_path, monkeypatch):
    """Each answer links to the raw replies of the call that gave it (a re-asked call shows
    both), the page holds each reply's text, and a store not found where the result says
    is named instead."""
    monkeypatch.chdir(tmp_path)
    config = FakeProviderConfig(fault_schedule=["ok", "malformed"])
    result, _, specs, subs = _run(Path("s.sqlite"), config)
    assert result.config["store"] == "s.sqlite"
    texts = texts_from(specs, subs, result.config["rubric"])
    view = build_view(result, texts)
    by_prompt = {(r.judge, r.prompt_hash): r for r in _logs(Path("s.sqlite"))}
    linked = 0
    for incident in view.incidents:
        for case in incident.cases:
            calls = {c.anchor: c for c in case.replies}
            for row in case.questions:
                call = calls[row.reply]
                assert call.dimension_id == row.dimension_id
                assert {r.prompt_hash for r in call.requests} == {row.prompt_hash}
                assert (row.judge, row.prompt_hash) in by_prompt
                linked += 1
    assert linked == len(result.judgments)
    assert (
        sorted(len(c.requests) for i in view.incidents for k in i.cases for c in k.replies)[-1] == 2
    )
    page = Page(render_html(result, texts))
    ids = {attrs.get("id") for _, attrs in page.elements}
    links = [a["href"] for a in page.tags("a") if "reply-link" in (a.get("class") or "")]
    assert len(links) == len(result.judgments) and {h[1:] for h in links} <= ids
    shown = page.all_text
    for row in by_prompt.values():
        assert row.reply is not None
        assert row.reply.encode("utf-8", "backslashreplace").decode("utf-8") in shown
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    page = Page(render_html(result))
    assert not [a for a in page.tags("a") if "reply-link" in (a.get("class") or "")]
    assert "s.sqlite (not found here: no raw replies)" in page.all_text


def test_merged_stores_keep_every_logged_request(tmp_path):
    first, second = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    _run(first, FakeProviderConfig(), n=2)
    _run(second, FakeProviderConfig(), n=3)
    outcome = merge_stores(tmp_path / "all.sqlite", [first, second])
    merged = _logs(tmp_path / "all.sqlite")
    assert outcome.replies == len(merged) == 6 + 9
    assert [r.reply for r in merged] == [r.reply for r in _logs(first) + _logs(second)]
    assert [r.messages for r in merged] == [r.messages for r in _logs(first) + _logs(second)]


def test_a_store_older_than_the_log_gets_it_and_older_code_ignores_it(tmp_path):
    """A store written before m004 (no replies tables) reads, logs nothing read-only, and is
    given the tables when opened for writing."""
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript((FIXTURES / "stores/store-v2-2225f7b.sql").read_text())
    db.close()
    with Store(path, readonly=True) as store:
        assert list(store.logs()) == [] and store.reply_stats()["requests"] == 0
    _run(path, FakeProviderConfig(), n=1)
    assert len(_logs(path)) == 3


@pytest.mark.parametrize("granularity", ["submission"])
def test_a_whole_submission_call_is_logged_under_its_dimension_star(tmp_path, granularity):
    store = tmp_path / "s.sqlite"
    _run(store, FakeProviderConfig(), n=2, granularity=granularity)
    logged = _logs(store)
    assert len(logged) == 2 and {r.dimension_id for r in logged} == {"*"}
    assert all(len(r.questions) == 9 for r in logged)
    assert _logs(store, question_id="D3-Q1") == logged


@pytest.mark.parametrize("action", ["logs", "stats", "export"])
def test_store_commands_on_a_missing_store_exit_2_naming_the_argument(tmp_path, capsys, action):
    missing = tmp_path / "nothing.sqlite"
    assert main(["store", action, str(missing)]) == 2
    said = capsys.readouterr().err
    assert str(missing) in said and "no such store file (the STORE argument)" in said
    assert "--replay-store" not in said
