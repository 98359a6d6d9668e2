"""How far a judge agrees with the project's labels on the validity sets (`benchmarks/validity/`).

    python benchmarks/validity.py [--set real|handwritten|all]
                                  [--split test|tune|all] [--source NAME ...]
                                  [--cache DIR | --no-cache] [--corpus DIR]
                                  [--half tune|test|dev|all] [--labels-glob GLOB ...] [--structured]
                                  [--judge-model MODEL ...] [--api-base URL]
                                  [--granularity dimension|submission]
                                  [--store S.sqlite] [--result-file R.json]
                                  [--json PATH] [--sregym-bench]

Two sets, printed in this order (`--set` picks one):
- real agents' diagnoses (`validity/real/`, loaded by `validity_real.py`): published agents' text
  with each benchmark's own ground truth, split by source; printed test split first, then tune,
  per source and pooled, then labeller a against labeller b on the cases both labelled;
- the hand-written halves (`validity/cases/<half>.yaml`), as before: one `IncidentSpec` per
  incident from the ground-truth text alone (`--structured`: through the SREGym adapter) or, for
  `spec_path`, the ITBench adapter.

The judge runs through the public API: the offline `rules` judge unless `--judge-model` names
models (`JUDGE_MODEL` is deliberately not read, so the benchmark never calls a paid model unasked).
A labeller labels the 9 questions only; their verdict is derived from those labels with the
rubric's weights and threshold (composite = sum of weight x share of Yes, pass >= threshold).
Printed against each labeller: Cohen's kappa per question, per dimension (its questions pooled),
over all questions and on the verdict, each with a 95% cluster-bootstrap CI (incidents
resampled); verdict accuracy; false passes and false fails; composite MAE; the judge's unscored
rate; and labeller against labeller on the cases both labelled (the ceiling). The labels are the
project's (helper sessions following a written guide), not labels by people outside the project.
`--json` writes every number. Exit 2 on a bad input file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, TextIO

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

REPO = Path(__file__).resolve().parents[1]
for _path in (REPO, REPO / "benchmarks"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import validity_real as real  # noqa: E402

from agreement import (  # noqa: E402
    ClusterBootstrap,
    Estimate,
    LabelFileError,
    PairStats,
    RatingTable,
    agreement_report,
    read_labels,
    read_result,
)
from agreement.ratings import VERDICT, ItemKey, RaterLabels  # noqa: E402
from agreement.report import AgreementReport  # noqa: E402
from agreement.stats import CONFIDENCE  # noqa: E402
from ground_truth import IncidentSpec, InputError, Submission, load_specs  # noqa: E402

VALIDITY = REPO / "benchmarks" / "validity"
SREGYM_BENCH = REPO / "tests" / "fixtures" / "agreement" / "judge_bench_data.96a9057e.yaml"
HALVES = ("tune", "test")
# The dev half holds new diagnoses of tune root causes (for the rules judge's author): it may share
# root causes with tune, never with test.
DEV = "dev"
MAY_SHARE = frozenset({frozenset({DEV, "tune"})})
KINDS = (
    "correct",
    "victim",
    "wrong_mechanism",
    "over_scoped",
    "under_scoped",
    "vague",
    "no_fault",
    "wrong_namespace",
    "all_components",
    "keyword_salad",
    "injection",
    "partial",
)
EXIT_OK, EXIT_INPUT = 0, 2


class Case(BaseModel):
    """One entry of `cases/<half>.yaml`: a hand-written diagnosis of one incident."""

    model_config = ConfigDict(extra="forbid")

    case: str = Field(min_length=1)
    incident_id: str = Field(min_length=1)
    kind: Literal[KINDS]  # type: ignore[valid-type]
    diagnosis: str = Field(min_length=1)
    ground_truth: str | None = None
    spec_path: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Case:
        if (self.ground_truth is None) == (self.spec_path is None):
            raise ValueError(
                "give exactly one of ground_truth (SREGym text) and spec_path (ITBench)"
            )
        return self


# --- cases -> specs and submissions ----------------------------------------------------------


def load_cases(path: Path) -> list[Case]:
    """The cases of one file; a bad entry raises `InputError` naming the file and field."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError(path, f"cannot read the cases: {exc}") from exc
    if not isinstance(data, list):
        raise InputError(path, "expected a YAML list of cases")
    cases = []
    for i, entry in enumerate(data):
        try:
            cases.append(Case.model_validate(entry))
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"])
            field = f"[{i}].{where}" if where else f"[{i}]"
            raise InputError(path, error["msg"], field=field) from exc
    _check_consistent(path, cases)
    return cases


def _check_consistent(path: Path, cases: list[Case]) -> None:
    """Case ids are unique; every case of one incident carries the same spec."""
    ids: dict[str, int] = {}
    specs: dict[str, tuple[str | None, str | None]] = {}
    for i, case in enumerate(cases):
        if case.case in ids:
            raise InputError(path, f"{case.case!r} repeats entry [{ids[case.case]}]", f"[{i}].case")
        ids[case.case] = i
        spec = (case.ground_truth, case.spec_path)
        if specs.setdefault(case.incident_id, spec) != spec:
            raise InputError(
                path,
                f"incident {case.incident_id} has another ground_truth/spec_path in an earlier case",
                f"[{i}].ground_truth" if case.ground_truth else f"[{i}].spec_path",
            )


def load_halves(root: Path, halves: Sequence[str], out: TextIO) -> dict[str, list[Case]]:
    """`{half: cases}`; a missing half is skipped with a message."""
    loaded = {}
    for half in halves:
        path = root / "cases" / f"{half}.yaml"
        if not path.is_file():
            print(f"note: {path} does not exist; skipping the {half} half", file=out)
            continue
        loaded[half] = load_cases(path)
    return loaded


