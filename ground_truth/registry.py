"""One registry shape for every extension point: format adapters, judges, resolution checks.

It lives in `ground_truth` because the format adapters need it and `ground_truth` may import
neither `judge` nor `agreement`; `judge` may import `ground_truth`, so its judges and resolution
checks use this one implementation rather than a copy of it.

An entry is registered in code, by decorator or by call, either as the object itself or lazily as
a `"module:attr"` string imported on first use; installed packages add entries under an
entry-point group. What an entry loads is checked against the extension point's protocol on use
(at once when registered as an object). Built-in and in-process entries come first, in
registration order, then entry points by name.

A third-party plugin (an entry point) that cannot be imported or fails the protocol is a
`PluginWarning` naming it and its distribution, and is skipped while the registry is walked;
asked for by name it is a `PluginError`. An in-process entry that cannot be loaded raises: that
is a bug in code the process itself runs.

    FORMATS = Registry("format", "diagnosis_judge.formats", check=as_adapter)
    FORMATS.register("itbench", "ground_truth.formats.itbench:ADAPTER")  # lazy

    @FORMATS.register("toybench")  # by decorator
    class ToyBench: ...

    FORMATS.get("itbench")  # imports and checks it; UnknownName lists the names
    FORMATS.names()  # for --help and error messages: imports nothing
    for name, adapter in FORMATS.items(): ...  # loads one by one; broken plugins skipped
"""

from __future__ import annotations

import importlib
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")
X = TypeVar("X")

_IDENTIFIER = r"[A-Za-z_]\w*"
REFERENCE = re.compile(rf"^({_IDENTIFIER}(?:\.{_IDENTIFIER})*):({_IDENTIFIER})$")
"""A lazy `package.module:attribute` reference."""


class PluginWarning(UserWarning):
    """An installed plugin that cannot be used; it is skipped and the command goes on."""


class PluginError(ValueError):
    """A plugin asked for by name cannot be loaded, or what it loads fails the protocol."""

    def __init__(self, plugin: str, reason: str) -> None:
        self.plugin = plugin
        self.reason = reason
        super().__init__(f"{plugin} cannot be used: {reason}")


class UnknownName(LookupError):
    """No entry of that name; `names` are the ones there are."""

    def __init__(self, kind: str, name: str, names: list[str]) -> None:
        self.name = name
        self.names = names
        super().__init__(f"unknown {kind} {name!r} (expected one of: {', '.join(names)})")

    def __str__(self) -> str:
        return str(self.args[0])


def load_reference(reference: str) -> Any:
    """The attribute a `module:attr` string names (ImportError, AttributeError when missing)."""
    if not REFERENCE.match(reference):
        raise ValueError(f"{reference!r} is not a 'package.module:attribute' reference")
    module_name, _, attribute = reference.partition(":")
    module = importlib.import_module(module_name)
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise AttributeError(f"{module_name} has no attribute {attribute}") from None


@dataclass(frozen=True)
class _Entry:
    given: Any  # what was registered: an object or a `module:attr` string
    target: Any  # the checked object, or the string, imported and checked on use
    lazy: bool


