"""`judge audit` measured with planted biases on the bundled example (issue 40).

    python benchmarks/audit.py [--seeds N] [--noise P] [--json]

The judge is the llm judge answered by the fake provider (`judge.testing`), whose answers are
grounded (Yes when the diagnosis names the fault origin, whatever its form) and carry one
planted bias at a time (`judge.testing.biases`). Prints:

1. the detection table: per planted bias, the probe that should find it, the decisive effect
   with its 95% interval from one audit through the real run (seed 0, in-process, the store
   off), and in how many of `--seeds` seeds the audit finds it, without noise and with random
   flips at `--noise` on top (the fake's logic without the run, `judge.testing.arms`, which
   `tests/test_audit_detection.py` shows gives the run's effects);
2. false alarms: in how many of `--seeds` seeds an unbiased judge raises an alarm, at several
   noise levels;
3. the audit's cost beside the run's: calls and prompt tokens of the audit's arms over those
   of one run of the same cases (the base arm), as the run counted them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MODEL = "openai/gpt-4o-mini"
PLANTED: list[tuple[str, str, dict[str, Any], str]] = [
    ("Yes only to the first 3 questions", "order", {"yes_first": 3}, "excess_flips"),
    (
        "Yes only to diagnoses of 500+ characters",
        "verbosity-padded",
        {"yes_min_chars": 500},
        "yes_shift",
    ),
    ("No when the diagnosis comes first", "anchoring", {"no_diagnosis_first": True}, "yes_shift"),
    ("Yes when the prompt names 'gpt'", "self", {"yes_family": "gpt"}, "yes_shift"),
]
NOISE_LEVELS = (0.0, 0.05, 0.1, 0.2, 0.3)


def inputs():
    from ground_truth import load_specs, load_submissions
    from judge.checklist.rubric import load_rubric

    example = REPO / "examples" / "sregym-mini"
    return (
        load_specs(example / "ground_truth"),
        load_submissions(example / "outputs"),
        load_rubric(),
    )


def config(biases: dict[str, Any], seed: int):
    from judge.testing.answers import grounded_policy
    from judge.testing.biases import PlantedBiases
    from judge.testing.config import FakeProviderConfig

    return FakeProviderConfig(
        seed=seed, answer_policy=grounded_policy, biases=PlantedBiases(**biases), logprobs=False
    )


def run_audit(biases: dict[str, Any], seed: int = 0):
    """One audit through the real run (in-process llm judge, no store)."""
    from judge.audit.check import audit_judge
    from judge.testing.inprocess import inprocess_judge

    specs, subs, rubric = inputs()
    judge = inprocess_judge(config(biases, seed), MODEL, logprobs=False)
    return audit_judge(specs, subs, rubric, judge, seed=seed)


def fast_audit(biases: dict[str, Any], seed: int):
    """One audit's comparison from the fake's logic without the run."""
    from judge.audit.arms import audit_cases, plan_arms
    from judge.audit.check import compare_arms
    from judge.checklist.prompts import PromptRenderer
    from judge.testing.arms import answer_arms
    from judge.testing.inprocess import inprocess_judge

    specs, subs, rubric = _INPUTS
    judge = inprocess_judge(model=MODEL)
    cases = audit_cases(subs)
    plan = plan_arms(cases, rubric, PromptRenderer(), judge, seed=seed)
    return compare_arms(
        plan, answer_arms(plan, specs, config(biases, seed)), rubric, judge, cases, seed
    )


def detection(seeds: int, noise: float) -> list[dict[str, Any]]:
    rows = []
    for label, probe, biases, effect_name in PLANTED:
        report = run_audit(biases)
        found = next(p for p in report.probes if p.probe == probe)
        effect = getattr(found, effect_name)
        quiet = sum(probe in fast_audit(biases, s).biased for s in range(seeds))
        noisy = sum(
            probe in fast_audit({**biases, "flip_rate": noise}, s).biased for s in range(seeds)
        )
        rows.append(
            {
                "bias": label,
                "probe": probe,
                "effect": effect_name,
                "value": effect.value,
                "ci": [effect.ci_low, effect.ci_high],
                "flagged_seed0": report.biased,
                "detected": quiet,
                "detected_with_noise": noisy,
                "seeds": seeds,
            }
        )
    report = run_audit({"flip_rate": noise})
    flips = report.noise.flip_rate
    detected = sum(
        (r.noise.flip_rate.ci_low or 0) > 0
        for r in (fast_audit({"flip_rate": noise}, s) for s in range(seeds))
    )
    rows.append(
        {
            "bias": f"random flips at {noise:g}",
            "probe": "noise",
            "effect": "flip_rate",
            "value": flips.value,
            "ci": [flips.ci_low, flips.ci_high],
            "flagged_seed0": report.biased,
            "detected": detected,
            "detected_with_noise": detected,
            "seeds": seeds,
        }
    )
    return rows


def false_alarms(seeds: int) -> list[dict[str, Any]]:
    rows = []
    for noise in NOISE_LEVELS:
        alarms: dict[str, int] = {}
        any_alarm = 0
        for seed in range(seeds):
            biased = fast_audit({"flip_rate": noise}, seed).biased
            any_alarm += bool(biased)
            for probe in biased:
                alarms[probe] = alarms.get(probe, 0) + 1
        rows.append({"noise": noise, "seeds": seeds, "alarms": any_alarm, "by_probe": alarms})
    return rows


def cost() -> dict[str, Any]:
    report = run_audit({})
    base = report.results["base"].usage
    others = [r.usage for name, r in report.results.items() if name != "base"]
    calls = sum(u.calls_made for u in others)
    tokens = sum(u.prompt_tokens for u in others)
    return {
        "arms": [a.name for a in report.arms],
        "run_calls": base.calls_made,
        "audit_calls": calls,
        "calls_ratio": calls / base.calls_made,
        "run_prompt_tokens": base.prompt_tokens,
        "audit_prompt_tokens": tokens,
        "tokens_ratio": tokens / base.prompt_tokens,
        "planned_ratio": report.cost_ratio,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    found = {
        "detection": detection(args.seeds, args.noise),
        "false_alarms": false_alarms(args.seeds),
        "cost": cost(),
    }
    if args.json:
        print(json.dumps(found, indent=2))
        return
    print(f"Planted biases on the bundled example (32 cases, 13 incidents), {MODEL} via the fake")
    print(
        f"| bias | probe | effect (seed 0) | 95% CI | found, no noise | found, flips {args.noise:g} |"
    )
    print("|---|---|---|---|---|---|")
    for r in found["detection"]:
        low, high = r["ci"]
        print(
            f"| {r['bias']} | {r['probe']} | {r['effect']} {r['value']:+.3f} | "
            f"[{low:+.3f}, {high:+.3f}] | {r['detected']}/{r['seeds']} | "
            f"{r['detected_with_noise']}/{r['seeds']} |"
        )
    print("\nFalse alarms of an unbiased judge (any probe flagged)")
    print("| random flips | seeds with an alarm | by probe |")
    print("|---|---|---|")
    for r in found["false_alarms"]:
        print(f"| {r['noise']:g} | {r['alarms']}/{r['seeds']} | {r['by_probe'] or '-'} |")
    c = found["cost"]
    print(
        f"\nCost: one run of the 32 cases = {c['run_calls']} calls, {c['run_prompt_tokens']} prompt "
        f"tokens; the audit's other arms ({', '.join(c['arms'][1:])}) = {c['audit_calls']} calls "
        f"({c['calls_ratio']:.2f}x the run), {c['audit_prompt_tokens']} prompt tokens "
        f"({c['tokens_ratio']:.2f}x)"
    )


_INPUTS = inputs()

if __name__ == "__main__":
    main()
