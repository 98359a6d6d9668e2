"""Active labelling (`judge labels serve --order informative`): the judge's uncertainty, the
nested Poisson draw, the live estimate, the export's probabilities and `judge estimate` on them;
by simulation, that the intervals cover and the draw narrows them."""

from __future__ import annotations

import csv
import warnings

import numpy as np
import pytest
from helpers.labelling import serve_args
from scipy.special import expit

from agreement import (
    active_ppi_mean,
    active_ppi_mean_difference,
    labelling_probabilities,
    ppi_mean,
)
from agreement.ratings import VERDICT
from judge import estimate_with_labels, load_result
from judge.cli import main
from judge.labelling.active import entry_budgets, verdict_wrong
from judge.labelling.cases import JudgeAnswer, LabelCase, LabelQuestion
from judge.labelling.server import AnswerIn
from judge.labelling.session import open_session
from judge.labelling.store import read_store

WEIGHTS = {"D1": 0.5, "D2": 0.5}


def one_case(answers: dict[str, tuple[str | None, str | None]], verdict: str, split=()):
    """A case of a two-dimension rubric (two questions each): answer and confidence by id."""
    questions = [LabelQuestion(id=q, dimension_id=q[:2], text=q) for q in answers]
    judge = {q: JudgeAnswer(answer=a, confidence=c) for q, (a, c) in answers.items()}
    judge[VERDICT] = JudgeAnswer(answer=verdict)
    return LabelCase(
        incident_id="i",
        trial="1",
        questions=[*questions, LabelQuestion(id=VERDICT, dimension_id="", text="v")],
        judge=judge,
        split_questions=list(split),
    )


# --- the judge's uncertainty -----------------------------------------------------------------


def test_the_verdict_is_as_uncertain_as_the_answers_that_could_flip_it():
    sure = {q: ("Yes", "High") for q in ("D1-Q1", "D1-Q2", "D2-Q1", "D2-Q2")}
    # passes at threshold 0.7 only with 3 or 4 Yes of 4; each Yes is right with 0.9
    p_pass = 0.9**4 + 4 * 0.9**3 * 0.1
    assert verdict_wrong(one_case(sure, "Yes"), WEIGHTS, 0.7) == pytest.approx(1 - p_pass)
    assert verdict_wrong(one_case(sure, "Yes"), WEIGHTS, 0.2) < 1 - p_pass  # far from the bar
    medium = {q: ("Yes", "Medium") for q in sure}
    assert verdict_wrong(one_case(medium, "Yes"), WEIGHTS, 0.7) > 1 - p_pass
    unscored = {**sure, "D2-Q2": (None, None)}
    assert verdict_wrong(one_case(unscored, "Yes"), WEIGHTS, 0.7) > 1 - p_pass
    split = verdict_wrong(one_case(sure, "Yes", split=["D2-Q2"]), WEIGHTS, 0.7)
    assert split == verdict_wrong(one_case(unscored, "Yes"), WEIGHTS, 0.7)  # a coin flip both
    numeric = {q: ("Yes", 0.9) for q in sure}  # a numeric confidence is taken as it is
    assert verdict_wrong(one_case(numeric, "Yes"), WEIGHTS, 0.7) == pytest.approx(1 - p_pass)
    fails = {q: ("No", "High") for q in sure}
    assert verdict_wrong(one_case(fails, "No"), WEIGHTS, 0.7) == pytest.approx(
        0.1**4 + 4 * 0.1**3 * 0.9
    )


# --- the draw --------------------------------------------------------------------------------


def test_entry_budgets_are_the_first_budget_whose_probability_passes_the_draw():
    rng = np.random.default_rng(3)
    for trial in range(100):
        n = int(rng.integers(1, 40))
        u = rng.random(n) * (rng.random(n) < 0.7)
        if trial % 10 == 0:
            u[:] = 0  # no uncertainty anywhere: uniform probabilities
        draws = rng.random(n)
        entry = entry_budgets(u, draws, 0.1)
        brute = np.zeros(n, dtype=int)
        for budget in range(1, n + 1):
            joining = (brute == 0) & (draws < labelling_probabilities(u, budget, floor=0.1))
            brute[joining] = budget
        assert (entry == brute).all()


