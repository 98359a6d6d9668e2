"""`benchmarks/validity.py --set real`: the real-agent set loaded as `judge eval` would load it,
reported test split first, per source and pooled, with the labellers' ceiling; on a tiny set."""

from __future__ import annotations

import hashlib
import io
import json
import warnings
from pathlib import Path

import pytest
import yaml
from helpers import REPO, write_label_sheet
from helpers.validity import QUESTIONS, validity
from sklearn.metrics import cohen_kappa_score

from ground_truth import Submission, load_specs, load_submissions
from judge import evaluate

real = validity.real
PORT = (
    "[fault_spec] component=deployment/checkout; namespace=astronomy-shop || The "
    "PRODUCT_CATALOG_ADDR environment variable points to the wrong backend port (8082 instead of "
    "8080), so checkout cannot reach product-catalog."
)
FORGE = "tests/fixtures/formats/forge/label_Online-Boutique-cloudbed-1.csv"
ITBENCH = "tests/fixtures/formats/itbench/synthetic/ground_truths.json"
OUTPUT = (
    REPO / "tests/fixtures/formats/itbench/synthetic/agent_outputs_current/2/1/agent_output.json"
)
PROSE = "The cartFailure flag was switched on in flagd-config, so cart's EmptyCart fails."


def _case(source: str, n: int, fmt: str, incident: str, **fields) -> dict:
    return {
        "case": f"{source}-{n:03d}",
        "source": source,
        "agent": "an agent",
        "benchmark": fmt,
        "format": fmt,
        "incident_id": incident,
        "cut": "the final answer",
        "origin": {"repo": "someone/runs", "commit": "c0ffee", "path": "p", "locator": "file"},
        **fields,
    }


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


SOURCES = {
    "sregym-x": [
        _case(
            "sregym-x",
            1,
            "sregym",
            "incorrect_port_assignment",
            ground_truth=PORT,
            diagnosis="checkout's PRODUCT_CATALOG_ADDR points at port 8082 instead of 8080, so"
            " checkout cannot reach product-catalog and checkouts fail.",
        ),
        _case(
            "sregym-x",
            2,
            "sregym",
            "incorrect_port_assignment",
            ground_truth=PORT,
            diagnosis="frontend is slow; probably a networking issue.",
        ),
    ],
    "itbench-y": [
        # text rebuilt into the cache: an agent output, read through the ITBench adapter
        _case(
            "itbench-y",
            1,
            "itbench",
            "2",
            spec_path=ITBENCH,
            diagnosis=None,
            diagnosis_sha256=_sha(OUTPUT.read_text(encoding="utf-8")),
        ),
        # a final message of prose: judged on its text, and said so
        _case("itbench-y", 2, "itbench", "2", spec_path=ITBENCH, diagnosis=PROSE),
        # no text anywhere: listed with the reason, never dropped silently
        _case("itbench-y", 3, "itbench", "1", spec_path=ITBENCH, diagnosis=None),
    ],
    "forge-w": [
        _case(
            "forge-w",
            1,
            "forge",
            "Online-Boutique-cloudbed-1-0",
            spec_path=FORGE,
            diagnosis='{"root_causes": [{"type": "network latency", "location": "cartservice"}]}',
        ),
        _case(
            "forge-w",
            2,
            "forge",
            "Online-Boutique-cloudbed-1-1",
            spec_path=FORGE,
            diagnosis='{"root_causes": [{"type": "memory", "location": "node-5"}]}',
        ),
    ],
    "nolabels-z": [
        _case("nolabels-z", 1, "sregym", "x_problem", ground_truth=PORT, diagnosis="checkout."),
    ],
}
SPLIT = {"test": ["sregym-x", "itbench-y", "nolabels-z"], "tune": ["forge-w"]}
LABELLED = ["sregym-x-001", "sregym-x-002", "itbench-y-001", "itbench-y-002"]
FLIPS = {("sregym-x-002", "D2-Q3"), ("itbench-y-002", "D1-Q1"), ("forge-w-001", "D2-Q1")}


