"""Nothing the loaders skip goes unsaid (issue 27): trial, incident and spec folders that are
symbolic links are followed and counted, a link back to a folder already read is read once
with a warning (no loop), a broken one is a warning, and a JSON or YAML mapping that gives a
key twice with different values (a second, empty `diagnosis`) is refused, not half read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from helpers import EXAMPLE, FIXTURES, quiet

from ground_truth import InputError, load_specs, load_submissions
from judge.cli import main


def spec(incident: str) -> dict:
    return {"id": incident, "ground_truth": f"[fault_spec] component=deployment/{incident} || x"}


def write_output(folder: Path, diagnosis: str = "the x deployment is broken") -> None:
    folder.mkdir(parents=True)
    (folder / "agent_output.json").write_text(json.dumps({"diagnosis": diagnosis}))


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """out/a/1 a folder; out/a/2 a link to a trial folder elsewhere; out/b a link to an
    incident folder elsewhere (trials 1 and 2)."""
    out = tmp_path / "out"
    write_output(out / "a" / "1")
    write_output(tmp_path / "elsewhere" / "a2")
    (out / "a" / "2").symlink_to(tmp_path / "elsewhere" / "a2", target_is_directory=True)
    write_output(tmp_path / "elsewhere" / "b" / "1")
    write_output(tmp_path / "elsewhere" / "b" / "2")
    (out / "b").symlink_to(tmp_path / "elsewhere" / "b", target_is_directory=True)
    gt = tmp_path / "gt"
    gt.mkdir()
    for incident in ("a", "b"):
        (gt / f"{incident}.yaml").write_text(yaml.safe_dump(spec(incident)))
    return tmp_path


def test_linked_trial_and_incident_folders_are_read(linked: Path) -> None:
    subs, found = quiet(load_submissions, linked / "out")
    assert sorted(s.key for s in subs) == [("a", "1"), ("a", "2"), ("b", "1"), ("b", "2")]
    assert not found


def test_eval_counts_the_cases_behind_links(linked: Path) -> None:
    result = linked / "r.json"
    args = ["eval", "--ground-truth", str(linked / "gt"), "--outputs", str(linked / "out")]
    assert main([*args, "--result-file", str(result), "--no-progress"]) == 0
    assert len(json.loads(result.read_text())["cases"]) == 4


def test_a_link_back_to_a_folder_read_is_read_once_with_a_warning(linked: Path) -> None:
    out = linked / "out"
    (out / "a" / "3").symlink_to(out / "a" / "1", target_is_directory=True)
    (out / "c").symlink_to(out, target_is_directory=True)  # a loop
    subs, found = quiet(load_submissions, out)
    assert sorted(s.key for s in subs) == [("a", "1"), ("a", "2"), ("b", "1"), ("b", "2")]
    assert any(w.path == str(out / "a" / "3") and "read already" in str(w) for w in found)
    args = ["check", "--ground-truth", str(linked / "gt"), "--outputs", str(out), "--strict"]
    assert main(args) == 1


def test_a_broken_link_to_a_trial_folder_is_a_warning(linked: Path) -> None:
    (linked / "out" / "a" / "9").symlink_to(linked / "nowhere", target_is_directory=True)
    subs, found = quiet(load_submissions, linked / "out")
    assert len(subs) == 4
    assert [w.path for w in found] == [str(linked / "out" / "a" / "9")]
    assert "broken symbolic link" in str(found[0])


def test_spec_folders_behind_links_are_read_and_a_loop_is_walked_once(tmp_path: Path) -> None:
    gt, more = tmp_path / "gt", tmp_path / "more"
    gt.mkdir()
    more.mkdir()
    (gt / "a.yaml").write_text(yaml.safe_dump(spec("a")))
    (more / "b.yaml").write_text(yaml.safe_dump(spec("b")))
    (gt / "more").symlink_to(more, target_is_directory=True)
    (more / "up").symlink_to(gt, target_is_directory=True)  # gt -> more -> gt: a loop
    specs, found = quiet(load_specs, gt)
    assert sorted(s.id for s in specs) == ["a", "b"]
    assert [w.path for w in found] == [str(gt / "more" / "up")]
    assert main(["check", "--ground-truth", str(gt), "--strict"]) == 1


def test_a_duplicate_diagnosis_key_is_refused(tmp_path: Path, capsys) -> None:
    gt = tmp_path / "gt.yaml"
    gt.write_text(yaml.safe_dump(spec("a")))
    trial = tmp_path / "out" / "a" / "1"
    trial.mkdir(parents=True)
    file = trial / "agent_output.json"
    file.write_text('{"diagnosis": "the a deployment is broken", "diagnosis": ""}')
    with pytest.raises(InputError) as error:
        load_submissions(tmp_path / "out")
    assert error.value.path == str(file) and error.value.field == "diagnosis"
    args = ["eval", "--ground-truth", str(gt), "--outputs", str(tmp_path / "out")]
    assert main([*args, "--result-file", str(tmp_path / "r.json")]) == 2
    assert "'diagnosis' is given twice with different values" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_a_duplicate_key_in_a_jsonl_row_names_the_line(tmp_path: Path) -> None:
    rows = tmp_path / "subs.jsonl"
    good = {"incident_id": "a", "trial": "1", "diagnosis": "x"}
    rows.write_text(json.dumps(good) + '\n{"incident_id": "a", "trial": "2", "trial": "3"}\n')
    with pytest.raises(InputError) as error:
        load_submissions(rows)
    assert error.value.field == "line 2" and "'trial'" in error.value.message


def test_a_key_given_twice_with_one_value_is_read(tmp_path: Path) -> None:
    trial = tmp_path / "out" / "a" / "1"
    trial.mkdir(parents=True)
    (trial / "agent_output.json").write_text('{"diagnosis": "same", "diagnosis": "same"}')
    assert [s.diagnosis for s in load_submissions(tmp_path / "out")] == ["same"]


def test_a_duplicate_key_in_a_yaml_spec_names_its_line(tmp_path: Path) -> None:
    file = tmp_path / "a.yaml"
    shutil.copy(EXAMPLE / "ground_truth" / "incorrect_image.yaml", file)
    lines = file.read_text().splitlines()
    file.write_text("\n".join([*lines, "id: another"]) + "\n")
    with pytest.raises(InputError) as error:
        load_specs(file)
    assert error.value.field == f"line {len(lines) + 1}"
    assert "'id' is given twice with different values" in error.value.message


RESULT = FIXTURES / "exports" / "result.json"


@pytest.mark.parametrize("edit", ["a case given twice", "a case dropped"])
def test_report_refuses_a_result_whose_cases_do_not_add_up(
    tmp_path: Path, capsys, edit: str
) -> None:
    data = json.loads(RESULT.read_text())
    if edit == "a case given twice":
        data["cases"].append(data["cases"][3])
        field, words = "cases.32", "is given twice (also cases.3)"
    else:
        del data["cases"][0]
        field, words = "overall.n_cases", "says 32 cases, but the file holds 31"
    result = tmp_path / "r.json"
    result.write_text(json.dumps(data))
    assert main(["report", str(result), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert f"{result}: {field}: " in err and words in err
    assert not (tmp_path / "r.html").exists()
