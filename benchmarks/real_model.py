"""What a real (local) model did in a `judge eval` run: cost, robustness and agreement.

    python benchmarks/real_model.py report RESULT.json [--store S.sqlite] [--labels L.csv ...]
                                           [--wall-seconds N] [--json]
    python benchmarks/real_model.py sregym-bench DIR
    python benchmarks/real_model.py variant no-hints|worked-example DIR

`report` reads a finished run's result (and its store, for the time between answers; with
`--max-concurrent 1` that is the time per call) and prints: calls and requests, seconds per
call, prompt and completion tokens per submission, the structured-output mode reached, the
share of replies that were clean / repaired / re-asked / unscored, and, with label CSVs,
Cohen's kappa against each annotator per question and per verdict (`agreement` package).

`sregym-bench DIR` writes SREGym's 29 labelled judge-benchmark items as `specs.json`,
`submissions.jsonl` and `labels.csv` (verdict labels), ready for
`judge eval --ground-truth DIR/specs.json --outputs DIR/submissions.jsonl ...` and `report`.

`variant NAME DIR` writes a prompt variant of the shipped templates to DIR for
`judge eval --prompt-template DIR`: `no-hints` drops the rubric's evaluator hints;
`worked-example` adds a short worked example under each question of the default rubric
(`sregym-v3`), all about one made-up incident. Both are derived from the shipped templates at
run time, so they follow any change to them.

The local model of `../shared/tools/local-llm` (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M) is a
floor for what an LLM judge does here, not a recommendation.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sqlite3
import statistics
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

BENCH = REPO / "tests" / "fixtures" / "agreement" / "judge_bench_data.96a9057e.yaml"
SESSION_GAP = 900.0
"""Seconds between two store rows beyond which they are taken to be different sessions (a
stopped run resumed later), not one slow call."""


def call_seconds(store: Path) -> list[float]:
    """Time between consecutive answers (and failures) written to the store."""
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        stamps = sorted(
            datetime.fromisoformat(row[0])
            for table in ("judgments", "errors")
            for row in db.execute(f"SELECT created_at FROM {table}")
        )
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(stamps)]
    return [g for g in gaps if g <= SESSION_GAP]


def tokens_per_submission(result: dict[str, Any]) -> dict[str, float | None]:
    """Mean tokens of the submissions whose every dimension was asked (a stopped run's partly
    judged submissions would pull the mean down)."""
    calls: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for call in result.get("calls") or []:
        calls[(call["incident_id"], call["trial"])].append(call.get("usage") or {})
    config = result.get("config") or {}
    dimensions = len(config.get("dimensions") or []) or None
    if config.get("granularity") == "submission":
        dimensions = 1  # one call asks every dimension
    whole = [u for u in calls.values() if dimensions is None or len(u) == dimensions]
    if not whole:
        return {"prompt": None, "completion": None, "submissions": 0}
    return {
        "prompt": statistics.mean(sum(c.get("prompt_tokens") or 0 for c in u) for u in whole),
        "completion": statistics.mean(
            sum(c.get("completion_tokens") or 0 for c in u) for u in whole
        ),
        "submissions": len(whole),
    }


def kappas(result: Path, labels: list[Path]) -> list[dict[str, Any]]:
    """Kappa of the judge against each label file's annotator, per verdict and per question."""
    from agreement.readers import read_labels, read_result
    from agreement.report import agreement_report

    judge_table = read_result(result)
    judge = judge_table.raters[0].name
    rows: list[dict[str, Any]] = []
    for path in labels:
        table = read_labels(path)
        for rater in table.raters:
            judge_table.add(rater)
    report = agreement_report(judge_table, levels=("question", "verdict"), B=500)
    for level in report.levels:
        for pair in level.pairwise:
            if judge not in (pair.rater_a, pair.rater_b):
                continue
            other = pair.rater_b if pair.rater_a == judge else pair.rater_a
            rows.append(_kappa_row(level.level, "all", other, pair))
            for unit in level.breakdown:
                if unit.kind != "question":
                    continue
                for p in unit.pairwise:
                    if {p.rater_a, p.rater_b} == {judge, other}:
                        rows.append(_kappa_row(level.level, unit.unit, other, p))
    return rows


def _kappa_row(level: str, unit: str, annotator: str, pair: Any) -> dict[str, Any]:
    return {
        "level": level,
        "unit": unit,
        "annotator": annotator,
        "n": pair.n,
        "agreement": pair.agreement.value,
        "kappa": pair.kappa.value,
        "kappa_ci": [pair.kappa.ci_low, pair.kappa.ci_high],
        "judge_yes_rate": pair.yes_rate_a if pair.rater_b == annotator else pair.yes_rate_b,
    }


