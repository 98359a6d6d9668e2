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

What a factory returns is checked (`check_judge`) before any call is made. The judges by name
are a `ground_truth.registry.Registry` (`JUDGES`), the shape formats and resolution checks use.
"""

from __future__ import annotations

import difflib
import inspect
import re
from collections.abc import Callable
from typing import Any

from ground_truth.registry import REFERENCE, Registry, load_reference

from .base import Judge, check_judge

ENTRY_POINT_GROUP = "diagnosis_judge.judges"
RESERVED = frozenset({"rules", "replay", "panel", "llm", "cascade"})

JudgeFactory = Callable[..., Judge]
"""A class or function that builds a judge: `factory()` or `factory(args: str)`."""

_NAME = re.compile(r"^[A-Za-z_][\w-]*$")


def _as_factory(obj: Any, name: str) -> JudgeFactory:
    """The protocol check of an entry: a judge factory is callable (what it builds is checked
    by `check_judge` when it is called)."""
    if not callable(obj):
        raise TypeError(f"the factory for judge {name!r} is not callable: {obj!r}")
    return obj


JUDGES: Registry[JudgeFactory] = Registry("judge", ENTRY_POINT_GROUP, _as_factory)
JUDGES.register("cascade", "judge.judges.cascade:cascade_judge")


def register_judge(name: str, factory: JudgeFactory | str, *, replace: bool = False) -> None:
    """Make `factory` (or a lazy `module:attr` string) available to `make_judge` and the CLI
    as `name` (or `name:ARGS`).

    Registering a name twice is an error unless `replace=True`; the built-in names (`rules`,
    `replay`, `panel`, `llm`) cannot be taken.
    """
    if not _NAME.match(name) or name in RESERVED:
        raise ValueError(
            f"cannot register a judge as {name!r}: a name is letters, digits, '_' and '-', "
            f"and not one of {', '.join(sorted(RESERVED))}"
        )
    JUDGES.register(name, factory, replace=replace)


def unregister_judge(name: str) -> None:
    """Forget a judge registered with `register_judge` (tests, notebooks)."""
    JUDGES.unregister(name)


def registered_judges() -> dict[str, str]:
    """Every judge name available by name, with where it comes from."""
    return dict(sorted(JUDGES.origins().items()))


def names_a_judge(model: str) -> bool:
    """Whether `model` names one of this tool's judges (`rules`, `replay[:PATH]`, a registered
    or entry-point `NAME[:ARGS]`, a `module:Attribute`) rather than a model string for litellm.
    Nothing is built or imported but the plugins' entry-point list."""
    name = model.partition(":")[0]
    return (
        model == "rules"
        or name == "replay"
        or JUDGES.origins().get(name) is not None
        or bool(REFERENCE.match(model))
    )


def similar_judge_names(model: str) -> list[str]:
    """The judge names a mistyped `model` may have meant (`origni` -> `origin`), closest first."""
    known = sorted({*JUDGES.names(), "rules", "replay"})
    return difflib.get_close_matches(model.partition(":")[0], known, n=3, cutoff=0.75)


def find_judge(model: str, options: dict[str, Any] | None = None) -> Judge | None:
    """The judge `model` names as `NAME[:ARGS]` or `module:Attribute`; None when it names none
    (then it is a litellm model string). A factory that takes keyword arguments gets `options`
    (the LLM options: a `cascade:` builds its stages with them). A plugin of that name that
    cannot be used is a `ValueError` (`PluginError`) naming it and its distribution."""
    name, colon, args = model.partition(":")
    factory = JUDGES.find(name)
    if factory is not None:
        extra = options if options and _takes_options(factory) else {}
        judge = factory(args, **extra) if colon else factory(**extra)
        return check_judge(judge, f"judge {model!r}")
    if REFERENCE.match(model):
        return check_judge(_load_attribute(model)(), f"judge {model!r}")
    return None


def _takes_options(factory: JudgeFactory) -> bool:
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def _load_attribute(model: str) -> JudgeFactory:
    module_name, _, attribute = model.partition(":")
    try:
        factory = load_reference(model)
    except ImportError as exc:
        raise ValueError(
            f"judge {model!r}: cannot import {module_name} ({exc}); "
            "install it or put its directory on PYTHONPATH"
        ) from exc
    except AttributeError:
        factory = None
    if not callable(factory):
        raise ValueError(f"judge {model!r}: {module_name} has no class or function {attribute}")
    return factory
