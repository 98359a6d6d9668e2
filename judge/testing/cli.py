"""`python -m judge.testing.fake_provider`: run the fake provider until SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from pydantic import SecretStr, ValidationError

from judge.testing.answers import AnswerPolicy, constant_policy, grounded_policy
from judge.testing.biases import PlantedBiases
from judge.testing.config import FakeProviderConfig
from judge.testing.fake_provider import FakeProvider
from judge.testing.faults import parse_fault_kind
from judge.testing.formats import FORMATS, REFUSAL_SHAPES


def _latency(text: str) -> float | tuple[float, float]:
    if ":" in text:
        low, high = text.split(":", 1)
        return (float(low), float(high))
    return float(text)


def _fault_rate(text: str) -> tuple[str, float]:
    kind, sep, rate = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected KIND=PROBABILITY, got {text!r}")
    try:
        return parse_fault_kind(kind).value, float(rate)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    """The fake provider's argument parser."""
    parser = argparse.ArgumentParser(
        prog="python -m judge.testing.fake_provider",
        description="A fake OpenAI-compatible chat-completions server with seeded faults.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.add_argument(
        "--model",
        action="append",
        dest="models",
        help="model name listed by /v1/models (repeatable)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--latency",
        type=_latency,
        default=0.0,
        help="seconds per reply, or LOW:HIGH for a seeded uniform range",
    )
    parser.add_argument("--rpm", type=int, help="the server's own requests-per-minute limit")
    parser.add_argument(
        "--rate-window",
        type=float,
        default=60.0,
        help="length in seconds of the sliding rate-limit window",
    )
    parser.add_argument(
        "--fault-rate",
        type=_fault_rate,
        action="append",
        default=[],
        metavar="KIND=P",
        help="KIND is 429, 500, 503, hang, malformed, truncated, refusal, 401, 400",
    )
    parser.add_argument(
        "--fault-schedule", default="", help="comma-separated fault per call index, 'ok' for none"
    )
    parser.add_argument("--hang-seconds", type=float, default=5.0)
    parser.add_argument(
        "--retry-after", type=float, default=1.0, help="seconds an injected 429 announces"
    )
    parser.add_argument(
        "--fast-429",
        action="store_true",
        help="answer an injected 429 at once, not after --latency",
    )
    parser.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="require the key held in env VAR (never on the command line)",
    )
    parser.add_argument(
        "--answer",
        choices=["hash", "yes", "no", "grounded"],
        default="hash",
        help="the base answers: a stable hash of question and prompt (default), all Yes, all "
        "No, or grounded (Yes when the diagnosis names the fault origin, whatever the "
        "presentation)",
    )
    b = parser.add_argument_group("planted biases (judge.testing.biases)")
    b.add_argument("--yes-first", type=int, metavar="K", help="Yes only to the first K questions")
    b.add_argument(
        "--yes-min-chars", type=int, metavar="N", help="Yes only to diagnoses of N+ characters"
    )
    b.add_argument(
        "--no-diagnosis-first",
        action="store_true",
        help="No to everything when the diagnosis comes before the ground truth",
    )
    b.add_argument(
        "--yes-family", metavar="WORD", help="Yes to everything when the prompt names WORD"
    )
    b.add_argument(
        "--flip-rate", type=float, default=0.0, metavar="P", help="flip each answer with chance P"
    )
    parser.add_argument("--model-version", help="the model replies name (default: as asked)")
    parser.add_argument(
        "--system-fingerprint", default="fp_fake", help="the fingerprint replies name"
    )
    parser.add_argument(
        "--accept-format",
        action="append",
        choices=FORMATS,
        help="a reply format the server accepts (repeatable; default all); "
        "llama-cpp-python accepts json_object+schema, json_object and text",
    )
    parser.add_argument(
        "--format-refusal",
        choices=REFUSAL_SHAPES,
        default="openai-400",
        help="how other formats are refused (default openai-400)",
    )
    parser.add_argument(
        "--ignore-schema",
        action="store_true",
        help="accept a json_object schema, do not enforce it",
    )
    parser.add_argument(
        "--stop-after-answers",
        type=int,
        metavar="N",
        help="end each answer list after N answers unless a json_object schema pins the list",
    )
    parser.add_argument(
        "--plain-reply",
        default="OK",
        metavar="TEXT",
        help="the reply to a prompt that names no question ids (default OK)",
    )
    parser.add_argument(
        "--batch-delay", type=float, default=1.0, help="seconds a /v1/batches job takes"
    )
    parser.add_argument(
        "--batch-schedule",
        default="",
        help="how each batch ends, in creation order: comma-separated ok, partial, expire, fail",
    )
    parser.add_argument(
        "--batch-partial-rate",
        type=float,
        default=0.5,
        help="share of a 'partial' batch's lines that fail",
    )
    parser.add_argument(
        "--batch-expire-done",
        type=float,
        default=0.5,
        help="share of an 'expire' batch's lines answered before it expires",
    )
    parser.add_argument("--log", type=Path, help="append each call record to this JSONL file")
    parser.add_argument("--url-file", type=Path, help="also write the URL to this file")
    return parser


