"""Does a calibrated guarantee travel? Calibrate on one source family, apply to another (issue 39).

    python benchmarks/guarantee_shift.py [--cache DIR | --no-cache] [--targets 0.8,0.9,0.95]
                                         [--alpha 0.1] [--check-cases 10] [--json OUT.json]

The cases are the real-agent validity set (`benchmarks/validity/real/`, every source; texts
that are not committed are rebuilt into `--cache` by `real/extract.py`) and the hand-written
halves (`benchmarks/validity/cases/`), both with the project's labels (labeller a: helper
sessions of the project following the labelling guides; not labels by people outside it).
A real case is loaded as a user's run would hold it: its benchmark format and its agent
recorded, as the adapters record them; a hand-written case as native text with no agent.

For each pair (calibrate on side C, apply to side R), and each target:

1. the rules judge's answers on C and C's labels make a calibration (`judge calibrate
   --target-agreement T --alpha A`, maps fitted on half of C's incidents, thresholds chosen
   on the rest), or a refusal;
2. `cascade:rules` with that calibration runs on R (`judge eval --calibration`): its
   coverage, whether the shift check flagged R as unlike C (and on which features), and
   the agreement with R's labels on the questions it answered;
3. `judge calibrate --check` with `--check-cases` labelled cases of R drawn at random
   (seeded): holds, fails, or not established.

"on text alone" is the shift check again with neither side's format or agent recorded: what
the answers, confidence and diagnosis lengths show by themselves.

Every row says `holds` (measured agreement on R at least the target), `flagged` (the tool
withheld the guarantee: shift), both, or `SILENT FAILURE` (below the target and not
flagged). The measured agreement is over R's labelled answers, a finite sample: a value under
the target is not by itself a broken guarantee, whose probability is over calibration draws.

Then the rules judge's confidence: AUROC (answer agrees with labeller a) and ECE per source,
per family, and pooled per split (tune: the rules were tuned there; test: never looked at),
raw and through calibration maps fitted on the other split: by question, by question and
answer, and of the kind `judge calibrate` chooses by cross-validation on the split it fits
(`agreement.reliability.choose_map_kind`, named in the table's heading).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
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
from agreement.reliability import (  # noqa: E402
    choose_map_kind,
    fit_confidence_calibration,
    reliability_diagram,
)
from ground_truth import IncidentSpec, InputError, Submission  # noqa: E402
from judge import EvalOptions, evaluate, load_rubric  # noqa: E402
from judge.judges.cascade import CascadeJudge  # noqa: E402
from judge.judges.rules import RulesJudge  # noqa: E402
from judge.judges.selective.fit import (  # noqa: E402
    CalibrationRefused,
    choose_thresholds,
    fit_stages,
    rubric_of,
    stage_of,
)
from judge.judges.selective.shift import compare, profile_cases, run_answers  # noqa: E402
from judge.labelling.guarantee import check_guarantee  # noqa: E402
from judge.labelling.labelset import CaseLabels, LabelSet  # noqa: E402

LABELLER = "a"
FAMILIES = ("forge", "openrca", "aiopslab", "sregym", "itbench")
Item = tuple[str, str, str]


@dataclass
class Side:
    """Cases with their specs and labeller a's question labels."""

    name: str
    specs: list[IncidentSpec]
    subs: list[Submission]
    labels: dict[Item, str]
    sources: dict[tuple[str, str], str] = field(default_factory=dict)

    def subset(self, name: str, keep: set[tuple[str, str]]) -> Side:
        subs = [s for s in self.subs if s.key in keep]
        incidents = {s.incident_id for s in subs}
        return Side(
            name,
            [s for s in self.specs if s.id in incidents],
            subs,
            {k: v for k, v in self.labels.items() if (k[0], k[1]) in keep},
            {k: v for k, v in self.sources.items() if k in keep},
        )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", type=Path, default=real.REAL / ".cache", help="rebuilt texts")
    p.add_argument("--no-cache", action="store_true", help="committed and corpus texts only")
    p.add_argument("--corpus", type=Path, default=real.extract.default_corpus())
    p.add_argument("--targets", default="0.8,0.9,0.95")
    p.add_argument("--alpha", type=float, default=0.1)
    p.add_argument("--fit-share", type=float, default=0.5)
    p.add_argument("--check-cases", type=int, default=10, help="labelled cases for --check")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, help="also write every number here")
    return p.parse_args(argv)