def _write_set(root: Path, sources: dict = SOURCES, split: dict = SPLIT) -> Path:
    (root / "cases").mkdir(parents=True)
    (root / "labels").mkdir()
    for source, cases in sources.items():
        (root / "cases" / f"{source}.yaml").write_text(yaml.safe_dump(cases), encoding="utf-8")
    (root / "split.json").write_text(json.dumps(split), encoding="utf-8")
    (root / ".cache").mkdir()
    (root / ".cache" / "itbench-y-001.txt").write_text(OUTPUT.read_text(encoding="utf-8"))
    return root


def _judged(tmp: Path) -> tuple[dict[tuple[str, str, str], str | None], dict[str, float | None]]:
    """The rules judge on the cases with text, computed here apart from the script."""
    cases = [c for cases in SOURCES.values() for c in cases if c["case"] != "itbench-y-003"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        itbench = {s.id: s for s in load_specs(REPO / ITBENCH, format="itbench")}
        forge = {s.id: s for s in load_specs(REPO / FORGE, format="forge")}
        output = load_submissions(OUTPUT.parent.parent.parent)[0]
    registry = tmp / "root_causes.json"
    registry.write_text(json.dumps({"incorrect_port_assignment": PORT, "x_problem": PORT}))
    port = load_specs(registry, format="sregym")
    specs = [*port, itbench["2"], forge["Online-Boutique-cloudbed-1-0"]]
    specs.append(forge["Online-Boutique-cloudbed-1-1"])
    subs = []
    for c in cases:
        if c["case"] == "itbench-y-001":
            sub = output.model_copy(update={"incident_id": "2", "trial": c["case"]})
        else:
            sub = Submission(
                incident_id=c["incident_id"], trial=c["case"], diagnosis=c["diagnosis"]
            )
        subs.append(sub)
    result = evaluate(specs, subs)
    answers = {(j.incident_id, j.trial, j.question_id): j.answer for j in result.judgments}
    return answers, {c.trial: c.composite for c in result.cases}


def _labels(judged, keep) -> dict[tuple[str, str, str], str]:
    """Labeller a: the judge's answers, except the FLIPS."""
    out = {}
    for (incident, trial, question), answer in judged.items():
        if keep(trial):
            answer = answer or "Yes"
            if (trial, question) in FLIPS:
                answer = "No" if answer == "Yes" else "Yes"
            out[(incident, trial, question)] = answer
    return out


def _composite(labels, trial: str) -> float:
    weights = {"D1": 0.33, "D2": 0.33, "D3": 0.34}
    total = 0.0
    for dim, weight in weights.items():
        mine = [a for (_, t, q), a in labels.items() if t == trial and q.startswith(dim)]
        total += weight * mine.count("Yes") / 3
    return total


@pytest.fixture
def tiny(tmp_path):
    root = _write_set(tmp_path / "real")
    judged, composites = _judged(tmp_path)
    a = _labels(judged, lambda t: t in LABELLED or t.startswith("forge-w"))
    b = {k: v for k, v in a.items() if k[1] in ("sregym-x-001", "itbench-y-002")}
    b[("2", "itbench-y-002", "D3-Q2")] = (
        "No" if b[("2", "itbench-y-002", "D3-Q2")] == "Yes" else "Yes"
    )
    for source in SOURCES:
        mine = {k: v for k, v in a.items() if k[1].startswith(source)}
        if mine:
            write_label_sheet(root / "labels" / f"{source}.a.csv", mine, "a")
    write_label_sheet(
        root / "labels" / "sregym-x.b.csv", {k: v for k, v in b.items() if "sregym" in k[1]}, "b"
    )
    write_label_sheet(
        root / "labels" / "itbench-y.b.csv", {k: v for k, v in b.items() if "itbench" in k[1]}, "b"
    )
    return root, judged, composites, a, b


def _run(root: Path, tmp_path: Path, *extra: str) -> tuple[int, str, dict]:
    out = io.StringIO()
    argv = ["--set", "real", "--real-root", str(root), "--corpus", str(tmp_path / "no-corpus")]
    code = validity.main(
        [*argv, "--bootstrap", "50", "--json", str(tmp_path / "r.json"), *extra], out=out
    )
    report = json.loads((tmp_path / "r.json").read_text()) if code == 0 else {}
    return code, out.getvalue(), report


def test_the_test_split_comes_first_per_source_and_pooled(tiny, tmp_path):
    root, judged, composites, a, _ = tiny
    code, text, report = _run(root, tmp_path)
    assert code == 0
    real_report = report["real"]
    assert report["handwritten"] is None
    assert [s["split"] for s in real_report["splits"]] == ["test", "tune"]
    assert text.index("TEST split") < text.index("TUNE split") < text.index("Ceiling:")
    test = real_report["splits"][0]
    assert [n["source"] for n in test["sources"]] == ["sregym-x", "itbench-y", "nolabels-z"]

    pooled = test["pooled"]
    assert pooled["cases"] == 5  # itbench-y-003 has no text
    vs_a = next(c for c in pooled["vs_labellers"] if c["reference"] == "a")
    keys = sorted(k for k in a if k[1] in LABELLED and judged[k] is not None)
    expected = cohen_kappa_score(
        [judged[k] for k in keys], [a[k] for k in keys], labels=["No", "Yes"]
    )
    assert vs_a["pooled"]["n"] == len(keys)
    assert vs_a["pooled"]["kappa"]["value"] == pytest.approx(expected)
    judge_pass = {t: composites[t] >= 0.7 for t in LABELLED}
    label_pass = {t: _composite(a, t) >= 0.7 for t in LABELLED}
    assert vs_a["false_pass"] == sum(judge_pass[t] and not label_pass[t] for t in LABELLED)
    assert vs_a["false_fail"] == sum(label_pass[t] and not judge_pass[t] for t in LABELLED)
    assert vs_a["verdict_accuracy"]["value"] == pytest.approx(
        sum(judge_pass[t] == label_pass[t] for t in LABELLED) / 4
    )
    assert vs_a["verdict"]["kappa"]["ci_low"] is not None or vs_a["verdict"]["kappa"]["undefined"]
    asked = sum(1 for k in judged if k[1] in {c["case"] for c in _test_cases()})
    assert pooled["questions_asked"] == asked
    assert pooled["unscored"] == sum(
        judged[k] is None for k in judged if k[1] in {c["case"] for c in _test_cases()}
    )


def _test_cases() -> list[dict]:
    return [c for s in SPLIT["test"] for c in SOURCES[s] if c["case"] != "itbench-y-003"]


def test_specs_come_from_the_adapters_and_itbench_outputs_from_the_itbench_adapter(tiny):
    from judge import load_rubric

    root = tiny[0]
    run = validity.prepare_real(
        root, ["test", "tune"], None, root / ".cache", root / "no-corpus", load_rubric("sregym-v3")
    )
    specs = {s.id: s for s in run.specs}
    assert specs["2"].fault_origin[0].name == "flagd-config"  # picked out of a 5-incident file
    assert specs["Online-Boutique-cloudbed-1-1"].fault_origin[0].name == "adservice"
    assert specs["incorrect_port_assignment"].source["format"] == "sregym"
    subs = {s.trial: s for s in run.submissions}
    assert subs["itbench-y-001"].entities and subs["itbench-y-001"].incident_id == "2"
    assert subs["itbench-y-002"].diagnosis == PROSE and not subs["itbench-y-002"].entities
    assert "not JSON" in run.judged_as_text["itbench-y-002"]


def test_missing_texts_and_unlabelled_sources_are_listed_not_dropped(tiny, tmp_path):
    root = tiny[0]
    code, text, report = _run(root, tmp_path)
    assert code == 0
    missing = report["real"]["missing_texts"]
    assert [m["case"] for m in missing] == ["itbench-y-003"]
    assert "not shipped" in missing[0]["reason"]
    assert real.REBUILD_COMMAND in text and "itbench-y: 1 cases (003)" in text
    assert report["real"]["unlabelled_sources"] == ["nolabels-z"]
    assert "No labels yet (judged, not measured): nolabels-z" in text
    assert "no labels from a" in text
    assert report["real"]["without_labels"]["b"] == ["nolabels-z", "forge-w"]
    assert "No label sheet from labeller b: forge-w\n" in text


def test_the_ceiling_is_labeller_against_labeller_on_cases_both_labelled(tiny, tmp_path):
    root, _, _, a, b = tiny
    code, text, report = _run(root, tmp_path)
    assert code == 0
    ceiling = {c["scope"]: c["comparison"] for c in report["real"]["ceiling"]}
    assert set(ceiling) == {"test", "tune", "pooled"}
    assert ceiling["tune"] is None  # b labelled no tune case
    keys = sorted(b)
    expected = cohen_kappa_score([a[k] for k in keys], [b[k] for k in keys], labels=["No", "Yes"])
    assert ceiling["test"]["cases"] == 2
    assert ceiling["test"]["pooled"]["n"] == 18
    assert ceiling["test"]["pooled"]["kappa"]["value"] == pytest.approx(expected)
    assert ceiling["pooled"]["pooled"]["kappa"]["value"] == pytest.approx(expected)
    assert "not by people outside the project" in text
    assert "helper sessions following benchmarks/validity/real/GUIDE.md" in text


def test_selection_by_split_and_source(tiny, tmp_path):
    root = tiny[0]
    code, text, report = _run(root, tmp_path, "--split", "tune")
    assert [s["split"] for s in report["real"]["splits"]] == ["tune"]
    assert "TEST split" not in text
    code, text, report = _run(root, tmp_path, "--source", "sregym-x")
    assert code == 0
    (split,) = report["real"]["splits"]
    assert [n["source"] for n in split["sources"]] == ["sregym-x"]


def test_a_stale_cache_text_is_refused(tiny, tmp_path):
    root = tiny[0]
    (root / ".cache" / "itbench-y-001.txt").write_text("{}", encoding="utf-8")
    code, _, report = _run(root, tmp_path)
    reasons = {m["case"]: m["reason"] for m in report["real"]["missing_texts"]}
    assert "does not match diagnosis_sha256" in reasons["itbench-y-001"]
    code, _, report = _run(root, tmp_path, "--no-cache")
    assert code == 0
    assert "itbench-y-001" in {m["case"] for m in report["real"]["missing_texts"]}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s, sp: sp["test"].remove("nolabels-z"), "case file(s) in no split: nolabels-z"),
        (lambda s, sp: sp["tune"].append("sregym-x"), "more than one split: sregym-x"),
        (
            lambda s, sp: s["forge-w"][0].update(incident_id="Online-Boutique-cloudbed-1-999"),
            "incident 'Online-Boutique-cloudbed-1-999' is not among",
        ),
        (lambda s, sp: s["forge-w"][0].update(colour="red"), "forge-w.yaml: [0].colour"),
        (
            lambda s, sp: s["nolabels-z"][0].update(ground_truth=PORT + " Also."),
            "incident 'x_problem' has another spec",
        ),
    ],
)
def test_bad_set_files_exit_2_naming_what_is_wrong(tmp_path, capsys, edit, message):
    sources = json.loads(json.dumps(SOURCES))
    split = json.loads(json.dumps(SPLIT))
    if "another spec" in message:
        sources["nolabels-z"].append({**sources["nolabels-z"][0], "case": "nolabels-z-002"})
    edit(sources, split)
    root = _write_set(tmp_path / "real", sources, split)
    code, _, _ = _run(root, tmp_path)
    assert code == 2
    assert message in capsys.readouterr().err


