"""Reply-format negotiation in batch mode, against the fake provider's refusal shapes (the live
endpoint's, served per batch line): a batch starts from the mode the store remembers, steps down
when lines are refused and asks exactly those calls again, remembers the mode that worked and
names it in the result."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.batch import FAST_BATCH, batch_lines, batch_provider, batch_run
from helpers.fake_runs import EXAMPLE_SPECS, llm_judge, submissions

from judge import EvalOptions, evaluate
from judge.judges.structured import MODES
from judge.store import Store
from judge.testing.formats import LLAMA_CPP_PYTHON_FORMATS, REFUSAL_SHAPES


def in_batch(lines: list, index: int) -> list:
    return [c for c in lines if c.path.startswith(f"batch batch_fake{index:06d} ")]


@pytest.mark.parametrize("shape", REFUSAL_SHAPES)
def test_refused_lines_step_down_and_only_they_are_asked_again(tmp_path: Path, shape) -> None:
    store = tmp_path / "b.sqlite"
    with batch_provider(response_formats=LLAMA_CPP_PYTHON_FORMATS, format_refusal=shape) as server:
        result, notes = batch_run(server, store, n=2)
        lines = batch_lines(server)
        ops = dict(server.batches.ops)
        key = llm_judge(server).structured_output_key
    first, second = in_batch(lines, 0), in_batch(lines, 1)
    assert ops["batch_create"] == 2 and len(first) == len(second) == 6
    assert {c.outcome for c in first} == {"format_refused"}
    assert {c.response_format for c in first} == {"json_schema"}
    assert {(c.outcome, c.response_format) for c in second} == {("ok", "json_object")}
    assert {c.messages_hash for c in first} == {c.messages_hash for c in second}
    assert result.complete and {c.batch_id for c in result.calls} == {"batch_fake000001"}
    judge = result.config["judge"]
    assert judge["structured_output"] == "json_object+schema"
    assert judge["structured_output_negotiation"]["refused"] == ["json_schema"]
    assert result.usage is not None and result.usage.batch is not None
    assert result.usage.batch["format_refused"] == 6 and result.usage.batch["errors"] == 0
    assert any("refused response_format 'json_schema'" in n for n in notes)
    assert any("6 calls refused for their reply format" in n for n in notes)
    with Store(store) as opened:
        assert opened.stats()["errors"] == {}  # a refusal is a capability answer, not an error
        assert opened.get_meta(key) == "json_object+schema"


def test_the_next_batch_starts_from_the_remembered_mode(tmp_path: Path) -> None:
    store = tmp_path / "b.sqlite"
    with batch_provider(response_formats=LLAMA_CPP_PYTHON_FORMATS) as server:
        batch_run(server, store, n=2)
        before = len(batch_lines(server))
        again, notes = batch_run(server, store, n=4)  # two new submissions
        lines = batch_lines(server)[before:]
        ops = dict(server.batches.ops)
    assert ops["batch_create"] == 3  # the two of the first run, one for the new calls
    assert len(lines) == 6 and {(c.outcome, c.response_format) for c in lines} == {
        ("ok", "json_object")
    }
    assert any("starting with 'json_object+schema'" in n for n in notes)
    assert again.complete and again.config["judge"]["structured_output"] == "json_object+schema"


def test_a_server_that_takes_no_format_is_asked_in_prompt_mode_within_four_batches(
    tmp_path: Path,
) -> None:
    with batch_provider(response_formats=("text",), format_refusal="pydantic-422") as server:
        result, _ = batch_run(server, tmp_path / "b.sqlite", n=1)
        lines = batch_lines(server)
        ops = dict(server.batches.ops)
    assert ops["batch_create"] == len(MODES) == 4
    assert [len(in_batch(lines, i)) for i in range(4)] == [3, 3, 3, 3]
    assert {c.outcome for c in in_batch(lines, 3)} == {"ok"}
    assert {c.response_format for c in in_batch(lines, 3)} == {None}
    assert result.complete and result.config["judge"]["structured_output"] == "prompt"
    refused = result.config["judge"]["structured_output_negotiation"]["refused"]
    assert refused == ["json_schema", "json_object+schema", "json_object"]


def test_a_forced_format_the_server_refuses_is_an_error_never_no(tmp_path: Path) -> None:
    store = tmp_path / "b.sqlite"
    with batch_provider(response_formats=LLAMA_CPP_PYTHON_FORMATS) as server:
        judge = llm_judge(server, structured_output="json_schema")
        result = evaluate(
            EXAMPLE_SPECS,
            submissions(1),
            judge=judge,
            options=EvalOptions(granularity="dimension", store=store, batch=FAST_BATCH),
        )
        ops = dict(server.batches.ops)
    assert ops["batch_create"] == 1
    assert {c.error_kind for c in result.calls} == {"bad_request"}
    assert all("forced by --structured-output json_schema" in (c.error or "") for c in result.calls)
    assert all(j.answer is None for j in result.judgments) and not result.complete
    with Store(store) as opened:
        assert opened.stats()["errors"] == {"bad_request": 3}
        assert opened.get_meta(judge.structured_output_key) is None