def test_probabilities_at_the_full_budget_are_one_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (labelling_probabilities([0.1, 0.5, 0.9, 0.0], 4) == 1).all()


def simulated(rng, incidents: int = 150, trials: int = 2):
    """A judge biased toward passing, right on 70% of cases almost always (P(wrong) 0.02) and
    on the rest often wrong (fails it passes 60%, passes it fails 30%), and saying which is
    which through its uncertainty. True pass rate per incident ~ Beta(2, 2): mean 0.5."""
    incident = np.repeat(np.arange(incidents), trials)
    y = (rng.random(len(incident)) < rng.beta(2, 2, incidents)[incident]).astype(float)
    hard = rng.random(len(y)) < 0.3
    wrong = np.where(hard, np.where(y == 0, 0.6, 0.3), 0.02)
    judge = np.where(rng.random(len(y)) < wrong, 1 - y, y)
    return incident, y, judge, np.sqrt(np.where(hard, 0.45, 0.02))


@pytest.mark.slow
def test_the_draw_keeps_the_estimate_valid_and_narrows_it():
    """2,000 datasets of 300 cases: 60 expected labels drawn by uncertainty (the labelling
    budget fixed beforehand, or the labeller stopping after 60 cases in the page's order)
    against 60 labels on a simple random sample."""
    rng = np.random.default_rng(5)
    seen: dict[str, list[tuple[float, float, float]]] = {
        "fixed": [],
        "stopped": [],
        "random": [],
        "judge": [],
    }
    for _ in range(2000):
        incident, y, judge, u = simulated(rng)
        clusters = incident.tolist()
        entry = entry_budgets(u, rng.random(len(y)), 0.1)
        order = sorted(range(len(y)), key=lambda i: (entry[i], -u[i]))
        done = np.zeros(len(y), dtype=bool)
        done[order[:60]] = True
        for name, budget in (("fixed", 60), ("stopped", int(entry[~done].min()) - 1)):
            labels = np.where(entry <= budget, y, np.nan)
            pi = labelling_probabilities(u, budget, floor=0.1)
            est = active_ppi_mean(judge, labels, pi, clusters)
            seen[name].append((est.ppi.value, est.ppi.ci_low, est.ppi.ci_high))
        seen["judge"].append((est.judge_only.value, est.judge_only.ci_low, est.judge_only.ci_high))
        labels = np.full(len(y), np.nan)
        chosen = rng.choice(len(y), 60, replace=False)
        labels[chosen] = y[chosen]
        est = ppi_mean(judge, labels, clusters).ppi
        seen["random"].append((est.value, est.ci_low, est.ci_high))
    runs = {k: np.array(v) for k, v in seen.items()}
    cover = {k: float(np.mean((a[:, 1] <= 0.5) & (a[:, 2] >= 0.5))) for k, a in runs.items()}
    width = {k: float(np.mean(a[:, 2] - a[:, 1])) for k, a in runs.items()}
    bias = {k: float(np.mean(a[:, 0]) - 0.5) for k, a in runs.items()}
    # Seen: coverage fixed 0.9405, stopped 0.9395, random 0.94, judge alone 0.6475; bias
    # -0.003, -0.003, +0.001, +0.046; mean width 0.170, 0.172, 0.199.
    assert 0.93 <= cover["fixed"] <= 0.97 and 0.93 <= cover["stopped"] <= 0.97
    assert cover["judge"] < 0.8
    assert abs(bias["fixed"]) < 0.01 and abs(bias["stopped"]) < 0.01
    assert width["fixed"] < 0.92 * width["random"]