def build_specs(
    cases: Iterable[Case], structured: bool = False, base: Path = REPO
) -> list[IncidentSpec]:
    """One spec per incident (`load_cases` checked that its cases agree on it)."""
    texts: dict[str, str] = {}
    paths: dict[str, str] = {}
    for case in cases:
        if case.ground_truth is not None:
            texts.setdefault(case.incident_id, case.ground_truth)
        elif case.spec_path is not None:
            paths.setdefault(case.incident_id, case.spec_path)
    specs = (
        _structured_specs(texts)
        if structured
        else [IncidentSpec(id=incident, ground_truth=text) for incident, text in texts.items()]
    )
    return specs + [_itbench_spec(incident, path, base) for incident, path in paths.items()]


def _structured_specs(texts: dict[str, str]) -> list[IncidentSpec]:
    """The SREGym adapter's specs (mechanism, fix, ... derived from the text), as `judge eval` sees them."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "root_causes.json"
        path.write_text(json.dumps(texts), encoding="utf-8")
        return load_specs(path, format="sregym")


def _itbench_spec(incident: str, spec_path: str, base: Path) -> IncidentSpec:
    path = Path(spec_path) if Path(spec_path).is_absolute() else base / spec_path
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore"
        )  # the fixtures' v1/v2 and alias notes are known and harmless
        specs = load_specs(path, format="itbench")
    if len(specs) != 1:
        raise InputError(
            path, f"expected one ITBench scenario, found {len(specs)}", field="spec_path"
        )
    return specs[0].model_copy(update={"id": incident})


def build_submissions(cases: Iterable[Case]) -> list[Submission]:
    return [
        Submission(incident_id=c.incident_id, trial=c.case, diagnosis=c.diagnosis) for c in cases
    ]


# --- the judge -------------------------------------------------------------------------------


def make_judge(models: list[str] | None, api_base: str | None, timeout: float) -> Any:
    """The CLI's judge construction: rules by default, an `llm` judge or panel for models,
    `replay:STORE` for the answers a store holds (a real model's run, measured again offline)."""
    from judge.judges import build_judge

    if not models or all(m == "rules" for m in models):
        return build_judge(models)
    if any(m == "replay" or m.startswith("replay:") for m in models):
        from judge.cli.judges import replay_judge

        return replay_judge(models, None)
    key = os.environ.get("JUDGE_API_KEY")
    return build_judge(models, api_base=api_base, api_key=key, timeout=timeout)


def run_judge(
    specs: list[IncidentSpec],
    submissions: list[Submission],
    judge: Any,
    concurrency: int,
    granularity: str = "dimension",
    store: Path | None = None,
) -> Any:
    """The judge's run over the cases; with `store`, answers already there are not asked again
    (a real model's run of an hour or more can be stopped and resumed)."""
    from judge import EvalOptions, evaluate

    options = EvalOptions(max_concurrent=concurrency, granularity=granularity, store=store)
    return evaluate(specs, submissions, "sregym-v3", judge, options=options)


# --- labels ----------------------------------------------------------------------------------


def label_files(root: Path, halves: Sequence[str], globs: Sequence[str] | None) -> list[Path]:
    patterns = list(globs) if globs else [f"labels/{half}.*.csv" for half in halves]
    found: dict[Path, None] = {}
    for pattern in patterns:
        base, rest = (
            (Path("/"), pattern.lstrip("/")) if Path(pattern).is_absolute() else (root, pattern)
        )
        found.update(dict.fromkeys(sorted(base.glob(rest))))
    return list(found)


def read_people(files: Sequence[Path], rubric: Any) -> RatingTable:
    """People's question labels; `labels/<half>.<who>.csv` is labeller `<who>` unless the sheet says."""
    table = RatingTable()
    for path in files:
        who = path.name.split(".")[-2] if path.name.count(".") >= 2 else path.stem
        table.extend(read_labels(path, annotator=who))
    for rater in table.raters:
        derive_verdicts(rater, rubric)
    return table


def derive_verdicts(rater: RaterLabels, rubric: Any) -> None:
    """A labeller's composite and verdict from their question labels, as the judge scores its own.

    A case with an unlabelled question gets no composite and no verdict (never a guessed one).
    """
    by_case: dict[tuple[str, str], dict[str, str | None]] = {}
    for key, answer in rater.labels["question"].items():
        by_case.setdefault((key.incident_id, key.trial), {})[key.unit] = answer
    for (incident, trial), answers in by_case.items():
        composite = labelled_composite(answers, rubric)
        rater.composites[(incident, trial)] = composite
        verdict = None if composite is None else composite >= rubric.scoring.threshold - 1e-9
        rater.labels["verdict"][ItemKey(incident, trial, VERDICT)] = (
            None if verdict is None else ("Yes" if verdict else "No")
        )
        for question, dimension in _question_dimensions(rubric).items():
            if question in answers:
                rater.dimension_of.setdefault(question, dimension)


def labelled_composite(answers: dict[str, str | None], rubric: Any) -> float | None:
    total = 0.0
    for dimension in rubric.dimensions:
        labels = [answers.get(q.id) for q in dimension.questions]
        if any(label is None for label in labels):
            return None
        total += rubric.scoring.weights[dimension.id] * labels.count("Yes") / len(labels)
    return total


def _question_dimensions(rubric: Any) -> dict[str, str]:
    return {q.id: d.id for d in rubric.dimensions for q in d.questions}


# --- the numbers -----------------------------------------------------------------------------


class Kappa(BaseModel):
    """Judge (or person) A against person B on one unit: a question, a dimension, all, verdict."""

    unit: str
    n: int
    n_incidents: int
    kappa: Estimate
    agreement: Estimate


class Comparison(BaseModel):
    rater: str
    reference: str
    cases: int = Field(description="Cases with a verdict from both.")
    questions: list[Kappa]
    dimensions: list[Kappa] = Field(description="Each dimension's questions pooled.")
    pooled: Kappa = Field(description="All questions pooled.")
    verdict: Kappa
    verdict_accuracy: Estimate
    false_pass: int = Field(description="Cases the rater passes and the reference fails.")
    false_fail: int = Field(description="Cases the rater fails and the reference passes.")
    composite_mae: Estimate
    rater_pass_rate: float | None
    reference_pass_rate: float | None


class BenchResult(BaseModel):
    """The judge on SREGym's 29 labelled items (verdict labels only)."""

    items: int
    verdict: Kappa
    judge_pass_rate: float | None
    label_pass_rate: float | None
    unscored_rate: float | None


class ValidityReport(BaseModel):
    halves: list[str]
    judge: str
    rubric: str
    threshold: float
    cases: int
    incidents: int
    kinds: dict[str, int]
    questions_asked: int
    unscored: int
    unscored_rate: float | None
    provider_errors: dict[str, int] = Field(description="Calls that failed for good, by kind.")
    retried_errors: dict[str, int] = Field(description="Every failed attempt, retried ones too.")
    complete: bool
    labellers: list[str]
    vs_labellers: list[Comparison]
    human_ceiling: list[Comparison]
    unlabelled_cases: dict[str, list[str]] = Field(
        description="Per labeller, cases of the run with no complete set of labels."
    )
    bootstrap_B: int
    seed: int
    confidence: float = CONFIDENCE


def _kappa(p: PairStats, unit: str) -> Kappa:
    return Kappa(unit=unit, n=p.n, n_incidents=p.n_incidents, kappa=p.kappa, agreement=p.agreement)


def _pair(
    report: AgreementReport, level: str, a: str, b: str, unit: str | None = None
) -> PairStats:
    if unit is None:
        return report.level(level).pair(a, b)  # type: ignore[arg-type]
    for entry in report.level(level).breakdown:  # type: ignore[arg-type]
        if entry.unit == unit:
            return next(p for p in entry.pairwise if {p.rater_a, p.rater_b} == {a, b})
    raise KeyError(unit)


def compare(
    report: AgreementReport,
    table: RatingTable,
    a: str,
    b: str,
    rubric: Any,
    bootstrap: ClusterBootstrap,
) -> Comparison:
    """Rater `a` against reference `b`, every number from the one agreement report."""
    units = _question_dimensions(rubric)
    present = set(table.units("question"))
    verdict = _pair(report, "verdict", a, b)
    c = verdict.confusion
    passes_only_a, passes_only_b = (
        (c.yes_no, c.no_yes) if verdict.rater_a == a else (c.no_yes, c.yes_no)
    )
    return Comparison(
        rater=a,
        reference=b,
        cases=verdict.n,
        questions=[_kappa(_pair(report, "question", a, b, q), q) for q in units if q in present],
        dimensions=[
            _kappa(_pair(report, "question", a, b, d.id), d.id)
            for d in rubric.dimensions
            if any(q.id in present for q in d.questions)
        ],
        pooled=_kappa(_pair(report, "question", a, b), "all questions"),
        verdict=_kappa(verdict, VERDICT),
        verdict_accuracy=verdict.agreement,
        false_pass=passes_only_a,
        false_fail=passes_only_b,
        composite_mae=composite_mae(table[a], table[b], bootstrap),
        rater_pass_rate=verdict.yes_rate_a if verdict.rater_a == a else verdict.yes_rate_b,
        reference_pass_rate=verdict.yes_rate_b if verdict.rater_a == a else verdict.yes_rate_a,
    )


def composite_mae(a: RaterLabels, b: RaterLabels, bootstrap: ClusterBootstrap) -> Estimate:
    """Mean |composite a - composite b| over cases both scored, with a cluster-bootstrap CI."""
    import numpy as np

    pairs = [
        (key[0], abs(ca - cb))
        for key, ca in sorted(a.composites.items())
        if ca is not None and (cb := b.composites.get(key)) is not None
    ]
    if not pairs:
        return Estimate(undefined="no case has a composite from both")
    errors = np.array([[e, 1.0] for _, e in pairs])
    value = float(errors[:, 0].mean())
    sums = bootstrap.replicate([incident for incident, _ in pairs], errors)
    with np.errstate(divide="ignore", invalid="ignore"):
        replicates = sums[:, 0] / sums[:, 1]
    replicates = replicates[np.isfinite(replicates)]
    if len({i for i, _ in pairs}) < 2 or replicates.size < 2:
        return Estimate(value=value, ci_note="fewer than two incidents: no bootstrap interval")
    low, high = np.quantile(replicates, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2])
    return Estimate(value=value, ci_low=float(low), ci_high=float(high))


