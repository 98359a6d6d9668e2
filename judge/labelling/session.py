"""From the command line to a running session: cases, filters, order, sample, store, server."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ground_truth.errors import InputError

from ..checklist.results import load_result
from ..checklist.rubric import load_rubric
from ..report.texts import load_texts
from .cases import LabelCase, build_cases
from .ordering import Filters, apply_filters, order_cases, stratified_sample
from .server import LabellingApp, LabellingServer
from .store import LabelStore, SessionRecord


def load_cases(args: argparse.Namespace) -> tuple[list[LabelCase], dict[str, Any], float]:
    """All cases of the result with their texts; the result's config; the pass threshold."""
    result = load_result(args.result)
    rubric_config = result.config.get("rubric") or {}
    rubric = load_rubric(args.rubric or rubric_config.get("name") or "sregym-v3")
    texts = load_texts(args.ground_truth, args.outputs, rubric_config, args.format)
    others = [load_result(path) for path in args.compare]
    cases = build_cases(result, rubric, texts, others)
    if cases and not any(c.diagnosis for c in cases):
        raise InputError(
            args.outputs,
            f"no diagnosis for any of the {len(cases)} cases of {args.result}; "
            "expected the outputs the result was made from",
        )
    return cases, result.config, rubric.scoring.threshold


@contextmanager
def open_session(args: argparse.Namespace, labels: Path) -> Iterator[LabellingServer | None]:
    """The server for this session, its store open and its session record written; None when
    the filters leave nothing to label."""
    cases, config, threshold = load_cases(args)
    filters = Filters(
        unlabelled=args.unlabelled,
        disagreements=args.disagreements,
        incident=args.incident,
        agent=args.agent,
    )
    with LabelStore(labels, args.labeller) as store:
        # the sample is drawn before the unlabelled/disagreement filters, so it is the same
        # sample however far labelling has got: a restarted session labels the same cases
        which = Filters(incident=filters.incident, agent=filters.agent)
        chosen = apply_filters(cases, which, store.contents)
        sample = None
        if args.sample is not None:
            chosen, sample = stratified_sample(chosen, args.sample, args.seed)
        chosen = apply_filters(chosen, filters, store.contents)
        chosen = order_cases(chosen, args.order, args.seed, threshold)
        if not chosen:
            if filters.unlabelled or not cases:
                yield None
                return
            given = filters.model_dump(exclude_defaults=True)
            raise InputError(None, f"no case of {args.result} matches the filters {given}")
        judge = config.get("judge") or {}
        session = SessionRecord(
            labeller=args.labeller,
            result=str(args.result),
            rubric=config.get("rubric") or {},
            judge=judge.get("label") or judge.get("name"),
            mode="show-judge" if args.show_judge else "blind",
            order=args.order,
            seed=args.seed,
            sample=sample,
            filters=filters.model_dump(exclude_defaults=True),
            cases=[c.key for c in chosen],
        )
        try:
            server = LabellingServer(LabellingApp(chosen, store, session), args.port)
        except OSError as exc:
            raise InputError(None, f"--port {args.port}: {exc.strerror or exc}") from None
        store.append(session)
        try:
            yield server
        finally:
            server.server_close()
