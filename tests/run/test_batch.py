"""Batch mode (`EvalOptions.batch`, `judge eval --batch`) against the fake provider's Files and
Batches endpoints over real HTTP, with a real SQLite store."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from helpers.batch import FAST_BATCH, batch_lines, batch_provider, batch_run
from helpers.fake_runs import EXAMPLE_SPECS, llm_judge, submissions

from judge import EvalOptions, evaluate, evaluate_async
from judge.judges.clients.litellm_client import import_litellm
from judge.run.batch import BatchOptions, batch_cost, batch_discount
from judge.store import Store
from judge.testing import FakeProvider, FakeProviderConfig

# ------------------------------------------------------------------ the fake provider


@pytest.mark.slow
def test_fake_provider_files_and_batches_endpoints_through_litellm() -> None:
    litellm = import_litellm()
    line = {
        "custom_id": "k1",
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {"model": "fake-judge", "messages": [{"role": "user", "content": "Hi"}]},
    }
    text = (json.dumps(line) + "\n").encode()

    async def go(server: FakeProvider) -> tuple:
        where = {"custom_llm_provider": "openai", "api_base": server.url, "api_key": "sk-x"}
        upload = await litellm.acreate_file(
            file=("in.jsonl", io.BytesIO(text), "application/jsonl"), purpose="batch", **where
        )
        created = await litellm.acreate_batch(
            completion_window="24h",
            endpoint="/v1/chat/completions",
            input_file_id=upload.id,
            **where,
        )
        done = await litellm.aretrieve_batch(batch_id=created.id, **where)
        while done.status == "in_progress":  # as a client does: ask until the batch ends
            await asyncio.sleep(0.02)
            done = await litellm.aretrieve_batch(batch_id=created.id, **where)
        content = await litellm.afile_content(file_id=done.output_file_id, **where)
        return upload, created, done, content.content

    with FakeProvider(FakeProviderConfig(batch_delay=0.2)) as server:
        upload, created, done, content = asyncio.run(go(server))
        ops = server.batches.ops
    assert upload.purpose == "batch" and upload.bytes == len(text)
    assert created.status == "in_progress" and created.request_counts.total == 1
    assert done.status == "completed" and done.request_counts.completed == 1
    reply = json.loads(content)
    assert reply["custom_id"] == "k1" and reply["response"]["status_code"] == 200
    assert reply["response"]["body"]["choices"][0]["message"]["content"] == "OK"
    assert ops["batch_create"] == 1 and ops["file_create"] == 1


def test_fake_provider_rejects_a_bad_input_file_and_a_wrong_key() -> None:
    import urllib.request

    def call(server: FakeProvider, method: str, path: str, body: bytes, key: str) -> tuple:
        request = urllib.request.Request(
            server.url.removesuffix("/v1") + path, data=body or None, method=method
        )
        request.add_header("Authorization", f"Bearer {key}")
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    config = FakeProviderConfig(api_key="sk-right", batch_delay=0)
    with FakeProvider(config) as server:
        same = {"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": {}}
        file = server.batches._add_file("in.jsonl", "batch", (json.dumps(same) + "\n").encode() * 2)
        body = json.dumps(
            {
                "input_file_id": file["id"],
                "endpoint": "/v1/chat/completions",
                "completion_window": "24h",
            }
        ).encode()
        status, batch = call(server, "POST", "/v1/batches", body, "sk-right")
        wrong, _ = call(server, "GET", f"/v1/batches/{batch['id']}", b"", "sk-wrong")
        missing, _ = call(server, "GET", "/v1/batches/batch_nope", b"", "sk-right")
    assert status == 200 and batch["status"] == "failed"
    assert "used twice" in batch["errors"]["data"][0]["message"]
    assert batch["errors"]["data"][0]["line"] == 2
    assert wrong == 401 and missing == 404


# ------------------------------------------------------------------ batch mode


def test_batch_answers_every_missing_call_in_one_batch_like_live_calls(tmp_path: Path) -> None:
    with batch_provider() as server:
        result, notes = batch_run(server, tmp_path / "b.sqlite")
        lines = batch_lines(server)
        ops = dict(server.batches.ops)
    with batch_provider() as live_server:
        live = evaluate(
            EXAMPLE_SPECS,
            submissions(4),
            judge=llm_judge(live_server),
            options=EvalOptions(granularity="dimension", store=tmp_path / "live.sqlite"),
        )
        live_hashes = sorted(c.messages_hash or "" for c in live_server.calls)
    assert ops["batch_create"] == 1 and ops["file_create"] == 1
    assert len(lines) == len(result.calls) == 12
    assert sorted(c.messages_hash or "" for c in lines) == live_hashes  # the live requests
    assert {c.batch_id for c in result.calls} == {"batch_fake000000"}
    assert all(not c.cached and c.requests == 1 and c.error is None for c in result.calls)
    assert [(j.question_id, j.answer) for j in result.judgments] == [
        (j.question_id, j.answer) for j in live.judgments
    ]
    assert result.complete and result.usage is not None and result.usage.batch is not None
    assert result.usage.calls_made == 12 and result.usage.requests == 12  # one line each
    assert "cut_off" not in result.attempt_errors
    assert result.usage.batch["lines"] == 12 and result.usage.batch["answered"] == 12
    assert result.usage.prompt_tokens == sum(c.prompt_tokens for c in lines)
    assert result.config["batch"] == {"provider": "openai", "discount": 0.5}
    assert any("submitted 12 calls" in n for n in notes)
    assert any("completed" in n and "/12" in n for n in notes)  # the progress line


def test_second_run_makes_no_call_and_no_batch(tmp_path: Path) -> None:
    with batch_provider() as server:
        batch_run(server, tmp_path / "b.sqlite")
        before = (len(server.calls), dict(server.batches.ops))
        again, _ = batch_run(server, tmp_path / "b.sqlite")
        after = (len(server.calls), dict(server.batches.ops))
    assert after == before
    assert again.usage is not None and again.usage.cache_hits == 12
    assert again.usage.calls_made == 0 and again.complete


@pytest.mark.parametrize(("outcome", "kind"), [("partial", "server"), ("expire", "batch_expired")])
def test_lost_calls_are_reported_stored_as_errors_and_only_they_are_asked_again(
    tmp_path: Path, outcome: str, kind: str
) -> None:
    with batch_provider(batch_schedule=[outcome], seed=3) as server:
        result, notes = batch_run(server, tmp_path / "b.sqlite")
        lines = batch_lines(server)
    first = [c for c in lines if c.path.startswith("batch batch_fake000000")]
    second = [c for c in lines if c.path.startswith("batch batch_fake000001")]
    assert result.usage is not None and result.usage.batch is not None
    lost = result.usage.batch["lost"][kind]
    assert 0 < lost < 12
    assert len(second) == lost  # only the lost calls, in one new batch
    assert not {c.messages_hash for c in second} & {c.messages_hash for c in first if c.answers}
    assert any(f"{lost} of 12 calls lost ({kind} {lost})" in n for n in notes)
    assert [r for r in result.usage.batch["reports"] if "lost" in r] == [
        f"batch batch_fake000000 {'completed' if kind == 'server' else 'expired'}: "
        f"{lost} of 12 calls lost ({kind} {lost})",
        f"asking the {lost} lost calls again in a new batch",
    ]
    assert result.complete and len(result.calls) == 12
    assert {c.batch_id for c in result.calls} == {"batch_fake000000", "batch_fake000001"}
    with Store(tmp_path / "b.sqlite") as store:
        errors = list(store.rows("errors"))
        batches = store.stats()["batches"]
    assert len(errors) == lost and {e["error_kind"] for e in errors} == {kind}
    assert [b["lost"] for b in batches] == [lost, 0] and not any(b["open"] for b in batches)


def test_a_failed_batch_is_asked_again_then_given_up_as_unscored_never_no(tmp_path: Path) -> None:
    with batch_provider(batch_schedule=["fail", "fail"]) as server:
        result, notes = batch_run(server, tmp_path / "b.sqlite", batch=BatchOptions(0.02, 0.05, 1))
        ops = dict(server.batches.ops)
    assert ops["batch_create"] == 2  # the first and one round of asking again
    assert not batch_lines(server)
    assert {c.error_kind for c in result.calls} == {"batch_failed"}
    assert all(j.answer is None and "failed" in (j.unscored_reason or "") for j in result.judgments)
    assert not result.complete and result.overall.n_failed_questions == 36
    assert any("12 of 12 calls lost (batch_failed 12)" in n for n in notes)


def test_an_unusable_reply_is_asked_again_like_a_live_call_then_left_unscored(
    tmp_path: Path,
) -> None:
    with batch_provider(fault_rates={"refusal": 1.0}) as server:
        result, notes = batch_run(server, tmp_path / "b.sqlite", n=1)
        ops = dict(server.batches.ops)
        lines = batch_lines(server)
    assert ops["batch_create"] == 3  # the first ask and max_reasks (2) re-asks
    assert len(lines) == 9  # the 2nd and 3rd re-asks send the same chat, as live calls do
    assert len({c.messages_hash for c in lines}) == 6
    assert {c.error_kind for c in result.calls} == {"unparseable"}
    assert {c.attempts for c in result.calls} == {3}
    assert all(j.answer is None for j in result.judgments)
    assert result.config["judge"]["replies"]["reasked"] == 6
    assert result.config["judge"]["replies"]["unscored"] == 3
    assert any("3 calls whose reply was unusable" in n for n in notes)
    with Store(tmp_path / "b.sqlite") as store:
        assert store.stats()["errors"] == {"unparseable": 9}


def test_a_reasked_reply_that_is_usable_is_the_answer(tmp_path: Path) -> None:
    with batch_provider(fault_schedule=["refusal"]) as server:  # the first line served
        result, _ = batch_run(server, tmp_path / "b.sqlite", n=1)
        lines = batch_lines(server)
    again = [c for c in lines if c.path.startswith("batch batch_fake000001")]
    assert len(lines) == 4 and len(again) == 1 and again[0].answers
    assert result.complete and {c.error for c in result.calls} == {None}
    assert sorted(c.attempts for c in result.calls) == [1, 1, 2]
    assert result.config["judge"]["replies"]["reasked"] == 1


@pytest.mark.slow
def test_a_stopped_run_leaves_its_batch_open_and_the_next_one_resumes_it(tmp_path: Path) -> None:
    store = tmp_path / "b.sqlite"
    with FakeProvider(FakeProviderConfig(batch_delay=3.0)) as server:
        options = EvalOptions(granularity="dimension", store=store, batch=FAST_BATCH)
        first = _stop_while_polling(server, options)
        with Store(store) as opened:
            assert [b.closed for b in opened.batches()] == [False]
        second, notes = batch_run(server, store)
        ops = dict(server.batches.ops)
    assert first.incomplete and not first.complete and first.stopped is not None
    assert all(j.answer is None for j in first.judgments)
    assert ops["batch_create"] == 1 and ops["file_create"] == 1
    assert second.complete and {c.batch_id for c in second.calls} == {"batch_fake000000"}
    assert second.usage is not None and second.usage.batch is not None
    assert second.usage.batch["resumed"] == ["batch_fake000000"]
    assert any("resuming" in n for n in notes)


def _stop_while_polling(server: FakeProvider, options: EvalOptions):
    """A run whose gate stops at the first poll (as SIGINT would)."""
    from judge.run.batch import phase as batch_module

    original = batch_module.BatchPhase._progress

    def progress_then_stop(self, batch, current) -> None:
        original(self, batch, current)
        self.gate.stop("interrupted", "stopped by the test")

    batch_module.BatchPhase._progress = progress_then_stop  # type: ignore[method-assign]
    try:
        return evaluate(EXAMPLE_SPECS, submissions(4), judge=llm_judge(server), options=options)
    finally:
        batch_module.BatchPhase._progress = original  # type: ignore[method-assign]


# ------------------------------------------------------------------ prices


def test_batch_price_is_litellms_batch_price_else_the_documented_discount(monkeypatch) -> None:
    cost = batch_cost("openai/gpt-4o-mini", "openai", 1000, 100)
    assert cost == pytest.approx(1000 * 7.5e-08 + 100 * 3e-07)  # litellm's *_batches prices
    assert batch_discount("openai/gpt-4o-mini", "openai") == 0.5
    assert batch_cost("openai/fake-judge", "openai", 1000, 100) is None  # no price: unknown
    from judge.run.batch import cost as batch_module

    regular = {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06}
    monkeypatch.setattr(batch_module, "_model_info", lambda model: regular)
    assert batch_cost("openai/x", "openai", 1000, 100) == pytest.approx(0.6e-3)
    assert batch_cost("hosted_vllm/x", "hosted_vllm", 1000, 100) == pytest.approx(1.2e-3)
    assert batch_discount("openai/x", "openai") == 0.5


def test_a_refused_submission_is_stored_as_failed_calls_never_no(tmp_path: Path) -> None:
    config = FakeProviderConfig(api_key="sk-right", batch_delay=0.05)
    with FakeProvider(config) as server:
        result, notes = batch_run(server, tmp_path / "b.sqlite", n=2)  # llm_judge() sends sk-test
        ops = dict(server.batches.ops)
    assert not ops and not server.calls
    assert {c.error_kind for c in result.calls} == {"auth"} and len(result.calls) == 6
    assert all(j.answer is None for j in result.judgments)
    assert any("6 calls not submitted: auth" in n for n in notes)
    assert "sk-test" not in " ".join(notes) + json.dumps(result.model_dump(mode="json"))
    with Store(tmp_path / "b.sqlite") as store:
        assert store.stats()["errors"] == {"auth": 6} and not store.batches()


def test_a_finished_batch_is_read_once_not_again_by_litellms_logging(tmp_path: Path) -> None:
    async def go(server: FakeProvider) -> None:
        options = EvalOptions(
            granularity="dimension", store=tmp_path / "b.sqlite", batch=FAST_BATCH
        )
        await evaluate_async(
            EXAMPLE_SPECS, submissions(2), judge=llm_judge(server), options=options
        )
        await asyncio.sleep(1.0)  # litellm's logging tasks run after the call returned

    with batch_provider() as server:
        asyncio.run(go(server))
        ops = dict(server.batches.ops)
    assert ops["file_content"] == 1


def test_the_fake_providers_batch_knobs_from_its_command_line() -> None:
    from pydantic import ValidationError

    from judge.testing.cli import build_parser, config_from_args

    args = build_parser().parse_args(
        ["--batch-delay", "2.5", "--batch-schedule", "partial, expire,ok",
         "--batch-partial-rate", "0.2", "--batch-expire-done", "0.1"]
    )  # fmt: skip
    config = config_from_args(args)
    assert config.batch_delay == 2.5 and config.batch_schedule == ["partial", "expire", "ok"]
    assert config.batch_partial_rate == 0.2 and config.batch_expire_done == 0.1
    with pytest.raises(ValidationError, match="batch_schedule"):
        FakeProviderConfig(batch_schedule="late")


def test_batch_mode_from_python_needs_an_llm_judge_and_a_store(tmp_path: Path) -> None:
    from judge import RulesJudge

    with pytest.raises(ValueError, match="needs one LLM judge"):
        evaluate(EXAMPLE_SPECS, submissions(1), judge=RulesJudge(),
                 options=EvalOptions(granularity="dimension", store=tmp_path / "s.sqlite", batch=FAST_BATCH))  # fmt: skip
    with batch_provider() as server, pytest.raises(ValueError, match="needs a store"):
        evaluate(
            EXAMPLE_SPECS,
            submissions(1),
            judge=llm_judge(server),
            options=EvalOptions(granularity="dimension", batch=FAST_BATCH),
        )


@pytest.mark.slow
def test_status_checks_that_keep_failing_leave_the_batch_open_for_the_next_run(
    tmp_path: Path, monkeypatch
) -> None:
    from judge.testing import batches

    handle = batches.BatchService.handle
    down = {"status": True}

    def failing_status(self, method, path, content_type, auth, body):
        if down["status"] and method == "GET" and path.startswith("/v1/batches/"):
            return 500, "application/json", b'{"error": {"message": "down (test)"}}'
        return handle(self, method, path, content_type, auth, body)

    monkeypatch.setattr(batches.BatchService, "handle", failing_status)
    store = tmp_path / "b.sqlite"
    with batch_provider() as server:
        judge = llm_judge(server, max_retries=1)
        options = EvalOptions(granularity="dimension", store=store, batch=FAST_BATCH)
        first = evaluate(EXAMPLE_SPECS, submissions(2), judge=judge, options=options)
        down["status"] = False
        second, _ = batch_run(server, store, n=2)
        ops = dict(server.batches.ops)
    assert first.stopped is not None and first.stopped.kind == "provider"
    assert "checking batch batch_fake000000" in first.stopped.message
    assert "left open" in " ".join(first.usage.batch["reports"])  # type: ignore[union-attr]
    assert first.incomplete and all(j.answer is None for j in first.judgments)
    assert ops["batch_create"] == 1 and second.complete
    assert second.usage is not None and second.usage.batch is not None
    assert second.usage.batch["resumed"] == ["batch_fake000000"]


def test_shards_batch_blocks_merge_into_one() -> None:
    from judge.run.batch import merge_batch_usage

    one = {"batches": ["a"], "lines": 3, "lost": {"server": 1}, "wall_seconds": 4.0,
           "discount": 0.5, "seconds": {"wait": 2.0}}  # fmt: skip
    two = {"batches": ["b"], "lines": 2, "lost": {"server": 2, "batch_expired": 1},
           "wall_seconds": 6.0, "discount": 0.5, "seconds": {"wait": 1.0}}  # fmt: skip
    assert merge_batch_usage([one, None, two]) == {
        "batches": ["a", "b"], "lines": 5, "lost": {"server": 3, "batch_expired": 1},
        "wall_seconds": 6.0, "discount": 0.5, "seconds": {"wait": 3.0},
    }  # fmt: skip
    assert merge_batch_usage([None, None]) is None


@pytest.mark.parametrize("killed", ["before_create", "after_create"])
def test_a_run_killed_around_the_batch_create_never_uploads_or_creates_twice(
    tmp_path: Path, monkeypatch, killed: str
) -> None:
    from judge.run.batch import phase as batch_module

    class Killed(BaseException):
        pass

    if killed == "before_create":
        target, name = batch_module.BatchPhase, "_create"
    else:
        target, name = Store, "rename_batch"
    original = getattr(target, name)
    calls = {"n": 0}

    def dies_once(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise Killed
        return original(*args, **kwargs)

    monkeypatch.setattr(target, name, dies_once)
    store = tmp_path / "b.sqlite"
    with batch_provider() as server:
        with pytest.raises(Killed):
            batch_run(server, store, n=2)
        second, _ = batch_run(server, store, n=2)
        ops = dict(server.batches.ops)
    assert ops["file_create"] == 1 and ops["batch_create"] == 1 and ops["batch_list"] == 1
    assert second.complete and {c.batch_id for c in second.calls} == {"batch_fake000000"}
    assert second.usage is not None and second.usage.batch is not None
    assert second.usage.batch["resumed"] == ["batch_fake000000"]
    with Store(store) as opened:
        assert [b.id for b in opened.batches()] == ["batch_fake000000"]