def unscored_counts(result: Any, wanted: set[tuple[str, str]] | None = None) -> tuple[int, int]:
    """(questions asked, questions left unscored) by the result's own judge, on the cases
    `wanted` (default: all)."""
    own = result.config.get("judge", {}).get("label")
    mine = [
        j
        for j in result.judgments
        if (not own or j.judge == own) and (wanted is None or (j.incident_id, j.trial) in wanted)
    ]
    return len(mine), sum(j.answer is None for j in mine)


def measure(
    result: Any,
    cases: Sequence[Case],
    people: RatingTable,
    rubric: Any,
    halves: Sequence[str],
    B: int,
    seed: int,
) -> ValidityReport:
    judge_table = read_result(result.model_dump(mode="json"))
    judge_name = judge_table.names[0]
    wanted = {(c.incident_id, c.case) for c in cases}
    table = RatingTable()
    table.extend(judge_table)
    table.extend(_restricted(people, wanted))
    names = [r.name for r in table.raters if r.kind == "human"]
    report = agreement_report(table, levels=("question", "verdict"), B=B, seed=seed)
    bootstrap = ClusterBootstrap(table.incidents(), B=B, seed=seed)
    asked, unscored = unscored_counts(result)
    kinds: dict[str, int] = {}
    for case in cases:
        kinds[case.kind] = kinds.get(case.kind, 0) + 1
    return ValidityReport(
        halves=list(halves),
        judge=judge_name,
        rubric=rubric.name or "sregym-v3",
        threshold=rubric.scoring.threshold,
        cases=len(cases),
        incidents=len({c.incident_id for c in cases}),
        kinds=kinds,
        questions_asked=asked,
        unscored=unscored,
        unscored_rate=unscored / asked if asked else None,
        provider_errors=dict(result.errors),
        retried_errors=dict(result.attempt_errors),
        complete=result.complete,
        labellers=names,
        vs_labellers=[compare(report, table, judge_name, p, rubric, bootstrap) for p in names],
        human_ceiling=[
            compare(report, table, a, b, rubric, bootstrap)
            for i, a in enumerate(names)
            for b in names[i + 1 :]
        ],
        unlabelled_cases={p: _unlabelled(table[p], wanted) for p in names},
        bootstrap_B=B,
        seed=seed,
    )


