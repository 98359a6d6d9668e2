"""Agreement statistics and judge calibration: how far a judge can be trusted.

    from agreement import agreement_report, calibrate, read_result, read_labels
    report = agreement_report(["a.json", "b.json", "labels.csv"], B=1000, seed=0)
    print(report.model_dump_json(indent=2))

`agreement` imports neither `judge` nor `ground_truth`.
"""

from agreement.calibrate import CalibrationReport, calibrate
from agreement.errors import LabelFileError
from agreement.ppi import (
    LabelCandidate,
    MeanDifference,
    MeanEstimate,
    PPIEstimate,
    active_ppi_mean,
    active_ppi_mean_difference,
    binary_uncertainty,
    labelling_probabilities,
    ppi_mean,
    ppi_mean_difference,
    rank_for_labelling,
    sample_for_labelling,
)
from agreement.ppi_strata import StratifiedEstimate, StratumEstimate, stratified_ppi_mean
from agreement.ranking import Ranking, auroc, rank_confidence
from agreement.ratings import (
    LEVELS,
    Answer,
    ItemKey,
    Level,
    RaterLabels,
    RatingTable,
    normalize_answer,
)
from agreement.readers import (
    LABEL_COLUMNS,
    label_rows,
    read_labels,
    read_ratings,
    read_result,
    write_label_template,
)
from agreement.reliability import (
    ConfidenceCalibration,
    IsotonicMap,
    QuestionMap,
    ReliabilityBin,
    ReliabilityDiagram,
    expected_calibration_error,
    fit_confidence_calibration,
    fit_isotonic,
    reliability_diagram,
)
from agreement.render import render_calibration, render_report, render_table
from agreement.report import (
    AgreementReport,
    agreement_report,
    pairwise,
    table2_markdown,
    table2_rows,
)
from agreement.selective import (
    CascadePlan,
    CascadeRouting,
    CascadeStage,
    SelectiveGuarantee,
    SelectiveRefusal,
    SelectiveResult,
    calibrate_cascade,
    clopper_pearson_lower,
    labels_needed,
    min_count_for,
    route_cascade,
    select_threshold,
)
from agreement.shift import FeatureShift, ShiftTest, shift_test
from agreement.stats import (
    ClusterBootstrap,
    Estimate,
    PairStats,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    pair_stats,
)

__all__ = [
    "LABEL_COLUMNS",
    "LEVELS",
    "AgreementReport",
    "Answer",
    "CalibrationReport",
    "CascadePlan",
    "CascadeRouting",
    "CascadeStage",
    "ClusterBootstrap",
    "ConfidenceCalibration",
    "Estimate",
    "FeatureShift",
    "IsotonicMap",
    "ItemKey",
    "LabelCandidate",
    "LabelFileError",
    "Level",
    "MeanDifference",
    "MeanEstimate",
    "PPIEstimate",
    "PairStats",
    "QuestionMap",
    "Ranking",
    "RaterLabels",
    "RatingTable",
    "ReliabilityBin",
    "ReliabilityDiagram",
    "SelectiveGuarantee",
    "SelectiveRefusal",
    "SelectiveResult",
    "ShiftTest",
    "StratifiedEstimate",
    "StratumEstimate",
    "active_ppi_mean",
    "active_ppi_mean_difference",
    "agreement_report",
    "auroc",
    "binary_uncertainty",
    "calibrate",
    "calibrate_cascade",
    "clopper_pearson_lower",
    "cohen_kappa",
    "expected_calibration_error",
    "fit_confidence_calibration",
    "fit_isotonic",
    "fleiss_kappa",
    "krippendorff_alpha",
    "label_rows",
    "labelling_probabilities",
    "labels_needed",
    "min_count_for",
    "normalize_answer",
    "pair_stats",
    "pairwise",
    "ppi_mean",
    "ppi_mean_difference",
    "rank_confidence",
    "rank_for_labelling",
    "read_labels",
    "read_ratings",
    "read_result",
    "reliability_diagram",
    "render_calibration",
    "render_report",
    "render_table",
    "route_cascade",
    "sample_for_labelling",
    "select_threshold",
    "shift_test",
    "stratified_ppi_mean",
    "table2_markdown",
    "table2_rows",
    "write_label_template",
]
