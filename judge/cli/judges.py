"""The judge a command's flags name: `--judge-model` (`rules`, a model, several for a panel,
`cascade:...` or `replay[:STORE]`) with the settings that go with it. Imports on use, so that
`judge --help` loads no judge."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ground_truth.errors import InputError

if TYPE_CHECKING:
    from ..judges import Judge


def judge_from_args(args: argparse.Namespace) -> Judge:
    """The judge `--judge-model` and its settings name (`judge eval`'s judge flags); sets
    `args.api_base` to the endpoint the settings found."""
    from ..judges import build_judge
    from .settings import judge_settings

    models, found = judge_settings(args)
    args.api_base = found.api_base.text if found.api_base else None
    if models and any(m == "replay" or m.startswith("replay:") for m in models):
        return replay_judge(models, args)
    options = _cascade_options(models, args)
    if models and any(m != "rules" for m in models):
        options |= {
            "api_base": args.api_base,
            "api_key": found.api_key.text if found.api_key else None,
            "timeout": args.timeout,
            "max_retries": args.max_retries,
            "structured_output": args.structured_output,
            "reply_order": args.reply_order,
            "client": args.client,
            "logprobs": getattr(args, "confidence", "stated") == "logprobs",
            "max_tokens": getattr(args, "max_tokens", None),
        }
        if args.samples > 1:
            options["samples"] = args.samples
    try:
        return build_judge(models, repeat=args.repeat, tie=args.tie, **options)
    except (TypeError, ValueError) as exc:
        raise InputError(", ".join(models or []), str(exc), field="--judge-model") from None


def _cascade_options(models: list[str] | None, args: argparse.Namespace) -> dict:
    """A cascade is a run's only judge, and the one that reads --calibration."""
    cascades = [m for m in models or [] if m.startswith("cascade:")]
    allow_shift = getattr(args, "allow_shift", False)
    if not cascades:
        for flag, given in (("--calibration", args.calibration), ("--allow-shift", allow_shift)):
            if given:
                raise InputError(flag, "is read by a cascade judge: --judge-model cascade:A,B,...")
        return {}
    if len(models or []) > 1 or args.repeat > 1:
        raise InputError("--judge-model", "a cascade is the run's only judge (no panel, --repeat)")
    return {"calibration": args.calibration, "allow_shift": allow_shift}


def replay_judge(models: list[str], args: argparse.Namespace | None) -> Judge:
    """`--judge-model replay[:PATH]` with `--replay-store` and `--replay-judge` (repeatable)."""
    from ..judges.panel import PanelJudge
    from ..judges.replay import ReplayJudge
    from ..store import Store

    if any(not (m == "replay" or m.startswith("replay:")) for m in models) or len(models) > 1:
        raise InputError(
            "--judge-model",
            "replay cannot be mixed with other judges; "
            "repeat --replay-judge for a panel of stored judges",
        )
    model = models[0]
    path = Path(model.split(":", 1)[1]) if ":" in model else getattr(args, "replay_store", None)
    if path is None:
        raise InputError("--judge-model", "replay needs a store: replay:PATH or --replay-store")
    store = Store(path, readonly=True)
    sources = getattr(args, "replay_judge", None) or [None]
    judges: list[Judge] = [ReplayJudge(store, source) for source in sources]
    if len(judges) == 1:
        return judges[0]
    return PanelJudge(judges, getattr(args, "tie", "unscored"))