# --- the cases -------------------------------------------------------------------------------


def real_side(
    rubric: Any, cache: Path | None, corpus: Path
) -> tuple[Side, dict[str, list[str]], int]:
    """Every real-agent case as a run would hold it, its labels and the split."""
    run = V.prepare_real(real.REAL, list(real.SPLITS), None, cache, corpus, rubric)
    by_case = {item.case.case: item.case for item in run.loaded}
    subs = []
    for sub in run.submissions:
        case = by_case[sub.trial]
        source = {**sub.source, "format": case.format}
        subs.append(sub.model_copy(update={"agent": case.agent, "source": source}))
    labels = {
        (k.incident_id, k.trial, k.unit): a
        for k, a in run.people.labels(LABELLER, "question").items()
        if a is not None
    }
    side = Side("real", run.specs, subs, labels, {s.key: by_case[s.trial].source for s in subs})
    return side, run.selection, len(run.missing)


def handwritten_side(rubric: Any) -> Side:
    halves = V.load_halves(V.VALIDITY, ("tune", "test"), sys.stderr)
    cases = [c for half in halves.values() for c in half]
    people = V.read_people(
        V.label_files(V.VALIDITY, list(halves), [f"labels/*.{LABELLER}.csv"]), rubric
    )
    subs = [
        s.model_copy(update={"source": {"format": "native"}}) for s in V.build_submissions(cases)
    ]
    labels = {
        (k.incident_id, k.trial, k.unit): a
        for k, a in people.labels(LABELLER, "question").items()
        if a is not None
    }
    half_of = {(c.incident_id, c.case): h for h, cs in halves.items() for c in cs}
    return Side("hand-written", V.build_specs(cases), subs, labels, half_of)


def family(source: str) -> str:
    return next(f for f in FAMILIES if source.startswith(f))


