"""Does the rules judge's confidence rank its answers? Chosen on the tune data, checked once on test.

    python benchmarks/confidence_rank.py [--cache DIR | --no-cache] [--json OUT.json]
    python benchmarks/confidence_rank.py --test     # the test split, once the design is fixed

The answers are the rules judge's on the real-agent validity set's tune split and the
hand-written set's tune half, each with the project's label (labeller a: helper sessions of
the project following the labelling guides, not people outside it). The criterion is
"the answer agrees with the label": AUROC (a right answer more confident than a wrong one)
and ECE (calibration error, 10 bins), per source family and pooled.

Without `--test` it compares sets of error signals by cross-validation inside the tune data:
each source family (forge, openrca, aiopslab, sregym, itbench, hand-written) is held out in
turn, an L2-regularised logistic regression of "agrees" on the signals is fitted on the
others, and the held-out family's answers are scored by it. The set kept in
`judge/judges/rules/confidence.py` is the one whose held-out AUROC is best, with fewer
signals preferred at a tie; its weights are the fit on all the tune data, rounded. The
current confidence of the judge is shown beside, as scored (not refitted).

With `--test` it scores the real-agent test split with the judge as it is (nothing fitted),
per source and pooled: the one measurement the design is reported on.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
for _path in (REPO, REPO / "benchmarks"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import numpy as np  # noqa: E402
import validity as V  # noqa: E402
import validity_real as real  # noqa: E402

from agreement import LabelFileError  # noqa: E402
from agreement.ranking import rank_confidence  # noqa: E402
from agreement.reliability import reliability_diagram  # noqa: E402
from ground_truth import InputError  # noqa: E402
from judge import load_rubric  # noqa: E402
from judge.checklist.prompts import Prompt  # noqa: E402
from judge.judges.base import JudgeTask  # noqa: E402
from judge.judges.rules import RulesJudge, bind  # noqa: E402
from judge.judges.rules import confidence as C  # noqa: E402

LABELLER = "a"
FAMILIES = ("forge", "openrca", "aiopslab", "sregym", "itbench")


@dataclass
class Answer:
    """One labelled answer of the rules judge with the signals its confidence may use."""

    source: str
    family: str
    incident: str
    question: str
    answer: str
    agreed: bool
    confidence: float
    signals: dict[str, float]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", type=Path, default=real.REAL / ".cache", help="rebuilt texts")
    p.add_argument("--no-cache", action="store_true", help="committed and corpus texts only")
    p.add_argument("--corpus", type=Path, default=real.extract.default_corpus())
    p.add_argument("--test", action="store_true", help="score the test split (once)")
    p.add_argument("--c", type=float, default=1.0, help="inverse L2 strength of the fits")
    p.add_argument("--json", type=Path, help="also write every number here")
    return p.parse_args(argv)


# --- the answers -----------------------------------------------------------------------------


def answers_of(
    specs: Any, subs: Any, labels: dict[tuple[str, str, str], str], source_of: Any, rubric: Any
) -> list[Answer]:
    """Every labelled, scored answer of the rules judge on these submissions."""
    judge, empty = RulesJudge(), Prompt(messages=[], hash="")
    by_id = {s.id: s for s in specs}
    out = []
    for sub in subs:
        source = source_of(sub)
        for dim in rubric.dimensions:
            task = JudgeTask(by_id[sub.incident_id], sub, dim, empty)
            case = judge._case(task)
            for question, ruling in zip(dim.questions, judge.rulings(task), strict=True):
                label = labels.get((sub.incident_id, sub.trial, question.id))
                given = ruling.answer.answer
                if label is None or given is None:
                    continue
                rule = bind(question.rule, question.text)
                out.append(
                    Answer(
                        source,
                        family_of(source),
                        sub.incident_id,
                        question.id,
                        given,
                        given == label,
                        C.with_confidence(ruling, rule, case).confidence_score or 0.0,
                        candidates(ruling, rule, case),
                    )
                )
    return out


def family_of(source: str) -> str:
    return next((f for f in FAMILIES if source.startswith(f)), "hand-written")


def real_answers(split: str, rubric: Any, cache: Path | None, corpus: Path) -> list[Answer]:
    run = V.prepare_real(real.REAL, [split], None, cache, corpus, rubric)
    by_case = {item.case.case: item.case for item in run.loaded}
    labels = {
        (k.incident_id, k.trial, k.unit): a
        for k, a in run.people.labels(LABELLER, "question").items()
        if a is not None
    }
    return answers_of(run.specs, run.submissions, labels, lambda s: by_case[s.trial].source, rubric)


def handwritten_answers(half: str, rubric: Any) -> list[Answer]:
    cases = V.load_halves(V.VALIDITY, (half,), sys.stderr)[half]
    people = V.read_people(V.label_files(V.VALIDITY, [half], [f"labels/*.{LABELLER}.csv"]), rubric)
    labels = {
        (k.incident_id, k.trial, k.unit): a
        for k, a in people.labels(LABELLER, "question").items()
        if a is not None
    }
    subs = V.build_submissions(cases)
    return answers_of(V.build_specs(cases), subs, labels, lambda s: "hand-written", rubric)


# --- the candidate signals -------------------------------------------------------------------


def candidates(ruling: Any, rule: str | None, case: Any) -> dict[str, float]:
    """The signals `confidence.py` uses, and others tried beside them (`x_`: the steps of the
    judge's earlier hand-set confidence, and more from the issue's list of error shapes)."""
    basis, answer = ruling.basis, ruling.answer
    d = case.diagnosis
    yes = answer.answer == "Yes"
    out = C.signals(basis, answer.answer, rule, C.Shape.of(case))
    out.update(
        {
            "x_yes": float(yes),
            "x_yes_vocabulary": float(yes and rule in VOCABULARY),
            "x_yes_avoid": float(yes and rule in AVOID),
            "x_mention": float(basis.claim == "mention"),
            "x_claim_explicit": float(basis.claim == "explicit"),
            "x_claim_implied": float(basis.claim == "implied"),
            "x_claim_inferred": float(basis.claim == "inferred"),
            "x_name_exact": float(basis.name == "exact"),
            "x_name_alias": float(basis.name == "alias"),
            "x_name_instance": float(basis.name in ("instance", "container")),
            "x_truth_prose": float(basis.truth in ("prose", "none")),
            "x_stated_high": float(answer.confidence == "High"),
            "x_stated_low": float(answer.confidence == "Low"),
            "x_cut": float(basis.cut),
            "x_log_length": math.log10(max(10, len(d.text))) - 3.0,
            "x_long": float(len(d.text) > 6000),
            "x_no_fault": float(d.no_fault),
            "x_no_cause": float(not d.has_cause),
        }
    )
    return out


VOCABULARY = {"mechanism_matched", "fault_type_consistent"}
# The questions whose Yes means "the diagnosis avoids an error" rather than "it states this".
AVOID = {"no_healthy_component_blamed", "fault_type_consistent", "no_uninvolved_component_blamed"}


# --- cross-validation ------------------------------------------------------------------------


def design(points: list[Answer], names: list[str]) -> np.ndarray:
    return np.array([[p.signals.get(n, 0.0) for n in names] for p in points], dtype=float)


def held_out(points: list[Answer], names: list[str], c: float) -> np.ndarray:
    """Each family's answers scored by a fit on the other families'."""
    fam = np.array([p.family for p in points])
    return _out_of_fold(points, names, c, [(fam != f, fam == f) for f in sorted(set(fam))])


def by_incident(points: list[Answer], names: list[str], c: float, k: int = 5) -> np.ndarray:
    """Each answer scored by a fit on the other incidents' (grouped k-fold)."""
    from sklearn.model_selection import GroupKFold

    groups = [f"{p.family}/{p.incident}" for p in points]
    folds = GroupKFold(k).split(np.zeros(len(points)), groups=groups)
    n = len(points)
    masks = []
    for train, test in folds:
        a, b = np.zeros(n, bool), np.zeros(n, bool)
        a[train], b[test] = True, True
        masks.append((a, b))
    return _out_of_fold(points, names, c, masks)


