"""The store when its file fails (issue 35): a read-only store is exit 4 like every storage
failure, found before any call; a damaged store (an overwritten header, a truncated file) is
called corrupted, not "not a judgment store", and `judge store recover STORE` rebuilds a
readable store from what is left of it, with Python's sqlite3; a store deleted during a run
leaves no `-wal` / `-shm` files behind; and the moment a write fails for a full disk no
further call starts, so that only the calls already in flight are paid for and lost."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLE, eval_args

from judge.cli import main
from judge.errors import StorageError
from judge.store import Store
from judge.testing import FakeProvider, FakeProviderConfig

MODEL = ("--judge-model", "openai/fake-judge", "--no-progress")


def eval_into(tmp_path: Path, store: Path, url: str, *extra: str) -> int:
    args = eval_args(
        EXAMPLE / "ground_truth", EXAMPLE / "outputs", tmp_path / "r.json",
        *MODEL, "--api-base", url, "--store", str(store), *extra,
    )  # fmt: skip
    return main(args)


@pytest.fixture(scope="module")
def filled_store(tmp_path_factory) -> Path:
    """A store of one whole example run per dimension (96 answers, their reply log), closed."""
    folder = tmp_path_factory.mktemp("filled")
    path = folder / "s.sqlite"
    with FakeProvider(FakeProviderConfig(seed=5)) as provider:
        assert eval_into(folder, path, provider.url, "--granularity", "dimension") == 0
    assert not Path(f"{path}-wal").exists()  # checkpointed and closed: the pages are in the file
    return path


def rows(path: Path, table: str = "judgments") -> list[dict[str, Any]]:
    with Store(path, readonly=True) as store:
        return sorted(store.rows(table), key=lambda row: json.dumps(row, sort_keys=True))


def copy(path: Path, to: Path) -> Path:
    to.write_bytes(path.read_bytes())
    return to


# ------------------------------------------------------------------ read-only: exit 4


def test_a_read_only_store_is_exit_4_before_any_call(
    filled_store: Path, tmp_path: Path, capsys
) -> None:
    store = copy(filled_store, tmp_path / "s.sqlite")
    store.chmod(0o444)
    with FakeProvider() as provider:
        code = eval_into(tmp_path, store, provider.url, "--refresh")
        calls = len(provider.calls)
    err = capsys.readouterr().err
    assert code == 4 and calls == 0, err
    assert str(store) in err and "read-only" in err
    assert not (tmp_path / "r.json").exists()


def test_a_read_only_result_folder_is_exit_4_too(tmp_path: Path, capsys, read_only_dir) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    read_only_dir(folder)
    args = eval_args(
        EXAMPLE / "ground_truth", EXAMPLE / "outputs", folder / "r.json", "--no-progress"
    )
    assert main(args) == 4
    assert "cannot create a file" in capsys.readouterr().err


def test_an_output_that_is_a_folder_is_still_exit_2(tmp_path: Path, capsys) -> None:
    (tmp_path / "plain").write_text("")
    args = eval_args(
        EXAMPLE / "ground_truth", EXAMPLE / "outputs", tmp_path / "plain" / "r.json",
        "--no-progress",
    )  # fmt: skip
    assert main(args) == 2
    assert "is not a directory" in capsys.readouterr().err


# ------------------------------------------------------------------ damaged: recover


def overwrite_header(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.write(b"\xa5" * 100)


def truncate(path: Path, share: float) -> None:
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.truncate(int(size * share) + 123)  # not on a page boundary


@pytest.mark.parametrize("damage", ["header", "truncated"])
def test_a_damaged_store_is_called_corrupted_and_names_the_command_that_recovers_it(
    filled_store: Path, tmp_path: Path, capsys, damage: str
) -> None:
    store = copy(filled_store, tmp_path / "s.sqlite")
    overwrite_header(store) if damage == "header" else truncate(store, 0.5)
    with FakeProvider() as provider:
        code = eval_into(tmp_path, store, provider.url)
        calls = len(provider.calls)
    err = capsys.readouterr().err
    assert code == 4 and calls == 0, err
    assert "corrupted" in err and f"judge store recover {store}" in err
    assert "not a judgment store" not in err and ".recover" not in err


def test_a_file_that_is_no_store_at_all_is_still_exit_2(tmp_path: Path, capsys) -> None:
    store = tmp_path / "s.sqlite"
    store.write_text(json.dumps({"not": "a store"}) * 500)
    with FakeProvider() as provider:
        assert eval_into(tmp_path, store, provider.url) == 2
    assert "not a judgment store" in capsys.readouterr().err


def test_recover_rebuilds_a_store_whose_header_was_overwritten(
    filled_store: Path, tmp_path: Path, capsys
) -> None:
    store = copy(filled_store, tmp_path / "s.sqlite")
    overwrite_header(store)
    assert main(["store", "recover", str(store)]) == 0
    out = tmp_path / "s.recovered.sqlite"
    said = capsys.readouterr()
    assert str(out) in said.out and f"recovered {len(rows(filled_store))} answers" in said.out, said
    assert rows(out) == rows(filled_store)  # every answer, exactly
    assert rows(out, "errors") == rows(filled_store, "errors")
    with Store(out, readonly=True) as recovered, Store(filled_store, readonly=True) as original:
        assert recovered.reply_stats() == original.reply_stats()  # the reply log too
    assert store.read_bytes()[:100] == b"\xa5" * 100  # the damaged file is left as it was


def test_recover_keeps_every_answer_a_truncated_store_still_holds(
    filled_store: Path, tmp_path: Path, capsys
) -> None:
    store = copy(filled_store, tmp_path / "s.sqlite")
    truncate(store, 0.6)
    out = tmp_path / "saved.sqlite"
    assert main(["store", "recover", str(store), "-o", str(out)]) == 0
    kept = rows(out)
    original = {row["key"]: row for row in rows(filled_store)}
    assert 0 < len(kept) <= len(original)
    assert all(original[row["key"]] == row for row in kept)  # nothing invented, nothing mangled
    assert f"{len(kept)} answers" in capsys.readouterr().out


def test_recover_reads_the_answers_still_in_the_wal_file(
    filled_store: Path, tmp_path: Path
) -> None:
    """A run killed before SQLite moved its last answers into the store file leaves them in
    the `-wal` file beside it: they are recovered too."""
    live = copy(filled_store, tmp_path / "live.sqlite")
    with Store(live) as store:
        store.put(*_answer("from-the-wal"))
        copy(live, tmp_path / "s.sqlite")  # taken while open: the answer is only in the -wal
        copy(Path(f"{live}-wal"), tmp_path / "s.sqlite-wal")
    damaged = tmp_path / "s.sqlite"
    overwrite_header(damaged)
    assert main(["store", "recover", str(damaged)]) == 0
    kept = rows(tmp_path / "s.recovered.sqlite")
    assert len(kept) == len(rows(filled_store)) + 1
    assert any(row["trial"] == "from-the-wal" for row in kept)


def _answer(trial: str) -> tuple[Any, ...]:
    from judge import DimensionVerdict, QuestionAnswer
    from judge.store import CaseRef, KeyParts

    verdict = DimensionVerdict(
        answers=[QuestionAnswer(question_id="D1-Q1", answer="Yes", evidence="e")], attempts=1
    )
    return KeyParts("j", "m", "p", trial, "s", "r"), CaseRef("i", trial, "D1"), verdict


def test_a_rerun_on_the_recovered_store_asks_nothing_it_holds(
    filled_store: Path, tmp_path: Path
) -> None:
    store = copy(filled_store, tmp_path / "s.sqlite")
    overwrite_header(store)
    assert main(["store", "recover", str(store)]) == 0
    (tmp_path / "s.recovered.sqlite").replace(store)
    with FakeProvider() as provider:
        assert eval_into(tmp_path, store, provider.url, "--granularity", "dimension") == 0
        assert provider.calls == []


def test_recover_refuses_to_write_over_a_file(filled_store: Path, tmp_path: Path, capsys) -> None:
    store = copy(filled_store, tmp_path / "s.sqlite")
    overwrite_header(store)
    taken = tmp_path / "s.recovered.sqlite"
    taken.write_text("mine")
    assert main(["store", "recover", str(store)]) == 2
    assert "exists" in capsys.readouterr().err and taken.read_text() == "mine"


def test_recover_says_a_readable_store_needs_nothing(
    filled_store: Path, tmp_path: Path, capsys
) -> None:
    store = copy(filled_store, tmp_path / "s.sqlite")
    assert main(["store", "recover", str(store)]) == 0
    assert "readable" in capsys.readouterr().out
    assert not (tmp_path / "s.recovered.sqlite").exists()


def test_recover_of_junk_is_exit_2(tmp_path: Path, capsys) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"\x00\x01junk" * 1000)
    assert main(["store", "recover", str(junk)]) == 2
    assert "not a judgment store" in capsys.readouterr().err


# ------------------------------------------------------------------ deleted: no -wal left


def test_a_store_deleted_during_a_run_leaves_no_journal_files(tmp_path: Path, capsys) -> None:
    path = tmp_path / "s.sqlite"
    real_put = Store.put

    def put_then_delete(self: Store, *args: Any) -> None:
        real_put(self, *args)
        if self.stats()["judgments"] == 2 and path.exists():
            path.unlink()

    with FakeProvider() as provider, pytest.MonkeyPatch.context() as patch:
        patch.setattr(Store, "put", put_then_delete)
        assert eval_into(tmp_path, path, provider.url, "--max-concurrent", "1") == 4
    assert not path.exists()
    assert not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()
    assert rows(tmp_path / "s.recovered.sqlite")


# ------------------------------------------------------------------ disk full: stop at once


class FullDisk:
    """`Store.<method>` failing for a full disk from its `nth` write on, and the times each
    provider request started and the first write failed."""

    def __init__(self, patch: pytest.MonkeyPatch, method: str, nth: int):
        from judge.judges.clients.openai_client import OpenAIClient

        self.started: list[float] = []
        self.failed_at: list[float] = []
        writes: list[int] = []
        real_write, real_complete = getattr(Store, method), OpenAIClient.complete

        def write(store: Store, *args: Any) -> Any:
            writes.append(1)
            if len(writes) < nth:
                return real_write(store, *args)
            from judge.store.failures import sqlite_reason

            self.failed_at.append(time.monotonic())
            full = sqlite3.OperationalError("database or disk is full")
            full.sqlite_errorname = "SQLITE_FULL"  # type: ignore[attr-defined]
            raise StorageError(store.path, sqlite_reason(full, store.path))

        async def complete(client: Any, *args: Any, **kwargs: Any) -> Any:
            self.started.append(time.monotonic())
            return await real_complete(client, *args, **kwargs)

        patch.setattr(Store, method, write)
        patch.setattr(OpenAIClient, "complete", complete)

    def late(self) -> list[float]:
        """The requests that started after the first failed write."""
        assert self.failed_at, "no write failed"
        return [t for t in self.started if t > self.failed_at[0]]


def test_no_call_starts_once_a_write_failed_for_a_full_disk(tmp_path: Path, capsys) -> None:
    config = FakeProviderConfig(latency=(0.05, 0.3), seed=1)
    with FakeProvider(config) as provider, pytest.MonkeyPatch.context() as patch:
        full = FullDisk(patch, "put", 4)
        code = eval_into(tmp_path, tmp_path / "s.sqlite", provider.url, "--max-concurrent", "5")
    assert code == 4 and "disk full" in capsys.readouterr().err
    assert full.late() == []
    assert len(full.started) - 3 <= 5 + 1  # lost: the failed call's and those in flight


def test_no_call_starts_once_a_write_while_planning_failed(tmp_path: Path, capsys) -> None:
    """Planning writes too (each rendered prompt's hash, for the next run): its failure stops
    the run's calls as a failed answer's write does, instead of letting every worker that
    already took a unit send it."""
    path = tmp_path / "s.sqlite"
    with (
        FakeProvider(FakeProviderConfig(latency=0.2)) as provider,
        pytest.MonkeyPatch.context() as patch,
    ):
        one = eval_args(
            EXAMPLE / "ground_truth" / "incorrect_image.yaml", EXAMPLE / "outputs",
            tmp_path / "one.json", *MODEL, "--api-base", provider.url, "--store", str(path),
        )  # fmt: skip
        assert main(one) == 0  # the store knows the judge: planning looks up and remembers
        full = FullDisk(patch, "remember_prompts", 3)
        code = eval_into(tmp_path, path, provider.url, "--max-concurrent", "1")
    assert code == 4 and "disk full" in capsys.readouterr().err
    assert full.late() == []


def test_recover_keeps_once_the_rows_the_store_keeps_unique_itself(
    filled_store: Path, tmp_path: Path
) -> None:
    """Damage can leave a row twice; m009 took the unique index that turned such a row away
    from `judgments`, `reply_texts` and `prompt_keys`, so recovering keeps one of each."""
    store = copy(filled_store, tmp_path / "s.sqlite")
    with sqlite3.connect(store) as db:
        for table in ("judgments", "reply_texts", "prompt_keys"):
            db.execute(f"INSERT INTO {table} SELECT * FROM {table} WHERE rowid = 1")
    db.close()
    overwrite_header(store)
    out = tmp_path / "saved.sqlite"
    assert main(["store", "recover", str(store), "--output", str(out)]) == 0
    assert rows(out) == rows(filled_store)
    with Store(out, readonly=True) as recovered, Store(filled_store, readonly=True) as original:
        assert recovered.reply_stats() == original.reply_stats()
        assert list(recovered.logs()) == list(original.logs())