def test_an_active_difference_is_each_side_apart_with_shared_incidents_one_cluster():
    rng = np.random.default_rng(8)
    incident, y, judge, u = simulated(rng, incidents=40, trials=2)
    pi = labelling_probabilities(u, 30, floor=0.1)
    labels = np.where(rng.random(len(y)) < pi, y, np.nan)
    a, b = slice(0, 40), slice(40, 80)
    alone = [active_ppi_mean(judge[s], labels[s], pi[s], incident[s].tolist()) for s in (a, b)]
    args = (judge[a], labels[a], pi[a], judge[b], labels[b], pi[b])
    diff = active_ppi_mean_difference(
        *args, clusters_a=incident[a].tolist(), clusters_b=incident[b].tolist()
    )
    assert diff.ppi.value == pytest.approx(alone[0].ppi.value - alone[1].ppi.value)
    assert diff.judge_only.value == pytest.approx(
        alone[0].judge_only.value - alone[1].judge_only.value
    )
    assert diff.ppi.se**2 == pytest.approx(alone[0].ppi.se ** 2 + alone[1].ppi.se ** 2)  # disjoint

    def fixed(clusters_a, clusters_b):  # a fixed λ: the clusters then change only the se
        return active_ppi_mean_difference(
            *args, clusters_a=clusters_a, clusters_b=clusters_b, lam=0.5
        ).ppi

    apart = fixed(incident[a].tolist(), incident[b].tolist())
    shared = fixed(list(range(40)), list(range(40)))
    assert shared.value == pytest.approx(apart.value) and shared.se != apart.se


def test_active_differences_cover_with_incidents_both_agents_ran():
    """1,000 datasets: two agents on the same 100 incidents (an incident's difficulty moves
    both), B's pass chance below A's; 60 expected labels over the 200 cases, drawn by the
    judge's uncertainty."""
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(1000):
        difficulty = rng.normal(0, 1, 100)
        chance_a, chance_b = expit(difficulty + 0.4), expit(difficulty)
        y = (rng.random(200) < np.concatenate([chance_a, chance_b])).astype(float)
        hard = rng.random(200) < 0.3
        wrong = np.where(hard, np.where(y == 0, 0.6, 0.3), 0.02)
        judge = np.where(rng.random(200) < wrong, 1 - y, y)
        u = np.sqrt(np.where(hard, 0.45, 0.02))
        pi = labelling_probabilities(u, 60, floor=0.1)
        labels = np.where(entry_budgets(u, rng.random(200), 0.1) <= 60, y, np.nan)
        incidents = list(range(100))
        d = active_ppi_mean_difference(
            judge[:100],
            labels[:100],
            pi[:100],
            judge[100:],
            labels[100:],
            pi[100:],
            clusters_a=incidents,
            clusters_b=incidents,
        ).ppi
        truth = chance_a.mean() - chance_b.mean()
        hits += d.ci_low <= truth <= d.ci_high
    assert 0.93 <= hits / 1000 <= 0.97  # seen: 0.941


# --- the session, the page's estimate, the export ---------------------------------------------


def label_in_order(app, cases: list[int], answer: str = "Yes") -> None:
    for index in cases:
        for q in app.cases[index].questions:
            app.answer(AnswerIn(case=index, question_id=q.id, answer=answer))


