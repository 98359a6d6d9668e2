"""Judges by name: those registered in this process, those other packages declare, any class.

`make_judge` (and `judge eval --judge-model`) accepts, besides `rules` and litellm model
strings:

- `NAME` or `NAME:ARGS` for a judge registered with `register_judge(NAME, factory)` or
  declared by an installed package under the entry-point group `diagnosis_judge.judges`::

      # the plugin's pyproject.toml
      [project.entry-points."diagnosis_judge.judges"]
      keyword = "my_judges:KeywordJudge"

  The factory (a class or a function) is called with `ARGS` as its one argument when the
  model string has a colon, with no argument otherwise.
- `package.module:Attribute` for any importable judge class or factory, called with no
  argument (the module must be importable: installed, or on `PYTHONPATH`).

What a factory returns is checked (`check_judge`) before any call is made.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from importlib.metadata import entry_points

from .base import Judge, check_judge

ENTRY_POINT_GROUP = "diagnosis_judge.judges"
RESERVED = frozenset({"rules", "replay", "panel", "llm"})

JudgeFactory = Callable[..., Judge]
"""A class or function that builds a judge: `factory()` or `factory(args: str)`."""

_registered: dict[str, JudgeFactory] = {}
_IDENTIFIER = r"[A-Za-z_]\w*"
_MODULE_ATTRIBUTE = re.compile(rf"^({_IDENTIFIER}(?:\.{_IDENTIFIER})*):({_IDENTIFIER})$")
_NAME = re.compile(r"^[A-Za-z_][\w-]*$")


def register_judge(name: str, factory: JudgeFactory, *, replace: bool = False) -> None:
    """Make `factory` available to `make_judge` and the CLI as `name` (or `name:ARGS`).

    Registering a name twice is an error unless `replace=True`; the built-in names (`rules`,
    `replay`, `panel`, `llm`) cannot be taken.
    """
    if not _NAME.match(name) or name in RESERVED:
        raise ValueError(
            f"cannot register a judge as {name!r}: a name is letters, digits, '_' and '-', "
            f"and not one of {', '.join(sorted(RESERVED))}"
        )
    if not callable(factory):
        raise TypeError(f"the factory for judge {name!r} is not callable: {factory!r}")
    if name in _registered and not replace and _registered[name] is not factory:
        raise ValueError(f"a judge named {name!r} is already registered (pass replace=True)")
    _registered[name] = factory


def unregister_judge(name: str) -> None:
    """Forget a judge registered with `register_judge` (tests, notebooks)."""
    _registered.pop(name, None)


def registered_judges() -> dict[str, str]:
    """Every judge name available by name, with where it comes from."""
    found = {ep.name: f"entry point {ep.value}" for ep in entry_points(group=ENTRY_POINT_GROUP)}
    found.update({name: f"registered {factory!r}" for name, factory in _registered.items()})
    return dict(sorted(found.items()))


def find_judge(model: str) -> Judge | None:
    """The judge `model` names as `NAME[:ARGS]` or `module:Attribute`; None when it names none
    (then it is a litellm model string)."""
    name, colon, args = model.partition(":")
    factory = _by_name(name)
    if factory is not None:
        judge = factory(args) if colon else factory()
        return check_judge(judge, f"judge {model!r}")
    if _MODULE_ATTRIBUTE.match(model):
        return check_judge(_load_attribute(model)(), f"judge {model!r}")
    return None


def _by_name(name: str) -> JudgeFactory | None:
    if name in _registered:
        return _registered[name]
    found = entry_points(group=ENTRY_POINT_GROUP, name=name)
    for entry in found:
        try:
            factory = entry.load()
        except Exception as exc:
            raise ValueError(
                f"judge {name!r}: cannot load entry point {entry.value} "
                f"({ENTRY_POINT_GROUP}): {type(exc).__name__}: {exc}"
            ) from exc
        return factory
    return None


def _load_attribute(model: str) -> JudgeFactory:
    module_name, _, attribute = model.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(
            f"judge {model!r}: cannot import {module_name} ({exc}); "
            "install it or put its directory on PYTHONPATH"
        ) from exc
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ValueError(f"judge {model!r}: {module_name} has no class or function {attribute}")
    return factory
