"""Selective and cascaded judging with a guarantee on the real-agent validity set (issue 23).

    python benchmarks/selective.py [--cache DIR] [--store S.sqlite] [--targets 0.8,0.9,0.95]
                                   [--alpha 0.1] [--json OUT.json]

On the test split of `benchmarks/validity/real/` (`validity_real.py`: published agents'
diagnoses, labelled by the project, labeller a's sheets), the cases whose text is available
(committed, or rebuilt into `--cache` by `real/extract.py`) are split by incident (seeded) into
two halves A and B: calibrate on one half (`judge calibrate`'s `fit_stages` and
`choose_thresholds`: maps fitted on `--fit-share` of its incidents, thresholds chosen on the
rest) and run the calibrated judge on the other half through the public API, in both directions
(A -> B and B -> A). For each target it prints the threshold, the coverage reached on the
calibration half, and on the other half the coverage and the agreement with the labels on what
was answered: the number the guarantee is about (>= target with probability >= 1 - alpha, over
draws of the calibration data).

1. The rules judge alone (a cascade of one), with the question and the verdict guarantee.
2. With `--store`: the rules judge escalating to a real local model whose answers a store holds
   (written by `benchmarks/validity.py --set real --split test --judge-model
   openai/qwen2.5-coder-1.5b-instruct --granularity submission --store S`), replayed: no
   server, no model is started here.
3. Cost: the rules judge escalating to `openai/gpt-4o-mini` and then `openai/gpt-4o`, played by
   the fake provider (their answers simulated from the labels: right 85% / 95% of the time,
   token probabilities 0.75-0.99 when right and 0.5-0.8 when wrong), at litellm's prices for
   the fake provider's token counts; against `openai/gpt-4o` asked everything on the same half.
   Only the costs are measured there: the simulated models' agreement is made up.

Every judge is asked one call per submission (`--granularity submission`; the rules judge
answers the same either way), so the escalation unit is a submission's call and the verdict
guarantee is measured too.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import numpy as np  # noqa: E402
import validity as V  # noqa: E402
import validity_real as real  # noqa: E402

from judge import EvalOptions, evaluate, load_rubric  # noqa: E402
from judge.judges.cascade import CascadeJudge  # noqa: E402
from judge.judges.replay import ReplayJudge  # noqa: E402
from judge.judges.rules import RulesJudge  # noqa: E402
from judge.judges.selective.fit import (  # noqa: E402
    CalibrationRefused,
    choose_thresholds,
    fit_stages,
    reference_labels,
    rubric_of,
    stage_of,
)
from judge.store import Store  # noqa: E402

LABELLER = "a"
GRANULARITY = "submission"
SIMULATED = {"gpt-4o-mini": 0.85, "gpt-4o": 0.95}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--store", type=Path, help="a store of the local model's answers (replayed)")
    p.add_argument("--cache", type=Path, default=real.REAL / ".cache", help="rebuilt texts")
    p.add_argument("--no-cache", action="store_true", help="committed and corpus texts only")
    p.add_argument("--corpus", type=Path, default=real.extract.default_corpus())
    p.add_argument("--targets", default="0.8,0.9,0.95")
    p.add_argument("--alpha", type=float, default=0.1)
    p.add_argument("--fit-share", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0, help="seed of the A/B split")
    p.add_argument("--skip-cost", action="store_true", help="no fake-provider cost runs")
    p.add_argument("--json", type=Path, help="also write every number here")
    return p.parse_args(argv)


class Data:
    """The real set's test split, labeller a's labels and the A/B split by incident."""

    def __init__(self, seed: int, cache: Path | None, corpus: Path) -> None:
        self.rubric = load_rubric("sregym-v3")
        real_run = V.prepare_real(real.REAL, ["test"], None, cache, corpus, self.rubric)
        self.specs = real_run.specs
        self.subs = real_run.submissions
        self.missing = len(real_run.missing)
        self.question = real_run.people.labels(LABELLER, "question")
        incidents = sorted({s.incident_id for s in self.subs})
        order = np.random.default_rng(seed).permutation(len(incidents))
        first = {incidents[i] for i in order[: len(incidents) // 2]}
        self.halves = {"A": first, "B": set(incidents) - first}

    def submissions(self, half: str) -> list[Any]:
        return [s for s in self.subs if s.incident_id in self.halves[half]]

    def labels(self, shape: Any) -> dict:
        return reference_labels(self.question, {}, shape)


def run(data: Data, judge: Any, half: str, store: Path | None = None) -> Any:
    # One call at a time: the fake provider's prompt cache, and so the cost, depends on the order.
    options = EvalOptions(granularity=GRANULARITY, store=store, max_concurrent=1, progress=False)
    return evaluate(data.specs, data.submissions(half), data.rubric, judge, options=options)


def agreement_on_answered(result: Any, labels: dict, guarantee: str) -> tuple[float | None, int]:
    """Agreement with the labels of the cascade's own answers (or verdicts) that it gave."""
    label = result.config["judge"]["label"]
    if guarantee == "verdict":
        pairs = [
            ("Yes" if c.passed else "No", labels.get((c.incident_id, c.trial, "verdict")))
            for c in result.cases
            if c.passed is not None
        ]
    else:
        pairs = [
            (j.answer, labels.get((j.incident_id, j.trial, j.question_id)))
            for j in result.judgments
            if j.judge == label and j.answer is not None
        ]
    pairs = [(a, b) for a, b in pairs if b is not None]
    if not pairs:
        return None, 0
    return sum(a == b for a, b in pairs) / len(pairs), len(pairs)


