"""When the machine fails: disk full, a corrupted, read-only or deleted store, a killed run's
temporary files. Each is a `StorageError` naming the file (exit 4, one line on stderr, no
traceback), with every answer committed before kept and no earlier file lost.

Disk full and read-only are tested twice: injected (always runs) and on a real small tmpfs or
read-only bind mount (skipped only where mounting is not permitted, with the reason).
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLE, EXAMPLE_GT, EXAMPLE_OUTPUTS, REPO, eval_args
from helpers.fake_runs import submissions

from ground_truth import load_specs
from judge import (
    DimensionVerdict,
    EvalOptions,
    EvalResult,
    JudgeTask,
    QuestionAnswer,
    RulesJudge,
    evaluate,
    write_result,
)
from judge.checklist.results import remove_stale_temps, write_json_atomic
from judge.cli import main
from judge.errors import StorageError
from judge.report.exports import write_csv, write_jsonl, write_junit
from judge.report.html import write_html
from judge.store import CaseRef, KeyParts, Store
from judge.testing import FakeProvider, FakeProviderConfig

SPECS = load_specs(EXAMPLE / "ground_truth")


# ------------------------------------------------------------------ helpers


class StoredRules:
    """The rules judge made cacheable, so a run goes through the store without a provider;
    `after_call(n)` runs after its n-th answer, before the engine stores it."""

    def __init__(self, after_call: Callable[[int], None] = lambda n: None):
        self.inner = RulesJudge()
        self.name = "rules-stored"
        self.calls = 0
        self.after_call = after_call

    def describe(self) -> dict[str, Any]:
        return {"kind": "rules-stored"}

    def cache_identity(self) -> dict[str, Any]:
        return {"model": None, "params": {}, "schema": "rules"}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        verdict = await self.inner.judge(task)
        self.calls += 1
        self.after_call(self.calls)
        return verdict


def run(store: Path, judge: StoredRules, n: int = 6) -> EvalResult:
    options = EvalOptions(store=store, max_concurrent=1)
    return evaluate(SPECS, submissions(n), judge=judge, options=options)


def stored(path: Path) -> int:
    with Store(path, readonly=True) as store:
        return store.stats()["judgments"]


def sqlite_error(message: str, name: str) -> sqlite3.OperationalError:
    exc = sqlite3.OperationalError(message)
    exc.sqlite_errorname = name  # type: ignore[attr-defined]
    return exc


class FailingDb:
    """A store connection whose INSERTs into `table` fail with `error` after `after` of them
    succeeded; `answers` counts the answers it wrote."""

    def __init__(self, db: sqlite3.Connection, error: Exception, after: int, table: str):
        self.db, self.error, self.after, self.table = db, error, after, table
        self.answers = 0

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        words = sql.split()
        if words[0].upper() == "INSERT" and self.table in words:
            if self.after <= 0:
                raise self.error
            self.after -= 1
        cursor = self.db.execute(sql, *args)
        self.answers += words[0].upper() == "INSERT" and "judgments" in words
        return cursor

    def __enter__(self) -> Any:
        return self.db.__enter__()

    def __exit__(self, *exc: Any) -> Any:
        return self.db.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)


def answer(i: int) -> tuple[KeyParts, CaseRef, DimensionVerdict]:
    verdict = DimensionVerdict(
        answers=[QuestionAnswer(question_id="D1-Q1", answer="Yes", evidence="e" * 300)],
        attempts=1,
    )
    return KeyParts("j", "m", "p", f"prompt-{i}", "s", "r"), CaseRef("i", str(i), "D1"), verdict


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def one_line_error(err: str, path: Path, words: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert str(path) in lines[0] and words in lines[0] and "Traceback" not in err


@pytest.fixture
def disk_full_on_write(monkeypatch) -> None:
    """Every file the atomic writer opens takes the first half of the data, then ENOSPC."""
    real_fdopen = os.fdopen

    class Full(io.TextIOWrapper):
        def write(self, text: str) -> int:
            super().write(text[: len(text) // 2])
            self.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def fdopen(fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if "w" not in mode:
            return real_fdopen(fd, mode, *args, **kwargs)
        return Full(real_fdopen(fd, "wb"), encoding="utf-8")

    monkeypatch.setattr(os, "fdopen", fdopen)


# ------------------------------------------------------------------ disk full: result, exports

WRITERS = {
    "result": lambda path, example_result: write_result(example_result, path),
    "csv": write_csv,
    "jsonl": write_jsonl,
    "junit": write_junit,
    "html": write_html,
}


@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_disk_full_keeps_the_earlier_file_and_leaves_no_temporary(
    tmp_path: Path, example_result: EvalResult, disk_full_on_write, kind: str
) -> None:
    path = tmp_path / f"out.{kind}"
    path.write_text("the earlier good file\n")
    with pytest.raises(StorageError, match="disk full") as caught:
        WRITERS[kind](path, example_result)
    assert caught.value.path == str(path) and "earlier file is unchanged" in str(caught.value)
    assert path.read_text() == "the earlier good file\n"
    assert leftovers(tmp_path) == []


def test_disk_full_on_a_new_file_says_nothing_was_written(tmp_path, disk_full_on_write) -> None:
    with pytest.raises(StorageError, match=r"disk full.*nothing was written"):
        write_json_atomic(tmp_path / "new.json", "{}")
    assert list(tmp_path.iterdir()) == []


def test_eval_on_a_full_disk_exits_4_with_one_line(tmp_path, disk_full_on_write, capsys) -> None:
    path = tmp_path / "r.json"
    code = main(eval_args(EXAMPLE_GT, EXAMPLE_OUTPUTS, path, "--no-progress"))
    assert code == 4 and not path.exists()
    one_line_error(capsys.readouterr().err, path, "disk full")


def test_real_full_filesystem_keeps_the_earlier_result(small_fs: Path, example_result) -> None:
    path = small_fs / "r.json"
    path.write_text('{"earlier": true}\n')
    big = example_result.model_copy(update={"warnings": ["x" * 200] * 1000})  # about 200 KB
    with pytest.raises(StorageError, match="disk full") as caught:
        write_result(big, path)
    assert caught.value.path == str(path)
    assert path.read_text() == '{"earlier": true}\n' and leftovers(small_fs) == []


# ------------------------------------------------------------------ disk full: the store


@pytest.mark.parametrize("table", ["judgments", "leases"])
def test_store_full_mid_run_keeps_committed_answers(tmp_path: Path, table: str) -> None:
    path = tmp_path / "s.sqlite"
    store = Store(path)
    full = sqlite_error("database or disk is full", "SQLITE_FULL")
    store._db = db = FailingDb(store._db, full, 3, table)  # type: ignore[assignment]
    with pytest.raises(StorageError, match="disk full") as caught:
        run(store, StoredRules())  # type: ignore[arg-type]
    store.close()
    assert caught.value.path == str(path) and "rerun asks only the rest" in str(caught.value)
    assert stored(path) == db.answers
    if table == "judgments":
        assert db.answers == 3


def test_store_on_a_real_full_filesystem(small_fs: Path) -> None:
    path = small_fs / "s.sqlite"
    store = Store(path)
    done = 0
    with pytest.raises(StorageError, match="disk full") as caught:
        for i in range(10_000):
            store.put(*answer(i))
            done += 1
    store.close()
    assert caught.value.path == str(path)
    assert done > 0 and stored(path) == done


# ------------------------------------------------------------------ corrupted, not a store


def corrupt(path: Path) -> None:
    """Overwrite every page after the first two with junk, as a failing disk might."""
    with Store(path) as store:
        for i in range(200):
            store.put(*answer(i))
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.seek(2 * 4096)
        handle.write(b"\xa5" * (size - 2 * 4096))


def test_corrupted_store_is_found_at_open(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    corrupt(path)
    for readonly in (False, True):
        with pytest.raises(StorageError, match="corrupted: database disk image is malformed"):
            Store(path, readonly=readonly)


def test_corrupted_store_stops_the_cli_before_any_call(tmp_path: Path, capsys) -> None:
    path = tmp_path / "s.sqlite"
    corrupt(path)
    with FakeProvider(FakeProviderConfig()) as provider:
        code = main(
            eval_args(
                EXAMPLE_GT,
                EXAMPLE_OUTPUTS,
                tmp_path / "r.json",
                "--store",
                str(path),
                "--api-base",
                provider.url,
                "--judge-model",
                "openai/fake-judge",
                "--no-progress",
            )
        )
        calls = len(provider.calls)
    assert code == 4 and calls == 0
    one_line_error(capsys.readouterr().err, path, "corrupted")


def test_corruption_found_mid_run_is_a_storage_error(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    store = Store(path)
    malformed = sqlite_error("database disk image is malformed", "SQLITE_CORRUPT")
    store._db = FailingDb(store._db, malformed, 2, "judgments")
    with pytest.raises(StorageError, match=r"corrupted.*recover"):
        run(store, StoredRules())  # type: ignore[arg-type]
    store.close()
    assert stored(path) == 2


# ------------------------------------------------------------------ read-only


def test_read_only_store_says_read_only(tmp_path: Path, monkeypatch) -> None:
    """Root ignores chmod, so SQLite is made to open the existing store read-only."""
    path = tmp_path / "s.sqlite"
    Store(path).close()
    connect = sqlite3.connect

    def read_only(database: str, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        return connect(database.replace("mode=rwc", "mode=ro"), *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only)
    with pytest.raises(StorageError, match="read-only") as caught:
        Store(path)
    assert caught.value.path == str(path) and "not a judgment store" not in str(caught.value)


def test_store_turned_read_only_mid_run(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    store = Store(path)
    readonly = sqlite_error("attempt to write a readonly database", "SQLITE_READONLY")
    store._db = FailingDb(store._db, readonly, 1, "judgments")
    with pytest.raises(StorageError, match="read-only"):
        run(store, StoredRules())  # type: ignore[arg-type]
    store.close()
    assert stored(path) == 1


def test_store_on_a_read_only_mount(tmp_path: Path, read_only_dir) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "s.sqlite"
    with Store(path) as store:
        store.put(*answer(1))
    read_only_dir(folder)
    with pytest.raises(StorageError, match="read-only") as caught:
        Store(path)
    assert "not a judgment store" not in str(caught.value)
    assert stored(path) == 1  # and a replay can still read it
    with pytest.raises(StorageError, match="read-only file system; nothing was written"):
        write_json_atomic(folder / "r.json", "{}")


# ------------------------------------------------------------------ deleted during the run


def test_store_deleted_mid_run_fails_and_saves_its_answers(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"

    def delete_after_three(n: int) -> None:
        if n == 4:
            path.unlink()

    with pytest.raises(StorageError, match="deleted during the run") as caught:
        run(path, StoredRules(delete_after_three))
    recovered = tmp_path / "s.recovered.sqlite"
    assert caught.value.path == str(path)
    assert f"the 3 answers it held were saved to {recovered}" in str(caught.value)
    assert stored(recovered) == 3 and not path.exists()
    with Store(path) as fresh:  # the old -wal file left beside it does not leak into a new store
        assert fresh.stats()["judgments"] == 0


def test_store_folder_deleted_mid_run_still_saves_its_answers(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "s.sqlite"

    def delete_folder(n: int) -> None:
        if n == 3:
            shutil.rmtree(path.parent)

    with pytest.raises(StorageError, match="deleted during the run; the 2 answers it held"):
        run(path, StoredRules(delete_folder))
    assert stored(path.parent / "s.recovered.sqlite") == 2


def test_every_worker_reports_the_same_deleted_store(tmp_path: Path) -> None:
    """Each worker meets the deleted store at its next commit; the first rescue is the one
    every message names, so the error the run raises is true whichever worker raises it."""
    path = tmp_path / "s.sqlite"

    def delete(n: int) -> None:
        if n == 4:
            path.unlink()

    options = EvalOptions(store=path, max_concurrent=4)
    with pytest.raises(StorageError) as caught:
        evaluate(SPECS, submissions(20), judge=StoredRules(delete), options=options)
    assert "answers it held were saved to" in str(caught.value)
    assert stored(tmp_path / "s.recovered.sqlite") == 3


def test_store_replaced_mid_run_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"

    def replace(n: int) -> None:
        if n == 2:
            os.replace(tmp_path / "other.sqlite", path)

    Store(tmp_path / "other.sqlite").close()
    with pytest.raises(StorageError, match="replaced by another file during the run"):
        run(path, StoredRules(replace))
    assert stored(path) == 0 and stored(tmp_path / "s.recovered.sqlite") == 1


def test_deleted_store_through_the_cli_exits_4(tmp_path: Path, capsys) -> None:
    path = tmp_path / "r.sqlite"
    config = FakeProviderConfig(seed=3)
    with FakeProvider(config) as provider:
        args = eval_args(
            EXAMPLE_GT,
            EXAMPLE_OUTPUTS,
            tmp_path / "r.json",
            "--api-base",
            provider.url,
            "--judge-model",
            "openai/fake-judge",
            "--no-progress",
            "--max-concurrent",
            "1",
        )
        real_put = Store.put

        def put_then_delete(self: Store, *args: Any) -> None:
            real_put(self, *args)
            if self.stats()["judgments"] == 2 and path.exists():
                path.unlink()

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Store, "put", put_then_delete)
            code = main(args)
    assert code == 4 and not (tmp_path / "r.json").exists()
    one_line_error(capsys.readouterr().err, path, "deleted during the run")
    assert stored(tmp_path / "r.recovered.sqlite") == 2


# ------------------------------------------------------------------ a killed run's temporaries


def test_stale_temporaries_of_our_own_pattern_are_removed(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    old = time.time() - 3600
    stale = tmp_path / ".results.json.ab_cd123.tmp"
    fresh = tmp_path / ".results.json.zz99zz99.tmp"  # newer than this process: maybe a live run
    others = [
        tmp_path / ".results.json.notours.tmp",
        tmp_path / "results.json.abcd1234.tmp",
        tmp_path / ".results.json.abcd1234.tmp.keep",
        tmp_path / ".other.json.abcd1234.tmp",
        tmp_path / ".results.json.ABCD1234.tmp",
    ]
    for path in [stale, fresh, *others]:
        path.write_text("x")
    link = tmp_path / ".results.json.link1234.tmp"
    link.symlink_to(tmp_path / "results.json.abcd1234.tmp")
    for path in [stale, *others]:
        os.utime(path, (old, old))
    os.utime(link, (old, old), follow_symlinks=False)

    assert remove_stale_temps(target) == [stale]
    assert not stale.exists() and fresh.exists() and link.is_symlink()
    assert all(path.exists() for path in others)


def test_a_stale_temporary_a_live_writer_holds_is_kept(tmp_path: Path) -> None:
    import fcntl

    held = tmp_path / ".r.json.held0000.tmp"
    held.write_text("x")
    os.utime(held, (0, 0))
    with held.open() as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        assert remove_stale_temps(tmp_path / "r.json") == []
    assert held.exists()


KILLED_WRITER = """
import os, signal, sys
from judge.checklist.results import write_json_atomic
os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)
write_json_atomic(sys.argv[1], "half of a new result")
"""

NEXT_WRITER = """
import sys
from judge.checklist.results import write_json_atomic
write_json_atomic(sys.argv[1], "the next result")
"""


def test_the_next_run_removes_a_killed_runs_temporary(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("the earlier result")
    (tmp_path / "notes.tmp").write_text("not ours")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(target)], env=env)
    assert killed.returncode == -9
    [temporary] = [name for name in leftovers(tmp_path) if name != "notes.tmp"]
    assert temporary.startswith(".r.json.") and target.read_text() == "the earlier result"
    subprocess.run([sys.executable, "-c", NEXT_WRITER, str(target)], env=env, check=True)
    assert leftovers(tmp_path) == ["notes.tmp"]
    assert target.read_text() == "the next result"