def summarize(
    result_path: Path,
    store: Path | None = None,
    labels: list[Path] | None = None,
    wall_seconds: float | None = None,
) -> dict[str, Any]:
    result = json.loads(result_path.read_text(encoding="utf-8"))
    judge = (result.get("config") or {}).get("judge") or {}
    usage = result.get("usage") or {}
    gaps = call_seconds(store) if store is not None and store.is_file() else []
    made = usage.get("calls_made") or 0
    judgments = result.get("judgments") or []
    return {
        "model": judge.get("model"),
        "structured_output": judge.get("structured_output"),
        "negotiation": judge.get("structured_output_negotiation"),
        "calls_planned": usage.get("calls_planned"),
        "calls_made": made,
        "cache_hits": usage.get("cache_hits"),
        "requests": usage.get("requests"),
        "retries": usage.get("retries"),
        "errors": result.get("errors"),
        "attempt_errors": result.get("attempt_errors"),
        "complete": result.get("complete"),
        "seconds_per_call": {
            "n": len(gaps),
            "median": statistics.median(gaps) if gaps else None,
            "mean": statistics.mean(gaps) if gaps else None,
            "max": max(gaps) if gaps else None,
            "wall_per_call": wall_seconds / made if wall_seconds and made else None,
        },
        "tokens_per_submission": tokens_per_submission(result),
        "replies": judge.get("replies"),
        "repairs": judge.get("repairs"),
        "questions": len(judgments),
        "unscored_questions": sum(1 for j in judgments if j.get("answer") is None),
        "yes_rate": _share(j.get("answer") == "Yes" for j in judgments if j.get("answer")),
        "kappa": kappas(result_path, labels) if labels else [],
    }


def _share(flags: Any) -> float | None:
    values = list(flags)
    return sum(values) / len(values) if values else None


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def markdown(summary: dict[str, Any]) -> str:
    seconds, tokens = summary["seconds_per_call"], summary["tokens_per_submission"]
    replies = summary["replies"] or {}
    shares = replies.get("shares") or {}
    lines = [
        f"model `{summary['model']}`, structured output reached: "
        f"**{summary['structured_output']}** (refused: "
        f"{', '.join((summary['negotiation'] or {}).get('refused') or []) or 'none'})",
        "",
        "| measure | value |",
        "|---|---:|",
        f"| calls planned / made / cached | {summary['calls_planned']} / "
        f"{summary['calls_made']} / {summary['cache_hits']} |",
        f"| requests / retries | {summary['requests']} / {summary['retries']} |",
        f"| failed calls by kind | {summary['errors'] or 'none'} |",
        f"| failed requests by kind | {summary['attempt_errors'] or 'none'} |",
        f"| seconds per call, median / mean / max (n={seconds['n']}) | "
        f"{_fmt(seconds['median'], 1)} / {_fmt(seconds['mean'], 1)} / {_fmt(seconds['max'], 1)} |",
        f"| wall seconds per call made | {_fmt(seconds['wall_per_call'], 1)} |",
        f"| prompt / completion tokens per submission (n={tokens['submissions']}) | "
        f"{_fmt(tokens['prompt'], 0)} / {_fmt(tokens['completion'], 0)} |",
        "| replies: clean / repaired / re-asked / unscored | "
        + " / ".join(
            f"{replies.get(k, '-')} ({_fmt(shares.get(k))})"
            for k in ("clean", "repaired", "reasked", "unscored")
        )
        + " |",
        f"| repairs | {summary['repairs'] or 'none'} |",
        f"| questions unscored | {summary['unscored_questions']} of {summary['questions']} |",
        f"| judge's Yes rate | {_fmt(summary['yes_rate'])} |",
    ]
    if summary["kappa"]:
        lines += [
            "",
            "| level | unit | annotator | n | agreement | kappa [95% CI] | judge Yes rate |",
            "|---|---|---|---:|---:|---|---:|",
        ]
        for row in summary["kappa"]:
            if not row["n"]:  # a label file without this level (SREGym's: verdicts only)
                continue
            low, high = row["kappa_ci"]
            lines.append(
                f"| {row['level']} | {row['unit']} | {row['annotator']} | {row['n']} | "
                f"{_fmt(row['agreement'])} | {_fmt(row['kappa'])} [{_fmt(low)}, {_fmt(high)}] | "
                f"{_fmt(row['judge_yes_rate'])} |"
            )
    return "\n".join(lines)


VARIANTS = ("no-hints", "worked-example")