def _restricted(raters: RatingTable, wanted: set[tuple[str, str]]) -> list[RaterLabels]:
    """Every rater's answers on the cases `wanted` only (a sheet may cover both halves)."""
    out = []
    for rater in raters.raters:
        kept = RaterLabels(
            name=rater.name, kind=rater.kind, source=rater.source, rubric=rater.rubric
        )
        for level, labels in rater.labels.items():
            kept.labels[level] = {
                k: v for k, v in labels.items() if (k.incident_id, k.trial) in wanted
            }
        kept.composites = {k: v for k, v in rater.composites.items() if k in wanted}
        kept.dimension_scores = {
            k: v for k, v in rater.dimension_scores.items() if (k.incident_id, k.trial) in wanted
        }
        kept.dimension_of = dict(rater.dimension_of)
        out.append(kept)
    return out


def _unlabelled(rater: RaterLabels, wanted: set[tuple[str, str]]) -> list[str]:
    return sorted(
        trial for incident, trial in wanted if rater.composites.get((incident, trial)) is None
    )


def sregym_bench(
    judge: Any, concurrency: int, B: int, seed: int, path: Path = SREGYM_BENCH
) -> BenchResult:
    """The same judge on SREGym's 29 items, against the SREGym developers' verdicts."""
    from agreement.sregym_bench import load_bench, to_ratings, to_specs, to_submissions

    items = load_bench(path)
    specs = [IncidentSpec.model_validate(s) for s in to_specs(items)]
    subs = [Submission.model_validate(s) for s in to_submissions(items)]
    result = run_judge(specs, subs, judge, concurrency)
    table = read_result(result.model_dump(mode="json"))
    table.extend(to_ratings(items))
    report = agreement_report(table, levels=("verdict",), B=B, seed=seed, breakdown=False)
    pair = report.level("verdict").pairwise[0]
    asked, unscored = unscored_counts(result)
    return BenchResult(
        items=len(items),
        verdict=_kappa(pair, VERDICT),
        judge_pass_rate=pair.yes_rate_a,
        label_pass_rate=pair.yes_rate_b,
        unscored_rate=unscored / asked if asked else None,
    )


# --- the real-agent set ----------------------------------------------------------------------

LABELLED_BY = (
    "labels by the project's labellers a and b (helper sessions following"
    " benchmarks/validity/real/GUIDE.md), not by people outside the project"
)


class Numbers(BaseModel):
    """The judge on one source's cases, or on a split's sources pooled."""

    source: str
    formats: list[str]
    cases: int = Field(description="Cases judged (their text was available).")
    incidents: int
    questions_asked: int
    unscored: int
    unscored_rate: float | None
    vs_labellers: list[Comparison] = Field(description="Judge vs each labeller with labels here.")
    unlabelled: dict[str, int] = Field(
        description="Per labeller of the set, cases judged here that they have not labelled."
    )


class SplitNumbers(BaseModel):
    split: str
    sources: list[Numbers]
    pooled: Numbers


class Ceiling(BaseModel):
    """Labeller against labeller on the cases both labelled, in one scope (a split, or pooled)."""

    scope: str
    comparison: Comparison | None


class RealReport(BaseModel):
    judge: str
    rubric: str
    threshold: float
    labellers: list[str]
    labelled_by: str = LABELLED_BY
    splits: list[SplitNumbers]
    ceiling: list[Ceiling]
    without_labels: dict[str, list[str]] = Field(
        description="Per labeller, the selected sources they have no label sheet for."
    )
    unlabelled_sources: list[str] = Field(description="Selected sources nobody has labelled yet.")
    missing_texts: list[real.MissingText] = Field(
        description="Cases left out because their text is not available, with the reason."
    )
    rebuild_command: str = real.REBUILD_COMMAND
    texts_from: dict[str, int] = Field(description="Cases by where their text came from.")
    judged_as_text: dict[str, str] = Field(
        description="ITBench cases the ITBench adapter does not read as an agent output (why)."
    )
    provider_errors: dict[str, int]
    retried_errors: dict[str, int]
    complete: bool
    bootstrap_B: int
    seed: int
    confidence: float = CONFIDENCE