def _out_of_fold(
    points: list[Answer], names: list[str], c: float, folds: list[tuple[np.ndarray, np.ndarray]]
) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression

    x, y = design(points, names), np.array([p.agreed for p in points])
    out = np.zeros(len(points))
    for train, test in folds:
        model = LogisticRegression(C=c, max_iter=2000).fit(x[train], y[train])
        out[test] = model.decision_function(x[test])
    return out


def auroc(points: list[Answer], scores: Sequence[float]) -> dict[str, Any]:
    y = [p.agreed for p in points]
    if len(set(y)) < 2:
        return {"auroc": None, "ci_low": None, "ci_high": None}
    r = rank_confidence(list(scores), y, [p.incident for p in points], seed=0)
    return {"auroc": r.auroc, "ci_low": r.ci_low, "ci_high": r.ci_high}


def per_family_auroc(points: list[Answer], scores: np.ndarray) -> float:
    """Mean of the families' own AUROC, each weighted by its wrong answers (where the ranking
    has something to rank). Pooling the held-out families' scores instead would mix fits with
    different intercepts."""
    from sklearn.metrics import roc_auc_score

    total, weight = 0.0, 0.0
    for f in sorted({p.family for p in points}):
        idx = [i for i, p in enumerate(points) if p.family == f]
        y = [points[i].agreed for i in idx]
        if len(set(y)) < 2:
            continue
        w = float(len(y) - sum(y))
        total += w * float(roc_auc_score(y, scores[idx]))
        weight += w
    return total / weight if weight else float("nan")


