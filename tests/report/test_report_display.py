"""Terminal tables: readable at 80 columns, no pass@k columns when k == 1, plain when piped."""

from __future__ import annotations

import io

import pytest
from helpers import FIXTURES
from helpers.report import example_run
from rich.console import Console

from judge.report.display import incident_table, print_result, shorten


def _render(result, width: int = 80, tty: bool = False) -> str:
    buffer = io.StringIO()
    console = (
        Console(file=buffer, width=width, force_terminal=True, color_system="standard")
        if tty
        else Console(file=buffer, width=width)
    )
    print_result(result, console)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def k1():
    return example_run()[0]


@pytest.fixture(scope="module")
def k2():
    return example_run(k=2)[0]


def test_shorten_keeps_both_ends():
    assert shorten("short", 10) == "short"
    name = "secret_rotation_stale_env_credentials_astronomy_shop"
    cut = shorten(name, 20)
    assert len(cut) == 20 and cut.startswith("secret_ro") and cut.endswith("onomy_shop")
    assert shorten(name, 1) == "…"


@pytest.mark.parametrize("fixture", ["k1", "k2"])
def test_one_line_per_incident_within_80_columns(fixture, request):
    result = request.getfixturevalue(fixture)
    text = _render(result)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    for inc in result.incidents:
        head = inc.incident_id[:6]
        rows = [line for line in lines if line.lstrip().startswith(head)]
        assert rows, inc.incident_id
        trials = str(inc.n_trials)
        assert any(f" {trials} " in row and f"{inc.mean_composite:.2f}" in row for row in rows)
    rule = next(i for i, line in enumerate(lines) if line.strip().startswith("─" * 20))
    end = next(i for i, line in enumerate(lines) if "Overall" in line)
    rows = [line for line in lines[rule + 1 : end] if line.strip()]
    assert len(rows) == len(result.incidents)


def test_pass_at_k_columns_only_when_k_above_one(k1, k2):
    assert "pass@1" in _render(k1) and "pass^1" not in _render(k1)
    text = _render(k2)
    assert "pass@2" in text and "pass^2" in text


def test_full_names_when_the_terminal_is_wide(k1):
    text = _render(k1, width=140)
    for inc in k1.incidents:
        assert inc.incident_id in text


def test_plain_when_piped_coloured_on_a_terminal(k1):
    assert "\x1b[" not in _render(k1)
    assert "\x1b[" in _render(k1, tty=True)


def test_names_are_never_folded(k1):
    table = incident_table(k1, width=80)
    column = table.columns[0]
    assert column.no_wrap and column.overflow == "ellipsis"


def test_entity_scores_are_in_the_summary_when_submissions_name_entities(tmp_path, capsys):
    """ITBench-style submissions carry root-cause entities: their precision, recall and F1 are
    printed with the other numbers, not only written to JSON and HTML (issue 24)."""
    import json

    from judge.cli import main

    itbench = FIXTURES / "formats" / "itbench" / "synthetic"
    result = tmp_path / "r.json"
    args = ["eval", "-g", str(itbench / "ground_truths.json"), "-o", str(itbench / "agent_outputs")]
    assert main([*args, "-r", str(result), "--no-progress"]) == 0
    mean = json.loads(result.read_text())["entities"]["mean"]
    out = " ".join(capsys.readouterr().out.split())
    assert (
        f"root-cause entities precision {mean['precision']:.2f}, recall {mean['recall']:.2f}, "
        f"F1 {mean['f1']:.2f} over 4 cases; first entity is the origin in "
        f"{mean['top_is_origin']:.2f}"
    ) in out


def test_no_entity_row_without_entities(k1):
    assert k1.entities is None and "root-cause entities" not in _render(k1)
