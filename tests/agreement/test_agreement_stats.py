"""Every statistic against an independent reference or a published/hand-worked table."""

from __future__ import annotations

import math
import random

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, f1_score, precision_score, recall_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from agreement import ClusterBootstrap, cohen_kappa, fleiss_kappa, krippendorff_alpha, pair_stats
from agreement.stats import category_counts, multi_rater_stats, pair_formulas


def table_to_labels(yy: int, yn: int, ny: int, nn: int) -> tuple[list[str], list[str]]:
    """A 2x2 table (first word rater A) as two aligned label lists."""
    a = ["Yes"] * (yy + yn) + ["No"] * (ny + nn)
    b = ["Yes"] * yy + ["No"] * yn + ["Yes"] * ny + ["No"] * nn
    return a, b


# --- Cohen's kappa ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "published"),
    [
        # Wikipedia, "Cohen's kappa", worked example: 20/5/10/15 of 50 -> po 0.7, pe 0.5, k 0.4
        ((20, 5, 10, 15), 0.4),
        # Wikipedia, same agreement (60%) different kappa: 45/15/25/15 -> 0.1304, 25/35/5/35 -> 0.2593
        ((45, 15, 25, 15), 0.1304),
        ((25, 35, 5, 35), 0.2593),
        # Feinstein & Cicchetti (1990) kappa paradox: 94.4% agreement, kappa -0.023
        ((118, 5, 2, 0), -0.0234),
    ],
)
def test_cohen_kappa_textbook_tables(table, published):
    a, b = table_to_labels(*table)
    assert cohen_kappa(a, b).value == pytest.approx(published, abs=5e-4)


def test_rare_yes_90_percent_agreement_is_kappa_044():
    """The issue's warning: 90% raw agreement with Yes at 10% is only kappa 0.44."""
    a, b = table_to_labels(5, 5, 5, 85)
    stats = pair_stats(a, b, B=0)
    assert stats.agreement.value == pytest.approx(0.90)
    assert stats.kappa.value == pytest.approx(0.08 / 0.18)  # po .90, pe .82
    assert stats.kappa.value == pytest.approx(0.444, abs=1e-3)
    assert stats.pabak.value == pytest.approx(0.80)
    assert stats.yes_rate_a == pytest.approx(0.10)


def test_kappa_matches_sklearn_on_random_data():
    rng = random.Random(7)
    for _ in range(40):
        n = rng.randint(2, 40)
        p = rng.random()
        a = ["Yes" if rng.random() < p else "No" for _ in range(n)]
        b = [x if rng.random() < 0.7 else rng.choice(["Yes", "No"]) for x in a]
        ours = cohen_kappa(a, b)
        ref = cohen_kappa_score(a, b, labels=["No", "Yes"]) if len(set(a + b)) > 1 else math.nan
        if math.isnan(ref):
            assert ours.value is None and ours.undefined
        else:
            assert ours.value == pytest.approx(ref, abs=1e-12)
            closed_form = pair_formulas(pair_stats(a, b, B=0).confusion.as_array())["kappa"]
            assert float(closed_form) == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize(
    ("a", "b", "reason"),
    [
        (["Yes"] * 4, ["Yes"] * 4, "both raters answered Yes on all 4 items"),
        (["No"] * 3, ["No"] * 3, "both raters answered No on all 3 items"),
        (["Yes"], ["Yes"], "both raters answered Yes on all 1 items"),
        ([], [], "no items answered by both raters"),
        (["Yes", None], [None, "No"], "no items answered by both raters"),
    ],
)
def test_kappa_undefined_has_a_reason_never_nan(a, b, reason):
    result = cohen_kappa(a, b)
    assert result.value is None
    assert reason in result.undefined
    dumped = pair_stats(a, b, B=20).model_dump_json()
    assert "NaN" not in dumped and "nan" not in dumped.lower().replace("n_incidents", "")


def test_one_rater_constant_other_not_is_kappa_zero_not_undefined():
    result = cohen_kappa(["Yes"] * 4, ["Yes", "No", "Yes", "Yes"])
    assert result.value == pytest.approx(0.0)


def test_single_item_disagreement_is_defined():
    stats = pair_stats(["Yes"], ["No"], B=50)
    assert stats.n == 1
    assert stats.kappa.value == pytest.approx(0.0)
    assert stats.kappa.ci_low is None  # one incident: no interval
    assert "one incident" in stats.kappa.ci_note


def test_mixed_spellings_are_normalised():
    a = ["yes", "TRUE", "1", "pass", "no", "False", "0", "FAIL", ""]
    b = ["Yes", "Yes", "Yes", "Yes", "No", "No", "No", "No", "Yes"]
    stats = pair_stats(a, b, B=0)
    assert stats.n == 8
    assert stats.agreement.value == 1.0
    assert stats.kappa.value == pytest.approx(1.0)


