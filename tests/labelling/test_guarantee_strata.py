"""`judge estimate --by` (issue 39): stratified PPI++ (Fisch et al. 2024) with the
finite-population correction: valid intervals for the run's own means when the judge is
wrong more often in some strata and the labels are spread over the strata unevenly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import EXAMPLE, EXAMPLE_GT, EXAMPLE_OUTPUTS

from agreement import ppi_mean, stratified_ppi_mean
from judge import CaseResult
from judge.cli import main
from judge.labelling.estimate import stratum


def _population(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    """600 cases where the judge is right 95% of the time and 200 where it passes whatever it
    sees but 60%; 30 labels in the first stratum, 100 in the second."""
    y_a = (rng.random(600) < 0.5).astype(float)
    f_a = np.where(rng.random(600) < 0.95, y_a, 1 - y_a)
    y_b = (rng.random(200) < 0.3).astype(float)
    f_b = np.where(rng.random(200) < 0.6, y_b, 1.0)
    f, y = np.concatenate([f_a, f_b]), np.concatenate([y_a, y_b])
    labels = np.full(800, np.nan)
    chosen = np.concatenate(
        [rng.choice(600, 30, replace=False), 600 + rng.choice(200, 100, replace=False)]
    )
    labels[chosen] = y[chosen]
    return f, labels, ["a"] * 600 + ["b"] * 200, y


def test_stratified_intervals_cover_the_runs_mean_where_one_correction_does_not() -> None:
    rng = np.random.default_rng(39)
    stratified = pooled = 0
    trials = 200
    for _ in range(trials):
        f, labels, strata, y = _population(rng)
        truth = y.mean()
        est = stratified_ppi_mean(f, labels, strata).ppi
        stratified += est.ci_low <= truth <= est.ci_high  # type: ignore[operator]
        one = ppi_mean(f, labels).ppi
        pooled += one.ci_low <= truth <= one.ci_high  # type: ignore[operator]
    assert stratified >= 0.9 * trials  # seen 0.935 of 400 at 95%: the normal interval's slack
    assert pooled <= 0.2 * trials  # one correction for both strata: seen 0.02


def test_a_fully_labelled_population_is_known_exactly() -> None:
    rng = np.random.default_rng(1)
    y = (rng.random(50) < 0.4).astype(float)
    f = np.where(rng.random(50) < 0.8, y, 1 - y)
    est = stratified_ppi_mean(f, y, ["a"] * 25 + ["b"] * 25)
    assert est.ppi.value == pytest.approx(y.mean()) and est.ppi.se == 0
    unbounded = stratified_ppi_mean(f, y, ["a"] * 25 + ["b"] * 25, finite_population=False)
    assert unbounded.ppi.se is not None and unbounded.ppi.se > 0


def test_the_correction_shrinks_the_variance_by_one_minus_the_share_labelled() -> None:
    rng = np.random.default_rng(2)
    y = (rng.random(100) < 0.5).astype(float)
    labels = np.where(np.arange(100) < 40, y, np.nan)
    finite = stratified_ppi_mean(np.zeros(100), labels, ["a"] * 100).labels_only
    unbounded = stratified_ppi_mean(
        np.zeros(100), labels, ["a"] * 100, finite_population=False
    ).labels_only
    assert finite.se == pytest.approx(unbounded.se * np.sqrt(1 - 40 / 100))  # type: ignore[operator]


def test_a_stratum_without_labels_is_named() -> None:
    labels = [1.0, 0.0, np.nan, np.nan]
    est = stratified_ppi_mean([1.0, 0.0, 1.0, 1.0], labels, ["a", "a", "b", "b"])
    assert est.ppi.value is None
    assert est.ppi.note == "every stratum needs labels: b (no labels)"
    assert est.strata[0].ppi.value is not None and est.strata[1].ppi.note == "no labels"


@pytest.mark.parametrize(
    ("incident", "family"),
    [
        ("revoke_auth_mongodb-2", "revoke_auth_mongodb"),
        ("misconfig_app_hotel_res_3", "misconfig_app_hotel_res"),
        ("Scenario-16", "Scenario"),
        ("network_policy_block", "network_policy_block"),
        ("42", "42"),
    ],
)
def test_an_incident_family_drops_the_instance_number(incident: str, family: str) -> None:
    case = CaseResult(
        incident_id=incident, trial="1", composite=None, passed=None, complete=False, dimensions=[]
    )
    assert stratum(case, "incident-family") == family
    assert stratum(case, "benchmark") == "(not recorded)"
    assert stratum(case.model_copy(update={"format": "sregym"}), "benchmark") == "sregym"


@pytest.mark.slow  # a judge run and three commands: seconds
def test_the_command_estimates_by_stratum(tmp_path: Path, capsys) -> None:
    result = tmp_path / "r.json"
    assert main(["eval", "--ground-truth", str(EXAMPLE_GT), "--outputs",
                 str(EXAMPLE_OUTPUTS), "--result-file", str(result), "--no-progress"]) == 0  # fmt: skip
    capsys.readouterr()
    labels = str(EXAMPLE / "labels.csv")
    assert (
        main(
            [
                "estimate",
                "--result",
                str(result),
                "--labels",
                labels,
                "--by",
                "incident-family",
                "--json",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    stratified = data["stratified"]
    assert stratified["by"] == "incident-family"
    strata = stratified["pass_rate"]["strata"]
    assert sum(s["n_items"] for s in strata) == data["n_cases"]
    assert main(["estimate", "--result", str(result), "--labels", labels, "--by", "benchmark"]) == 0
    assert "stratified by benchmark" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit) as bad:
        main(["estimate", "--result", str(result), "--labels", labels, "--by", "model"])
    assert bad.value.code == 2
