"""SREGym's problem registry, read from its Python source with `ast` (never imported or run).

A SREGym checkout has `sregym/conductor/problems/registry.py`: `ProblemRegistry.__init__` maps
each problem id to a `Problem` class, or to a `lambda:` calling it with literal arguments. Each
class builds, in `__init__`, the string SREGym's LLM judge is given,
`self.root_cause = self.build_structured_root_cause(component=..., namespace=..., description=...)`
(`[fault_spec] component=<c>; namespace=<ns> || <description>`, the format of `Problem` in
`sregym/conductor/problems/base.py`), or a plain `self.root_cause = "..."`. The values are
followed with `aiopslab_registry.LiteralReader` (literals, constructor arguments, base and
`super()` initialisers, f-strings, the app's namespace from its metadata JSON). A problem whose
root cause the source computes in another way is skipped; one warning names how many.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..reading import read_text
from .aiopslab_registry import (
    UNKNOWN,
    LiteralReader,
    PythonSource,
    app_namespaces,
    entries,
    find_registry,
    parse_module,
)
from .files import warn_format

REGISTRY = Path("sregym") / "conductor" / "problems" / "registry.py"
BUILDER = "build_structured_root_cause"


def registry_file(path: Path) -> Path | None:
    """The registry of a SREGym checkout, of its problems folder, or the file itself."""
    return find_registry(path, REGISTRY, _is_sregym)


def _is_sregym(file: Path) -> bool:
    try:
        text = read_text(file)
    except InputError:
        return False
    return "PROBLEM_REGISTRY" in text and "sregym." in text


class _RootCauseReader(LiteralReader):
    """Also evaluates `self.build_structured_root_cause(...)`."""

    def value(self, node: ast.AST, params: dict[str, Any]) -> Any:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == BUILDER
        ):
            kw = {k.arg: self.value(k.value, params) for k in node.keywords if k.arg}
            parts = [kw.get(k, UNKNOWN) for k in ("component", "namespace", "description")]
            if any(p is UNKNOWN or isinstance(p, dict) for p in parts):
                return UNKNOWN
            component, namespace, description = (str(p) for p in parts)
            return (
                f"[fault_spec] component={component.strip()}; namespace={namespace.strip()}"
                f" || {description.strip()}"
            )
        return super().value(node, params)


def extract_root_causes(path: Path) -> list[dict[str, Any]]:
    """`{problem_id, problem_class, constructor_kwargs, source_path, root_cause_text}` per
    registered problem whose root cause the source spells out."""
    registry = registry_file(path)
    if registry is None:
        raise InputError(path, f"holds no SREGym problem registry ({REGISTRY})")
    source = PythonSource.of_folder(registry.parent)
    root = registry.parents[len(REGISTRY.parts) - 1]
    source.namespaces = app_namespaces(root, "sregym")
    items, unread, missing = [], [], []
    for pid, cls, kwargs in entries(registry, parse_module(registry)):
        if cls not in source.classes:
            missing.append(pid)
            continue
        text = _root_cause(source, cls, kwargs)
        if not isinstance(text, str) or not text.strip():
            unread.append(pid)
            continue
        items.append(
            {
                "problem_id": pid,
                "problem_class": cls,
                "constructor_kwargs": {k: v for k, v in kwargs.items() if k != "__args__"},
                "source_path": str(source.classes[cls][1].relative_to(root)),
                "root_cause_text": text,
            }
        )
    total = len(items) + len(unread) + len(missing)
    if missing:
        warn_format(
            registry,
            f"{len(missing)} of {total} registered problems name classes not defined in any"
            f" module beside the registry (e.g. {missing[0]}): skipped",
        )
    if unread:
        warn_format(
            registry,
            f"{len(unread)} of {total} registered problems have no root cause spelled out in"
            f" literals (e.g. {unread[0]}): skipped",
        )
    return items


def _root_cause(source: PythonSource, cls: str, kwargs: dict[str, Any]) -> Any:
    reader = _RootCauseReader(source)
    reader.construct(cls, kwargs)
    return reader.attrs.get("root_cause", UNKNOWN)