def test_missing_answers_are_dropped_pairwise():
    a = ["Yes", None, "No", "Yes", "No"]
    b = ["Yes", "No", None, "Yes", "No"]
    stats = pair_stats(a, b, B=0)
    assert stats.n == 3
    assert stats.confusion.yes_yes == 2 and stats.confusion.no_no == 1


# --- PABAK, AC1 and the reference metrics ----------------------------------------------------


def test_ac1_hand_worked_kappa_paradox_table():
    """Gwet's AC1 on Feinstein & Cicchetti's 118/5/2/0 table, worked by hand.

    po = 118/125 = 0.944; pi(Yes) = (123/125 + 120/125)/2 = 0.972;
    pe = 2 * 0.972 * 0.028 = 0.054432; AC1 = (0.944 - 0.054432)/(1 - 0.054432) = 0.940775...
    """
    a, b = table_to_labels(118, 5, 2, 0)
    stats = pair_stats(a, b, B=0)
    assert stats.ac1.value == pytest.approx((0.944 - 0.054432) / (1 - 0.054432), abs=1e-9)
    assert stats.pabak.value == pytest.approx(2 * 0.944 - 1)
    assert stats.kappa.value < 0 < stats.ac1.value


def _ac1_multi_rater_form(a: list[str], b: list[str]) -> float:
    """Gwet (2008) multi-rater AC1 specialised to two raters per item (a different formula path)."""
    r = 2
    items = [[x, y] for x, y in zip(a, b, strict=True)]
    pa = np.mean(
        [
            sum(row.count(k) * (row.count(k) - 1) for k in ("Yes", "No")) / (r * (r - 1))
            for row in items
        ]
    )
    pi = {k: np.mean([row.count(k) / r for row in items]) for k in ("Yes", "No")}
    pe = sum(p * (1 - p) for p in pi.values())  # / (q - 1) with q = 2
    return (pa - pe) / (1 - pe)


def test_ac1_matches_multi_rater_formula_and_equals_kappa_at_balanced_margins():
    rng = random.Random(3)
    for _ in range(50):
        n = rng.randint(2, 30)
        a = [rng.choice(["Yes", "No"]) for _ in range(n)]
        b = [x if rng.random() < 0.6 else rng.choice(["Yes", "No"]) for x in a]
        assert pair_stats(a, b, B=0).ac1.value == pytest.approx(_ac1_multi_rater_form(a, b))
    a, b = table_to_labels(20, 5, 5, 20)  # both margins 0.5: pe equal for kappa and AC1
    stats = pair_stats(a, b, B=0)
    assert stats.ac1.value == pytest.approx(stats.kappa.value)
    assert stats.pabak.value == pytest.approx(stats.kappa.value)


def test_reference_metrics_match_sklearn():
    rng = random.Random(11)
    for _ in range(15):
        n = rng.randint(4, 40)
        truth = [rng.choice(["Yes", "No"]) for _ in range(n)]
        judge = [x if rng.random() < 0.75 else rng.choice(["Yes", "No"]) for x in truth]
        if len(set(truth)) < 2 or len(set(judge)) < 2:
            continue
        ref = pair_stats(judge, truth, B=0, reference=True).vs_reference
        kw = {"pos_label": "Yes", "zero_division": 0}
        assert ref.precision.value == pytest.approx(precision_score(truth, judge, **kw))
        assert ref.recall.value == pytest.approx(recall_score(truth, judge, **kw))
        assert ref.tpr.value == ref.recall.value
        assert ref.tnr.value == pytest.approx(recall_score(truth, judge, pos_label="No"))
        assert ref.f1.value == pytest.approx(f1_score(truth, judge, **kw))
        assert ref.macro_f1.value == pytest.approx(
            f1_score(truth, judge, average="macro", labels=["No", "Yes"])
        )


def test_reference_metrics_undefined_when_a_class_is_absent():
    ref = pair_stats(["Yes", "No"], ["No", "No"], B=0, reference=True).vs_reference
    assert ref.tpr.value is None and "never answered Yes" in ref.tpr.undefined
    assert ref.tnr.value == 0.5
    assert ref.macro_f1.value == pytest.approx((0 + 2 / 3) / 2)  # as sklearn: Yes-class F1 is 0
    ref = pair_stats(["No", "No"], ["No", "No"], B=0, reference=True).vs_reference
    assert ref.f1.value is None and "neither rater answered Yes" in ref.f1.undefined
    assert ref.macro_f1.value is None and ref.macro_f1.undefined


# --- Fleiss' kappa ----------------------------------------------------------------------------

