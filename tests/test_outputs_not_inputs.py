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
def bench(tmp_path: Path) -> Path:
    """A copy of one example incident: gt/incorrect_image.yaml and out/incorrect_image/1..3."""
    (tmp_path / "gt").mkdir()
    shutil.copy(EXAMPLE / "ground_truth" / "incorrect_image.yaml", tmp_path / "gt")
    shutil.copytree(EXAMPLE / "outputs" / "incorrect_image", tmp_path / "out" / "incorrect_image")
    return tmp_path


def eval_with(bench: Path, *extra: str) -> int:
    args = ["eval", "--ground-truth", str(bench / "gt"), "--outputs", str(bench / "out")]
    if "--result-file" not in extra:
        args += ["--result-file", str(bench / "r.json")]
    return main([*args, "--no-progress", *extra])


def targets(bench: Path) -> dict[str, tuple[Path, Path]]:
    """Each way of naming an input: (the path given, the input file it is)."""
    spec = bench / "gt" / "incorrect_image.yaml"
    output = bench / "out" / "incorrect_image" / "2" / "agent_output.json"
    (bench / "link.yaml").symlink_to(spec)
    os.link(output, bench / "hard.json")
    return {
        "a spec": (spec, spec),
        "an agent output": (output, output),
        "a symbolic link to a spec": (bench / "link.yaml", spec),
        "a hard link to an agent output": (bench / "hard.json", output),
    }


@pytest.mark.parametrize("flag", OUTPUT_FLAGS)
@pytest.mark.parametrize(
    "what",
    ["a spec", "an agent output", "a symbolic link to a spec", "a hard link to an agent output"],
)
def test_eval_refuses_to_write_over_an_input(bench: Path, capsys, flag: str, what: str) -> None:
    given, input_file = targets(bench)[what]
    before = input_file.read_bytes()
    assert eval_with(bench, flag, str(given)) == 2
    err = capsys.readouterr().err
    assert flag in err and "refusing to write over it" in err
    assert input_file.read_bytes() == before and not (bench / "r.json").exists()


def test_a_dry_run_refuses_to_write_its_prompts_over_an_input(bench: Path, capsys) -> None:
    spec = bench / "gt" / "incorrect_image.yaml"
    before = spec.read_bytes()
    assert eval_with(bench, "--dry-run", "--prompts-file", str(spec)) == 2
    assert "--prompts-file" in capsys.readouterr().err and spec.read_bytes() == before


def test_an_output_inside_an_input_folder_is_written_with_a_warning(bench: Path, capsys) -> None:
    inside = bench / "gt" / "results.json"
    assert eval_with(bench, "--result-file", str(inside)) == 0
    err = capsys.readouterr().err
    assert "--result-file" in err and "a later run may read it as input" in err
    assert "--ground-truth" in err and inside.is_file()


def test_report_refuses_to_write_over_its_inputs(bench: Path, capsys) -> None:
    assert eval_with(bench) == 0
    spec = bench / "gt" / "incorrect_image.yaml"
    before = spec.read_bytes()
    code = main(
        ["report", str(bench / "r.json"), "--ground-truth", str(bench / "gt"),
         "--outputs", str(bench / "out"), "--csv", str(spec)]
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


def test_merge_refuses_to_write_over_a_shard(bench: Path, capsys) -> None:
    for i in (1, 2):
        shard = bench / f"s{i}.json"
        assert eval_with(bench, "--shard", f"{i}/2", "--result-file", str(shard)) == 0
    before = (bench / "s1.json").read_bytes()
    code = main(
        ["merge", str(bench / "s1.json"), str(bench / "s2.json"), "-o", str(bench / "s1.json")]
    )
    assert code == 2 and "FILES" in capsys.readouterr().err
    assert (bench / "s1.json").read_bytes() == before


def test_agreement_refuses_to_write_over_a_source(bench: Path, capsys) -> None:
    assert eval_with(bench) == 0
    result = bench / "r.json"
    before = result.read_bytes()
    assert main(["agreement", str(result), str(result), "-o", str(result)]) == 2
    assert "SOURCES" in capsys.readouterr().err and result.read_bytes() == before
