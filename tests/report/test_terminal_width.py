"""Terminal tables at 80 columns (issue 36): every number of `judge agreement` and `judge
calibrate` shows whole, every line fits, and raters' and agents' names are never cut, at any
width: a table too wide folds (raters keyed by number, the statistics split across tables)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from helpers import EXAMPLE
from helpers.ratings import B, label_csv, noisy, truth, verdicts_of
from rich.console import Console

from agreement import agreement_report, calibrate, render_calibration, render_report
from agreement.synthetic import result_from_answers
from judge.cli import main

LONG = "openai/an-agent-model-whose-name-is-long-enough-to-be-cut-v2.5"
LONGER = "anthropic/another-judge-with-a-long-name (results-from-the-second-run.json)"


def render(renderable, width: int) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None).print(renderable)
    return buffer.getvalue()


@pytest.fixture
def sources(tmp_path):
    base = truth()
    alice = noisy(base, 0.05, 3)
    judge_a = result_from_answers(noisy(base, 0.1, 1, missing=0.05), model=LONG)
    judge_b = result_from_answers(noisy(base, 0.25, 2), model=LONGER)
    return [judge_a, judge_b, label_csv(tmp_path / "alice.csv", alice, "alice", verdicts_of(alice))]


def numbers(report) -> set[str]:
    """Every figure the pairwise tables show, as it is printed."""
    shown = set()
    for level in report.levels:
        for p in level.pairwise:
            shown |= {p.agreement.text(), p.kappa.text(), p.pabak.text(ci=False)}
            shown |= {p.ac1.text(ci=False), str(p.n)}
            if p.vs_reference:
                shown |= {e.text(ci=False) for e in (p.vs_reference.tpr, p.vs_reference.tnr)}
    return {s for s in shown if s != "undefined"}


@pytest.mark.parametrize("width", [80, 100, 200])
def test_agreement_shows_every_number_and_name_whole_at_any_width(sources, width):
    report = agreement_report(sources, B=B, seed=1)
    text = render(render_report(report), width)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    lines = {line.strip() for line in text.splitlines()}
    flat = " ".join(text.split())
    for figure in numbers(report):
        assert figure in text, figure
    assert any(LONG in line for line in lines) and LONGER in flat


def test_a_wide_terminal_keeps_one_table_and_a_narrow_one_folds(sources):
    report = agreement_report(sources[:1] + sources[2:], B=B, seed=1)
    wide, narrow = render(render_report(report), 200), render(render_report(report), 80)
    assert "Rater A" in wide and "[1] " + LONG not in wide
    assert "Rater A" not in narrow and "[1] " + LONG in narrow and "[2] alice" in narrow


@pytest.mark.parametrize("width", [80, 200])
def test_calibrate_shows_every_number_whole(sources, width):
    report = calibrate(sources[:2], sources[2:], thresholds=[0.5, 0.7], B=B)
    text = render(render_calibration(report), width)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    for judge in report.judges:
        for point in judge.sweep:
            assert point.kappa.text() in text or point.kappa.value is None
        for pair in judge.vs_people:
            assert pair.kappa.text() in text


def test_judge_agreement_at_80_columns_end_to_end(sources, tmp_path, monkeypatch, capsys):
    files = []
    for i, result in enumerate(sources[:2]):
        files.append(tmp_path / f"r{i}.json")
        files[-1].write_text(json.dumps(result))
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["agreement", *map(str, files), str(sources[2])]) == 0
    out = capsys.readouterr().out
    assert "…" not in out and "0.…" not in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert LONG in out


@pytest.fixture(scope="module")
def example_result(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("width") / "results.json"
    args = ["eval", "-g", str(EXAMPLE / "ground_truth"), "-o", str(EXAMPLE / "outputs")]
    assert main([*args, "-r", str(path), "--no-progress"]) == 0
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["estimate", "--result", "{result}", "--labels", "{labels}"],
        ["calibrate", "{result}", "--human", "{labels}"],
        ["selftest", "-g", "{gt}", "--no-progress"],
    ],
    ids=lambda c: c[0],
)
def test_other_tables_fit_80_columns_with_nothing_cut(
    command, example_result, monkeypatch, capsys, tmp_path
):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)
    values = {"result": example_result, "labels": EXAMPLE / "labels.csv"}
    values["gt"] = EXAMPLE / "ground_truth"
    capsys.readouterr()
    main([part.format(**values) for part in command])
    out = capsys.readouterr().out
    assert out and max(len(line) for line in out.splitlines()) <= 80
    assert not [line for line in out.splitlines() if "…" in line and "failing" not in line]


def test_every_command_s_help_ends_with_the_exit_codes_within_80_columns(monkeypatch):
    from judge.cli import EXIT_CODES, build_parser
    from judge.cli.reference import commands

    monkeypatch.setenv("COLUMNS", "80")
    for path, parser, _ in commands(build_parser()):
        text = parser.format_help()
        assert EXIT_CODES in text, path
        assert max(len(line) for line in text.splitlines()) <= 80, path
    assert all(len(line) <= 80 for line in EXIT_CODES.splitlines())