WORKED_CASE = (
    "ground truth: deployment geo (namespace hotel-reservation) runs image geo:broken, which "
    "lacks the geo binary; its pods crash-loop and frontend searches fail."
)
WORKED_EXAMPLES = {
    "D1-Q1": "'geo's pods crash because its image has no binary' -> Yes; "
    "'the frontend is failing' -> No (a victim, not the origin).",
    "D1-Q2": "'geo's image is broken; the frontend errors follow from it' -> Yes; "
    "'frontend and geo are both broken' -> No.",
    "D1-Q3": "'mongodb-geo is the root cause' -> No (a healthy component blamed); "
    "'geo is the root cause' -> Yes.",
    "D2-Q1": "'geo runs a bad image' -> Yes; 'geo is OOMKilled by its memory limit' -> No.",
    "D2-Q2": "'image geo:broken has no binary' -> Yes; 'something is wrong with geo' -> No.",
    "D2-Q3": "'a network policy blocks geo' -> No; 'geo's image is wrong' -> Yes.",
    "D3-Q1": "'geo's image, and the profile service is also misconfigured' -> No; "
    "'geo's image' alone -> Yes.",
    "D3-Q2": "'geo crash-loops, so frontend searches fail' -> Yes; 'geo crash-loops' alone -> "
    "No (frontend is listed as affected).",
    "D3-Q3": "'geo crash-loops and searches fail' -> Yes; 'database latency rose' -> No.",
}
"""One made-up incident and, per question of `sregym-v3`, a diagnosis that earns Yes and one
that earns No, for the `worked-example` variant."""


def write_variant(name: str, directory: Path) -> Path:
    """The shipped templates with one change, for `judge eval --prompt-template DIR`."""
    from judge.checklist.prompts import TEMPLATES

    if name not in VARIANTS:
        raise SystemExit(f"variant {name!r}: expected one of {', '.join(VARIANTS)}")
    directory.mkdir(parents=True, exist_ok=True)
    for template in sorted(TEMPLATES.glob("*.j2")):
        text = template.read_text()
        change = _without_hints if name == "no-hints" else _with_examples
        (directory / template.name).write_text(change(text, template))
    return directory


def _with_examples(text: str, template: Path) -> str:
    """Name the made-up incident once under `## Questions`, and put its worked example after
    each question's line (`[ID] text`) of the questions template."""
    line, heading = "[{{ q.id }}] {{ q.text }}\n", "## Questions\n"
    if line not in text or heading not in text:
        return text
    intro = f"(The examples are about a made-up incident, not this one: {WORKED_CASE})\n"
    example = "{% if q.id in worked %}  Example: {{ worked[q.id] }}\n{% endif %}"
    text = text.replace(heading, heading + intro).replace(line, line + example)
    return "{% set worked = " + json.dumps(WORKED_EXAMPLES) + " %}" + text


def _without_hints(text: str, template: Path) -> str:
    """Turn every `{% if q.evaluator_hint %}` block off, leaving the whitespace control as is."""
    if "evaluator_hint" not in text:
        return text
    off = re.sub(r"\{%(-?)\s*if\s+q\.evaluator_hint\s*(-?)%\}", r"{%\1 if false \2%}", text)
    if "evaluator_hint" in off.replace("{{ q.evaluator_hint }}", ""):
        raise SystemExit(f"{template}: evaluator hints used outside an if block; update no-hints")
    return off


def write_sregym_bench(directory: Path) -> dict[str, Path]:
    from agreement.sregym_bench import export_native, load_bench

    return export_native(load_bench(BENCH), directory)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="real_model.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    report = sub.add_parser("report", help="summarize a finished run")
    report.add_argument("result", type=Path)
    report.add_argument("--store", type=Path, help="the run's store (default: RESULT .sqlite)")
    report.add_argument("--labels", type=Path, action="append", default=[])
    report.add_argument("--wall-seconds", type=float)
    report.add_argument("--json", action="store_true", help="JSON instead of markdown")
    bench = sub.add_parser("sregym-bench", help="write SREGym's 29 labelled items for a run")
    bench.add_argument("directory", type=Path)
    variant = sub.add_parser("variant", help="write a prompt variant's templates")
    variant.add_argument("name", choices=VARIANTS)
    variant.add_argument("directory", type=Path)
    args = parser.parse_args(argv)
    if args.command == "variant":
        print(write_variant(args.name, args.directory))
        return 0
    if args.command == "sregym-bench":
        for name, path in write_sregym_bench(args.directory).items():
            print(f"{name}: {path}")
        return 0
    store = args.store or args.result.with_suffix(".sqlite")
    summary = summarize(args.result, store, args.labels, args.wall_seconds)
    print(json.dumps(summary, indent=2) if args.json else markdown(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