# Fleiss (1971): 30 patients, 6 psychiatrists, 5 diagnoses; published kappa 0.430.
FLEISS_1971 = [
    [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
]  # fmt: skip

# Wikipedia, "Fleiss' kappa" worked example: 10 subjects, 14 raters, 5 categories; kappa 0.210.
WIKIPEDIA_FLEISS = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]  # fmt: skip


def test_fleiss_kappa_published_values():
    counts, _ = category_counts(FLEISS_1971)
    assert fleiss_kappa(counts).value == pytest.approx(0.430, abs=5e-4)
    assert fleiss_kappa(WIKIPEDIA_FLEISS).value == pytest.approx(0.210, abs=5e-4)


def test_fleiss_kappa_matches_statsmodels_on_random_data():
    rng = np.random.default_rng(5)
    for _ in range(50):
        items, raters = rng.integers(2, 30), rng.integers(3, 7)
        data = rng.choice(["Yes", "No"], size=(items, raters), p=[0.3, 0.7])
        table, _ = aggregate_raters(data)
        ref = sm_fleiss_kappa(table)
        ours = multi_rater_stats(
            data.tolist(), [str(i) for i in range(items)], list("abcdefg"[:raters]), B=0
        )
        if np.isnan(ref):
            assert ours.fleiss_kappa.value is None
        else:
            assert ours.fleiss_kappa.value == pytest.approx(ref, abs=1e-10)


def test_fleiss_undefined_when_all_ratings_agree_on_one_class():
    result = fleiss_kappa([[3, 0], [3, 0]])
    assert result.value is None and "one category" in result.undefined


# --- Krippendorff's alpha ---------------------------------------------------------------------

NAN = float("nan")
# Krippendorff (2011) "Computing Krippendorff's alpha-reliability", 4 coders x 12 units with
# missing values; published nominal alpha 0.743.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def test_krippendorff_alpha_published_value():
    assert krippendorff_alpha(KRIPPENDORFF_2011).value == pytest.approx(0.743, abs=5e-4)


def test_krippendorff_alpha_matches_package_with_missing_data():
    rng = np.random.default_rng(9)
    checked = 0
    for _ in range(60):
        raters, units = rng.integers(2, 6), rng.integers(3, 25)
        data = rng.choice([0.0, 1.0], size=(raters, units), p=[0.4, 0.6])
        data[rng.random(size=data.shape) < 0.25] = np.nan
        counts, _ = category_counts(list(zip(*data.tolist(), strict=True)))
        if len(np.unique(data[~np.isnan(data)])) < 2 or not (counts.sum(axis=1) >= 2).any():
            assert krippendorff_alpha(data.tolist()).value is None
            continue
        ref = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
        assert krippendorff_alpha(data.tolist()).value == pytest.approx(ref, abs=1e-10)
        checked += 1
    assert checked > 30


def test_alpha_undefined_reasons():
    assert "two or more" in krippendorff_alpha([["Yes", None], [None, "No"]]).undefined
    assert "one category" in krippendorff_alpha([["Yes", "Yes"], ["Yes", "Yes"]]).undefined


# --- the cluster bootstrap --------------------------------------------------------------------


def _clustered(n_incidents: int, per: int, seed: int) -> tuple[list[str], list[str], list[str]]:
    rng = random.Random(seed)
    a, b, clusters = [], [], []
    for i in range(n_incidents):
        for _ in range(per):
            x = rng.choice(["Yes", "No"])
            a.append(x)
            b.append(x if rng.random() < 0.8 else rng.choice(["Yes", "No"]))
            clusters.append(f"inc-{i}")
    return a, b, clusters


def test_bootstrap_is_seeded_and_reproducible():
    a, b, clusters = _clustered(20, 3, 1)
    one = pair_stats(a, b, clusters, B=200, seed=42)
    two = pair_stats(a, b, clusters, B=200, seed=42)
    other = pair_stats(a, b, clusters, B=200, seed=43)
    assert one == two
    assert one.kappa.ci_low != other.kappa.ci_low or one.kappa.ci_high != other.kappa.ci_high
    assert one.kappa.ci_low <= one.kappa.value <= one.kappa.ci_high


def test_bootstrap_resamples_whole_incidents():
    """Each replicate's counts are a sum of whole incidents' counts, with multiplicities."""
    a, _, clusters = _clustered(6, 4, 2)
    boot = ClusterBootstrap(clusters, B=30, seed=0)
    per_item = np.ones((len(a), 1))
    totals = boot.replicate(clusters, per_item)[:, 0]
    assert set(totals) == {24.0}  # 6 incidents drawn, 4 items each: always 24 items
    assert (boot.weights.sum(axis=1) == 6).all()
    uneven = [c for c in clusters[:4]] + clusters  # incident 0 now has 8 items
    totals = boot.replicate(uneven, np.ones((len(uneven), 1)))[:, 0]
    assert all(
        (t - 4 * boot.weights[i].sum() - 4 * boot.weights[i, 0]) == 0 for i, t in enumerate(totals)
    )


