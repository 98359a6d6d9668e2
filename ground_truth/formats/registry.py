"""The format adapters by name, and how an input finds its adapter.

An adapter is any object with the small `FormatAdapter` protocol. `FORMATS` names the native
format and the built-in benchmark adapters as `module:attr` strings, imported only when detection
or a `--format` reaches them; a third-party package adds its own through an entry point in the
group `diagnosis_judge.formats` (its value: an adapter object, or a class to instantiate without
arguments; the adapter's `name` must be the entry point's name):

    [project.entry-points."diagnosis_judge.formats"]
    mybench = "mybench_judge:MyBenchAdapter"

Detection asks the adapters in order (native first, the built-in ones, then plugins by name) how
confident each is that it can read the input; the most confident wins, the first on a tie, so the
first to be certain ends the search. A plugin that cannot be loaded or is not an adapter is
warned about and skipped (see `ground_truth.registry`); a built-in that cannot be imported, or
any adapter that crashes while sniffing, fails loudly (`AdapterError`): it never silently makes
an input look like another format. An input no adapter claims is an `InputError` listing what
each one looked for.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from ..errors import InputError
from ..reading import RefusedInput
from ..registry import PluginError, Registry, UnknownName

Kind = Literal["specs", "submissions"]
ENTRY_POINT_GROUP = "diagnosis_judge.formats"
KIND_NOUN = {"specs": "ground truth", "submissions": "agent outputs"}
EMPTY_MEANS = {"specs": "no incident spec", "submissions": "no submission to score"}


class AdapterError(RuntimeError):
    """A format adapter is broken (cannot be loaded, or crashed): a bug, not bad input."""


@runtime_checkable
class FormatAdapter(Protocol):
    """What a format adapter provides. `sniff` returns a confidence in [0, 1] that the adapter
    can read `path` as `kind` (0: not mine); it may raise `InputError` to say why not.
    An adapter may also define `cross_check(specs, submissions)`, warnings only, and
    `looks_for`, a mapping from kind to a short description of what `sniff` looks for."""

    @property
    def name(self) -> str: ...

    def sniff(self, path: Path, kind: Kind) -> float: ...

    def load_specs(self, path: Path) -> list[Any]: ...

    def load_submissions(self, path: Path) -> list[Any]: ...


@dataclass(frozen=True)
class FunctionAdapter:
    """An adapter made of plain functions: a yes/no check and a loader per kind."""

    name: str
    looks_for: Mapping[str, str]
    specs_check: Callable[[Path], bool]
    submissions_check: Callable[[Path], bool]
    specs_loader: Callable[[Path], list[Any]]
    submissions_loader: Callable[[Path], list[Any]]
    cross_checker: Callable[[list[Any], list[Any]], object] | None = None

    def sniff(self, path: Path, kind: Kind) -> float:
        check = self.specs_check if kind == "specs" else self.submissions_check
        return 1.0 if check(path) else 0.0

    def load_specs(self, path: Path) -> list[Any]:
        return self.specs_loader(path)

    def load_submissions(self, path: Path) -> list[Any]:
        return self.submissions_loader(path)

    def cross_check(self, specs: list[Any], submissions: list[Any]) -> None:
        if self.cross_checker is not None:
            self.cross_checker(specs, submissions)


def as_adapter(obj: Any, name: str) -> FormatAdapter:
    """The protocol check: `obj` (or an instance of it, for a class) as the adapter `name`."""
    adapter = obj() if isinstance(obj, type) else obj
    if not isinstance(adapter, FormatAdapter) or not isinstance(adapter.name, str):
        raise TypeError(
            f"{obj!r} is not a format adapter: it needs name, sniff(path, kind),"
            " load_specs(path) and load_submissions(path)"
        )
    if adapter.name != name:
        raise TypeError(f"the adapter is named {adapter.name!r}, not {name!r}")
    return adapter


FORMATS: Registry[FormatAdapter] = Registry("format", ENTRY_POINT_GROUP, as_adapter)
register_format = FORMATS.register
for _name, _reference in {
    "native": "ground_truth.loaders:NATIVE",
    "itbench": "ground_truth.formats.itbench:ADAPTER",
    "sregym": "ground_truth.formats.sregym:ADAPTER",
    "srezero": "ground_truth.formats.srezero:ADAPTER",
    "aiopslab": "ground_truth.formats.aiopslab:ADAPTER",
    "openrca": "ground_truth.formats.openrca:ADAPTER",
    "forge": "ground_truth.formats.forge:ADAPTER",
    "cloud-opsbench": "ground_truth.formats.cloudopsbench:ADAPTER",
    "rcaeval": "ground_truth.formats.rcaeval:ADAPTER",
}.items():
    register_format(_name, _reference)


def adapters() -> list[FormatAdapter]:
    """Every usable adapter, in detection order (this imports all of them)."""
    return [adapter for _, adapter in FORMATS.items()]


def get_adapter(name: str, path: Path | None = None) -> FormatAdapter:
    """The format adapter called `name`; else InputError (naming `path`) listing the known ones,
    or saying why the plugin of that name cannot be used."""
    try:
        return FORMATS.get(name)
    except (UnknownName, PluginError) as exc:
        raise InputError(path, str(exc), field="format") from None


def detect(path: Path, kind: Kind) -> FormatAdapter:
    """The adapter most confident it can read `path` as `kind`: adapters are imported and asked
    in order until one is certain."""
    if not path.exists():
        raise InputError(path, "no such file or directory")
    if _is_empty(path):
        raise InputError(path, f"is empty: {EMPTY_MEANS[kind]}")
    asked: list[FormatAdapter] = []
    best: tuple[float, FormatAdapter] | None = None
    reasons: dict[str, InputError] = {}
    for _, adapter in FORMATS.items():
        asked.append(adapter)
        confidence, reason = _sniff(adapter, path, kind)
        if reason:
            reasons[adapter.name] = reason
        if confidence > 0 and (best is None or confidence > best[0]):
            best = (confidence, adapter)
        if confidence >= 1:
            break
    if best is not None:
        return best[1]
    if path.is_file() and "native" in reasons:
        raise reasons["native"]  # a file of ours that does not parse: say where, exactly
    raise InputError(path, _unclaimed(asked, kind, reasons), field="format")


def read(adapter: FormatAdapter, path: Path, kind: Kind) -> list[Any]:
    """What `adapter` loads from `path` as `kind`, every item's `source` naming the adapter's
    format where the adapter left it out (a plugin's items are never taken for native ones)."""
    items = adapter.load_specs(path) if kind == "specs" else adapter.load_submissions(path)
    for item in items:
        source = getattr(item, "source", None)
        if isinstance(source, dict):
            source.setdefault("format", adapter.name)
    return items


def _is_empty(path: Path) -> bool:
    """A folder with no entries at all, or a regular file of whitespace only (small files only:
    a large file is never read here)."""
    if path.is_dir():
        return next(path.iterdir(), None) is None
    if path.is_file() and path.stat().st_size <= 4096:
        return not path.read_bytes().strip()
    return False


def _sniff(adapter: FormatAdapter, path: Path, kind: Kind) -> tuple[float, InputError | None]:
    """(confidence, why not) of one adapter; a crash other than unreadable input is loud."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the loader reports what matters, once
            return float(adapter.sniff(path, kind)), None
    except RefusedInput:
        raise
    except InputError as exc:
        return 0.0, exc
    except (OSError, ValueError) as exc:
        return 0.0, InputError(path, f"{type(exc).__name__}: {exc}")
    except Exception as exc:
        raise AdapterError(
            f"format adapter {adapter.name!r} crashed while sniffing {path}:"
            f" {type(exc).__name__}: {exc}"
        ) from exc


def _unclaimed(
    every: Sequence[FormatAdapter], kind: Kind, reasons: Mapping[str, InputError]
) -> str:
    lines = [f"not a recognised {KIND_NOUN[kind]} format; each format looked for:"]
    for adapter in every:
        wanted = (getattr(adapter, "looks_for", None) or {}).get(kind) or "(no description)"
        why = f" [{_reason(reasons[adapter.name])}]" if adapter.name in reasons else ""
        lines.append(f"  {adapter.name}: {wanted}{why}")
    for name, reason in FORMATS.skipped().items():
        lines.append(f"  {name}: a plugin that cannot be used ({reason})")
    return "\n".join(lines)


def _reason(error: InputError) -> str:
    return str(error) if error.path else error.message