def plain_agreement(result: Any, data: Data) -> dict[str, Any]:
    """A judge's own agreement with the labels on every question it answered, and its
    unscored count."""
    labels = {(k.incident_id, k.trial, k.unit): a for k, a in data.question.items()}
    label = result.config["judge"]["label"]
    own = [j for j in result.judgments if j.judge == label]
    pairs = [
        (j.answer, labels.get((j.incident_id, j.trial, j.question_id)))
        for j in own
        if j.answer is not None
    ]
    pairs = [(a, b) for a, b in pairs if b is not None]
    return {
        "agreement": sum(a == b for a, b in pairs) / len(pairs) if pairs else None,
        "n": len(pairs),
        "unscored": sum(1 for j in own if j.answer is None),
    }


def measure(
    data: Data,
    stages_by_half: dict[str, list[Any]],
    make_cascade: Any,
    targets: list[float],
    alpha: float,
    fit_share: float,
    guarantee: str,
    stores: dict[str, Path | None] | None = None,
) -> list[dict[str, Any]]:
    """Per direction and target: calibrate on one half, run the cascade on the other."""
    rows = []
    for calibrate_on, measure_on in (("A", "B"), ("B", "A")):
        results = stages_by_half[calibrate_on]
        stages = [stage_of(r, f"{calibrate_on}:{n}") for n, r in enumerate(results)]
        rubric_hash, shape = rubric_of(results, [str(n) for n in range(len(results))])
        labels = data.labels(shape)
        fitted = fit_stages(stages, labels, shape, guarantee=guarantee, fit_share=fit_share)
        for target in targets:
            row: dict[str, Any] = {
                "calibrate_on": calibrate_on,
                "measure_on": measure_on,
                "target": target,
                "guarantee": guarantee,
            }
            try:
                calibration = choose_thresholds(
                    fitted, labels, rubric_hash, shape, target=target, alpha=alpha
                )
            except CalibrationRefused as exc:
                row["refused"] = exc.message
                rows.append(row)
                continue
            judge = make_cascade(calibration)
            store = (stores or {}).get(measure_on)
            result = run(data, judge, measure_on, store)
            agreement, n = agreement_on_answered(result, data.labels(shape), guarantee)
            summary = result.cascade
            row.update(
                thresholds=calibration.thresholds,
                calibration_coverage=calibration.coverage,
                calibration_agreement=calibration.agreement,
                coverage=summary.coverage,
                answered=summary.answered,
                n_items=summary.n_items,
                shares=[s.share for s in summary.stages],
                agreement=agreement,
                n_answered_labelled=n,
                held=None if agreement is None else agreement >= target,
                cost_usd=summary.cost_usd,
                strongest_cost_usd=summary.strongest_cost_usd,
                stage_costs=[s.cost_usd for s in summary.stages],
                stage_calls=[s.calls for s in summary.stages],
            )
            rows.append(row)
    return rows


# ------------------------------------------------------------------ the simulated models


def _flip(answer: str) -> str:
    return "No" if answer == "Yes" else "Yes"


