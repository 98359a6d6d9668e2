"""`judge store recover`: a readable store rebuilt from a damaged one, with Python's sqlite3.

SQLite refuses a file whose first 100 bytes (its header) were overwritten ("file is not a
database"), and a truncated one fails its page check; the sqlite3 shell's `.recover` needs a
header too, and is not in every sqlite3 (3.40's did not recover from either). What is left of
such a file is still readable page by page, and that is what happens here: the file's pages
(the `-wal` file's committed pages laid over them) are read as the SQLite file format
describes them (sqlite.org/fileformat2.html), each table's tree walked from its root page as
the schema on page 1 names it, and every row found is written into a new store with the
damaged store's own `CREATE` statements. A page that is missing or unreadable costs the rows
on it, nothing else. The damaged file is only read.
"""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .file import create_private

MAGIC = b"SQLite format 3\x00"
PAGE_SIZES = (4096, 1024, 2048, 8192, 16384, 32768, 65536, 512)
"""Page sizes SQLite allows, the one stores are made with first (it wins a tie)."""
TABLE_INTERIOR, TABLE_LEAF, INDEX_INTERIOR, INDEX_LEAF = 5, 13, 2, 10
WAL_MAGIC = (0x377F0682, 0x377F0683)

Value = int | float | str | bytes | None


class Unrecoverable(Exception):
    """Nothing in the file can be read as a store: no schema page (the file is no SQLite
    store, or its first page is gone)."""


@dataclass
class Recovered:
    """What was found: rows per table, and the pages that could not be read."""

    rows: dict[str, int] = field(default_factory=dict)
    lost_pages: int = 0
    wal_pages: int = 0
    page_size: int = 0


@dataclass(frozen=True)
class Table:
    """One table of the damaged store's schema."""

    name: str
    root: int
    sql: str
    without_rowid: bool
    columns: list[str]
    """In the order a row's record holds them."""
    rowid_column: int | None
    """The column that is the rowid (`INTEGER PRIMARY KEY`): its record holds NULL."""


