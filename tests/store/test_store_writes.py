"""What the store writes per answer (issue 38): the lease claims of one turn of the event loop
are one transaction, a process's leases are renewed together, every write is inside an explicit
transaction, every lookup a call makes is an index search (no table scan that grows with the
store), m007 keeps an earlier store's rows and the statements earlier code writes with, and
m008's leases (appended rows, no index) keep a store's leases and their meaning."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers import FIXTURES

from judge import DimensionVerdict, QuestionAnswer
from judge.judges.clients.exchanges import Exchange
from judge.run.leases import LeaseBook
from judge.store import CallLog, CaseRef, KeyParts, Store, StoreMerge, merge_stores
from judge.store.migrations import MIGRATIONS, migrate
from judge.store.replies import read_piece

ANSWER = DimensionVerdict(answers=[QuestionAnswer(question_id="Q1", answer="Yes")])
V3 = FIXTURES / "stores" / "store-v3-e0fd18a.sql"
V3_LEASES_KEYED = FIXTURES / "stores" / "store-v3-06e3079.sql"
WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")
GROWING = ("judgments", "errors", "replies", "reply_texts", "prompt_keys")
"""Tables that grow with the store. `leases` holds the calls in flight and those whose answer
waits for its batch, whatever the store's size: it has no index (m008), and is read once per
claim, renewal or release of a batch."""


def _parts(n: int) -> KeyParts:
    return KeyParts("llm:m", "m", "p", f"prompt{n}", "schema", "rubric")


def _case(n: int) -> CaseRef:
    return CaseRef("inc", f"t{n}", "D1")


def _log(n: int) -> CallLog:
    messages = [{"role": "system", "content": "rules"}, {"role": "user", "content": f"case {n}"}]
    return CallLog([Exchange(messages=messages, reply=f"reply {n}")], ["Q1"])


@contextmanager
def traced(store: Store) -> Iterator[list[str]]:
    """Every statement the store's connection runs meanwhile, as run."""
    seen: list[str] = []
    store._db.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        store._db.set_trace_callback(None)


def outside_transactions(statements: list[str]) -> list[str]:
    """The writes among `statements` not between a BEGIN and its COMMIT or ROLLBACK."""
    inside, alone = False, []
    for sql in statements:
        word = sql.split()[0].upper()
        if word == "BEGIN":
            inside = True
        elif word in ("COMMIT", "ROLLBACK"):
            inside = False
        elif word in WRITES and not inside:
            alone.append(sql)
    return alone


