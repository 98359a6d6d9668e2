"""The one way input files are read: regular files only, under a size limit, with bounded nesting
and bounded YAML alias expansion.

An input is something a person (or an attacker) hands the tool, so reading it must never hang (a
FIFO, `/dev/zero`), exhaust memory (a huge file, a "billion laughs" YAML alias bomb) or crash
with a RecursionError (100,000 nested brackets). Each of those is an `InputError` naming the file:
exit 2. Broken or looping symbolic links found while listing a directory are `FormatWarning`s;
links to directories are followed, each directory entered once.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from .errors import InputError, bad_file, warn_format

DEFAULT_MAX_INPUT_MB = 64
# Real benchmark files nest fewer than 20 levels; the rest of the pipeline (pydantic, the rules
# judge's flattening of `parameters`) recurses over what is loaded.
MAX_DEPTH = 100
# Nodes a YAML document may have once its aliases are expanded (a 700-byte alias bomb has 10^9).
MAX_YAML_NODES = 1_000_000
_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader when libyaml is there
MERGE_TAG = "tag:yaml.org,2002:merge"


class _Loader(_BASE_LOADER):  # type: ignore[valid-type,misc]
    """The safe loader, refusing a mapping that gives one key twice with different values
    (PyYAML keeps the last one without a word; a merge key `<<` may be overridden)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            _check_yaml_keys(node)
        return super().construct_mapping(node, deep)


def _check_yaml_keys(node: yaml.MappingNode) -> None:
    seen: dict[tuple[str, str], yaml.Node] = {}
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == MERGE_TAG:
            continue
        first = seen.setdefault((key.tag, key.value), value)
        if first is not value and not _same_node(first, value):
            raise yaml.constructor.ConstructorError(None, None, _twice(key.value), key.start_mark)


class _DuplicateYamlKey(yaml.constructor.ConstructorError):
    pass


def _same_node(a: yaml.Node, b: yaml.Node) -> bool:
    """Whether two nodes hold the same value (a key given twice, the same both times)."""
    if type(a) is not type(b) or a.tag != b.tag:
        return False
    if isinstance(a, yaml.ScalarNode):
        return bool(a.value == b.value)
    left, right = _children(a), _children(b)
    return len(left) == len(right) and all(map(_same_node, left, right))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    return list(node.value)


YAML_LOADER = _Loader


def _twice(key: object) -> str:
    return (
        f"the key {key!r} is given twice with different values in one mapping; "
        "keep the one that is meant"
    )


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict; `_DuplicateKey` when it gives a key twice with different
    values (`json` keeps the last one without a word: a second, empty `diagnosis` would be
    scored as no diagnosis)."""
    data = dict(pairs)
    if len(data) < len(pairs):
        first: dict[str, Any] = {}
        for key, value in pairs:
            if first.setdefault(key, value) != value:
                raise _DuplicateKey(key)
    return data


class RefusedInput(InputError):
    """An input refused whatever its format (not a regular file, too big, too deep, an alias
    bomb, a key given twice): detection stops at it instead of asking the next format adapter."""


_limit = {"bytes": DEFAULT_MAX_INPUT_MB * 1024 * 1024}
_recorders: list[set[tuple[int, int]]] = []


@contextmanager
def recording_reads() -> Iterator[set[tuple[int, int]]]:
    """Collect the identity (device, inode) of every file read inside the block, however it
    was named (through symbolic or hard links): what a command must never write over."""
    read: set[tuple[int, int]] = set()
    _recorders.append(read)
    try:
        yield read
    finally:
        _recorders.remove(read)


def _record(info: os.stat_result) -> None:
    for read in _recorders:
        read.add((info.st_dev, info.st_ino))


def set_max_input_mb(megabytes: float) -> None:
    """Change the per-file size limit (`--max-input-mb`) for the rest of the process."""
    if megabytes <= 0:
        raise InputError(
            None, f"must be a positive number of megabytes, got {megabytes}", field="--max-input-mb"
        )
    _limit["bytes"] = int(megabytes * 1024 * 1024)


def max_input_bytes() -> int:
    """The current input file size limit, in bytes."""
    return _limit["bytes"]


def _kind(mode: int) -> str:
    kinds = {
        stat.S_ISDIR: "a directory",
        stat.S_ISFIFO: "a FIFO (named pipe)",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISSOCK: "a socket",
    }
    return next((name for test, name in kinds.items() if test(mode)), "not a regular file")


def regular_file_size(path: Path) -> int:
    """The size of `path`, which must be (a symbolic link to) a regular file."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise RefusedInput(path, f"is {_kind(info.st_mode)}; only regular files are read")
    return info.st_size


