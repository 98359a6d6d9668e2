"""Detection by content, whatever the files are called and whichever sorts first.

A folder's format is decided by its readable files: a broken file sorted first or last changes
nothing but a warning (or a bad-file error) naming it and what was expected; renamed files are
recognised by what they hold; one level of parent folder above the data is recognised where the
anchors' own trees have one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES, FORMATS, quiet

from ground_truth import InputError, load_specs, load_submissions
from ground_truth.errors import collecting_bad_files
from ground_truth.formats.registry import detect

ITBENCH = FORMATS / "itbench"
FORGE_RESPONSES = next((FORMATS / "forge" / "results").rglob("responses-*.txt"))

# (fixture folder, kind, where a broken file goes below it, its suffix)
FOLDERS = [
    (ITBENCH / "synthetic" / "agent_outputs", "submissions", "{name}/1/agent_output.json", ""),
    (FORMATS / "openrca" / "test" / "result" / "Bank", "submissions", "agent-{name}.csv", ""),
    (FORMATS / "openrca" / "test" / "result" / "Bank", "specs", "agent-{name}.csv", ""),
    (FORMATS / "forge" / "results", "submissions", "{name}.txt", ""),
    (FORMATS / "sregym-traces", "submissions", "{name}_run/s.jsonl", ""),
    (FORMATS / "rcaeval" / "results", "submissions", "{name}_cpu_9.json", ""),
    (ITBENCH / "scenarios", "specs", "scenario_{name}/groundtruth_v1.yaml", ""),
]
BROKEN = b"\xff\xfe{ not what anyone can read"


def _load(kind: str, path: Path) -> tuple[str, list, list, list]:
    load = load_specs if kind == "specs" else load_submissions
    with collecting_bad_files() as bad:
        items, found = quiet(load, path)
    return detect(path, kind).name, items, found, bad


def _keys(kind: str, items: list) -> list:
    return sorted(i.id if kind == "specs" else i.key for i in items)


@pytest.mark.parametrize(("fixture", "kind", "place", "_"), FOLDERS, ids=lambda v: str(v)[-40:])
def test_a_broken_file_first_or_last_changes_nothing_but_its_report(
    tmp_path, fixture, kind, place, _
):
    clean = tmp_path / "clean"
    shutil.copytree(fixture, clean)
    fmt, items, _found, _bad = _load(kind, clean)
    for name in ("0000", "zzzz"):
        copy = tmp_path / name
        shutil.copytree(fixture, copy)
        broken = copy / place.format(name=name)
        broken.parent.mkdir(parents=True, exist_ok=True)
        broken.write_bytes(BROKEN)
        got, loaded, found, bad = _load(kind, copy)
        assert got == fmt, name
        assert _keys(kind, loaded) == _keys(kind, items), name
        named = [str(w) for w in found if str(w.path) == str(broken)]
        named += [str(e) for e in bad if e.path == str(broken)]
        # reported by name when the format's reader opened it (a file it did not recognise is
        # counted by `judge check` instead)
        assert all("expected" in m or "not UTF-8" in m for m in named), named


def test_an_unreadable_itbench_output_sorted_first_is_a_skipped_bad_run(tmp_path):
    shutil.copytree(ITBENCH / "synthetic" / "agent_outputs", tmp_path / "out")
    first = tmp_path / "out" / "0" / "1" / "agent_output.json"
    first.parent.mkdir(parents=True)
    first.write_text("{not json")
    assert detect(tmp_path / "out", "submissions").name == "itbench"
    subs, found = quiet(load_submissions, tmp_path / "out")
    assert ("0", "1") not in {s.key for s in subs} and len(subs) == 4
    (bad,) = [w for w in found if w.path == str(first)]
    assert "unreadable agent output, skipped as a bad run" in str(bad)
    assert "expected a JSON object with entities[]" in str(bad)


@pytest.mark.parametrize(
    "name",
    ["responses.txt", "responses-react.jsonl", "run1.txt", "out.jsonl", "answers.txt", "r_b.txt"],
)
@pytest.mark.parametrize("fmt", ["auto", "forge"])
def test_forge_responses_load_under_any_name(tmp_path, name, fmt):
    shutil.copy(FORGE_RESPONSES, tmp_path / name)
    subs, _ = quiet(load_submissions, tmp_path, fmt)
    assert len(subs) == 3 and subs[0].source["format"] == "forge"
    assert subs[0].trial == Path(name).stem


def test_an_itbench_agent_output_of_another_name_is_found_by_content(tmp_path):
    source = ITBENCH / "synthetic" / "agent_outputs_current" / "2" / "1" / "agent_output.json"
    trial = tmp_path / "Scenario-2" / "1" / "outputs"
    trial.mkdir(parents=True)
    shutil.copy(source, trial / "final_answer.json")
    (trial.parent / "notes.json").write_text(json.dumps({"todo": []}))
    assert detect(tmp_path, "submissions").name == "itbench"
    (sub,), _ = quiet(load_submissions, tmp_path)
    assert sub.key == ("2", "1") and sub.source["file"].endswith("final_answer.json")


def test_itbench_roles_scenarios_one_level_above_the_scenario_folders(tmp_path):
    role = tmp_path / "roles" / "scenarios"
    shutil.copytree(ITBENCH / "scenarios", role / "files")
    (role / "tasks").mkdir()
    (role / "tasks" / "main.yaml").write_text("- name: deploy\n  debug: {}\n")
    assert detect(role, "specs").name == "itbench"
    specs, _ = quiet(load_specs, role)
    direct, _ = quiet(load_specs, role / "files")
    assert sorted(s.id for s in specs) == sorted(s.id for s in direct)
    assert all(s.source["layout"] == "scenario folders, under files/" for s in specs)


def test_srezero_package_folder_one_level_above_its_task_configs(tmp_path):
    package = tmp_path / "srezero"
    configs = package / "task_configs"
    configs.mkdir(parents=True)
    bundle = json.loads((FIXTURES / "srezero" / "task_configs_all_40.json").read_text())
    for task_id, config in list(bundle["tasks"].items())[:3]:
        (configs / f"{task_id}.json").write_text(json.dumps(config))
    (package / "task_splits.json").write_text(json.dumps({"easy": [], "hard": []}))
    (package / "env.py").write_text("# the simulator\n")
    (configs / "000_broken.json").write_bytes(BROKEN)  # sorts first
    assert detect(package, "specs").name == "srezero"
    with collecting_bad_files() as bad:
        specs, _ = quiet(load_specs, package)
    assert len(specs) == 3
    (error,) = bad
    assert error.path.endswith("000_broken.json") and "expected an SRE-Zero task config" in str(
        error
    )


def test_an_agentbeats_results_file_without_agent_outputs_is_refused_saying_so(tmp_path):
    board = json.loads(
        (ITBENCH / "synthetic" / "judge_results" / "leaderboard_run.json").read_text()
    )
    for result in board["results"]:
        result.pop("agent_outputs", None)
    results_only = tmp_path / "results.json"
    results_only.write_text(json.dumps(board))
    for fmt in ("auto", "itbench"):
        with pytest.raises(InputError, match=r"no agent outputs \(results\[\]\.agent_outputs"):
            load_submissions(results_only, fmt)
    with pytest.raises(InputError, match="holds only AgentBeats results files"):
        load_submissions(tmp_path, "itbench")


def test_a_folder_of_leaderboard_files_gives_trials_named_after_each_file(tmp_path):
    board = ITBENCH / "synthetic" / "judge_results" / "leaderboard_run.json"
    shutil.copy(board, tmp_path / "run-a.json")
    shutil.copy(board, tmp_path / "run-b.json")
    subs, _ = quiet(load_submissions, tmp_path)
    assert len({s.key for s in subs}) == len(subs) > 0
    assert {s.trial.split("/")[0] for s in subs} == {"run-a", "run-b"}