class Pages:
    """The damaged file's pages by number (from 1), the committed `-wal` pages over them."""

    def __init__(self, data: bytes, page_size: int, reserved: int, wal: dict[int, bytes]):
        self.data = data
        self.size = page_size
        self.usable = page_size - reserved
        self.wal = wal
        self.count = max([len(data) // page_size, *wal])

    def get(self, number: int) -> bytes | None:
        """Page `number` whole, or None when the file ends before it does."""
        if number in self.wal:
            return self.wal[number]
        start = (number - 1) * self.size
        page = self.data[start : start + self.size]
        return page if len(page) == self.size else None


def recover(path: Path, target: Path) -> Recovered:
    """Write every row still readable in the store at `path` into a new store at `target`
    (which must not exist); `Unrecoverable` when no schema can be read."""
    data = path.read_bytes()
    wal_path = path.with_name(path.name + "-wal")
    wal_data = wal_path.read_bytes() if wal_path.is_file() else b""
    pages, tables = _open(data, wal_data)
    found = Recovered(page_size=pages.size, wal_pages=len(pages.wal))
    create_private(target)
    db = sqlite3.connect(target, isolation_level=None)
    try:
        db.execute("BEGIN")
        for table in tables:
            if table.name != "sqlite_sequence":  # SQLite makes it with the first AUTOINCREMENT
                db.execute(table.sql)
        for table in tables:
            found.rows[table.name] = _copy(db, table, pages, found)
            found.rows[table.name] -= _drop_twice(db, table)
        for sql in _index_sql(pages):
            db.execute(sql)
        db.execute("COMMIT")
    finally:
        db.close()
    return found


def _open(data: bytes, wal_data: bytes) -> tuple[Pages, list[Table]]:
    """The file's pages and the tables its schema names, the page size read from the header
    or, when the header is gone, the one under which the schema's root pages are pages of
    the kind the schema says."""
    if data[:16] == MAGIC:
        (size,) = struct.unpack(">H", data[16:18])
        sizes: tuple[int, ...] = (65536 if size == 1 else size,)
        reserved = data[20]
    else:
        sizes, reserved = PAGE_SIZES, 0
    wal = _wal_pages(wal_data)
    best: tuple[int, Pages, list[Table]] | None = None
    for size in sizes:
        pages = Pages(data, size, reserved, {n: p for n, p in wal.items() if len(p) == size})
        try:
            tables = _schema(pages)
        except (ValueError, IndexError, struct.error, UnicodeDecodeError):
            continue
        score = sum(_kind_fits(pages, table) for table in tables)
        if tables and (best is None or score > best[0]):
            best = (score, pages, tables)
    if best is None:
        raise Unrecoverable("no schema could be read from its first page")
    return best[1], best[2]


def _kind_fits(pages: Pages, table: Table) -> bool:
    page = pages.get(table.root)
    if page is None:
        return False
    kinds = (INDEX_INTERIOR, INDEX_LEAF) if table.without_rowid else (TABLE_INTERIOR, TABLE_LEAF)
    return page[0] in kinds


def _schema(pages: Pages) -> list[Table]:
    """The tables the schema (`sqlite_schema`, rooted at page 1) names."""
    tables = []
    for _, values in _table_rows(pages, 1, set()):
        kind, name, _, root, sql = (list(values) + [None] * 5)[:5]
        if kind == "table" and isinstance(name, str) and isinstance(root, int) and sql:
            tables.append(_table(name, root, str(sql)))
    return tables


def _table(name: str, root: int, sql: str) -> Table:
    """A table's record layout, read from its own `CREATE` statement by SQLite itself."""
    with sqlite3.connect(":memory:") as scratch:
        if name != "sqlite_sequence":
            scratch.execute(sql)
        else:
            scratch.execute("CREATE TABLE t (x INTEGER PRIMARY KEY AUTOINCREMENT)")
        info = scratch.execute(f'PRAGMA table_info("{name}")').fetchall()
        columns = [row[1] for row in info]
        without_rowid = "WITHOUT ROWID" in " ".join(sql.upper().split())
        rowid_column = None
        if without_rowid:
            pk = next(r[1] for r in scratch.execute(f'PRAGMA index_list("{name}")') if r[3] == "pk")
            columns = [row[2] for row in scratch.execute(f'PRAGMA index_xinfo("{pk}")')]
        else:
            keys = [row for row in info if row[5]]
            if len(keys) == 1 and keys[0][2].upper() == "INTEGER":
                rowid_column = keys[0][0]
    scratch.close()
    return Table(name, root, sql, without_rowid, columns, rowid_column)


KEPT_UNIQUE = {"judgments": ("key",), "reply_texts": ("hash", "part"), "prompt_keys": ("inputs",)}
"""Columns the store keeps unique itself, without a unique index (`m009_short_indexes`)."""


def _drop_twice(db: sqlite3.Connection, table: Table) -> int:
    """Delete the rows of `table` that the damage left twice under a key the store keeps
    unique (the last copied is kept); how many. A unique index turned them away in `_copy`."""
    columns = KEPT_UNIQUE.get(table.name)
    if columns is None or table.without_rowid or not set(columns) <= set(table.columns):
        return 0
    cursor = db.execute(
        f'DELETE FROM "{table.name}" WHERE rowid NOT IN'
        f' (SELECT max(rowid) FROM "{table.name}" GROUP BY {", ".join(columns)})'
    )
    return int(cursor.rowcount)


def _index_sql(pages: Pages) -> list[str]:
    """The schema's `CREATE INDEX` statements (automatic indexes have none)."""
    found = []
    for _, values in _table_rows(pages, 1, set()):
        kind, sql = values[0] if values else None, values[4] if len(values) > 4 else None
        if kind == "index" and isinstance(sql, str):
            found.append(sql)
    return found


def _copy(db: sqlite3.Connection, table: Table, pages: Pages, found: Recovered) -> int:
    """Insert every row of `table` still readable; the number inserted."""
    rows = (
        _index_records(pages, table.root, set(), found)
        if table.without_rowid
        else _table_rows(pages, table.root, set(), found)
    )
    copied = 0
    for rowid, values in rows:
        values = list(values[: len(table.columns)])
        if table.rowid_column is not None and table.rowid_column < len(values):
            values[table.rowid_column] = rowid
        names = ", ".join(f'"{c}"' for c in table.columns[: len(values)])
        marks = ", ".join("?" * len(values))
        try:
            db.execute(f'INSERT INTO "{table.name}" ({names}) VALUES ({marks})', values)
        except sqlite3.IntegrityError:  # a row the damage left twice, or half
            continue
        copied += 1
    return copied


def _table_rows(
    pages: Pages, root: int, seen: set[int], found: Recovered | None = None
) -> Iterator[tuple[int, list[Value]]]:
    """(rowid, values) of every row of the table tree rooted at `root`, in key order, the
    pages that cannot be read skipped (and counted in `found`)."""
    page = _page(pages, root, seen, found, (TABLE_INTERIOR, TABLE_LEAF))
    if page is None:
        return
    base = 100 if root == 1 else 0
    if page[base] == TABLE_INTERIOR:
        for child in [*_children(page, base), _right(page, base)]:
            yield from _table_rows(pages, child, seen, found)
        return
    for offset in _cells(page, base):
        try:
            size, offset = _varint(page, offset)
            rowid, offset = _varint(page, offset)
            payload = _payload(pages, page, offset, size, pages.usable - 35)
            yield _signed(rowid), _record(payload)
        except (ValueError, IndexError, struct.error, UnicodeDecodeError):
            continue  # one cell the damage reached: the page's others still count


def _index_records(
    pages: Pages, root: int, seen: set[int], found: Recovered
) -> Iterator[tuple[int, list[Value]]]:
    """The records of the index tree rooted at `root` (a table WITHOUT ROWID): leaf and
    interior cells alike hold rows."""
    page = _page(pages, root, seen, found, (INDEX_INTERIOR, INDEX_LEAF))
    if page is None:
        return
    interior = page[0] == INDEX_INTERIOR
    limit = (pages.usable - 12) * 64 // 255 - 23
    for offset in _cells(page, 0):
        try:
            if interior:
                (child,) = struct.unpack(">I", page[offset : offset + 4])
                yield from _index_records(pages, child, seen, found)
                offset += 4
            size, offset = _varint(page, offset)
            yield 0, _record(_payload(pages, page, offset, size, limit))
        except (ValueError, IndexError, struct.error, UnicodeDecodeError):
            continue
    if interior:
        yield from _index_records(pages, _right(page, 0), seen, found)


def _page(
    pages: Pages, number: int, seen: set[int], found: Recovered | None, kinds: tuple[int, ...]
) -> bytes | None:
    """Page `number` when it is a b-tree page of one of `kinds` not visited yet; None (the
    page counted as lost) when it is missing or of another kind."""
    if number in seen or number < 1:
        return None
    seen.add(number)
    page = pages.get(number)
    if page is None or page[100 if number == 1 else 0] not in kinds:
        if found is not None:
            found.lost_pages += 1
        return None
    return page


def _cells(page: bytes, base: int) -> list[int]:
    (count,) = struct.unpack(">H", page[base + 3 : base + 5])
    start = base + (12 if page[base] in (TABLE_INTERIOR, INDEX_INTERIOR) else 8)
    pointers = struct.unpack(f">{count}H", page[start : start + 2 * count])
    return [p for p in pointers if start + 2 * count <= p < len(page)]


def _children(page: bytes, base: int) -> list[int]:
    return [struct.unpack(">I", page[offset : offset + 4])[0] for offset in _cells(page, base)]


def _right(page: bytes, base: int) -> int:
    return int(struct.unpack(">I", page[base + 8 : base + 12])[0])


def _payload(pages: Pages, page: bytes, offset: int, size: int, limit: int) -> bytes:
    """A cell's payload of `size` bytes from `offset`, followed into its overflow pages."""
    usable = pages.usable
    if size <= limit:
        return page[offset : offset + size]
    least = (usable - 12) * 32 // 255 - 23
    local = least + (size - least) % (usable - 4)
    local = local if local <= limit else least
    parts = [page[offset : offset + local]]
    (following,) = struct.unpack(">I", page[offset + local : offset + local + 4])
    left, visited = size - local, set()
    while left > 0:
        overflow = pages.get(following) if following not in visited else None
        if overflow is None:
            raise ValueError("an overflow page is missing")
        visited.add(following)
        take = min(left, usable - 4)
        parts.append(overflow[4 : 4 + take])
        left -= take
        (following,) = struct.unpack(">I", overflow[:4])
    return b"".join(parts)


def _record(payload: bytes) -> list[Value]:
    """A record's values (sqlite.org/fileformat2.html#record_format); text as UTF-8."""
    header_size, offset = _varint(payload, 0)
    types = []
    while offset < header_size:
        serial, offset = _varint(payload, offset)
        types.append(serial)
    values: list[Value] = []
    body = header_size
    for serial in types:
        value, body = _value(payload, body, serial)
        values.append(value)
    if body > len(payload):
        raise ValueError("a record longer than its payload")
    return values


_INT_SIZES = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


def _value(payload: bytes, at: int, serial: int) -> tuple[Value, int]:
    if serial == 0:
        return None, at
    if serial in _INT_SIZES:
        size = _INT_SIZES[serial]
        return int.from_bytes(payload[at : at + size], "big", signed=True), at + size
    if serial == 7:
        return struct.unpack(">d", payload[at : at + 8])[0], at + 8
    if serial in (8, 9):
        return serial - 8, at
    if serial >= 12:
        size = (serial - 12) // 2
        raw = payload[at : at + size]
        if len(raw) != size:
            raise ValueError("a value cut short")
        return (raw if serial % 2 == 0 else raw.decode("utf-8")), at + size
    raise ValueError(f"serial type {serial} is reserved")


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = 0
    for i in range(8):
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return (value << 8) | data[at + 8], at + 9


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _wal_pages(wal: bytes) -> dict[int, bytes]:
    """The pages of every transaction the `-wal` file holds committed, the latest of each:
    frames whose salts match the header's and whose running checksum holds, up to the last
    commit frame (sqlite.org/fileformat2.html#walformat)."""
    if len(wal) < 32:
        return {}
    magic, _, page_size, _, salt1, salt2 = struct.unpack(">6I", wal[:24])
    if magic not in WAL_MAGIC or not page_size:
        return {}
    order = ">" if magic & 1 else "<"
    s0, s1 = _checksum(wal[:24], 0, 0, order)
    if (s0, s1) != struct.unpack(">2I", wal[24:32]):
        return {}
    pages: dict[int, bytes] = {}
    pending: dict[int, bytes] = {}
    at = 32
    while at + 24 + page_size <= len(wal):
        number, commit, f1, f2, c0, c1 = struct.unpack(">6I", wal[at : at + 24])
        page = wal[at + 24 : at + 24 + page_size]
        s0, s1 = _checksum(wal[at : at + 8], s0, s1, order)
        s0, s1 = _checksum(page, s0, s1, order)
        if (f1, f2) != (salt1, salt2) or (s0, s1) != (c0, c1):
            break
        pending[number] = page
        if commit:
            pages.update(pending)
            pending = {}
        at += 24 + page_size
    return pages


def _checksum(data: bytes, s0: int, s1: int, order: str) -> tuple[int, int]:
    words = struct.unpack(f"{order}{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1


def looks_like_a_store(path: Path) -> bool:
    """Whether the file at `path` holds what is left of a judgment store (its schema's text),
    whatever became of its header: damaged, not some other file."""
    try:
        with path.open("rb") as handle:
            start = handle.read(1 << 16)
    except OSError:
        return False
    return b"CREATE TABLE" in start and b"judgments" in start


def describe(found: Recovered) -> dict[str, Any]:
    """The counts `judge store recover` reports."""
    return {
        "answers": found.rows.get("judgments", 0),
        "failed_calls": found.rows.get("errors", 0),
        "logged_requests": found.rows.get("replies", 0),
        "rows": dict(found.rows),
        "lost_pages": found.lost_pages,
        "wal_pages": found.wal_pages,
        "page_size": found.page_size,
    }