def _unit(*parts: str) -> float:
    return hashlib.sha256("\x1f".join(parts).encode()).digest()[0] / 256


class Simulated:
    """Fake models that know the labels: right with probability `SIMULATED[model]`."""

    def __init__(self, data: Data) -> None:
        from judge.testing.answers import diagnosis_text, last_user_text

        self.text = lambda messages: diagnosis_text(last_user_text(messages)).strip()
        self.cases = {s.diagnosis.strip(): (s.incident_id, s.trial) for s in data.subs}
        self.labels = {(k.incident_id, k.trial, k.unit): a for k, a in data.question.items()}

    def _key(self, qid: str, messages: Any) -> tuple[str, str, str]:
        return (*self.cases[self.text(messages)], qid)

    def right(self, model: str, key: tuple[str, str, str]) -> bool:
        return _unit(model, *key) < SIMULATED[model]

    def policy(self, model: str) -> Any:
        def answer(qid: str, messages: Any) -> str:
            key = self._key(qid, messages)
            label = self.labels.get(key) or "Yes"
            return label if self.right(model, key) else _flip(label)

        return answer

    def confidence(self, model: str, qid: str, messages: Any, answer: str) -> float:
        key = self._key(qid, messages)
        spread = _unit("confidence", model, *key)
        return 0.75 + 0.24 * spread if self.right(model, key) else 0.5 + 0.3 * spread


def cost_runs(
    data: Data, rules: dict[str, Any], targets: list[float], alpha: float, fit_share: float
) -> dict[str, Any]:
    """Rules -> fake gpt-4o-mini -> fake gpt-4o against fake gpt-4o alone, costs measured."""
    import tempfile

    from judge.judges.llm import LLMJudge
    from judge.testing import FakeProvider, FakeProviderConfig

    simulated = Simulated(data)
    config = FakeProviderConfig(
        model_policies={m: simulated.policy(m) for m in SIMULATED},
        confidence_policy=simulated.confidence,
    )
    with FakeProvider(config) as provider, tempfile.TemporaryDirectory() as tmp:
        stores = {h: Path(tmp) / f"{h}.sqlite" for h in ("A", "B")}

        def llm(model: str) -> LLMJudge:
            return LLMJudge(  # a cascade's stages ask for log-probabilities, as `cascade:` does
                f"openai/{model}", api_base=provider.url, api_key="sk-fake", logprobs=True
            )

        alone: dict[str, dict[str, Any]] = {}
        stages: dict[str, list[Any]] = {}
        for half in ("A", "B"):
            runs = [run(data, llm(m), half, stores[half]) for m in SIMULATED]
            stages[half] = [rules[half], *runs]
            big = runs[-1]
            alone[half] = {
                "calls": len(big.calls),
                "cost_usd": sum(c.usage.cost_usd for c in big.calls if c.usage),
                "prompt_tokens": sum(c.usage.prompt_tokens or 0 for c in big.calls if c.usage),
                "completion_tokens": sum(
                    c.usage.completion_tokens or 0 for c in big.calls if c.usage
                ),
            }

        def cascade(calibration: Any) -> CascadeJudge:
            return CascadeJudge([RulesJudge(), *(llm(m) for m in SIMULATED)], calibration)

        rows = measure(data, stages, cascade, targets, alpha, fit_share, "question", stores)
    for row in rows:
        alone_cost = alone[row["measure_on"]]
        row["strongest_alone"] = alone_cost
        if row.get("cost_usd") is not None:
            row["saved_usd"] = alone_cost["cost_usd"] - row["cost_usd"]
            row["saved_share"] = row["saved_usd"] / alone_cost["cost_usd"]
    return keyed(rows)


