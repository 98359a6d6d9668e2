"""`judge labels import-sregym-bench` on SREGym's judge benchmark at 49852003, where 3 of the 5
items have an empty description (no ground truth): they are skipped with one warning."""

from __future__ import annotations

import json

import pytest
from helpers import FIXTURES

from agreement import LabelFileError
from agreement.sregym_bench import BenchWarning, load_bench
from judge.cli import main

BENCH = FIXTURES / "formats" / "sregym-bench" / "data.49852003.yaml"


def test_items_without_ground_truth_are_skipped_with_one_warning():
    with pytest.warns(BenchWarning) as caught:
        items = load_bench(BENCH)
    assert [i.id for i in items] == ["sregym-bench-02", "sregym-bench-04"]
    (warning,) = caught
    assert "3 of 5 items" in str(warning.message)
    assert "sregym-bench-00, sregym-bench-01, sregym-bench-03" in str(warning.message)


def test_the_cli_writes_no_empty_spec_and_says_why(tmp_path, capsys):
    assert main(["labels", "import-sregym-bench", str(BENCH), "-o", str(tmp_path)]) == 0
    specs = json.loads((tmp_path / "specs.json").read_text())["incidents"]
    assert [s["id"] for s in specs] == ["sregym-bench-02", "sregym-bench-04"]
    assert all(s["ground_truth"].strip() for s in specs)
    lines = (tmp_path / "submissions.jsonl").read_text().splitlines()
    assert len(lines) == 2
    assert "warning:" in capsys.readouterr().err


def test_a_file_with_only_empty_items_is_refused(tmp_path):
    empty = tmp_path / "data.yaml"
    empty.write_text('- description: ""\n  answer: "x"\n  oracle: "True"\n')
    with pytest.raises(LabelFileError, match="every item has an empty description"):
        load_bench(empty)