def test_unknown_source_and_result_file_with_both_sets_are_refused(tiny, tmp_path, capsys):
    code, _, _ = _run(tiny[0], tmp_path, "--source", "nope")
    assert code == 2 and "unknown source(s) nope" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        validity.main(["--result-file", str(tmp_path / "r.json")], out=io.StringIO())
    assert exited.value.code == 2
    assert "--result-file writes one judge run" in capsys.readouterr().err


def test_the_committed_real_set_is_sound():
    assert validity.check_real_set() == []
    split = real.read_split()
    assert set(split) == {"test", "tune"}


def test_check_real_set_reports_bad_label_sheets(tiny):
    root = tiny[0]
    rows = {("incorrect_port_assignment", "sregym-x-001", q): "Yes" for q in QUESTIONS[:8]}
    rows[("ghost", "sregym-x-009", "D1-Q1")] = "No"
    write_label_sheet(root / "labels" / "sregym-x.c.csv", rows, "c")
    problems = "\n".join(validity.check_real_set(root))
    assert (
        "sregym-x.c.csv: sregym-x-001 (incorrect_port_assignment): no label for D3-Q3" in problems
    )
    assert (
        "sregym-x.c.csv: sregym-x-009 (ghost): labels a case that is not in sregym-x.yaml"
        in problems
    )
