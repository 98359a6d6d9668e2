"""The agreement report: every pair of raters at question, dimension and verdict level.

Layout of `AgreementReport` (JSON, `schema_version: "1"`):
- `levels[]`: per level, the pairwise matrix (`pairwise`, one entry per unordered rater pair,
  judges before people so that a judge is always rater A and a person the reference B), Fleiss'
  kappa and Krippendorff's alpha over all raters when there are three or more, and a
  `breakdown`: per question (question level), per dimension with the dimension's question
  answers pooled (`dimension-pooled`, question level), and per dimension pass (dimension level);
- `human_ceiling[]`: agreement among people who labelled the same items (what a judge can
  hope to reach);
- `self_consistency[]`: one judge run several times (rater names `name#1`, `name#2`, ... or
  explicit groups) against itself.

All intervals come from one cluster bootstrap over incidents, seeded, shared by every number.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Final, Literal

from pydantic import BaseModel, Field

from agreement.errors import LabelFileError
from agreement.ratings import (
    LEVELS,
    Level,
    RaterLabels,
    RatingTable,
    base_name,
    check_labels_match,
)
from agreement.readers import Source, read_ratings
from agreement.stats import (
    CONFIDENCE,
    DEFAULT_B,
    ClusterBootstrap,
    Estimate,
    MultiRaterStats,
    PairStats,
    multi_rater_stats,
    pair_stats,
)

SCHEMA_VERSION: Final = "1"


class Settings(BaseModel):
    """How a report's numbers were computed: bootstrap size and seed, confidence level,
    the resampling cluster, and the score at which a dimension counts as Yes.
    """

    bootstrap_B: int
    seed: int
    confidence: float = CONFIDENCE
    cluster: str = Field("incident_id", description="The bootstrap resamples whole incidents.")
    dimension_pass: float = Field(description="A dimension is Yes when its score is at least this.")


class RaterInfo(BaseModel):
    """One rater in a report: judge or human, its answers' source, how many it gave per level."""

    name: str
    kind: Literal["judge", "human"]
    source: str | None
    answered: dict[str, int] = Field(description="Answered items per level.")


UnitKind = Literal["question", "dimension", "dimension-pooled"]


class UnitBreakdown(BaseModel):
    """One question or dimension alone: pairwise, and among all raters when 3+ answered it."""

    unit: str
    kind: UnitKind
    pairwise: list[PairStats]
    multi_rater: MultiRaterStats | None = None


class LevelReport(BaseModel):
    """Agreement at one level (question, dimension or verdict): every rater pair, all raters
    together, and per unit. `pair(a, b)` finds a pair in either order (KeyError if absent).
    """

    level: Level
    pairwise: list[PairStats]
    multi_rater: MultiRaterStats | None = None
    breakdown: list[UnitBreakdown] = Field(default_factory=list)

    def pair(self, a: str, b: str) -> PairStats:
        for p in self.pairwise:
            if {p.rater_a, p.rater_b} == {a, b}:
                return p
        raise KeyError(f"no pair {a!r} / {b!r} at level {self.level}")


class GroupAgreement(BaseModel):
    """Agreement within a group: people with each other, or one judge's repeated runs."""

    name: str
    raters: list[str]
    level: Level
    pairwise: list[PairStats]
    mean_kappa: float | None = Field(description="Mean of the defined pairwise kappas.")
    multi_rater: MultiRaterStats


class AgreementReport(BaseModel):
    """What `agreement_report` returns: its settings, the raters, agreement per level, the human
    ceiling and repeated judges' self-consistency. `level(name)` raises KeyError if absent.
    """

    schema_version: Literal["1"] = SCHEMA_VERSION
    kind: Literal["agreement"] = "agreement"
    settings: Settings
    raters: list[RaterInfo]
    levels: list[LevelReport]
    human_ceiling: list[GroupAgreement] = Field(default_factory=list)
    self_consistency: list[GroupAgreement] = Field(default_factory=list)

    def level(self, level: Level) -> LevelReport:
        for entry in self.levels:
            if entry.level == level:
                return entry
        raise KeyError(f"level {level!r} is not in this report")