def test_the_claims_of_one_loop_turn_are_one_transaction(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    book = LeaseBook(store)
    store.put(_parts(0), _case(0), ANSWER)

    async def hold(n: int) -> bool:
        async with book.hold(_parts(n).key) as answered:
            rows = store._db.execute("SELECT count(*) FROM leases").fetchone()[0]
            assert answered or rows >= 1
            return answered

    async def scenario() -> tuple[list[bool], list[str]]:
        with traced(store) as seen:
            answered = await asyncio.gather(*(hold(n) for n in range(5)))
        return answered, seen

    answered, seen = asyncio.run(scenario())
    assert answered == [True, False, False, False, False]
    claims = [s for s in seen if s.startswith("INSERT INTO leases")]
    begins = [i for i, s in enumerate(seen) if s.startswith("BEGIN")]
    assert len(claims) == 4 and seen.index(claims[-1]) < begins[1]  # all in the first one
    assert store._db.execute("SELECT count(*) FROM leases").fetchone()[0] == 0
    store.close()


def test_a_claim_whose_caller_was_cancelled_is_released(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    book = LeaseBook(store)

    async def scenario() -> None:
        async def hold() -> None:
            async with book.hold(_parts(1).key):
                raise AssertionError("the cancelled caller never holds the lease")

        task = asyncio.create_task(hold())
        await asyncio.sleep(0)  # its claim is asked for, not yet taken
        task.cancel()
        await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert store._db.execute("SELECT count(*) FROM leases").fetchone()[0] == 0
    store.close()


def test_the_leases_a_process_holds_are_renewed_together(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    book = LeaseBook(store, seconds=0.3)

    async def scenario() -> tuple[list[float], list[float], list[str]]:
        async with book.hold(_parts(1).key), book.hold(_parts(2).key):
            first = [e for (e,) in store._db.execute("SELECT expires FROM leases ORDER BY key")]
            with traced(store) as seen:
                await asyncio.sleep(0.25)  # the renewal task wakes every 0.1 s first
            later = [e for (e,) in store._db.execute("SELECT expires FROM leases ORDER BY key")]
        return first, later, seen

    first, later, seen = asyncio.run(scenario())
    assert all(b > a for a, b in zip(first, later, strict=True))
    updates = [s for s in seen if s.startswith("UPDATE leases")]
    begins = [i for i, s in enumerate(seen) if s.startswith("BEGIN")]
    assert len(updates) == len(begins) and begins  # one statement in each renewal's one
    assert all(_parts(1).key in s and _parts(2).key in s for s in updates)
    store.close()


def test_every_write_is_inside_a_transaction(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    other = tmp_path / "other.sqlite"
    with Store(other) as source:
        source.put(_parts(9), _case(9), ANSWER, _log(9))
    with traced(store) as seen:
        store.remember_params("p", {"temperature": 0})
        store.remember_prompts([("inputs-1", "prompt1"), ("inputs-2", "prompt2")])
        store.set_meta("reply_format:x", "json_object")
        store.claim_many([_parts(1).key, _parts(2).key], "A", 30)
        store.renew(_parts(1).key, "A", 30)
        store.put(_parts(1), _case(1), ANSWER, _log(1), "inputs-1")
        store.release(_parts(1).key, "A")
        store.log_replies(_parts(2), _case(2), _log(2))
        store.release(_parts(2).key, "A")
        store.absorb(other, StoreMerge())
    assert [s for s in seen if s.split()[0].upper() in WRITES]
    assert outside_transactions(seen) == []
    store.close()


def test_every_lookup_of_a_call_searches_an_index(tmp_path: Path) -> None:
    """The plan of every SELECT a run's calls make reads no table that grows with the store
    from end to end (`SCAN judgments` would cost a read of every answer per call)."""
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        for n in range(3):
            store.put(_parts(n), _case(n), ANSWER, _log(n), f"inputs-{n}")
        with traced(store) as seen:
            store.get(_parts(1))
            store.keys_present([_parts(1).key, _parts(7).key])
            store.miss_reason(_parts(7), _case(1))
            store.find(_parts(1).prompt, "rubric", "llm:m")
            store.prompt_hashes(["inputs-1", "inputs-7"])
            store.claim(_parts(7).key, "A", 30)
            store.renew(_parts(7).key, "A", 30)
            store.release(_parts(7).key, "A")
            store.params("p")
            assert store.replies_for("llm:m", _parts(1).prompt)
            store.put(_parts(8), _case(8), ANSWER, _log(8), "inputs-8")  # a piece seen before
        selects = {s for s in seen if s.split()[0].upper() == "SELECT"}
        assert len(selects) >= 10
        scans = {
            sql: plan
            for sql in selects
            for plan in [" | ".join(r[3] for r in store._db.execute("EXPLAIN QUERY PLAN " + sql))]
            if re.search(rf"\bSCAN ({'|'.join(GROWING)})\b", plan)
        }
    assert scans == {}


def _v3_store(path: Path) -> Path:
    with sqlite3.connect(path) as db:
        db.executescript(V3.read_text())
        db.execute("INSERT INTO reply_texts VALUES ('piece', 0, ?), ('piece', 1, ?)", (b"x", b"y"))
        db.execute("INSERT INTO prompt_keys VALUES ('inputs-old', 'prompt-old')")
    db.close()
    return path


def test_m007_keeps_an_earlier_stores_rows_and_its_writers_statements(tmp_path: Path) -> None:
    """Up to m008 (version 4) the code before m007 could still write the store; m009's store
    (version 5) keeps its rows and refuses that code."""
    path = _v3_store(tmp_path / "v3.sqlite")
    with sqlite3.connect(path, isolation_level=None) as db:
        migrate(db, [m for m in MIGRATIONS if m.version <= 4])
        assert db.execute("SELECT owner, expires FROM leases").fetchall() == [("host:1", 1060.0)]
        assert db.execute("SELECT part, text FROM reply_texts WHERE hash = 'piece'").fetchall() == [
            (0, b"x"),
            (1, b"y"),
        ]
        # the statements the code before m007 writes these tables with
        db.execute("INSERT OR IGNORE INTO reply_texts (hash, part, text) VALUES ('piece', 0, 'z')")
        db.execute(
            "INSERT OR IGNORE INTO prompt_keys (inputs, prompt_hash) VALUES ('inputs-old', 'x')"
        )
        assert db.execute(
            "SELECT text FROM reply_texts WHERE hash = 'piece' AND part = 0"
        ).fetchone() == (b"x",)
        assert db.execute("SELECT prompt_hash FROM prompt_keys").fetchall() == [("prompt-old",)]
    db.close()
    with Store(path) as store:
        assert store.prompt_hashes(["inputs-old"]) == {"inputs-old": "prompt-old"}
        store.put(_parts(1), _case(1), ANSWER, _log(1), "inputs-1")
        (logged,) = list(store.logs())
        assert logged.messages == [
            {"role": "system", "content": "rules"},
            {"role": "user", "content": "case 1"},
        ]
        assert read_piece(store._db, "missing") is None


def test_m008_keeps_an_earlier_stores_leases_and_what_a_claim_finds(tmp_path: Path) -> None:
    path = tmp_path / "v3.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(V3_LEASES_KEYED.read_text())
    db.close()
    with Store(path) as store:
        assert store._db.execute("SELECT key, owner, expires FROM leases").fetchall() == [
            ("lease-key", "host:1", 1060.0)
        ]
        assert store.claim("lease-key", "A", 30, now=1000.0).state == "held"
        taken = store.claim("lease-key", "A", 30, now=2000.0)
        assert taken.state == "claimed" and taken.took_over
        again = store.claim_many(["lease-key", "new-key", "new-key"], "A", 30, now=2001.0)
        assert [c.state for c in again] == ["claimed"] * 3 and not any(c.took_over for c in again)
        assert store.claim("new-key", "B", 30, now=2002.0).state == "held"
        rows = store._db.execute("SELECT key, owner FROM leases ORDER BY key").fetchall()
        assert rows == [("lease-key", "A"), ("new-key", "A")]  # one row a key, claimed again
        assert store.renew_many(["lease-key", "new-key", "gone"], "A", 30) == {
            "lease-key",
            "new-key",
        }
        store.release("new-key", "B")  # not B's: kept
        store.release("new-key", "A")
        assert store._db.execute("SELECT key FROM leases").fetchall() == [("lease-key",)]


def test_a_merge_into_a_migrated_store_copies_pieces_once(tmp_path: Path) -> None:
    old = _v3_store(tmp_path / "v3.sqlite")
    with Store(tmp_path / "new.sqlite") as store:
        store.put(_parts(1), _case(1), ANSWER, _log(1), "inputs-1")
    merge_stores(tmp_path / "new.sqlite", [old, old])
    with sqlite3.connect(tmp_path / "new.sqlite") as db:
        rows = db.execute("SELECT hash, part, count(*) FROM reply_texts GROUP BY 1, 2").fetchall()
    db.close()
    assert all(count == 1 for _, _, count in rows) and ("piece", 1, 1) in rows


def _sharing_start(n: int) -> KeyParts:
    """Parts whose key and prompt hash start as those of every other `_sharing_start` do (the
    indexes of m009 hold 8 hex digits): only the whole hash tells them apart."""
    parts = KeyParts("llm:m", "m", "p", f"deadbeef{n:056x}", "schema", "rubric")
    parts.__dict__["key"] = f"cafef00d{n:056x}"  # what `cached_property` would have kept
    return parts


def test_hashes_that_share_their_indexed_start_are_told_apart(tmp_path: Path) -> None:
    one, two = _sharing_start(1), _sharing_start(2)
    other = DimensionVerdict(answers=[QuestionAnswer(question_id="Q1", answer="No")])
    with Store(tmp_path / "s.sqlite") as store:
        store.put(one, _case(1), ANSWER, _log(1), f"{'ab' * 4}{1:056x}")
        store.put(two, _case(2), other, _log(2), f"{'ab' * 4}{2:056x}")
        assert store.keys_present([one.key, two.key, _sharing_start(3).key]) == {one.key, two.key}
        assert [a.answer for a in store.get(two).answers] == ["No"]  # type: ignore[union-attr]
        assert [a.answer for _, v in store.find(one.prompt, "rubric") for a in v.answers] == ["Yes"]
        assert store.prompt_hashes([f"{'ab' * 4}{n:056x}" for n in (1, 2, 3)]) == {
            f"{'ab' * 4}{1:056x}": one.prompt,
            f"{'ab' * 4}{2:056x}": two.prompt,
        }
        assert [r.reply for r in store.replies_for("llm:m", two.prompt)] == ["reply 2"]
        assert store.claim(_sharing_start(3).key, "A", 30).state == "claimed"
        assert store.claim(one.key, "A", 30).state == "answered"


def test_the_store_keeps_keys_pieces_and_prompt_keys_unique(tmp_path: Path) -> None:
    """m009 took their unique indexes away: the store's statements keep them unique."""
    path = tmp_path / "s.sqlite"
    other = DimensionVerdict(answers=[QuestionAnswer(question_id="Q1", answer="No")])
    with Store(path) as store:
        store.put(_parts(1), _case(1), ANSWER, _log(1), "inputs-1")
    with Store(path) as store:  # a new connection knows no piece it wrote
        store.put(_parts(1), _case(1), other, _log(1), "inputs-1")
        store.remember_prompts([("inputs-1", "prompt1"), ("inputs-2", "prompt2")] * 2)
        assert [a.answer for a in store.get(_parts(1)).answers] == ["No"]  # type: ignore[union-attr]
    copy = tmp_path / "copy.sqlite"
    merge_stores(copy, [path, path])
    for store_path in (path, copy):
        with sqlite3.connect(store_path) as db:
            one = db.execute
            assert one("SELECT count(*), count(DISTINCT key) FROM judgments").fetchone() == (1, 1)
            assert (
                one(
                    "SELECT count(*) FROM reply_texts GROUP BY hash, part HAVING count(*) > 1"
                ).fetchall()
                == []
            )
        db.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT inputs FROM prompt_keys ORDER BY 1").fetchall() == [
            ("inputs-1",),
            ("inputs-2",),
        ]
    db.close()
