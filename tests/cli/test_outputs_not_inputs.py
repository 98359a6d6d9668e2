"""No command writes over one of its inputs (issue 27): an output flag naming an input file,
or a symbolic or hard link to one, is exit 2 before any call, with the input unchanged; an
output inside an input folder is written with a warning, since a later run may read it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers import EXAMPLE, FIXTURES

from judge.cli import main

OUTPUT_FLAGS = ["--result-file", "--html", "--csv", "--jsonl", "--junit"]


@pytest.fixture
def incident_copy(tmp_path: Path) -> Path:
    """A copy of one example incident: gt/incorrect_image.yaml and out/incorrect_image/1..3."""
    (tmp_path / "gt").mkdir()
    shutil.copy(EXAMPLE / "ground_truth" / "incorrect_image.yaml", tmp_path / "gt")
    shutil.copytree(EXAMPLE / "outputs" / "incorrect_image", tmp_path / "out" / "incorrect_image")
    return tmp_path


def eval_with(incident_copy: Path, *extra: str) -> int:
    args = [
        "eval",
        "--ground-truth",
        str(incident_copy / "gt"),
        "--outputs",
        str(incident_copy / "out"),
    ]
    if "--result-file" not in extra:
        args += ["--result-file", str(incident_copy / "r.json")]
    return main([*args, "--no-progress", *extra])


def targets(incident_copy: Path) -> dict[str, tuple[Path, Path]]:
    """Each way of naming an input: (the path given, the input file it is)."""
    spec = incident_copy / "gt" / "incorrect_image.yaml"
    output = incident_copy / "out" / "incorrect_image" / "2" / "agent_output.json"
    (incident_copy / "link.yaml").symlink_to(spec)
    os.link(output, incident_copy / "hard.json")
    return {
        "a spec": (spec, spec),
        "an agent output": (output, output),
        "a symbolic link to a spec": (incident_copy / "link.yaml", spec),
        "a hard link to an agent output": (incident_copy / "hard.json", output),
    }


@pytest.mark.parametrize("flag", OUTPUT_FLAGS)
@pytest.mark.parametrize(
    "what",
    ["a spec", "an agent output", "a symbolic link to a spec", "a hard link to an agent output"],
)
def test_eval_refuses_to_write_over_an_input(
    incident_copy: Path, capsys, flag: str, what: str
) -> None:
    given, input_file = targets(incident_copy)[what]
    before = input_file.read_bytes()
    assert eval_with(incident_copy, flag, str(given)) == 2
    err = capsys.readouterr().err
    assert flag in err and "refusing to write over it" in err
    assert input_file.read_bytes() == before and not (incident_copy / "r.json").exists()


def test_a_dry_run_refuses_to_write_its_prompts_over_an_input(incident_copy: Path, capsys) -> None:
    spec = incident_copy / "gt" / "incorrect_image.yaml"
    before = spec.read_bytes()
    assert eval_with(incident_copy, "--dry-run", "--prompts-file", str(spec)) == 2
    assert "--prompts-file" in capsys.readouterr().err and spec.read_bytes() == before


def test_an_output_inside_an_input_folder_is_written_with_a_warning(
    incident_copy: Path, capsys
) -> None:
    inside = incident_copy / "gt" / "results.json"
    assert eval_with(incident_copy, "--result-file", str(inside)) == 0
    err = capsys.readouterr().err
    assert "--result-file" in err and "a later run may read it as input" in err
    assert "--ground-truth" in err and inside.is_file()


def test_report_refuses_to_write_over_its_inputs(incident_copy: Path, capsys) -> None:
    assert eval_with(incident_copy) == 0
    spec = incident_copy / "gt" / "incorrect_image.yaml"
    before = spec.read_bytes()
    code = main(
        ["report", str(incident_copy / "r.json"), "--ground-truth", str(incident_copy / "gt"),
         "--outputs", str(incident_copy / "out"), "--csv", str(spec)]
    )  # fmt: skip
    assert code == 2 and "refusing to write over it" in capsys.readouterr().err
    assert spec.read_bytes() == before


def test_resolve_refuses_to_write_over_an_input(tmp_path: Path, capsys) -> None:
    srezero = FIXTURES / "srezero"
    tasks, run = tmp_path / "tasks.json", tmp_path / "run.json"
    shutil.copy(srezero / "task_configs_all_40.json", tasks)
    shutil.copy(srezero / "example_results_scripted_v0.5.json", run)
    before = run.read_bytes()
    code = main(
        ["resolve", "--ground-truth", str(tasks), "--outputs", str(run), "--result-file", str(run)]
    )
    assert code == 2 and "--result-file" in capsys.readouterr().err
    assert run.read_bytes() == before


def test_merge_refuses_to_write_over_a_shard(incident_copy: Path, capsys) -> None:
    for i in (1, 2):
        shard = incident_copy / f"s{i}.json"
        assert eval_with(incident_copy, "--shard", f"{i}/2", "--result-file", str(shard)) == 0
    before = (incident_copy / "s1.json").read_bytes()
    code = main(
        [
            "merge",
            str(incident_copy / "s1.json"),
            str(incident_copy / "s2.json"),
            "-o",
            str(incident_copy / "s1.json"),
        ]
    )
    assert code == 2 and "FILES" in capsys.readouterr().err
    assert (incident_copy / "s1.json").read_bytes() == before


def test_agreement_refuses_to_write_over_a_source(incident_copy: Path, capsys) -> None:
    assert eval_with(incident_copy) == 0
    result = incident_copy / "r.json"
    before = result.read_bytes()
    assert main(["agreement", str(result), str(result), "-o", str(result)]) == 2
    assert "SOURCES" in capsys.readouterr().err and result.read_bytes() == before