def rater_pairs(table: RatingTable, names: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """Every unordered pair, judge before person (so the person is the reference)."""
    names = list(names if names is not None else table.names)
    pairs = []
    for a, b in combinations(names, 2):
        if table.kind(a) == "human" and table.kind(b) == "judge":
            a, b = b, a
        pairs.append((a, b))
    return pairs


def pairwise(
    table: RatingTable,
    level: Level = "verdict",
    raters: Sequence[str] | None = None,
    *,
    units: Iterable[str] | None = None,
    unit_label: str | None = None,
    bootstrap: ClusterBootstrap | None = None,
    B: int = DEFAULT_B,
    seed: int = 0,
) -> list[PairStats]:
    """`PairStats` for every pair of `raters` (default: all) at one level, optionally some units."""
    bootstrap = bootstrap or ClusterBootstrap(table.incidents(), B=B, seed=seed)
    unit_set = list(units) if units is not None else None
    out = []
    for a, b in rater_pairs(table, raters):
        items = table.paired(a, b, level, unit_set)
        out.append(
            pair_stats(
                items.a,
                items.b,
                [k.incident_id for k in items.keys],
                rater_a=a,
                rater_b=b,
                level=level,
                unit=unit_label,
                reference=table.kind(a) == "judge" and table.kind(b) == "human",
                bootstrap=bootstrap,
            )
        )
    return out


def multi_rater(
    table: RatingTable,
    level: Level,
    raters: Sequence[str],
    bootstrap: ClusterBootstrap,
    units: Iterable[str] | None = None,
) -> MultiRaterStats:
    """Fleiss κ and Krippendorff α among `raters` at `level` (optionally only `units`), with
    bootstrap CIs resampling incidents.
    """
    keys, rows = table.matrix(list(raters), level, units)
    return multi_rater_stats(rows, [k.incident_id for k in keys], raters, bootstrap=bootstrap)


def _level_report(
    table: RatingTable, level: Level, bootstrap: ClusterBootstrap, breakdown: bool
) -> LevelReport:
    names = table.names
    many = len(names) >= 3
    report = LevelReport(
        level=level,
        pairwise=pairwise(table, level, bootstrap=bootstrap),
        multi_rater=multi_rater(table, level, names, bootstrap) if many else None,
    )
    if not breakdown or len(names) < 2:
        return report
    kind: UnitKind = "question" if level == "question" else "dimension"
    groups: list[tuple[str, UnitKind, list[str]]] = []
    if level != "verdict":
        groups += [(unit, kind, [unit]) for unit in table.units(level)]
    if level == "question":
        pooled: dict[str, list[str]] = {}
        dimension_of = table.dimension_map()
        for question in table.units("question"):
            dimension = dimension_of.get(question)
            if dimension:
                pooled.setdefault(dimension, []).append(question)
        groups += [(dim, "dimension-pooled", qs) for dim, qs in pooled.items()]
    for label, unit_kind, units in groups:
        report.breakdown.append(
            UnitBreakdown(
                unit=label,
                kind=unit_kind,
                pairwise=pairwise(table, level, units=units, unit_label=label, bootstrap=bootstrap),
                multi_rater=multi_rater(table, level, names, bootstrap, units) if many else None,
            )
        )
    return report


def _group(
    table: RatingTable, name: str, members: list[str], level: Level, bootstrap: ClusterBootstrap
) -> GroupAgreement:
    pairs = pairwise(table, level, members, bootstrap=bootstrap)
    kappas = [p.kappa.value for p in pairs if p.kappa.value is not None]
    return GroupAgreement(
        name=name,
        raters=members,
        level=level,
        pairwise=pairs,
        mean_kappa=sum(kappas) / len(kappas) if kappas else None,
        multi_rater=multi_rater(table, level, members, bootstrap),
    )


def repeat_groups(table: RatingTable) -> list[list[str]]:
    """Judges whose names differ only by a `#` suffix (`m#1`, `m#2`): one judge run repeatedly."""
    groups: dict[str, list[str]] = {}
    for rater in table.raters:
        if rater.kind == "judge" and base_name(rater.name) != rater.name:
            groups.setdefault(base_name(rater.name), []).append(rater.name)
    return [members for members in groups.values() if len(members) >= 2]


def human_ceiling(
    table: RatingTable,
    levels: Sequence[Level],
    bootstrap: ClusterBootstrap,
    people: Sequence[str] | None = None,
) -> list[GroupAgreement]:
    """Agreement among people (default: every human rater) at each level where they overlap."""
    people = (
        list(people) if people is not None else [r.name for r in table.raters if r.kind == "human"]
    )
    if len(people) < 2:
        return []
    out = []
    for level in levels:
        group = _group(table, "people", people, level, bootstrap)
        if any(p.n for p in group.pairwise):
            out.append(group)
    return out


def self_consistency(
    table: RatingTable,
    levels: Sequence[Level],
    bootstrap: ClusterBootstrap,
    groups: Sequence[Sequence[str]] | None = None,
) -> list[GroupAgreement]:
    """Agreement among repeated runs of one judge, per group and level. Groups default to
    names differing only by a `#` suffix; KeyError if a given group names an unknown rater.
    """
    chosen = [list(g) for g in groups] if groups is not None else repeat_groups(table)
    out = []
    for members in chosen:
        for name in members:
            table[name]  # raises a KeyError naming the known raters
        label = base_name(members[0])
        out += [_group(table, label, members, level, bootstrap) for level in levels]
    return out


def agreement_report(
    sources: RatingTable | Iterable[Source | RatingTable],
    *,
    levels: Sequence[Level] = LEVELS,
    B: int = DEFAULT_B,
    seed: int = 0,
    dimension_pass: float = 0.5,
    repeats: Sequence[Sequence[str]] | None = None,
    breakdown: bool = True,
    allow_rubric_mismatch: bool = False,
) -> AgreementReport:
    """Agreement among any mix of judge result files and label CSVs (paths, dicts or tables).

    `repeats` lists groups of rater names that are the same judge run again; by default they are
    the repeats one result holds (`m#1`, `m#2`). Results made with different rubrics (content
    hash) are refused unless `allow_rubric_mismatch`: their question ids need not mean the same.
    """
    unknown = [level for level in levels if level not in LEVELS]
    if unknown:
        raise ValueError(f"unknown level(s) {', '.join(unknown)}; expected {', '.join(LEVELS)}")
    if isinstance(sources, RatingTable):
        table = sources
        table.dimension_pass = dimension_pass
    else:
        table = read_ratings(sources, dimension_pass=dimension_pass)
    if not allow_rubric_mismatch:
        check_same_rubric(table)
    check_labels_match(table)
    bootstrap = ClusterBootstrap(table.incidents(), B=B, seed=seed)
    return AgreementReport(
        settings=Settings(bootstrap_B=B, seed=seed, dimension_pass=dimension_pass),
        raters=[
            RaterInfo(
                name=r.name,
                kind=r.kind,
                source=r.source,
                answered={level: table.count(r.name, level) for level in LEVELS},
            )
            for r in table.raters
        ],
        levels=[_level_report(table, level, bootstrap, breakdown) for level in levels],
        human_ceiling=human_ceiling(table, levels, bootstrap),
        self_consistency=self_consistency(table, levels, bootstrap, repeats),
    )


def check_same_rubric(table: RatingTable) -> None:
    """Refuse judges that answered different rubrics (by content hash), naming their files."""
    first: dict[str, RaterLabels] = {}
    for rater in table.raters:
        if rater.rubric and rater.rubric not in first:
            first[rater.rubric] = rater
    if len(first) < 2:
        return
    listing = "; ".join(
        f"{r.rubric[:12]} in {r.source or r.name}" for r in first.values() if r.rubric
    )
    raise LabelFileError(
        list(first.values())[1].source,
        f"the results were made with different rubrics ({listing}), so their question ids need"
        " not mean the same; compare them anyway with --allow-rubric-mismatch",
        field="config.rubric.hash",
    )


# --- SREGym Table 2 ---------------------------------------------------------------------------


class Table2Row(BaseModel):
    """One row shaped like SREGym's Table 2: Judge A | Judge B | agreement | kappa [CI]."""

    judge_a: str
    judge_b: str
    level: Level
    n: int
    agreement: Estimate
    kappa: Estimate

    def cells(self, digits: int = 2) -> list[str]:
        agreement = "n/a" if self.agreement.value is None else f"{self.agreement.value:.{digits}f}"
        kappa = (
            self.kappa.text(digits) if self.kappa.defined else f"undefined ({self.kappa.undefined})"
        )
        return [self.judge_a, self.judge_b, agreement, kappa]


TABLE2_HEADER = ["Judge A", "Judge B", "Agreement", "Cohen's κ [95% CI]"]


def table2_rows(report: AgreementReport, level: Level = "verdict") -> list[Table2Row]:
    """Every rater pair at `level` as a SREGym Table 2 row. KeyError if the report lacks `level`."""
    return [
        Table2Row(
            judge_a=p.rater_a,
            judge_b=p.rater_b,
            level=level,
            n=p.n,
            agreement=p.agreement,
            kappa=p.kappa,
        )
        for p in report.level(level).pairwise
    ]


def table2_markdown(report: AgreementReport, level: Level = "verdict", digits: int = 2) -> str:
    """The pairs at `level` as a markdown table shaped like SREGym's Table 2; undefined values
    print as n/a.
    """
    lines = ["| " + " | ".join(TABLE2_HEADER) + " |", "|" + " --- |" * len(TABLE2_HEADER)]
    lines += ["| " + " | ".join(row.cells(digits)) + " |" for row in table2_rows(report, level)]
    return "\n".join(lines) + "\n"