class Registry(Generic[T]):
    """Named objects of one kind (`kind`, as messages say it), checked by `check`.

    `check(obj, name)` returns the usable object (it may build one, say an instance of a class)
    or raises TypeError/ValueError saying what is missing. `group` is the entry-point group.
    """

    def __init__(self, kind: str, group: str, check: Callable[[Any, str], T]) -> None:
        self.kind = kind
        self.group = group
        self._check = check
        self._entries: dict[str, _Entry] = {}
        self._warned: set[tuple[str, str]] = set()
        self._found: tuple[tuple[str, ...], list[EntryPoint]] | None = None
        self._skipped: dict[str, str] = {}

    # ------------------------------------------------------------------ registering

    @overload
    def register(self, name: str, *, replace: bool = ...) -> Callable[[X], X]: ...

    @overload
    def register(self, name: str, target: X, *, replace: bool = ...) -> X: ...

    def register(self, name: str, target: Any = None, *, replace: bool = False) -> Any:
        """`register(name, obj)`, `register(name, "module:attr")` (imported on first use), or
        `@register(name)` as a decorator. A name taken by another object is a ValueError unless
        `replace=True`; an object failing the protocol is a TypeError at once."""
        if target is None:
            return lambda obj: self.register(name, obj, replace=replace)
        if not name:
            raise ValueError(f"a {self.kind} needs a name")
        current = self._entries.get(name)
        again = current is not None and (
            current.given is target or (isinstance(target, str) and current.given == target)
        )
        if current is not None and not replace and not again:
            raise ValueError(
                f"a {self.kind} named {name!r} is already registered (pass replace=True)"
            )
        if isinstance(target, str):
            if not REFERENCE.match(target):
                raise ValueError(f"{self.kind} {name!r}: {target!r} is not a 'module:attr' string")
            self._entries[name] = _Entry(target, target, lazy=True)
        else:
            self._entries[name] = _Entry(target, self._check(target, name), lazy=False)
        return target

    def unregister(self, name: str) -> None:
        """Forget an entry registered in this process (tests, notebooks); no error if absent."""
        self._entries.pop(name, None)

    # ------------------------------------------------------------------ looking up

    def names(self) -> list[str]:
        """Every name, in lookup order, without importing anything."""
        return list(self.origins())

    def origins(self) -> dict[str, str]:
        """Every name with where it comes from (`registered <object or module:attr>`, `entry point
        module:attr`), in lookup order, without importing anything."""
        found = {
            name: f"registered {entry.target if entry.lazy else repr(entry.target)}"
            for name, entry in self._entries.items()
        }
        for point in self._entry_points():
            found.setdefault(point.name, f"entry point {point.value}")
        return found

    def get(self, name: str) -> T:
        """The object called `name`: UnknownName when there is none, PluginError when its plugin
        cannot be used."""
        found = self.find(name)
        if found is None:
            raise UnknownName(self.kind, name, self.names())
        return found

    def find(self, name: str) -> T | None:
        """`get(name)`, or None when nothing has that name."""
        if name in self._entries:
            return self._load(name)
        for point in self._entry_points():
            if point.name == name:
                return self._from_plugin(point)
        return None

    def items(self, where: Callable[[str], bool] | None = None) -> Iterator[tuple[str, T]]:
        """Every usable entry (whose name passes `where`, if given), loaded one at a time in
        lookup order (stop early to import less). A plugin that cannot be used is warned about
        once and skipped."""
        for name in [n for n in self._entries if where is None or where(n)]:
            yield name, self._load(name)
        for point in self._entry_points():
            if where is not None and not where(point.name):
                continue
            if point.name in self._entries:
                self._warn_once(point, f"skipped: the name {point.name!r} is taken")
                continue
            try:
                yield point.name, self._from_plugin(point)
            except PluginError as exc:
                self._skipped[point.name] = exc.reason
                self._warn_once(point, f"skipped: {exc.reason}")

    def skipped(self) -> dict[str, str]:
        """The plugins `items()` skipped because they cannot be used, with why."""
        return dict(self._skipped)

    # ------------------------------------------------------------------ loading

    def _load(self, name: str) -> T:
        entry = self._entries[name]
        if not entry.lazy:
            return entry.target
        return self._check(load_reference(entry.target), name)

    def _from_plugin(self, point: EntryPoint) -> T:
        try:
            return self._check(point.load(), point.name)
        except Exception as exc:  # a third party's import may raise anything
            reason = f"{type(exc).__name__}: {exc}"
            raise PluginError(_describe(self.kind, point), reason) from exc

    def _entry_points(self) -> list[EntryPoint]:
        """This group's entry points by name; of two with one name, the first found. Found again
        when `sys.path` changes (a scan costs milliseconds, and checks are looked up per item)."""
        path = tuple(sys.path)
        if self._found is None or self._found[0] != path:
            points: dict[str, EntryPoint] = {}
            for point in entry_points(group=self.group):
                points.setdefault(point.name, point)
            self._found = (path, sorted(points.values(), key=lambda p: p.name))
            self._skipped.clear()
        return self._found[1]

    def _warn_once(self, point: EntryPoint, what: str) -> None:
        message = f"{_describe(self.kind, point)} {what}"
        where = str(point.dist.locate_file("")) if point.dist is not None else ""
        if (message, where) not in self._warned:
            self._warned.add((message, where))
            warnings.warn(PluginWarning(message), stacklevel=3)


def _describe(kind: str, point: EntryPoint) -> str:
    dist = point.dist
    origin = f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"
    return f"{kind} plugin {point.name!r} (entry point {point.value}, distribution {origin})"