def halves(side: Side, seed: int) -> tuple[Side, Side]:
    """Two halves of a side, its incidents split at random (seeded)."""
    incidents = sorted({s.incident_id for s in side.subs})
    order = np.random.default_rng(seed).permutation(len(incidents))
    first = {incidents[i] for i in order[: len(incidents) // 2]}
    a = {s.key for s in side.subs if s.incident_id in first}
    b = {s.key for s in side.subs} - a
    return side.subset(f"{side.name} (half A)", a), side.subset(f"{side.name} (half B)", b)


def pairs(
    real_all: Side, hand: Side, split: dict[str, list[str]], seed: int
) -> list[tuple[Side, Side]]:
    def of(name: str, test: Any) -> Side:
        return real_all.subset(name, {k for k, s in real_all.sources.items() if test(s)})

    fam = {f: of(f, lambda s, f=f: family(s) == f) for f in FAMILIES}
    tune = of("real, tune split", lambda s: s in split["tune"])
    test = of("real, test split", lambda s: s in split["test"])
    rows = of("forge+openrca (label rows)", lambda s: family(s) in ("forge", "openrca"))
    prose = of(
        "aiopslab+sregym+itbench (prose)", lambda s: family(s) in ("aiopslab", "sregym", "itbench")
    )
    hand_test = hand.subset(
        "hand-written test half", {k for k, h in hand.sources.items() if h == "test"}
    )
    hand_tune = hand.subset(
        "hand-written tune half", {k for k, h in hand.sources.items() if h == "tune"}
    )
    return [
        (real_all, hand_test),
        (hand_tune, test),
        (tune, test),
        (fam["forge"], fam["openrca"]),
        (fam["openrca"], fam["forge"]),
        (fam["aiopslab"], fam["sregym"]),
        (fam["sregym"], fam["aiopslab"]),
        (rows, prose),
        halves(real_all, seed),
        halves(fam["aiopslab"], seed),
        halves(hand_test, seed),
    ]


# --- one pair --------------------------------------------------------------------------------


def judged(side: Side, rubric: Any, judge: Any) -> Any:
    return evaluate(
        side.specs, side.subs, rubric, judge, options=EvalOptions(granularity="submission")
    )


def pair_rows(
    calibrate_on: Side,
    apply_to: Side,
    rubric: Any,
    targets: list[float],
    args: argparse.Namespace,
) -> list[dict[str, Any]]:
    result = judged(calibrate_on, rubric, RulesJudge())
    rubric_hash, shape = rubric_of([result], [calibrate_on.name])
    fitted = fit_stages(
        [stage_of(result, calibrate_on.name)],
        calibrate_on.labels,
        shape,
        fit_share=args.fit_share,
        seed=args.seed,
    )
    rows = []
    for target in targets:
        row: dict[str, Any] = {
            "calibrate_on": calibrate_on.name,
            "apply_to": apply_to.name,
            "target": target,
            "n_calibration_cases": len(calibrate_on.subs),
            "n_cases": len(apply_to.subs),
        }
        try:
            calibration = choose_thresholds(
                fitted, calibrate_on.labels, rubric_hash, shape, target=target, alpha=args.alpha
            )
        except CalibrationRefused as exc:
            row.update(outcome="refused", refused=exc.message)
            rows.append(row)
            continue
        stage = calibration.stages[0]
        run = judged(apply_to, rubric, CascadeJudge([RulesJudge()], calibration))
        summary = run.cascade
        agreement, n = answered_agreement(run, apply_to.labels)
        shift = summary.shift_test()
        flagged = shift is not None and shift.shifted
        held = agreement is not None and agreement >= target
        row.update(
            threshold=stage.threshold,
            auroc=stage.ranking.auroc if stage.ranking else None,
            selects=stage.selects,
            calibration_coverage=calibration.coverage,
            coverage=summary.coverage,
            agreement=agreement,
            n_labelled_answered=n,
            held=held,
            shift=flagged,
            differing=[f.feature for f in shift.features if f.shifted] if shift else [],
            text_only=text_only_shift(calibration, run),
            established=summary.guarantee_established,
            check=spot_check(run, apply_to, calibration, args),
            outcome=("holds, flagged" if held else "flagged")
            if flagged
            else ("holds" if held else "SILENT FAILURE"),
        )
        rows.append(row)
    return rows


def text_only_shift(calibration: Any, result: Any) -> bool:
    """The shift check as if neither side recorded its format or agent: whether the run's
    answers, confidence and diagnosis lengths alone differ from the calibration set's."""
    profile = calibration.profile
    blank = {"format": None, "agent": None}
    cases = [c.model_copy(update=blank) for c in profile.cases]
    answers = run_answers(result, profile.judge)
    run = profile_cases([c for c in result.cases if (c.incident_id, c.trial) in answers], answers)
    shifted = compare(
        profile.model_copy(update={"cases": cases}),
        [c.model_copy(update=blank) for c in run],
    )
    return shifted.shifted


def answered_agreement(result: Any, labels: dict[Item, str]) -> tuple[float | None, int]:
    pairs = [(j.answer, labels.get(j.key)) for j in result.judgments if j.answer is not None]
    pairs = [(a, b) for a, b in pairs if b is not None]
    return (sum(a == b for a, b in pairs) / len(pairs) if pairs else None), len(pairs)


def spot_check(result: Any, side: Side, calibration: Any, args: argparse.Namespace) -> str:
    """`judge calibrate --check` with a few of the side's labelled cases, drawn at random."""
    cases: dict[tuple[str, str], dict[str, str]] = {}
    for (incident, trial, question), answer in side.labels.items():
        cases.setdefault((incident, trial), {})[question] = answer
    keys = sorted(cases)
    if not keys:
        return "no labels"
    rng = np.random.default_rng(args.seed)
    chosen = [
        keys[i] for i in rng.choice(len(keys), min(args.check_cases, len(keys)), replace=False)
    ]
    labels = LabelSet(
        source=f"{len(chosen)} labelled cases",
        labeller=LABELLER,
        cases=[CaseLabels(incident_id=i, trial=t, answers=cases[(i, t)]) for i, t in chosen],  # type: ignore[arg-type]
    )
    check = check_guarantee(result, labels, calibration)
    more = (
        f", ~{check.more_labels} more"
        if check.verdict == "not established" and check.more_labels
        else ""
    )
    return f"{check.verdict}{more}"


# --- confidence that ranks -------------------------------------------------------------------


def confidence_rows(
    result: Any, side: Side, split: dict[str, list[str]], chosen: dict[str, str]
) -> list[dict[str, Any]]:
    """The rules judge's confidence per source, family and split: AUROC and ECE, raw and then
    through maps fitted on the other split (by question and answer, as `judge calibrate` fits
    them; by question alone, as it did before), so no answer is scored by a map it fitted."""
    points: list[Point] = []
    split_of = {s: name for name, sources in split.items() for s in sources}
    for j in result.judgments:
        label = side.labels.get(j.key)
        if label is None or j.answer is None or j.confidence_score is None:
            continue
        source = side.sources[(j.incident_id, j.trial)]
        points.append(
            Point(
                source,
                split_of[source],
                j.incident_id,
                j.question_id,
                j.answer,
                j.confidence_score,
                j.answer == label,
            )
        )
    chosen.update(_map_by_other_split(points))
    groups: dict[str, list[Point]] = {}
    for point in points:
        for key in (
            point.source,
            f"family {family(point.source)}",
            f"{point.split} split (pooled)",
        ):
            groups.setdefault(key, []).append(point)
    rows = []
    for key, group in groups.items():
        y = [p.agreed for p in group]
        row: dict[str, Any] = {
            "scope": key,
            "split": split_of.get(key, ""),
            "n": len(group),
            "agreement": float(np.mean(y)),
        }
        for kind in ("raw", "by_question", "by_answer", "chosen"):
            x = [getattr(p, kind) for p in group]
            ranking = rank_confidence(x, y, [p.incident for p in group], seed=0)
            row[kind] = {
                "auroc": ranking.auroc,
                "ci_low": ranking.ci_low,
                "ci_high": ranking.ci_high,
                "ece": reliability_diagram(x, y).ece,
            }
        rows.append(row)
    order = {"tune": 0, "test": 1, "": 2}
    return sorted(
        rows,
        key=lambda r: (
            r["scope"].startswith(("family", "tune", "test")),
            order[r["split"]],
            r["scope"],
        ),
    )


@dataclass
class Point:
    """One labelled answer of the rules judge, its confidence raw and mapped."""

    source: str
    split: str
    incident: str
    question: str
    answer: str
    raw: float
    agreed: bool
    by_question: float = 0.0
    by_answer: float = 0.0
    chosen: float = 0.0


def _map_by_other_split(points: list[Point]) -> dict[str, str]:
    """Each split's answers mapped by maps fitted on the other split's answers; the kind of
    maps chosen on each split."""
    kinds = {}
    for this, other in (("tune", "test"), ("test", "tune")):
        train = [p for p in points if p.split == other]
        mine = [p for p in points if p.split == this]
        args = (
            [p.raw for p in train],
            [p.agreed for p in train],
            ["rules"] * len(train),
            [p.question for p in train],
        )
        by_question = fit_confidence_calibration(*args)
        values = [p.answer for p in train]
        by_answer = fit_confidence_calibration(*args, answers=values)
        choice = choose_map_kind(*args, values, [p.incident for p in train])
        kinds[other] = choice.kind
        chosen = fit_confidence_calibration(*args, answers=values, kind=choice.kind)
        x = [p.raw for p in mine]
        judges = ["rules"] * len(mine)
        questions = [p.question for p in mine]
        answers = [p.answer for p in mine]
        for p, q, a, c in zip(
            mine,
            by_question.predict(x, judges, questions),
            by_answer.predict(x, judges, questions, answers),
            chosen.predict(x, judges, questions, answers),
            strict=True,
        ):
            p.by_question, p.by_answer, p.chosen = float(q), float(a), float(c)
    return kinds


# --- printing --------------------------------------------------------------------------------


def _f(value: Any, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def pair_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| calibrate on → apply to | cases | target | AUROC (cal.) | coverage cal. / run | agreement on labelled answers (n) | shift flagged | on text alone | --check on a few labels | outcome |",
        "|---|---:|---:|---:|---:|---:|---|---|---|---|",
    ]
    for r in rows:
        pair = f"{r['calibrate_on']} → {r['apply_to']}"
        cases = f"{r['n_calibration_cases']} → {r['n_cases']}"
        if r["outcome"] == "refused":
            lines.append(
                f"| {pair} | {cases} | {r['target']:g} | | refused | | | | | refused: {r['refused'][:90]}… |"
            )
            continue
        shift = (
            ("yes: " + ", ".join(r["differing"][:4]) + ("…" if len(r["differing"]) > 4 else ""))
            if r["shift"]
            else "no"
        )
        lines.append(
            f"| {pair} | {cases} | {r['target']:g} | {_f(r['auroc'])} | "
            f"{_f(r['calibration_coverage'])} / {_f(r['coverage'])} | "
            f"{_f(r['agreement'], 3)} ({r['n_labelled_answered']}) | {shift} | "
            f"{'yes' if r['text_only'] else 'no'} | {r['check']} | {r['outcome']} |"
        )
    return "\n".join(lines)


def confidence_table(rows: list[dict[str, Any]], chosen: dict[str, str]) -> str:
    kinds = f"tune's {chosen.get('tune')} for test, test's {chosen.get('test')} for tune"
    lines = [
        "| source / scope | split | answers | agreement | AUROC raw [95% CI] | ECE raw "
        "| AUROC mapped by question | AUROC mapped by question and answer [95% CI] "
        f"| ECE mapped by answer | AUROC mapped as chosen ({kinds}) [95% CI] | ECE as chosen |",
        "|---|---|---:|---:|---|---:|---:|---|---:|---|---:|",
    ]
    for r in rows:
        raw, by_question, by_answer, mine = r["raw"], r["by_question"], r["by_answer"], r["chosen"]
        lines.append(
            f"| {r['scope']} | {r['split']} | {r['n']} | {r['agreement']:.3f} | {_auroc(raw)} | "
            f"{raw['ece']:.3f} | {_f(by_question['auroc'])} | {_auroc(by_answer)} | "
            f"{by_answer['ece']:.3f} | {_auroc(mine)} | {mine['ece']:.3f} |"
        )
    return "\n".join(lines)


def _auroc(cell: dict[str, Any]) -> str:
    if cell["auroc"] is None:
        return "undefined"
    return f"{cell['auroc']:.2f} [{_f(cell['ci_low'])}, {_f(cell['ci_high'])}]"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    targets = [float(t) for t in args.targets.split(",")]
    rubric = load_rubric("sregym-v3")
    try:
        real_all, split, missing = real_side(
            rubric, None if args.no_cache else args.cache, args.corpus
        )
        hand = handwritten_side(rubric)
    except (InputError, LabelFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"{len(real_all.subs)} real-agent cases ({missing} without text), "
        f"{len(hand.subs)} hand-written cases (tune and test halves); labeller {LABELLER} "
        f"(the project's labels); alpha {args.alpha}, fit share {args.fit_share}, seed {args.seed}\n"
    )
    rows = []
    for calibrate_on, apply_to in pairs(real_all, hand, split, args.seed):
        rows += pair_rows(calibrate_on, apply_to, rubric, targets, args)
    print(pair_table(rows))
    silent = [r for r in rows if r["outcome"] == "SILENT FAILURE"]
    print(f"\n{len(rows)} rows: {len(silent)} silent failures.\n")
    chosen: dict[str, str] = {}
    confidence = confidence_rows(judged(real_all, rubric, RulesJudge()), real_all, split, chosen)
    print(
        "The rules judge's confidence for 'agrees with labeller a' (incidents resampled), raw "
        "and through maps fitted on the other split:\n"
    )
    print(confidence_table(confidence, chosen))
    if args.json:
        everything = {"pairs": rows, "confidence": confidence, "map_kinds": chosen}
        args.json.write_text(
            json.dumps(everything, indent=2, default=str) + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
