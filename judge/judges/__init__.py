"""Judges: `rules` (offline, the default), `llm` (any litellm model), `panel` (majority vote),
`replay` (a stored run), and any judge registered by name, entry point or `module:Class`."""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Cacheable, Gated, Judge, JudgeTask, RequestGate, check_judge
    from .panel import PanelJudge, TieRule
    from .registry import (
        ENTRY_POINT_GROUP,
        JUDGES,
        register_judge,
        registered_judges,
        unregister_judge,
    )
    from .rules import RulesJudge

RULES_MODULE = "judge.judges.rules"

# Names load on first use: the store imports the judges' secret masking and request records
# (`judge.judges.mask`, `judge.judges.clients.exchanges`), which must not bring the judges with
# them; and the rules compile ~80 patterns (~0.25 s), which a run with an LLM judge would
# otherwise spend before its first request.
_EXPORTS = {
    ".base": ["Cacheable", "Gated", "Judge", "JudgeTask", "RequestGate", "check_judge"],
    ".panel": ["PanelJudge", "TieRule"],
    ".registry": [
        "ENTRY_POINT_GROUP",
        "JUDGES",
        "register_judge",
        "registered_judges",
        "unregister_judge",
    ],
    ".rules": ["RulesJudge"],
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name], __name__), name)
    globals()[name] = value
    return value


def is_rules_judge(judge: object, exactly: bool = False) -> bool:
    """Whether `judge` is the rules judge (`exactly`: not a subclass), without importing it: a
    rules judge can only exist once its module is imported."""
    rules = sys.modules.get(RULES_MODULE)
    if rules is None:
        return False
    return type(judge) is rules.RulesJudge if exactly else isinstance(judge, rules.RulesJudge)


def make_judge(model: str | None = None, **llm_options: Any) -> Judge:
    """The judge a model string names.

    - None or `rules`: the offline rules judge;
    - `NAME` / `NAME:ARGS`: a judge registered with `register_judge` or declared under the
      entry-point group `diagnosis_judge.judges`; `package.module:Class`: any judge class;
      these are built from `ARGS` alone (see `judge.judges.registry`);
    - anything else: the `llm` judge for that litellm model string, with `llm_options`
      (`api_base`, `api_key`, `temperature`, `seed`, `timeout`, `max_retries`, ...).

    Raises `TypeError` when what a name builds is not a `Judge`, `ValueError` when it
    cannot be loaded.
    """
    if not model or model == "rules":
        from .rules import RulesJudge

        return RulesJudge()
    from .registry import find_judge

    found = find_judge(model, llm_options)
    if found is not None:
        return found
    options = dict(llm_options)
    samples = options.pop("samples", None) or 1
    if samples > 1:
        from .samples import sampled_judge

        return sampled_judge(model, samples, options)
    from .llm import LLMJudge

    return LLMJudge(model, **options)


def build_judge(
    models: list[str] | None = None, repeat: int = 1, tie: TieRule = "unscored", **llm_options: Any
) -> Judge:
    """One judge, or a panel when several models are named or `repeat` > 1.

    `repeat=K` asks each model K times (seeds `seed`, `seed+1`, ...; members named `name#1`,
    `name#2`, ...), which is how `judge agreement` measures a judge's self-consistency.
    """
    from .panel import PanelJudge

    names: list[str | None] = list(models) if models else [None]
    if repeat <= 1:
        members = [make_judge(m, **llm_options) for m in names]
    else:
        members = [_repetition(m, i, llm_options) for m in names for i in range(repeat)]
    return members[0] if len(members) == 1 else PanelJudge(members, tie)


def _repetition(model: str | None, index: int, llm_options: dict[str, Any]) -> Judge:
    from .llm import LLMJudge

    base = make_judge(model, **llm_options)
    name = f"{base.name}#{index + 1}"
    if is_rules_judge(base):
        from .rules import RulesJudge

        return RulesJudge(name=name)
    if not isinstance(base, LLMJudge):  # a user's judge: a fresh one each time, renamed
        base.name = name
        return base
    seed = llm_options.get("seed", 0) or 0
    return make_judge(model, **{**llm_options, "seed": seed + index, "name": name})


__all__ = [
    "ENTRY_POINT_GROUP",
    "JUDGES",
    "Cacheable",
    "Gated",
    "Judge",
    "JudgeTask",
    "PanelJudge",
    "RequestGate",
    "RulesJudge",
    "build_judge",
    "check_judge",
    "is_rules_judge",
    "make_judge",
    "register_judge",
    "registered_judges",
    "unregister_judge",
]