def config_from_args(args: argparse.Namespace) -> FakeProviderConfig:
    """The fake provider's config from parsed arguments; ValueError if --api-key-env names an
    unset variable.
    """
    api_key = os.environ.get(args.api_key_env) if args.api_key_env else None
    if args.api_key_env and not api_key:
        raise ValueError(f"--api-key-env: environment variable {args.api_key_env} is not set")
    policy: AnswerPolicy | None = grounded_policy if args.answer == "grounded" else None
    if args.answer in ("yes", "no"):
        policy = constant_policy(args.answer.capitalize())
    return FakeProviderConfig(
        host=args.host,
        port=args.port,
        models=args.models or ["fake-judge"],
        seed=args.seed,
        latency=args.latency,
        rpm=args.rpm,
        rate_window=args.rate_window,
        fault_rates=dict(args.fault_rate),
        fault_schedule=args.fault_schedule or [],
        hang_seconds=args.hang_seconds,
        retry_after=args.retry_after,
        fast_429=args.fast_429,
        api_key=SecretStr(api_key) if api_key else None,
        answer_policy=policy,
        log_path=args.log,
        response_formats=tuple(args.accept_format or FORMATS),
        format_refusal=args.format_refusal,
        ignore_schema=args.ignore_schema,
        stop_after_answers=args.stop_after_answers,
        plain_reply=args.plain_reply,
        batch_delay=args.batch_delay,
        batch_schedule=args.batch_schedule,
        batch_partial_rate=args.batch_partial_rate,
        batch_expire_done=args.batch_expire_done,
        biases=PlantedBiases(
            yes_first=args.yes_first,
            yes_min_chars=args.yes_min_chars,
            no_diagnosis_first=args.no_diagnosis_first,
            yes_family=args.yes_family,
            flip_rate=args.flip_rate,
        ),
        model_version=args.model_version,
        system_fingerprint=args.system_fingerprint or None,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the fake provider until SIGINT/SIGTERM, printing its URL (and writing it to --url-file)
    and at the end a count of outcomes; a bad option exits via argparse.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = config_from_args(args)
    except (ValidationError, ValueError) as exc:
        parser.error(str(exc))
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    with FakeProvider(config) as server:
        if args.url_file:
            tmp = args.url_file.with_name(args.url_file.name + ".tmp")
            tmp.write_text(server.url + "\n", encoding="utf-8")
            tmp.replace(args.url_file)
        print(server.url, flush=True)
        while not done.wait(0.5):
            pass
        counts = server.outcome_counts() + server.batches.ops
    summary = ", ".join(f"{k}={v}" for k, v in sorted(counts.items())) or "no calls"
    print(f"fake provider stopped: {summary}", file=sys.stderr, flush=True)
    return 0
