"""Bad input never hangs, never explodes, never lies: deep nesting, alias bombs, huge or special
files, broken links, empty trial folders and submissions that name another incident."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from helpers import REPO, quiet
from pydantic import ValidationError

from agreement import LabelFileError, read_labels
from agreement.files import set_max_input_mb as set_label_limit
from agreement.sregym_bench import load_bench
from ground_truth import IncidentSpec, InputError, load_specs, load_submissions, reading
from ground_truth.reading import DEFAULT_MAX_INPUT_MB, max_input_bytes, set_max_input_mb
from judge import load_rubric
from judge.cli import main

GT = "[fault_spec] component=deployment/checkout; namespace=shop || A wrong image tag."
# "Billion laughs": nine levels of nine aliases, 9^9 = 387,420,489 strings once expanded.
ALIAS_BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi", strict=True)
)


@pytest.fixture(autouse=True)
def _restore_limit() -> Iterator[None]:
    yield
    set_max_input_mb(DEFAULT_MAX_INPUT_MB)
    set_label_limit(DEFAULT_MAX_INPUT_MB)


def spec(incident_id: str = "a", **extra: object) -> dict:
    return {"id": incident_id, "ground_truth": GT, **extra}


def run_judge(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "judge", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )


def check_exit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["check", *args])
    return code, capsys.readouterr().err


# ------------------------------------------------------------------ nesting


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("deep.json", "[" * 100_000 + "]" * 100_000),
        ("deep.yaml", "[" * 100_000 + "]" * 100_000),
        ("deep-block.yaml", "".join(" " * i + "k:\n" for i in range(5_000)) + " " * 5_000 + "v\n"),
    ],
)
def test_deeply_nested_input_is_exit_2_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    code, err = check_exit(capsys, "--ground-truth", str(path))
    assert code == 2
    assert str(path) in err and "Traceback" not in err


def test_valid_900_level_parameters_value_is_refused_not_a_recursion_error(tmp_path: Path) -> None:
    deep: object = "leaf"
    for _ in range(900):
        deep = {"k": deep}
    path = tmp_path / "deep.json"
    path.write_text(json.dumps([spec(parameters=deep)]))
    with pytest.raises(InputError, match="nested more than") as caught:
        load_specs(path)
    assert caught.value.path == str(path)


def test_a_spec_built_in_code_cannot_carry_a_too_deep_value() -> None:
    deep: object = "leaf"
    for _ in range(900):
        deep = [deep]
    with pytest.raises(ValidationError, match="nested more than"):
        IncidentSpec(id="a", ground_truth=GT, parameters={"v": deep})
    assert IncidentSpec(id="a", ground_truth=GT, parameters={"v": [[1]]}).parameters


def test_deep_jsonl_submission_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "subs.jsonl"
    row = {"incident_id": "a", "diagnosis": "x", "entities": [[[[[]]]]]}
    deep = json.dumps(row).replace("[[[[[]]]]]", "[" * 5000 + "]" * 5000)
    path.write_text(json.dumps({"incident_id": "a", "diagnosis": "y"}) + "\n" + deep + "\n")
    with pytest.raises(InputError, match="nested") as caught:
        load_submissions(path)
    assert caught.value.field == "line 2"


def test_moderate_nesting_still_loads(tmp_path: Path) -> None:
    value: object = 1
    for _ in range(50):
        value = [value]
    path = tmp_path / "ok.yaml"
    path.write_text(yaml.safe_dump(spec(parameters={"v": value})))
    assert load_specs(path)[0].parameters["v"] == value


# ------------------------------------------------------------------ YAML aliases


def test_alias_bomb_spec_is_refused_quickly(tmp_path: Path, capsys) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(f"id: a\nground_truth: '{GT}'\nparameters:\n" + _indent(ALIAS_BOMB))
    assert len(ALIAS_BOMB) < 800
    code, err = check_exit(capsys, "--ground-truth", str(path))
    assert code == 2
    assert str(path) in err and "alias" in err


def test_alias_bomb_rubric_and_bench_file_are_refused(tmp_path: Path) -> None:
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(ALIAS_BOMB)
    with pytest.raises(InputError, match="alias"):
        load_rubric(rubric)
    bench = tmp_path / "data.yaml"
    bench.write_text(ALIAS_BOMB)
    with pytest.raises(LabelFileError, match="alias"):
        load_bench(bench)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_label_files_are_read_only_if_regular_and_small(tmp_path: Path) -> None:
    fifo = tmp_path / "labels.csv"
    os.mkfifo(fifo)
    with pytest.raises(LabelFileError, match="not a regular file"):
        read_labels(fifo)
    big = tmp_path / "big.csv"
    big.write_text("incident_id,trial,question_id,answer\n" + "a,1,Q1,Yes\n" * 20_000)
    set_label_limit(0.1)
    with pytest.raises(LabelFileError, match="--max-input-mb"):
        read_labels(big)


def test_self_referencing_alias_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cycle.yaml"
    path.write_text(f"id: a\nground_truth: '{GT}'\nparameters: &p\n  self: *p\n")
    with pytest.raises(InputError, match="alias"):
        load_specs(path)


def test_modest_aliases_still_load(tmp_path: Path) -> None:
    path = tmp_path / "aliases.yaml"
    path.write_text(f"id: a\nground_truth: '{GT}'\nparameters:\n  x: &x [1, 2]\n  y: *x\n")
    assert load_specs(path)[0].parameters == {"x": [1, 2], "y": [1, 2]}


def test_only_nodes_added_by_aliases_count_against_the_limit(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(reading, "MAX_YAML_NODES", 1000)
    path = tmp_path / "big.yaml"
    items = "".join(f"    - {i}\n" for i in range(2000))
    path.write_text(f"id: a\nground_truth: '{GT}'\nparameters:\n  many: &m\n{items}")
    assert len(load_specs(path)[0].parameters["many"]) == 2000
    path.write_text(path.read_text() + "  again: *m\n")
    with pytest.raises(InputError, match="more than 1,000 nodes"):
        load_specs(path)


def _indent(text: str) -> str:
    return "".join(f"  {line}\n" for line in text.splitlines())


# ------------------------------------------------------------------ size and file kinds


def test_file_over_the_size_limit_is_exit_2(tmp_path: Path, capsys) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(spec(mechanism="x" * 200_000)))
    code, err = check_exit(capsys, "--ground-truth", str(path), "--max-input-mb", "0.1")
    assert code == 2
    assert str(path) in err and "--max-input-mb" in err
    assert max_input_bytes() == 104857  # the flag set it
    set_max_input_mb(DEFAULT_MAX_INPUT_MB)
    assert load_specs(path)[0].id == "a"


def test_max_input_mb_must_be_positive(capsys) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["check", "--ground-truth", "x", "--max-input-mb", "0"])
    assert caught.value.code == 2


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("flag", ["--ground-truth", "--outputs"])
def test_fifo_is_exit_2_not_a_hang(tmp_path: Path, flag: str) -> None:
    fifo = tmp_path / "input.yaml"
    os.mkfifo(fifo)
    good = tmp_path / "gt.yaml"
    good.write_text(yaml.safe_dump(spec()))
    args = ["--ground-truth", str(good), "--outputs", str(fifo)]
    if flag == "--ground-truth":
        args = ["--ground-truth", str(fifo)]
    proc = run_judge("check", *args)
    assert proc.returncode == 2, proc.stderr
    assert "FIFO" in proc.stderr and str(fifo) in proc.stderr


@pytest.mark.slow
@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_device_and_link_to_device_are_exit_2(tmp_path: Path) -> None:
    proc = run_judge("check", "--ground-truth", "/dev/zero")
    assert proc.returncode == 2 and "character device" in proc.stderr
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "a.yaml").write_text(yaml.safe_dump(spec()))
    (folder / "zero.yaml").symlink_to("/dev/zero")
    proc = run_judge("check", "--ground-truth", str(folder))
    assert proc.returncode == 2, proc.stderr
    assert f"{folder / 'zero.yaml'}: is a character device" in proc.stderr
    assert "not a recognised" not in proc.stderr  # refused outright, not a detection miss


def test_broken_and_looping_links_are_warnings(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(spec()))
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "missing.yaml")
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    specs, found = quiet(load_specs, tmp_path)
    assert [s.id for s in specs] == ["a"]
    messages = sorted(str(w) for w in found)
    assert len(messages) == 2
    assert "gone.yaml" in messages[0] and "broken symbolic link" in messages[0]
    assert "loop.yaml" in messages[1] and "symbolic link" in messages[1]
    assert main(["check", "--ground-truth", str(tmp_path), "--strict"]) == 1


def test_trial_folder_without_agent_output_is_a_warning(tmp_path: Path, capsys) -> None:
    gt = tmp_path / "gt.yaml"
    gt.write_text(yaml.safe_dump(spec()))
    out = tmp_path / "out"
    (out / "a" / "1").mkdir(parents=True)
    (out / "a" / "1" / "agent_output.json").write_text('{"diagnosis": "x"}')
    (out / "a" / "2").mkdir()
    (out / "a" / "3").mkdir()
    (out / "a" / "3" / "agent_output.json").symlink_to(out / "nowhere.json")
    subs, found = quiet(load_submissions, out)
    assert [s.trial for s in subs] == ["1"]
    assert any(w.path == str(out / "a" / "2") and "without agent_output" in str(w) for w in found)
    assert any("a/3/agent_output.json" in str(w) and "symbolic link" in str(w) for w in found)
    args = ["check", "--ground-truth", str(gt), "--outputs", str(out), "--strict", "--json"]
    assert main(args) == 1
    assert any("without agent_output" in w for w in json.loads(capsys.readouterr().out)["warnings"])


# ------------------------------------------------------------------ a submission naming another


def test_submission_naming_another_incident_or_trial_stays_in_its_folder(tmp_path: Path) -> None:
    file = tmp_path / "a" / "1" / "agent_output.json"
    file.parent.mkdir(parents=True)
    file.write_text(json.dumps({"diagnosis": "x", "incident_id": "b", "trial": "7"}))
    subs, found = quiet(load_submissions, tmp_path)
    assert [(s.incident_id, s.trial) for s in subs] == [("a", "1")]
    assert {w.field for w in found} == {"incident_id", "trial"}
    assert all(w.path == str(file) and "the folder wins" in str(w) for w in found)


def test_submission_naming_its_own_folder_is_quiet(tmp_path: Path) -> None:
    file = tmp_path / "a" / "1" / "agent_output.json"
    file.parent.mkdir(parents=True)
    file.write_text(json.dumps({"diagnosis": "x", "incident_id": "a", "trial": 1}))
    subs, found = quiet(load_submissions, tmp_path)
    assert [s.key for s in subs] == [("a", "1")] and not found


def test_agreement_obeys_max_input_mb(tmp_path: Path, capsys) -> None:
    result = tmp_path / "big.json"
    result.write_text(json.dumps({"judgments": [], "cases": [], "pad": "x" * 20_000}))
    assert main(["agreement", str(result), str(result), "--max-input-mb", "0.01"]) == 2
    err = capsys.readouterr().err
    assert str(result) in err and "--max-input-mb" in err


# ------------------------------------------------------------------ lone surrogates


def test_a_lone_surrogate_in_a_submission_becomes_a_replacement_character() -> None:
    from ground_truth import Submission

    sub = Submission(incident_id="a", diagnosis="pod \ud800 crashed \U0001f600", agent="bot \udfff")
    assert sub.diagnosis == "pod \ufffd crashed \U0001f600" and sub.agent == "bot \ufffd"


def test_a_diagnosis_with_a_lone_surrogate_escape_is_scored(tmp_path: Path) -> None:
    """A JSON `\\ud800` escape (half an emoji an agent's string handling split) failed the run
    with exit 70 where the text was first encoded as UTF-8."""
    (tmp_path / "gt").mkdir()
    (tmp_path / "gt" / "a.yaml").write_text(yaml.safe_dump(spec()))
    trial = tmp_path / "out" / "a" / "1"
    trial.mkdir(parents=True)
    (trial / "agent_output.json").write_text(
        '{"agent": "bot \\ud83d", "diagnosis": "deployment checkout: wrong image \\ud800 tag"}'
    )
    done = run_judge("eval", "-g", str(tmp_path / "gt"), "-o", str(tmp_path / "out"),
                     "-r", str(tmp_path / "r.json"), "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert result["judgments"] and "\ufffd" in json.dumps(result, ensure_ascii=False)


def test_every_string_of_a_json_input_has_its_lone_surrogates_replaced() -> None:
    """Trajectories, entities and keys too, not only the submission's own text; a pair of
    escapes that makes one character is kept."""
    text = r'{"steps": [{"\udfff": "kubectl \ud800"}], "emoji": "\ud83d\ude00", "n": 1}'
    assert reading.parse_json(text, "x.json") == {
        "steps": [{"\ufffd": "kubectl \ufffd"}],
        "emoji": "\U0001f600",
        "n": 1,
    }


def test_a_yaml_escape_of_a_lone_surrogate_is_refused_naming_its_line() -> None:
    """YAML itself has no lone surrogates: the file is bad input (exit 2), not a crash."""
    with pytest.raises(InputError, match="line 2: invalid YAML"):
        reading.parse_yaml('id: "a"\nground_truth: "pod \\ud800"\n', "x.yaml")