def read_bytes(path: Path) -> bytes:
    """The content of a regular file, refused when it exceeds the size limit."""
    path = Path(path)
    limit = max_input_bytes()
    too_big = f"larger than the {limit / 1024 / 1024:g} MB limit per input file (--max-input-mb)"
    if regular_file_size(path) > limit:
        raise RefusedInput(path, too_big)
    try:
        # O_NONBLOCK: if the file was swapped for a FIFO since the check, open must not block.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise RefusedInput(path, "is not a regular file; only regular files are read")
            _record(info)
            data = handle.read(limit + 1)
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None
    if len(data) > limit:
        raise RefusedInput(path, too_big)
    return data


def read_head(path: Path, size: int = 64 * 1024) -> str:
    """The first `size` bytes of a regular file as text (undecodable bytes replaced): for
    sniffing a format without reading a whole file."""
    regular_file_size(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            if _recorders:
                _record(os.fstat(handle.fileno()))
            return handle.read(size).decode("utf-8", errors="replace")
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None


def read_text(path: Path, encoding: str = "utf-8") -> str:
    """Read a file as UTF-8, or fail naming the file and the offending byte."""
    data = read_bytes(path)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InputError(
            path, f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
        ) from None


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def whole_characters(value: Any) -> Any:
    """`value` with each lone surrogate (a `\\ud800` escape in a JSON file, half of an emoji an
    agent's string handling split) replaced by U+FFFD: such text cannot be written as UTF-8, so
    it would fail the run where it is hashed, sent or written, far from its file."""
    if isinstance(value, str) and _LONE_SURROGATE.search(value):
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return value


def _whole(data: Any) -> Any:
    """`data` (parsed JSON) with `whole_characters` applied to every key and string."""
    if isinstance(data, str):
        return whole_characters(data)
    if isinstance(data, list):
        return [_whole(item) for item in data]
    if isinstance(data, dict):
        return {whole_characters(key): _whole(value) for key, value in data.items()}
    return data


def parse_json(text: str, path: Path | str | None, field: str | None = None) -> Any:
    """Parse JSON text read from `path`, refusing nesting deeper than `MAX_DEPTH`."""
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        where = field or f"line {exc.lineno}"
        raise InputError(path, f"invalid JSON: {exc.msg}", field=where) from None
    except _DuplicateKey as exc:
        raise RefusedInput(path, _twice(exc.key), field=field or exc.key) from None
    except RecursionError:
        raise RefusedInput(path, _too_deep(), field=field) from None
    check_depth(data, path, field)
    return _whole(data) if _SURROGATE_ESCAPE.search(text) else data


def parse_yaml(text: str, path: Path | str | None) -> Any:
    """Parse YAML text read from `path`, after checking its nesting and alias expansion."""
    try:
        _check_yaml_events(text, path)
        return yaml.load(text, Loader=YAML_LOADER)
    except _DuplicateYamlKey as exc:
        line = f"line {exc.problem_mark.line + 1}" if exc.problem_mark else None
        raise RefusedInput(path, str(exc.problem), field=line) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(path, f"invalid YAML: {problem}", field=where) from None
    except RecursionError:
        raise RefusedInput(path, _too_deep()) from None


def read_data(path: Path) -> Any:
    """Parse a YAML or JSON file (by its suffix), naming the line of a syntax error."""
    text = read_text(path)
    if path.suffix.lower() == ".json":
        return parse_json(text, path)
    return parse_yaml(text, path)


def _too_deep() -> str:
    return f"nested more than {MAX_DEPTH} levels deep; refused"


def check_depth(data: Any, path: Path | str | None, field: str | None = None) -> None:
    """Refuse parsed data nested deeper than `MAX_DEPTH`."""
    if nesting_depth(data) > MAX_DEPTH:
        raise RefusedInput(path, _too_deep(), field=field)


def nesting_depth(data: Any, stop: int = MAX_DEPTH) -> int:
    """How deep lists and mappings nest in `data` (a scalar: 0), counted without recursion and
    only up to `stop` + 1, so a cycle or a very deep value ends the count quickly. A container
    shared by several parents (YAML aliases, or Python objects built that way) is walked again
    only when reached deeper than before, so an alias bomb costs its size, not its expansion."""
    deepest = 0
    reached: dict[int, int] = {}
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if not isinstance(value, (dict, list, tuple)) or reached.get(id(value), 0) >= depth:
            continue
        reached[id(value)] = depth
        deepest = max(deepest, depth)
        if deepest > stop:
            return deepest
        children = value.values() if isinstance(value, dict) else value
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _check_yaml_events(text: str, path: Path | str | None) -> None:
    """Walk the parser's events (a flat stream, no recursion) to measure the document's depth
    and how many nodes its aliases add once expanded, before anything is built from it."""
    sizes: dict[str, int] = {}  # anchor -> node count of its node, aliases expanded
    open_nodes: list[list[Any]] = []  # [anchor, node count so far] of each unclosed collection
    aliased = 0
    for event in yaml.parse(text, Loader=YAML_LOADER):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            sizes.pop(event.anchor or "", None)  # an alias inside its own anchor is a cycle
            open_nodes.append([event.anchor, 1])
            if len(open_nodes) > MAX_DEPTH:
                raise RefusedInput(path, _too_deep())
            continue
        if isinstance(event, yaml.AliasEvent):
            count = _alias_size(sizes, event.anchor, path)
            aliased += count
            if aliased > MAX_YAML_NODES:
                raise RefusedInput(
                    path,
                    f"YAML aliases expand to more than {MAX_YAML_NODES:,} nodes (an alias bomb?);"
                    " refused",
                )
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, count = open_nodes.pop()
            if anchor:
                sizes[anchor] = count
        elif isinstance(event, yaml.ScalarEvent):
            count = 1
            if event.anchor:
                sizes[event.anchor] = 1
        else:
            continue
        if open_nodes:
            open_nodes[-1][1] += count


def _alias_size(sizes: dict[str, int], anchor: str | None, path: Path | str | None) -> int:
    if anchor not in sizes:
        raise RefusedInput(
            path, f"YAML alias *{anchor} refers to a node that holds it (or to no node); refused"
        )
    return sizes[anchor]


def input_files(root: Path, accept: Callable[[Path], bool], recursive: bool = True) -> list[Path]:
    """The files under directory `root` whose path `accept`s, sorted.

    Symbolic links to directories are followed; a directory reached again (a link to one
    already walked, or to a folder above it: a loop) is a warning and walked once. A broken or
    looping link that `accept`s is a warning and skipped; one to something that is not a
    regular file (a device, a FIFO) is an `InputError`, as is such a file itself: it is
    refused, never silently dropped or read.
    """
    found = []
    for path in _walk(root, recursive):
        if not accept(path):
            continue
        problem = _link_problem(path)
        if problem:
            warn_format(path, f"{problem}, skipped")
            continue
        try:
            regular_file_size(path)
        except InputError as exc:
            bad_file(exc)
            continue
        found.append(path)
    return sorted(found)


def _walk(root: Path, recursive: bool) -> Iterator[Path]:
    seen = FolderSet(root)
    for folder, dirs, files in os.walk(root, followlinks=True):
        dirs[:] = [d for d in sorted(dirs) if seen.first_visit(Path(folder, d))]
        yield from (Path(folder, name) for name in sorted(files))
        if not recursive:
            return


class FolderSet:
    """The folders a walk has entered, by identity (device, inode), so that one reached
    again through a symbolic link (a second name for it, or a loop) is entered once."""

    def __init__(self, root: Path):
        self._seen: dict[tuple[int, int], Path] = {}
        self.first_visit(root)

    def first_visit(self, folder: Path) -> bool:
        """Whether `folder` is new to the walk; a warning when a link leads back to one seen."""
        info = os.stat(folder)
        key = (info.st_dev, info.st_ino)
        first = self._seen.setdefault(key, folder)
        if first is folder:
            return True
        warn_format(folder, f"a symbolic link to {first}, which is read already; skipped")
        return False

    def subfolders(self, folder: Path) -> list[Path]:
        """The folders in `folder` (links to folders too), sorted; a broken link is a warning."""
        found = []
        for path in sorted(folder.iterdir()):
            problem = _link_problem(path)
            if problem:
                warn_format(path, f"{problem}, skipped")
            elif path.is_dir():
                found.append(path)
        return found


def _link_problem(path: Path) -> str | None:
    if not path.is_symlink():
        return None
    try:
        os.stat(path)
    except FileNotFoundError:
        return f"broken symbolic link (to {os.readlink(path)})"
    except OSError as exc:
        return f"unreadable symbolic link ({exc.strerror})"
    return None