def test_an_informative_session_draws_records_and_estimates_as_labels_arrive(
    labelling_dataset, tmp_path
):
    store = tmp_path / "a.jsonl"
    with open_session(serve_args(labelling_dataset, order="informative", seed=4), store) as server:
        app = server.app
        design = read_store(store).sessions[-1].design
        assert design is not None and design["seed"] == 4
        keys = [tuple(k) for k in design["cases"]]
        shown = [(c.incident_id, c.trial) for c in app.cases]
        entry = dict(zip(keys, design["entry"], strict=True))
        assert sorted(shown) == sorted(keys)  # every case with a verdict, none twice
        assert [entry[k] for k in shown] == sorted(entry[k] for k in shown)
        assert app.overview()["estimate"] is True
        before = app.estimate()
        assert before["judge"]["value"] is not None and before["ppi"]["value"] is None
        assert before["in_sample"] == 0
        label_in_order(app, range(len(app.cases)))
        after = app.estimate()
    assert after["in_sample"] == after["done"] == len(keys)
    assert after["ppi"]["value"] == after["labels_only"]["value"] == 1.0  # all labelled Yes
    out = tmp_path / "labels.csv"
    assert main(["labels", "export", str(store), "-o", str(out)]) == 0
    rows = list(csv.DictReader(out.open(encoding="utf-8-sig")))
    assert {r["design"] for r in rows} == {"informative"}
    assert {r["probability"] for r in rows} == {"1.0"}  # every case labelled: the full budget
    assert {r["rubric_hash"] for r in rows} == {
        load_result(labelling_dataset[0]).config["rubric"]["hash"]
    }


def test_labels_past_the_sample_wait_and_the_estimate_weights_by_probability(
    labelling_dataset, tmp_path, capsys
):
    store = tmp_path / "a.jsonl"
    with open_session(serve_args(labelling_dataset, order="informative", seed=2), store) as server:
        app = server.app
        n = len(app.cases)
        label_in_order(app, range(n - 3))  # the page's first cases
        label_in_order(app, [n - 1], "No")  # and the last one, out of turn
    out = tmp_path / "labels.csv"
    assert main(["labels", "export", str(store), "-o", str(out)]) == 0
    assert "largest fully labelled sample" in capsys.readouterr().out
    rows = list(csv.DictReader(out.open(encoding="utf-8-sig")))
    pi = {(r["incident_id"], r["trial"]): r["probability"] for r in rows}
    last = app.cases[-1]
    assert pi[(last.incident_id, last.trial)] == ""  # past the sample: waits
    drawn = {k: float(v) for k, v in pi.items() if v}
    assert 0 < len(drawn) <= n - 3 and all(0 < p <= 1 for p in drawn.values())

    got = estimate_with_labels(labelling_dataset[0], out)
    assert got.design == "drawn with recorded probabilities"
    assert any("not drawn by the labelling design" in note for note in got.notes)
    result = load_result(labelling_dataset[0])
    complete = [c for c in result.cases if c.passed is not None]
    judge = [float(c.passed) for c in complete]
    keys = [(c.incident_id, c.trial) for c in complete]
    labels = [1.0 if k in drawn else np.nan for k in keys]
    probabilities = [drawn.get(k, 1.0) for k in keys]
    expected = active_ppi_mean(judge, labels, probabilities, [k[0] for k in keys])
    assert got.pass_rate == expected
    [pair] = got.differences  # the two example agents of the first eight cases
    assert pair.difference.ppi.method == "active PPI++"
    assert main(["estimate", "--result", str(labelling_dataset[0]), "--labels", str(out)]) == 0
    assert "drawn with recorded probabilities" in capsys.readouterr().out


def test_sample_limits_the_draw_and_filters_are_refused(labelling_dataset, tmp_path, capsys):
    store = tmp_path / "a.jsonl"
    with open_session(
        serve_args(labelling_dataset, order="informative", sample=3), store
    ) as server:
        design = read_store(store).sessions[-1].design
        assert len(server.app.cases) == sum(e <= 3 for e in design["entry"])
    result, gt, outputs = labelling_dataset
    common = [str(result), "--ground-truth", str(gt), "--outputs", str(outputs), "--no-browser"]
    args = ["labels", "serve", *common, "--labeller", "a", "--order", "informative"]
    assert main([*args, "--incident", "x", "--disagreements"]) == 2
    err = capsys.readouterr().err
    assert "--order informative draws from every case" in err and "--incident" in err