def test_bootstrap_replicates_equal_sklearn_on_the_resampled_items():
    a, b, clusters = _clustered(8, 3, 4)
    boot = ClusterBootstrap(clusters, B=25, seed=3)
    per_item = np.array(
        [
            [
                x == "Yes" and y == "Yes",
                x == "Yes" and y == "No",
                x == "No" and y == "Yes",
                x == "No" and y == "No",
            ]
            for x, y in zip(a, b, strict=True)
        ],
        dtype=float,
    )
    kappas = pair_formulas(boot.replicate(clusters, per_item))["kappa"]
    for r in range(boot.B):
        ra, rb = [], []
        for c, w in zip(boot.clusters, boot.weights[r], strict=True):
            idx = [i for i, ci in enumerate(clusters) if ci == c]
            ra += [a[i] for i in idx] * int(w)
            rb += [b[i] for i in idx] * int(w)
        if len(set(ra + rb)) == 1:
            assert np.isnan(kappas[r])
        else:
            assert kappas[r] == pytest.approx(cohen_kappa_score(ra, rb, labels=["No", "Yes"]))


def test_undefined_resamples_are_dropped_and_counted():
    a = ["Yes", "Yes", "No", "Yes"]
    b = ["Yes", "Yes", "No", "Yes"]
    stats = pair_stats(a, b, ["i1", "i1", "i2", "i3"], B=200, seed=0)
    assert stats.kappa.value == pytest.approx(1.0)
    assert "resamples" in stats.kappa.ci_note


def test_multi_rater_bootstrap_intervals_cover_the_point():
    rng = np.random.default_rng(2)
    truth = rng.choice(["Yes", "No"], size=40)
    rows = [
        [t if rng.random() < 0.85 else ("No" if t == "Yes" else "Yes") for _ in range(4)]
        for t in truth
    ]
    clusters = [f"inc-{i // 2}" for i in range(40)]
    stats = multi_rater_stats(rows, clusters, ["a", "b", "c", "d"], B=300, seed=1)
    for est in (stats.fleiss_kappa, stats.krippendorff_alpha):
        assert est.ci_low <= est.value <= est.ci_high
    assert stats.n_items == stats.n_complete == 40


# --- properties -------------------------------------------------------------------------------

answers = st.lists(st.sampled_from(["Yes", "No"]), min_size=1, max_size=40)
pairs_of_answers = st.integers(1, 40).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from(["Yes", "No"]), min_size=n, max_size=n),
        st.lists(st.sampled_from(["Yes", "No"]), min_size=n, max_size=n),
    )
)
FLIP = {"Yes": "No", "No": "Yes"}


@settings(max_examples=30, deadline=None)
@given(answers)
def test_identical_non_constant_raters_have_kappa_one(a):
    result = cohen_kappa(a, a)
    if len(set(a)) == 1:
        assert result.value is None
    else:
        assert result.value == pytest.approx(1.0)


@settings(max_examples=30, deadline=None)
@given(pairs_of_answers)
def test_statistics_are_symmetric_in_the_raters(pair):
    a, b = pair
    ab, ba = pair_stats(a, b, B=0), pair_stats(b, a, B=0)
    for name in ("agreement", "kappa", "pabak", "ac1"):
        assert getattr(ab, name).value == pytest.approx(getattr(ba, name).value)


@settings(max_examples=30, deadline=None)
@given(pairs_of_answers)
def test_statistics_unchanged_by_relabelling_yes_and_no(pair):
    a, b = pair
    orig = pair_stats(a, b, B=0)
    flipped = pair_stats([FLIP[x] for x in a], [FLIP[x] for x in b], B=0)
    for name in ("agreement", "kappa", "pabak", "ac1"):
        assert getattr(orig, name).value == pytest.approx(getattr(flipped, name).value)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["Yes", "No", None]), min_size=3, max_size=3),
        min_size=1,
        max_size=15,
    )
)
def test_multi_rater_statistics_stay_in_range_or_are_undefined(rows):
    stats = multi_rater_stats(rows, [str(i) for i in range(len(rows))], ["a", "b", "c"], B=0)
    for est in (stats.fleiss_kappa, stats.krippendorff_alpha):
        assert (est.value is None) == bool(est.undefined)
        if est.value is not None:
            assert math.isfinite(est.value) and est.value <= 1.0 + 1e-9


def test_fleiss_table_edge_cases():
    assert fleiss_kappa([]).undefined == "no items"
    assert "fewer than two" in fleiss_kappa([[1, 0], [0, 1]]).undefined
    with pytest.raises(ValueError, match="same number of ratings"):
        fleiss_kappa([[2, 1], [1, 1]])
