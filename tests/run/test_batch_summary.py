"""The terminal summary of a `judge eval --batch` run says how many answers came from a batch,
which batches, and the batch discount in the cost; a run that batched nothing says nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.batch import batch_command, batch_provider, batch_run
from rich.console import Console

from judge import EvalResult
from judge.cli import main
from judge.report.display import summary_table
from judge.run.batch import cost as batch_module

PRICE = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}


def test_the_summary_names_the_batch_its_answers_and_the_discounted_cost(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setattr(batch_module, "_model_info", lambda model: PRICE)
    with batch_provider() as server:
        args = batch_command(tmp_path, server.url, "--judge-model", "openai/fake-judge")
        assert main(args) == 0
        first = " ".join(capsys.readouterr().out.split())
        result = json.loads((tmp_path / "r.json").read_text())
        assert main(args) == 0  # answered from the store
        again = " ".join(capsys.readouterr().out.split())
    usage = result["usage"]
    regular = usage["prompt_tokens"] * 1e-6 + usage["completion_tokens"] * 2e-6
    assert usage["cost_usd"] == pytest.approx(regular / 2)
    assert (
        f"batch 9 answers from batch batch_fake000000; cost ${usage['cost_usd']:.4f} at the "
        "batch price (50% batch discount)"
    ) in first
    assert "answers from batch" not in again


def test_an_unknown_discount_and_price_are_said_to_be_unknown(tmp_path: Path) -> None:
    with batch_provider() as server:
        result, _ = batch_run(server, tmp_path / "b.sqlite", n=1)
    assert result.usage is not None and result.usage.batch is not None
    result.usage.batch["discount"] = None
    text = _row(result)
    assert (
        "3 answers from batch batch_fake000000; cost unknown (3 request(s) without a known" in text
    )
    assert "(batch discount unknown)" in text


def _row(result: EvalResult) -> str:
    console = Console(width=200, record=True)
    console.print(summary_table(result))
    return " ".join(console.export_text().split())
