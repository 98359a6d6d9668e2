"""Data files under `--ground-truth` that no spec came from are said in `judge eval`'s output
(issue 35): 10,000 of them were skipped without a word. `judge check` lists them (`--json`);
the run says how many, on stderr, and still runs."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import EXAMPLE, eval_args

from judge.cli import main


def test_eval_counts_the_data_files_it_skipped_in_the_ground_truth(tmp_path: Path, capsys) -> None:
    gt = tmp_path / "gt"
    shutil.copytree(EXAMPLE / "ground_truth", gt)
    (gt / "notes").mkdir()
    for i in range(40):
        (gt / "notes" / f"n{i}.txt").write_text(f"note {i}")
    for i in range(3):
        (gt / f"table{i}.csv").write_text("a,b\n1,2\n")
    (gt / "picture.png").write_bytes(b"\x89PNG")  # not a data file: not counted
    code = main(eval_args(gt, EXAMPLE / "outputs", tmp_path / "r.json", "--no-progress"))
    err = " ".join(capsys.readouterr().err.split())
    assert code == 0
    assert f"43 data files under {gt} were not read as ground truth" in err, err
    assert "judge check --json" in err


def test_nothing_is_said_when_every_file_was_read(tmp_path: Path, capsys) -> None:
    code = main(eval_args(EXAMPLE / "ground_truth", EXAMPLE / "outputs", tmp_path / "r.json",
                          "--no-progress"))  # fmt: skip
    assert code == 0 and "not read as ground truth" not in capsys.readouterr().err
