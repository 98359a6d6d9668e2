"""From the command line to a running session: cases, filters, order, sample, store, server."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ground_truth.errors import InputError

from ..checklist.results import EvalResult, load_result
from ..checklist.rubric import load_rubric
from ..checklist.texts import load_texts
from .active import ActiveDesign, draw_design
from .cases import LabelCase, build_cases
from .estimate import pass_rate_with_labels
from .labelset import label_set_from_store
from .ordering import Filters, apply_filters, order_cases, stratified_sample
from .server import LabellingApp, LabellingServer
from .store import LabelStore, SessionRecord


def load_cases(args: argparse.Namespace) -> tuple[list[LabelCase], EvalResult]:
    """All cases of the result with their texts, and the result."""
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
    return cases, result


def informative_cases(
    cases: list[LabelCase], result: EvalResult, args: argparse.Namespace
) -> tuple[list[LabelCase], ActiveDesign]:
    """The cases with a judge verdict in the order the seeded draw gives them (only those of
    the sample of `--sample N` expected labels, when given), and the draw."""
    chosen = [c for c in cases if c.verdict in ("Yes", "No")]
    if not chosen:
        raise InputError(args.result, "no case has a verdict from the judge to correct")
    rubric = result.config.get("rubric") or {}
    design = draw_design(
        chosen, rubric.get("weights") or {}, float(rubric.get("threshold", 0.7)), args.seed
    )
    budget = len(chosen) if args.sample is None else min(args.sample, len(chosen))
    return [chosen[i] for i in design.order() if design.entry[i] <= budget], design


def live_estimate(
    result: EvalResult, design: ActiveDesign, store: LabelStore
) -> Callable[[], dict[str, Any]]:
    """The pass rate from the judge alone and corrected with the labels so far, for the page."""
    rubric = (result.config.get("rubric") or {}).get("hash")

    def estimate() -> dict[str, Any]:
        done = design.done(store.contents)
        inclusion = design.inclusion(done)
        labels = label_set_from_store(store.contents, rubric, inclusion, str(store.path))
        est = pass_rate_with_labels(result, labels)
        return {
            "judge": est.judge_only.model_dump(mode="json"),
            "ppi": est.ppi.model_dump(mode="json"),
            "labels_only": est.labels_only.model_dump(mode="json"),
            "effective_labels": est.effective_labels,
            "confidence": est.confidence,
            "in_sample": len(inclusion),
            "done": len(done),
        }

    return estimate


_NOT_WITH_INFORMATIVE = ("incident", "agent", "disagreements")


def _choose(
    cases: list[LabelCase],
    result: EvalResult,
    args: argparse.Namespace,
    filters: Filters,
    store: LabelStore,
) -> tuple[list[LabelCase], dict[str, Any] | None, ActiveDesign | None]:
    """The cases to show in order, the stratified sample's description, the informative draw."""
    if args.order == "informative":
        chosen, design = informative_cases(cases, result, args)
        return apply_filters(chosen, filters, store.contents), None, design
    # the sample is drawn before the unlabelled/disagreement filters, so it is the same
    # sample however far labelling has got: a restarted session labels the same cases
    chosen = apply_filters(
        cases, Filters(incident=filters.incident, agent=filters.agent), store.contents
    )
    sample = None
    if args.sample is not None:
        chosen, sample = stratified_sample(chosen, args.sample, args.seed)
    chosen = apply_filters(chosen, filters, store.contents)
    return order_cases(chosen, args.order, args.seed), sample, None


@contextmanager
def open_session(args: argparse.Namespace, labels: Path) -> Iterator[LabellingServer | None]:
    """The server for this session, its store open and its session record written; None when
    the filters leave nothing to label."""
    refused = [f"--{name}" for name in _NOT_WITH_INFORMATIVE if getattr(args, name)]
    if args.order == "informative" and refused:
        raise InputError(
            None,
            f"--order informative draws from every case of the result, so that the corrected "
            f"estimate stays unbiased; {', '.join(refused)} would choose cases by another rule",
        )
    cases, result = load_cases(args)
    config = result.config
    filters = Filters(
        unlabelled=args.unlabelled,
        disagreements=args.disagreements,
        incident=args.incident,
        agent=args.agent,
    )
    with LabelStore(labels, args.labeller) as store:
        chosen, sample, design = _choose(cases, result, args, filters, store)
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
            design=design.model_dump(mode="json") if design else None,
        )
        estimate = live_estimate(result, design, store) if design else None
        try:
            server = LabellingServer(LabellingApp(chosen, store, session, estimate), args.port)
        except OSError as exc:
            raise InputError(None, f"--port {args.port}: {exc.strerror or exc}") from None
        store.append(session)
        try:
            yield server
        finally:
            server.server_close()