def keyed(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Rows by direction (`A_B`: calibrated on A, measured on B) and target (`t90`)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        direction = f"{row['calibrate_on']}_{row['measure_on']}"
        out.setdefault(direction, {})[target_key(row["target"])] = row
    return out


def target_key(target: float) -> str:
    return f"t{round(target * 100)}"


CONFIGS = {
    "rules_question": "rules, question, maps fitted",
    "rules_question_raw": "rules, question, raw confidence",
    "rules_verdict": "rules, verdict, maps fitted",
    "rules_verdict_raw": "rules, verdict, raw confidence",
    "cascade_question": "rules -> local model, question",
    "cascade_verdict": "rules -> local model, verdict",
}


def _pair(out: dict[str, Any], config: str, target: float, field: str, fmt: str) -> str:
    cells = []
    for direction in ("A_B", "B_A"):
        row = out[config][direction][target_key(target)]
        value = row.get(field)
        cells.append("refused" if "refused" in row else "—" if value is None else fmt % value)
    return " / ".join(cells)


def agreement_table(out: dict[str, Any], targets: list[float]) -> str:
    """Per judge, guarantee and target: coverage and agreement on what was answered on the
    half not calibrated on, both directions (A -> B / B -> A)."""
    lines = [
        "| judge, guarantee, confidence | target | coverage | agreement on answered | answered |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for config, name in CONFIGS.items():
        if config not in out:
            continue
        for target in targets:
            lines.append(
                f"| {name} | {target:.2f} | {_pair(out, config, target, 'coverage', '%.2f')} | "
                f"{_pair(out, config, target, 'agreement', '%.2f')} | "
                f"{_pair(out, config, target, 'n_answered_labelled', '%d')} |"
            )
    return "\n".join(lines)


def cost_table(cost: dict[str, Any], targets: list[float]) -> str:
    """Per target and direction: the share each stage answered, the cascade's cost and
    gpt-4o's asked everything on the same half."""
    lines = [
        "| target | calibrated -> measured | answered by rules / mini / 4o | coverage | cascade "
        "| gpt-4o alone | saved |",
        "| ---: | --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for target in targets:
        for direction in ("A_B", "B_A"):
            row = cost[direction][target_key(target)]
            where = direction.replace("_", " -> ")
            if "refused" in row:
                lines.append(f"| {target:.2f} | {where} | refused | | | | |")
                continue
            shares = " / ".join(f"{share:.2f}" for share in row["shares"])
            lines.append(
                f"| {target:.2f} | {where} | {shares} | {row['coverage']:.2f} | "
                f"${row['cost_usd']:.4f} | ${row['strongest_alone']['cost_usd']:.4f} | "
                f"{row['saved_share']:.0%} |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    targets = [float(t) for t in args.targets.split(",")]
    data = Data(args.seed, None if args.no_cache else args.cache, args.corpus)
    out: dict[str, Any] = {
        "halves": {h: sorted(i) for h, i in data.halves.items()},
        "n_cases": {h: len(data.submissions(h)) for h in data.halves},
        "cases_without_text": data.missing,
        "labeller": LABELLER,
        "alpha": args.alpha,
        "fit_share": args.fit_share,
    }
    rules = {half: run(data, RulesJudge(), half) for half in ("A", "B")}

    def rules_alone(calibration: Any) -> CascadeJudge:
        return CascadeJudge([RulesJudge()], calibration)

    for guarantee in ("question", "verdict"):
        for suffix, fit_share in (("", args.fit_share), ("_raw", 0.0)):
            out[f"rules_{guarantee}{suffix}"] = keyed(
                measure(
                    data,
                    {h: [rules[h]] for h in rules},
                    rules_alone,
                    targets,
                    args.alpha,
                    fit_share,
                    guarantee,
                )
            )
    if args.store is not None:
        model = {
            half: run(data, ReplayJudge(Store(args.store, readonly=True)), half)
            for half in ("A", "B")
        }
        out["alone"] = {
            name: {h: plain_agreement(r[h], data) for h in r}
            for name, r in (("rules", rules), ("model", model))
        }

        def with_model(calibration: Any) -> CascadeJudge:
            return CascadeJudge(
                [RulesJudge(), ReplayJudge(Store(args.store, readonly=True))], calibration
            )

        for guarantee in ("question", "verdict"):
            out[f"cascade_{guarantee}"] = keyed(
                measure(
                    data,
                    {h: [rules[h], model[h]] for h in rules},
                    with_model,
                    targets,
                    args.alpha,
                    args.fit_share,
                    guarantee,
                )
            )
    if not args.skip_cost:
        out["cost"] = cost_runs(data, rules, targets, args.alpha, args.fit_share)
    n = out["n_cases"]
    print(
        f"{n['A'] + n['B']} cases with text ({data.missing} without), halves A {n['A']} / "
        f"B {n['B']} cases; labeller {LABELLER}; alpha {args.alpha}, fit share {args.fit_share}"
    )
    print(agreement_table(out, targets))
    if "cost" in out:
        print()
        print(cost_table(out["cost"], targets))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
