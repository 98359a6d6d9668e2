"""The issue-16 benchmark driver's table and goal checks, on canned numbers (no benchmark runs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import cooldown, issue16, throughput
from benchmarks.issue16 import NOT_RUN, Check, Row

RATIO = Row("wall / limit", (Check("", ("throughput", "ratio"), "x", op="<=", target=1.05),))


def cells(numbers: dict, row: Row) -> dict[str, str]:
    return issue16.table_rows(numbers, (row,))[0]


def test_a_met_goal_is_yes() -> None:
    row = cells({"throughput": {"ratio": 1.04}}, RATIO)
    assert row == {"measure": "wall / limit", "goal": "<= 1.05x", "measured": "1.04x", "met": "yes"}


def test_a_missed_goal_is_no_and_names_the_check() -> None:
    assert cells({"throughput": {"ratio": 1.26}}, RATIO)["met"] == "no"
    row = Row(
        "memory",
        (
            Check("rules", ("memory", "rules"), " MB", 0, op="<=", target=300),
            Check("llm", ("memory", "llm"), " MB", 0, op="<=", target=300),
        ),
    )
    shown = cells({"memory": {"rules": 169.4, "llm": 361.0}}, row)
    assert shown["measured"] == "rules: 169 MB; llm: 361 MB"
    assert shown["met"] == "no: llm"


def test_a_missing_measurement_is_not_run_never_met() -> None:
    assert cells({}, RATIO)["met"] == NOT_RUN
    assert cells({}, RATIO)["measured"] == NOT_RUN
    assert cells({"throughput": {"other": 1.0}}, RATIO)["met"] == NOT_RUN
    assert cells({"throughput": {"ratio": "1.0"}}, RATIO)["met"] == NOT_RUN
    assert cells({"throughput": {"ratio": {"x": 1.0}}}, RATIO)["met"] == NOT_RUN


def test_a_row_partly_measured_is_not_run_unless_a_measured_part_missed() -> None:
    row = Row(
        "rerun",
        (
            Check("wall", ("rerun", "wall"), "x", op="<=", target=1.5),
            Check("peak", ("rerun", "peak"), "x", op="<=", target=1.5),
        ),
    )
    assert cells({"rerun": {"wall": 0.6}}, row)["met"] == NOT_RUN
    assert cells({"rerun": {"wall": 0.6}}, row)["measured"] == "wall: 0.60x; peak: not run"
    assert cells({"rerun": {"wall": 2.0}}, row)["met"] == "no: wall"


def test_direction_and_equality_come_from_the_data() -> None:
    at_least = Row("q", (Check("", ("c", "v"), op=">=", target=0.5),))
    assert cells({"c": {"v": 0.5}}, at_least)["met"] == "yes"
    assert cells({"c": {"v": 0.49}}, at_least)["met"] == "no"
    exactly = Row("r", (Check("dimension", ("g", "v"), op="==", target=3),))
    assert cells({"g": {"v": 3.0}}, exactly)["met"] == "yes"
    assert cells({"g": {"v": 3.02}}, exactly)["met"] == "no: dimension"
    assert cells({"g": {"v": 3.0}}, exactly)["goal"] == "dimension = 3"


def test_booleans_are_matched_exactly_and_shown_as_yes_no() -> None:
    row = Row("rerun", (Check("litellm imported", ("r", "imported"), op="==", target=False),))
    assert cells({"r": {"imported": False}}, row) | {"measure": ""} == {
        "measure": "",
        "goal": "litellm imported: no",
        "measured": "litellm imported: no",
        "met": "yes",
    }
    assert cells({"r": {"imported": True}}, row)["met"] == "no: litellm imported"
    # 0 == False in Python: a zero must not pass for "not imported"
    assert cells({"r": {"imported": 0}}, row)["met"] == "no: litellm imported"


def test_rows_without_goals_show_dash_or_not_run() -> None:
    info = Row("batch", (Check("batch", ("batch", "per_submission"), digits=3),))
    assert cells({"batch": {"per_submission": 0.011}}, info) == {
        "measure": "batch",
        "goal": "-",
        "measured": "batch: 0.011",
        "met": "-",
    }
    assert cells({}, info)["met"] == NOT_RUN
    skipped = Row("real model", (), note="not run by this driver")
    assert cells({"batch": {}}, skipped)["met"] == NOT_RUN
    assert cells({}, skipped)["measured"] == "not run by this driver"


def test_markdown_has_one_line_per_row() -> None:
    text = issue16.markdown(issue16.table_rows({"throughput": {"ratio": 1.0}}, (RATIO, RATIO)))
    lines = text.splitlines()
    assert lines[0] == "| measure (script) | goal | measured | met? |"
    assert lines[2:] == ["| wall / limit | <= 1.05x | 1.00x | yes |"] * 2


def test_every_row_reads_a_measurement_the_driver_runs_or_says_why_not() -> None:
    for row in issue16.ROWS:
        assert row.checks or row.note, row.measure
        for check in row.checks:
            assert check.path[0] in issue16.NAMES, check


def test_scenario_names_in_paths_exist_in_the_scripts() -> None:
    names = {s.name for s in throughput.SCENARIOS if issue16.IN_FLIGHT in s.name}
    paths = {c.path[2] for r in issue16.ROWS for c in r.checks if c.path[0] == "throughput"}
    assert paths == names
    cooldowns = {c.path[2] for r in issue16.ROWS for c in r.checks if c.path[0] == "cooldown"}
    assert cooldowns == {issue16.RANDOM_429, issue16.FAST_429, issue16.PROVIDER_QUOTA}
    assert cooldowns <= {name for name, _faults in cooldown.SCENARIOS}


def test_only_rejects_an_unknown_measurement(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        issue16.parse_args(["--only", "shards,sharding"])
    assert stopped.value.code == 2
    assert "unknown sharding" in capsys.readouterr().err


def test_an_output_folder_that_does_not_exist_stops_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(issue16, "run_script", pytest.fail)
    with pytest.raises(SystemExit) as stopped:
        issue16.main(["--json", str(tmp_path / "missing" / "run.json")])
    assert stopped.value.code == 2
    assert "missing" in capsys.readouterr().err


def fake_script(numbers: dict[str, dict], code: int = 0):
    """A stand-in for running a benchmark: writes the canned numbers of the script it is asked
    to run to its --json path."""

    def run(command: list[str], timeout: float) -> int:
        name = Path(command[1]).stem
        if name in numbers:
            Path(command[command.index("--json") + 1]).write_text(json.dumps(numbers[name]))
        return code

    return run


def test_one_run_writes_the_table_and_every_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    numbers = {"startup": {"first_request_seconds": 0.8}, "cpu_profile": {}}
    monkeypatch.setattr(issue16, "run_script", fake_script(numbers))
    out, data = tmp_path / "table.md", tmp_path / "run.json"
    code = issue16.main(["--only", "startup,memory", "--out", str(out), "--json", str(data)])
    assert code == 1  # memory wrote no numbers
    text = out.read_text()
    assert text in capsys.readouterr().out
    assert "| launch to first provider request (`startup.py`) | <= 1 s | 0.8 s | yes |" in text
    assert "- `memory.py`: not run (exit code 0 but no --json file written)" in text
    assert "- `shards.py`: not run (not selected)" in text
    run = json.loads(data.read_text())
    assert run["measurements"]["startup"]["numbers"] == numbers["startup"]
    assert run["measurements"]["startup"]["command"][-2] == "--json"
    assert set(run["measurements"]) == {"startup", "memory"}
    assert {"cpus", "python", "litellm", "commit"} <= set(run["machine"])
    assert len(run["load_average_start"]) == len(run["load_average_end"]) == 3
    memory_rows = [r for r in run["table"] if "(`memory.py`)" in r["measure"]]
    assert memory_rows and all(r["met"] == NOT_RUN for r in memory_rows)


def test_a_failed_script_is_reported_and_the_earlier_file_kept_until_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "run.json"
    data.write_text("earlier")
    seen = []

    def failing(command: list[str], timeout: float) -> int:
        seen.append(data.read_text())
        return 3

    monkeypatch.setattr(issue16, "run_script", failing)
    assert issue16.main(["--only", "rerun", "--quick", "--json", str(data)]) == 1
    assert seen == ["earlier"]
    run = json.loads(data.read_text())
    assert run["quick"] is True
    assert run["measurements"]["rerun"]["error"] == "exit code 3"
    assert run["measurements"]["rerun"]["command"][1:3] == ["--submissions", "200"]


def test_the_quick_sizes_are_smaller_and_every_script_takes_json() -> None:
    for m in issue16.MEASUREMENTS:
        assert m.quick != m.full, m.name
        assert (issue16.HERE / f"{m.name}.py").exists()
    for name in ("granularity", "throughput", "shards", "shared_store", "cooldown", "batch",
                 "rerun", "startup", "memory"):  # fmt: skip
        source = (issue16.HERE / f"{name}.py").read_text()
        assert 'add_argument("--json"' in source, name