class RealRun(BaseModel):
    """What the real-agent set's run needs, loaded before any judge call."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    selection: dict[str, list[str]]
    cases: list[real.RealCase]
    loaded: list[real.Loaded]
    missing: list[real.MissingText]
    specs: list[IncidentSpec]
    submissions: list[Submission]
    judged_as_text: dict[str, str]
    people: Any
    sheets: dict[str, dict[str, Path]]


def prepare_real(
    root: Path,
    splits: Sequence[str],
    sources: Sequence[str] | None,
    cache: Path | None,
    corpus: Path,
    rubric: Any,
) -> RealRun:
    """Cases, texts, specs, submissions and labels of the selected sources; InputError when a
    file is bad."""
    selection = real.select_sources(real.read_split(root), splits, sources)
    chosen = [s for names in selection.values() for s in names]
    cases = [c for s in chosen for c in real.load_source(root / "cases" / f"{s}.yaml")]
    loaded, missing = real.find_texts(cases, cache, corpus)
    if not loaded:
        raise InputError(root / "cases", "no selected case has its text: nothing to judge")
    specs = real.build_specs([item.case for item in loaded], corpus)
    submissions, as_text = real.build_submissions(loaded)
    sheets = real.label_sheets(root, chosen)
    files = [path for by_who in sheets.values() for path in by_who.values()]
    return RealRun(
        selection=selection,
        cases=cases,
        loaded=loaded,
        missing=missing,
        specs=specs,
        submissions=submissions,
        judged_as_text=as_text,
        people=read_people(files, rubric),
        sheets=sheets,
    )


def measure_real(run: RealRun, result: Any, rubric: Any, B: int, seed: int) -> RealReport:
    judge_table = read_result(result.model_dump(mode="json"))
    judge_name = judge_table.names[0]
    raters = RatingTable()
    raters.extend(judge_table)
    raters.extend(run.people)
    labellers = sorted(r.name for r in run.people.raters)
    keys: dict[str, set[tuple[str, str]]] = {}
    formats: dict[str, set[str]] = {}
    for item in run.loaded:
        keys.setdefault(item.case.source, set()).add((item.case.incident_id, item.case.case))
    for case in run.cases:
        formats.setdefault(case.source, set()).add(case.format)

    def numbers(name: str, sources: Sequence[str]) -> Numbers:
        wanted = set().union(*(keys.get(s, set()) for s in sources))
        kinds = sorted(set().union(*(formats.get(s, set()) for s in sources)))
        return _numbers(name, kinds, wanted, raters, judge_name, result, rubric, B, seed)

    splits = [
        SplitNumbers(
            split=split,
            sources=[numbers(s, [s]) for s in sources],
            pooled=numbers("pooled", sources),
        )
        for split, sources in run.selection.items()
    ]
    scopes = {split: sources for split, sources in run.selection.items()}
    if len(scopes) > 1:
        scopes["pooled"] = [s for sources in run.selection.values() for s in sources]
    chosen = [s for sources in run.selection.values() for s in sources]
    places: dict[str, int] = {}
    for item in run.loaded:
        places[item.place] = places.get(item.place, 0) + 1
    return RealReport(
        judge=judge_name,
        rubric=rubric.name or "sregym-v3",
        threshold=rubric.scoring.threshold,
        labellers=labellers,
        splits=splits,
        ceiling=[
            Ceiling(
                scope=scope,
                comparison=_ceiling(
                    run.people,
                    set().union(*(keys.get(s, set()) for s in names)),
                    labellers,
                    rubric,
                    B,
                    seed,
                ),
            )
            for scope, names in scopes.items()
        ],
        without_labels={
            who: [s for s in chosen if who not in run.sheets.get(s, {})] for who in labellers
        },
        unlabelled_sources=[s for s in chosen if s not in run.sheets],
        missing_texts=run.missing,
        texts_from=places,
        judged_as_text=run.judged_as_text,
        provider_errors=dict(result.errors),
        retried_errors=dict(result.attempt_errors),
        complete=result.complete,
        bootstrap_B=B,
        seed=seed,
    )


def _numbers(
    name: str,
    formats: list[str],
    wanted: set[tuple[str, str]],
    raters: RatingTable,
    judge_name: str,
    result: Any,
    rubric: Any,
    B: int,
    seed: int,
) -> Numbers:
    table = RatingTable(_restricted(raters, wanted))
    people = [r.name for r in table.raters if r.kind == "human" and _labelled(r)]
    comparisons = []
    if people:
        report = agreement_report(table, levels=("question", "verdict"), B=B, seed=seed)
        bootstrap = ClusterBootstrap(table.incidents(), B=B, seed=seed)
        comparisons = [compare(report, table, judge_name, p, rubric, bootstrap) for p in people]
    asked, unscored = unscored_counts(result, wanted)
    return Numbers(
        source=name,
        formats=formats,
        cases=len(wanted),
        incidents=len({incident for incident, _ in wanted}),
        questions_asked=asked,
        unscored=unscored,
        unscored_rate=unscored / asked if asked else None,
        vs_labellers=comparisons,
        unlabelled={r.name: len(_unlabelled(r, wanted)) for r in table.raters if r.kind == "human"},
    )


def _labelled(rater: RaterLabels) -> bool:
    return any(v is not None for v in rater.composites.values())


def _ceiling(
    people: RatingTable,
    wanted: set[tuple[str, str]],
    labellers: Sequence[str],
    rubric: Any,
    B: int,
    seed: int,
) -> Comparison | None:
    """The first two labellers against each other on the cases both labelled, or None."""
    if len(labellers) < 2:
        return None
    a, b = labellers[:2]
    table = RatingTable(_restricted(people, wanted))
    both = {k for k, v in table[a].composites.items() if v is not None} & {
        k for k, v in table[b].composites.items() if v is not None
    }
    if not both:
        return None
    table = RatingTable(_restricted(people, both))
    report = agreement_report(table, levels=("question", "verdict"), B=B, seed=seed)
    bootstrap = ClusterBootstrap(table.incidents(), B=B, seed=seed)
    return compare(report, table, a, b, rubric, bootstrap)


# --- output ----------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _row(k: Kappa) -> str:
    kappa = k.kappa.text() if k.kappa.defined else f"undefined: {k.kappa.undefined}"
    return f"  {k.unit:<15} {k.n:>5} {k.n_incidents:>5}   {kappa:<22} {k.agreement.text()}"


def render(report: ValidityReport) -> str:
    lines = [
        f"Validity of judge `{report.judge}` on {'+'.join(report.halves)}: {report.cases} cases, "
        f"{report.incidents} incidents ({report.rubric}; pass = composite >= {report.threshold:.2f})",
        f"Unscored: {report.unscored} of {report.questions_asked} questions ({_pct(report.unscored_rate)})"
        + (f"; provider errors {report.provider_errors}" if report.provider_errors else "")
        + (f"; failed attempts {report.retried_errors}" if report.retried_errors else "")
        + ("" if report.complete else "; the run is INCOMPLETE"),
        "Kinds: " + ", ".join(f"{k} {n}" for k, n in sorted(report.kinds.items())),
    ]
    if not report.labellers:
        lines.append("No label sheets found: nothing to compare.")
    for title, comparisons in (
        ("", report.vs_labellers),
        ("Human ceiling: ", report.human_ceiling),
    ):
        for c in comparisons:
            lines += _render_comparison(title, c)
    for person, missing in report.unlabelled_cases.items():
        if missing:
            lines.append(
                f"Labeller {person} did not label {len(missing)} case(s), left out of their"
                f" comparisons: {', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''}"
            )
    lines.append(
        f"95% CIs: cluster bootstrap over incidents, B={report.bootstrap_B}, seed={report.seed}."
    )
    return "\n".join(lines) + "\n"


def render_bench(b: BenchResult) -> str:
    return (
        f"SREGym judge bench ({b.items} items, verdict labels by SREGym's developers):\n"
        f"  {b.verdict.n} with a judge verdict: "
        f"kappa {b.verdict.kappa.text()}, accuracy {b.verdict.agreement.text()}, "
        f"judge pass rate {_pct(b.judge_pass_rate)}, label pass rate {_pct(b.label_pass_rate)}, "
        f"unscored {_pct(b.unscored_rate)}\n"
    )


SPLIT_TITLES = {
    "test": "TEST split (sources the rules judge was never tuned on)",
    "tune": "TUNE split (sources the rules judge may be tuned on)",
}
HEADER = (
    f"  {'source':<47}{'format':<9}{'cases':>5}{'n':>5}  {'verdict kappa [95% CI]':<24}"
    f"{'pooled question kappa':<24}{'accuracy':>8}{'unscored':>9}{'FP':>4}{'FN':>4}"
)


def render_real(report: RealReport) -> str:
    lines = [
        f"Real agents' diagnoses (benchmarks/validity/real/): judge `{report.judge}`"
        f" ({report.rubric}; pass = composite >= {report.threshold:.2f})",
        f"Labels: {report.labelled_by}.",
    ]
    for split in report.splits:
        for who in report.labellers:
            lines += [
                "",
                f"{SPLIT_TITLES.get(split.split, split.split)}: judge vs labeller {who}",
                HEADER,
            ]
            lines += [_source_row(n, who) for n in [*split.sources, split.pooled]]
    lines += _render_ceiling(report)
    lines += _real_notes(report)
    lines.append(
        f"95% CIs: cluster bootstrap over incidents, B={report.bootstrap_B}, seed={report.seed};"
        " n = cases with a verdict from both; FP = judge passes, labeller fails; FN = the reverse."
    )
    return "\n".join(lines) + "\n"


def _source_row(n: Numbers, who: str) -> str:
    kinds = "+".join(n.formats) if len(n.formats) == 1 else f"{len(n.formats)} fmts"
    head = f"  {n.source:<47}{kinds:<9}{n.cases:>5}"
    c = next((c for c in n.vs_labellers if c.reference == who), None)
    if not n.cases:
        return f"{head}{0:>5}  no text (see 'Not judged' below)"
    if c is None:
        return f"{head}{0:>5}  no labels from {who}; unscored {_pct(n.unscored_rate)}"
    return (
        f"{head}{c.cases:>5}  {c.verdict.kappa.text():<24}{c.pooled.kappa.text():<24}"
        f"{c.verdict_accuracy.text(ci=False):>8}{_pct(n.unscored_rate):>9}"
        f"{c.false_pass:>4}{c.false_fail:>4}"
    )


def _render_ceiling(report: RealReport) -> list[str]:
    if len(report.labellers) < 2:
        return ["", "Ceiling: fewer than two labellers, no ceiling."]
    a, b = report.labellers[:2]
    lines = [
        "",
        f"Ceiling: labeller {a} vs labeller {b} on the cases both labelled ({report.labelled_by})",
        f"  {'scope':<8}{'n':>5}{'inc':>5}  {'verdict kappa [95% CI]':<24}"
        f"{'pooled question kappa':<24}{'accuracy':>8}",
    ]
    for row in report.ceiling:
        c = row.comparison
        if c is None:
            lines.append(f"  {row.scope:<8}{0:>5}  no case labelled by both")
            continue
        lines.append(
            f"  {row.scope:<8}{c.cases:>5}{c.verdict.n_incidents:>5}  {c.verdict.kappa.text():<24}"
            f"{c.pooled.kappa.text():<24}{c.verdict_accuracy.text(ci=False):>8}"
        )
    return lines


def _real_notes(report: RealReport) -> list[str]:
    lines = [
        "",
        "Texts: " + ", ".join(f"{n} {place}" for place, n in sorted(report.texts_from.items())),
    ]
    if report.provider_errors or not report.complete:
        lines.append(f"Provider errors {report.provider_errors}; complete: {report.complete}")
    if report.missing_texts:
        lines.append(
            f"Not judged, their text is not available ({len(report.missing_texts)} cases;"
            f" rebuild with `{report.rebuild_command}`, or --download):"
        )
        by_source: dict[str, list[real.MissingText]] = {}
        for m in report.missing_texts:
            by_source.setdefault(m.source, []).append(m)
        for source, items in by_source.items():
            reasons = sorted({m.reason for m in items})
            ids = ", ".join(m.case.removeprefix(f"{source}-") for m in items)
            lines.append(
                f"  {source}: {len(items)} cases ({ids}): {reasons[0]}"
                + (f" (and {len(reasons) - 1} other reasons)" if len(reasons) > 1 else "")
            )
    if report.unlabelled_sources:
        lines.append(
            "No labels yet (judged, not measured): " + ", ".join(report.unlabelled_sources)
        )
    for who, sources in report.without_labels.items():
        rest = [s for s in sources if s not in report.unlabelled_sources]
        if rest:
            lines.append(f"No label sheet from labeller {who}: " + ", ".join(rest))
    for case, why in report.judged_as_text.items():
        lines.append(f"ITBench case {case} judged on its text, not as an agent output: {why}")
    return lines


def _render_comparison(title: str, c: Comparison) -> list[str]:
    return [
        "",
        f"{title}{c.rater} vs labeller {c.reference} ({c.cases} cases; pass rate "
        f"{_pct(c.rater_pass_rate)} vs {_pct(c.reference_pass_rate)})",
        f"  {'unit':<15} {'n':>5} {'inc':>5}   {'kappa [95% CI]':<22} agreement [95% CI]",
        *[_row(k) for k in c.questions],
        *[_row(k.model_copy(update={"unit": f"{k.unit} pooled"})) for k in c.dimensions],
        _row(c.pooled),
        _row(c.verdict),
        f"  verdict accuracy {c.verdict_accuracy.text()}; composite MAE {c.composite_mae.text(3)}",
    ]


# --- checks on the committed set -------------------------------------------------------------


def check_case_files(root: Path = VALIDITY) -> list[str]:
    """Problems with the committed set: bad case files, incomplete labels, a root cause in both
    halves or in the wrong half of `split.json`. Empty when the set is sound."""
    from judge import load_rubric

    questions = list(_question_dimensions(load_rubric("sregym-v3")))
    split = json.loads((root / "split.json").read_text(encoding="utf-8"))
    problems: list[str] = []
    halves: dict[str, set[str]] = {}
    for path in sorted((root / "cases").glob("*.yaml")):
        half = path.stem
        try:
            cases = load_cases(path)
        except InputError as exc:
            problems.append(str(exc))
            continue
        halves[half] = {c.incident_id for c in cases if c.ground_truth is not None}
        allowed = set(split.get(half, []))
        problems += [
            f"{path}: {c.case}: root cause {c.incident_id} is not in split.json's {half!r} list"
            for c in cases
            if c.ground_truth is not None and c.incident_id not in allowed
        ]
        problems += _label_problems(root, half, cases, questions)
    problems += [
        f"split.json: dev root cause {r} is not in the 'tune' list"
        for r in sorted(set(split.get(DEV, [])) - set(split.get("tune", [])))
    ]
    names = sorted(halves)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if frozenset({a, b}) in MAY_SHARE:
                continue
            problems += [
                f"root cause {r} is in both {a} and {b}" for r in sorted(halves[a] & halves[b])
            ]
    return problems


def _label_problems(root: Path, half: str, cases: list[Case], questions: list[str]) -> list[str]:
    files = sorted((root / "labels").glob(f"{half}.*.csv"))
    if not files:
        return [f"{root / 'labels'}: no label sheet {half}.<labeller>.csv for {half}.yaml"]
    wanted = {(c.incident_id, c.case) for c in cases}
    # the first labeller labels every case; a second one may label a subset, but whole cases
    return [
        problem
        for path in files
        for problem in _sheet_problems(
            path, wanted, questions, every_case=path.name.split(".")[-2] == "a", file=f"{half}.yaml"
        )
    ]


def _sheet_problems(
    path: Path, wanted: set[tuple[str, str]], questions: list[str], every_case: bool, file: str
) -> list[str]:
    """A label sheet's problems: a case it labels that is not in `file`, a case it labels (or,
    with `every_case`, any case) without all nine labels."""
    try:
        table = read_labels(path, annotator=path.name.split(".")[-2])
    except LabelFileError as exc:
        return [str(exc)]
    problems = []
    for rater in table.raters:
        labelled = {
            (k.incident_id, k.trial, k.unit)
            for k, v in rater.labels["question"].items()
            if v is not None
        }
        touched = {(i, t) for i, t, _ in labelled}
        for incident, trial in sorted(wanted if every_case else wanted & touched):
            missing = [q for q in questions if (incident, trial, q) not in labelled]
            if missing:
                problems.append(f"{path}: {trial} ({incident}): no label for {', '.join(missing)}")
        problems += [
            f"{path}: {t} ({i}): labels a case that is not in {file}"
            for i, t in sorted(touched - wanted)
        ]
    return problems


def check_real_set(root: Path = real.REAL) -> list[str]:
    """Problems with the committed real-agent set: a bad split or case file, a label sheet that
    labels a case that is not there, or a labelled case without all nine labels, or a sheet of
    no source. Empty when the set is sound. (A source nobody has labelled yet is not a problem.)"""
    from judge import load_rubric

    questions = list(_question_dimensions(load_rubric("sregym-v3")))
    try:
        sources = [s for names in real.read_split(root).values() for s in names]
    except InputError as exc:
        return [str(exc)]
    problems: list[str] = []
    sheets = real.label_sheets(root, sources)
    for source in sources:
        try:
            cases = real.load_source(root / "cases" / f"{source}.yaml")
        except InputError as exc:
            problems.append(str(exc))
            continue
        if len({c.case for c in cases}) != len(cases):
            problems.append(f"{root / 'cases' / source}.yaml: a case id repeats")
        wanted = {(c.incident_id, c.case) for c in cases}
        for path in sheets.get(source, {}).values():
            problems += _sheet_problems(path, wanted, questions, False, f"{source}.yaml")
    known = {path for by_who in sheets.values() for path in by_who.values()}
    problems += [
        f"{path}: a label sheet of no source in split.json"
        for path in sorted((root / "labels").glob("*.csv"))
        if path not in known and not path.name.startswith("kinds.")
    ]
    return problems


# --- main ------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--set",
        choices=["real", "handwritten", "all"],
        default="all",
        help="the real agents' diagnoses, the hand-written halves, or both (default)",
    )
    p.add_argument(
        "--split",
        choices=[*real.SPLITS, "all"],
        default="all",
        help="real set: which split (default: all, test first)",
    )
    p.add_argument("--source", action="append", help="real set: only this source (repeatable)")
    p.add_argument(
        "--half",
        choices=[*HALVES, DEV, "all"],
        default="test",
        help="hand-written set: which half (default: test; all = tune + test)",
    )
    p.add_argument(
        "--judge-model", action="append", help="litellm model; repeat for a panel (default: rules)"
    )
    p.add_argument("--api-base", default=os.environ.get("JUDGE_BASE_URL"), help="provider base URL")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per model call")
    p.add_argument("--max-concurrent", type=int, default=5, help="judge calls in flight")
    p.add_argument(
        "--granularity",
        choices=["dimension", "submission"],
        default="dimension",
        help="one call per dimension (default) or per submission, as `judge eval`",
    )
    p.add_argument("--store", type=Path, help="SQLite store: a stopped run resumes from it")
    p.add_argument(
        "--result-file",
        type=Path,
        help="also write the judge's result file (for real_model.py; needs one --set)",
    )
    p.add_argument(
        "--labels-glob",
        action="append",
        help="hand-written set: label sheets (default: labels/<half>.*.csv under --root)",
    )
    p.add_argument(
        "--structured",
        action="store_true",
        help="hand-written set: SREGym specs through the SREGym adapter",
    )
    p.add_argument("--json", type=Path, help="also write the numbers as JSON here")
    p.add_argument(
        "--sregym-bench", action="store_true", help="also score SREGym's 29 labelled items"
    )
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--root", type=Path, default=VALIDITY, help="the hand-written set's folder")
    p.add_argument("--real-root", type=Path, default=real.REAL, help="the real set's folder")
    p.add_argument(
        "--corpus",
        type=Path,
        default=real.extract.default_corpus(),
        help="the shared corpus ($DIAGNOSIS_JUDGE_CORPUS, default ../shared/corpus)",
    )
    p.add_argument(
        "--cache",
        type=Path,
        help="real set: rebuilt texts of unlicensed cases (default: <real-root>/.cache)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="real set: only texts that are committed or rebuilt from the corpus",
    )
    args = p.parse_args(argv)
    if args.result_file and args.set == "all":
        p.error("--result-file writes one judge run: give --set real or --set handwritten")
    return args


class Reports(BaseModel):
    """Everything one run measured (`--json`): each set asked for, and SREGym's 29 items."""

    real: RealReport | None = None
    handwritten: ValidityReport | None = None
    sregym_bench: BenchResult | None = None


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    args = parse_args(argv)
    from judge import load_rubric

    rubric = load_rubric("sregym-v3")
    try:
        real_run = _prepare_real(args, rubric) if args.set in ("real", "all") else None
        hand = _prepare_handwritten(args, rubric) if args.set in ("handwritten", "all") else None
        judge = make_judge(args.judge_model, args.api_base, args.timeout)
    except (InputError, LabelFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    reports = Reports()
    if real_run is not None:
        result = _run(real_run.specs, real_run.submissions, judge, args)
        reports.real = measure_real(real_run, result, rubric, args.bootstrap, args.seed)
        out.write(render_real(reports.real))
    if hand is not None:
        cases, halves, people = hand
        specs = build_specs(cases, args.structured)
        result = _run(specs, build_submissions(cases), judge, args)
        reports.handwritten = measure(
            result, cases, people, rubric, halves, args.bootstrap, args.seed
        )
        out.write(("\n" if reports.real else "") + render(reports.handwritten))
    if args.sregym_bench:
        reports.sregym_bench = sregym_bench(judge, args.max_concurrent, args.bootstrap, args.seed)
        out.write("\n" + render_bench(reports.sregym_bench))
    if args.json:
        from judge.checklist.results import write_json_atomic

        write_json_atomic(args.json, reports.model_dump_json(indent=2) + "\n")
    return EXIT_OK


def _prepare_real(args: argparse.Namespace, rubric: Any) -> RealRun:
    splits = list(real.SPLITS) if args.split == "all" else [args.split]
    cache = None if args.no_cache else (args.cache or args.real_root / ".cache")
    return prepare_real(args.real_root, splits, args.source, cache, args.corpus, rubric)


def _prepare_handwritten(
    args: argparse.Namespace, rubric: Any
) -> tuple[list[Case], list[str], RatingTable]:
    halves = list(HALVES) if args.half == "all" else [args.half]
    loaded = load_halves(args.root, halves, sys.stderr)
    cases = [c for half in loaded.values() for c in half]
    if not cases:
        raise InputError(args.root / "cases", "no cases to run")
    build_specs(cases, args.structured)  # a bad spec_path fails here, before any judge call
    people = read_people(label_files(args.root, list(loaded), args.labels_glob), rubric)
    return cases, list(loaded), people


def _run(specs: list[IncidentSpec], subs: list[Submission], judge: Any, args: Any) -> Any:
    result = run_judge(specs, subs, judge, args.max_concurrent, args.granularity, args.store)
    if args.result_file:
        from judge.checklist.results import write_result

        write_result(result, args.result_file)
    return result


if __name__ == "__main__":
    sys.exit(main())
