"""`judge audit` end to end over real HTTP to the fake provider on 127.0.0.1: the plan said
before asking, a planted bias failing `--fail-on-bias` (exit 1) and an unbiased judge passing
it, a rerun answered by the store, `--sample`, the report file and the HTML section, bad flags
(exit 2), `--max-cost` (exit 3); and the self-grading warning of `judge eval`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import EXAMPLE

from judge import AuditReport
from judge.audit.render import summary_lines
from judge.cli import main
from judge.testing import FakeProvider, FakeProviderConfig
from judge.testing.answers import grounded_policy
from judge.testing.biases import PlantedBiases

GROUND_TRUTH = EXAMPLE / "ground_truth"
OUTPUTS = EXAMPLE / "outputs"


def audit(capsys, tmp_path: Path, provider: FakeProvider | None, *flags: str):
    model = ["--judge-model", "openai/gpt-4o-mini", "--api-base", provider.url] if provider else []
    try:
        code = main(
            ["audit", "-g", str(GROUND_TRUTH), "-o", str(OUTPUTS), "--no-progress", "--json",
             "--store", str(tmp_path / "s.sqlite"), "-r", str(tmp_path / "audit.json"),
             "--cooldown-after", "0", *model, *flags]
        )  # fmt: skip
    except SystemExit as exit:  # argparse refused a flag's value
        code = exit.code
    captured = capsys.readouterr()
    report = json.loads(captured.out) if captured.out.strip() else None
    return code, report, captured.err


def grounded(**biases) -> FakeProviderConfig:
    return FakeProviderConfig(answer_policy=grounded_policy, biases=PlantedBiases(**biases))


def test_a_planted_bias_fails_the_gate_and_a_rerun_asks_nothing(capsys, tmp_path: Path) -> None:
    with FakeProvider(grounded(yes_first=3)) as provider:
        code, report, said = audit(capsys, tmp_path, provider, "--sample", "8", "--fail-on-bias")
        asked = len(provider.calls)
        again, second, said_again = audit(capsys, tmp_path, provider, "--sample", "8")
        asked_again = len(provider.calls) - asked
    assert "8 cases in every arm: 64 calls to make, 0 answered by the store" in said
    assert code == 1 and report["exit_code"] == 1 and "order" in report["exit_reason"]
    assert report["biased"] == ["order"] and asked == 64
    assert report["n_cases"] == 8 and report["n_incidents"] == 8 and report["sampled"]
    assert report["run_calls"] == 8 and report["audit_calls"] == 56 and report["cost_ratio"] == 7
    assert again == 0 and asked_again == 0 and "0 calls to make, 64 answered" in said_again
    assert second["probes"] == report["probes"]
    written = json.loads((tmp_path / "audit.json").read_text())
    assert written["biased"] == ["order"] and written["exit_code"] == 0  # the second run's


@pytest.mark.slow
def test_an_unbiased_judge_passes_the_gate_and_the_html_shows_every_probe(
    capsys, tmp_path: Path
) -> None:
    html = tmp_path / "audit.html"
    with FakeProvider(grounded(flip_rate=0.1)) as provider:
        code, report, _ = audit(
            capsys, tmp_path, provider, "--fail-on-bias", "--html", str(html), "--order-seeds", "1"
        )
    assert code == 0 and report["biased"] == []
    assert report["noise"]["measured"] and report["noise"]["flip_rate"]["ci_low"] > 0
    page = html.read_text()
    assert 'id="audit"' in page and "Judge audit" in page
    figures = page[page.index('id="audit"') :].count("<svg")
    ran = [p for p in report["probes"] if not p["skipped"]]
    assert figures == len(ran) + 1  # one picture per probe and one of the noise floor
    assert (
        "self-grading: 1 of 32 submissions come from agents of the judge's model family"
        in (report["self_grading"] and json.dumps(report))
        or report["self_grading"]["n_own"] == 1
    )


def test_the_rules_judge_is_audited_offline_and_its_noise_taken_as_none(
    capsys, tmp_path: Path
) -> None:
    code, report, said = audit(capsys, tmp_path, None, "--probes", "order,noise,self")
    assert code == 0 and "answered offline (no provider, no cost)" in said
    assert [p["probe"] for p in report["probes"]] == ["order", "self"]
    assert report["probes"][1]["skipped"].startswith("no model family is known for rules")
    assert not report["noise"]["measured"] and "deterministic" in report["noise"]["skipped"]
    assert report["probes"][0]["yes_shift"]["value"] == 0


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--probes", "order,tone"], "--probes"),
        (["--tolerance", "1.5"], "--tolerance"),
        (["--order-seeds", "0"], "--order-seeds"),
        (["--sample", "0"], "--sample"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(capsys, tmp_path: Path, flags, named) -> None:
    code, report, said = audit(capsys, tmp_path, None, *flags)
    assert code == 2 and report is None and named in said
    assert not (tmp_path / "audit.json").exists()


def test_max_cost_stops_the_audit_with_exit_3(capsys, tmp_path: Path) -> None:
    with FakeProvider(grounded()) as provider:
        code, report, _ = audit(
            capsys, tmp_path, provider, "--max-cost", "0.0005", "--max-concurrent", "1"
        )
    assert code == 3 and report["exit_code"] == 3 and not report["complete"]
    assert "stopped" in report["notes"][0]
    assert any(p["skipped"] and "stopped" in p["skipped"] for p in report["probes"])


def test_eval_warns_when_a_submission_comes_from_the_judges_family(capsys, tmp_path: Path) -> None:
    result = tmp_path / "r.json"
    with FakeProvider(grounded()) as provider:
        code = main(
            ["eval", "-g", str(GROUND_TRUTH), "-o", str(OUTPUTS), "-r", str(result),
             "--no-progress", "--no-store", "--judge-model", "openai/gpt-4o-mini",
             "--api-base", provider.url]
        )  # fmt: skip
    said = " ".join(capsys.readouterr().out.split())
    warning = "self-grading: 1 of 32 submissions come from agents of the judge's model family"
    assert code == 0 and warning in said and "codex (Codex CLI)" in said
    assert any(w.startswith(warning) for w in json.loads(result.read_text())["warnings"])
    rules = tmp_path / "rules.json"
    assert main(["eval", "-g", str(GROUND_TRUTH), "-o", str(OUTPUTS), "-r", str(rules)]) == 0
    assert not any("self-grading" in w for w in json.loads(rules.read_text())["warnings"])


def test_a_probe_whose_calls_all_failed_says_not_measured_not_no_bias(
    capsys, tmp_path: Path
) -> None:
    base_answers = FakeProviderConfig(
        answer_policy=grounded_policy, fault_schedule=["ok", "ok", "server_error", "server_error"]
    )
    with FakeProvider(base_answers) as provider:
        code, report, said = audit(
            capsys, tmp_path, provider, "--sample", "2", "--probes", "order", "--order-seeds",
            "1", "--max-retries", "0", "--max-concurrent", "1", "--fail-on-bias",
        )  # fmt: skip
    assert code == 3 and "arm order-1: the judge failed on 2 of 2 calls" in said
    assert report["biased"] == [] and report["complete"]
    audited = AuditReport.model_validate(report)
    (order,) = audited.probes
    assert not order.measured and order.verdict == "not measured"
    assert summary_lines(audited)[0] == "biases found: none; not measured: order"


def test_an_arm_whose_every_call_failed_ends_the_audit(capsys, tmp_path: Path) -> None:
    with FakeProvider(FakeProviderConfig(fault_rates={"server_error": 1.0})) as provider:
        code, report, said = audit(
            capsys, tmp_path, provider, "--sample", "2", "--max-retries", "0"
        )
        asked = len(provider.calls)
    assert code == 3 and "arm base: the judge failed on 2 of 2 calls" in said
    assert asked == 2 and [a["name"] for a in report["arms"]] == ["base"]
    assert not report["complete"] and "failed on every call" in report["notes"][-1]
    assert all(p["skipped"] for p in report["probes"]) and not report["noise"]["measured"]
