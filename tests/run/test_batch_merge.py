"""`judge merge ... --store` copies provider batches and their calls: each batch once, in its
later state, so the merged store lists every batch and never polls a finished one again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers.batch import batch_provider, batch_run

from judge import DimensionVerdict, QuestionAnswer
from judge.cli import main
from judge.store import CaseRef, KeyParts, Store, StoredBatch, merge_stores


def test_merged_store_lists_the_batches_of_both_stores_once(tmp_path: Path, capsys) -> None:
    first, second = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    with batch_provider() as server:
        batch_run(server, first, n=2)
        shutil.copy(first, second)  # b holds a's batch too
        batch_run(server, second, n=4)  # and a second batch for the two new submissions
    merged = tmp_path / "all.sqlite"
    assert main(["merge", str(first), str(second), "--store", str(merged)]) == 0
    assert "2 provider batches" in capsys.readouterr().out
    assert main(["store", "stats", str(merged)]) == 0
    shown = capsys.readouterr().out
    assert "batch batch_fake000000" in shown and "batch batch_fake000001" in shown
    assert main(["store", "stats", str(merged), "--json"]) == 0
    batches = json.loads(capsys.readouterr().out)["batches"]
    assert [(b["id"], b["calls"], b["open"]) for b in batches] == [
        ("batch_fake000000", 6, False),
        ("batch_fake000001", 6, False),
    ]
    with Store(merged) as store:
        assert len(store.batch_calls("batch_fake000000")) == 6
        assert {state for _, _, state in store.batch_calls("batch_fake000001")} == {"answered"}
        assert store.stats()["judgments"] == 12


def test_a_batch_in_both_stores_keeps_its_later_state(tmp_path: Path) -> None:
    batch = StoredBatch("batch_x", "openai", "openai/m", None, "file-x", "in_progress")
    call = {"parts": {}, "case": ["i", "t", "D1"], "question_ids": ["D1-Q1"], "attempt": 1}
    stores = [tmp_path / "open.sqlite", tmp_path / "closed.sqlite"]
    for path in stores:
        with Store(path) as store:
            store.add_batch(batch, [("k1", call), ("k2", call)])
    with Store(stores[1]) as store:  # the copy that saw the batch end
        parts = KeyParts("llm:openai/m", "openai/m", "p", "h", "s", "r")
        verdict = DimensionVerdict(answers=[QuestionAnswer(question_id="D1-Q1", answer="No")])
        store.put_batch_result(
            "batch_x", "k1", "answered", (parts, CaseRef("i", "t", "D1"), verdict)
        )
        store.update_batch("batch_x", "completed", 2, 0, closed=1, lost=0, note="no errors")
    target = tmp_path / "merged.sqlite"
    done = merge_stores(target, stores)
    assert done.batches == 1
    with Store(target) as store:
        (merged,) = store.batches()
        states = {key: state for key, _, state in store.batch_calls("batch_x")}
    assert merged.closed and merged.status == "completed" and merged.note == "no errors"
    assert states == {"k1": "answered", "k2": "pending"}
    again = merge_stores(target, stores[:1])  # an older copy cannot reopen it
    assert again.batches == 0
    with Store(target) as store:
        assert [b.closed for b in store.batches()] == [True]