def compare_sets(
    points: list[Answer], sets: dict[str, list[str]], c: float
) -> list[dict[str, Any]]:
    from sklearn.metrics import roc_auc_score

    y = [p.agreed for p in points]
    shipped = np.array([p.confidence for p in points])
    rows = [
        {
            "set": "the judge's confidence as shipped (in-sample: fitted on all of this data)",
            "signals": [],
            "by_family": per_family_auroc(points, shipped),
            "by_incident": float(roc_auc_score(y, shipped)),
        }
    ]
    for name, names in sets.items():
        rows.append(
            {
                "set": name,
                "signals": names,
                "by_family": per_family_auroc(points, held_out(points, names, c)),
                "by_incident": float(roc_auc_score(y, by_incident(points, names, c))),
            }
        )
    return rows


def fit_all(points: list[Answer], names: list[str], c: float) -> dict[str, float]:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, max_iter=2000).fit(
        design(points, names), [p.agreed for p in points]
    )
    return {"start": float(model.intercept_[0])} | {
        n: float(w) for n, w in zip(names, model.coef_[0], strict=True)
    }


# The steps of the judge's earlier hand-set confidence, as signals.
EARLIER = [
    "conflicting", "others_blamed", "yes_impact", "yes_unnamed", "x_yes", "x_yes_vocabulary",
    "x_mention", "x_claim_explicit", "x_claim_implied", "x_name_exact", "x_name_alias",
    "x_name_instance", "x_truth_prose", "x_stated_high", "x_stated_low", "x_cut",
]  # fmt: skip


def signal_sets(all_names: list[str]) -> dict[str, list[str]]:
    kept = [n for n in all_names if not n.startswith("x_")]
    extra = [n for n in all_names if n.startswith("x_")]
    sets = {
        "kept (confidence.py)": kept,
        "the earlier hand-set steps, refitted": EARLIER,
        "kept + all tried": kept + extra,
    }
    for n in kept:
        sets[f"kept - {n}"] = [k for k in kept if k != n]
    for n in extra:
        sets[f"kept + {n}"] = [*kept, n]
    return sets


# --- scoring and printing --------------------------------------------------------------------


def score_rows(points: list[Answer]) -> list[dict[str, Any]]:
    groups: dict[str, list[Answer]] = {}
    for p in points:
        for key in (p.source, f"family {p.family}", "pooled"):
            groups.setdefault(key, []).append(p)
    rows = []
    for key, group in sorted(groups.items(), key=lambda kv: (kv[0] == "pooled", kv[0])):
        x = [p.confidence for p in group]
        y = [p.agreed for p in group]
        rows.append(
            {
                "scope": key,
                "n": len(group),
                "agreement": float(np.mean(y)),
                **auroc(group, x),
                "ece": reliability_diagram(x, y).ece,
            }
        )
    return rows


def _f(v: Any) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.2f}"


def print_scores(title: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n{title}\n")
    print("| scope | answers | agreement | AUROC [95% CI] | ECE |")
    print("|---|---:|---:|---|---:|")
    for r in rows:
        ci = f" [{_f(r['ci_low'])}, {_f(r['ci_high'])}]" if r["auroc"] is not None else ""
        print(
            f"| {r['scope']} | {r['n']} | {r['agreement']:.3f} | {_f(r['auroc'])}{ci} | {r['ece']:.3f} |"
        )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    rubric = load_rubric("sregym-v3")
    cache = None if args.no_cache else args.cache
    split = "test" if args.test else "tune"
    try:
        points = real_answers(split, rubric, cache, args.corpus)
        if not args.test:
            points += handwritten_answers("tune", rubric)
    except (InputError, LabelFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    what = (
        "real-agent test split" if args.test else "real-agent tune split + hand-written tune half"
    )
    print(
        f"{len(points)} labelled answers of the rules judge on the {what}; labeller {LABELLER} (the project's labels)"
    )
    scores = score_rows(points)
    print_scores(
        "The rules judge's confidence as it is, for 'agrees with the label' (incidents resampled):",
        scores,
    )
    out: dict[str, Any] = {"split": split, "scores": scores}
    if not args.test:
        sets = signal_sets(sorted(points[0].signals))
        rows = compare_sets(points, sets, args.c)
        print(f"\nSignal sets, L2-regularised logistic fits (C {args.c:g}), held-out AUROC:\n")
        print(
            "| signals | held-out AUROC, each family by a fit on the others (mean of the "
            "families', weighted by wrong answers) | held-out AUROC, 5 folds of incidents (pooled) |"
        )
        print("|---|---:|---:|")
        for r in rows:
            print(f"| {r['set']} | {r['by_family']:.3f} | {r['by_incident']:.3f} |")
        kept = sets["kept (confidence.py)"]
        fit = fit_all(points, kept, args.c)
        print(
            "\nThe kept set fitted on all the tune data:",
            ", ".join(f"{k} {v:+.2f}" for k, v in fit.items()),
        )
        out.update(sets=rows, fit=fit)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
