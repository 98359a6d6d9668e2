"""`judge report` and the export flags of `judge eval`, through the real CLI entry point."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import EXAMPLE_GT, EXAMPLE_OUTPUTS, REPO

from judge import load_result
from judge.cli import main


@pytest.fixture(scope="module")
def result_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("run") / "results.json"
    assert (
        main(
            [
                "eval",
                "--ground-truth",
                str(EXAMPLE_GT),
                "--outputs",
                str(EXAMPLE_OUTPUTS),
                "--result-file",
                str(path),
            ]
        )
        == 0
    )
    return path


@pytest.mark.slow
def test_eval_writes_every_export_and_keeps_stdout_json(tmp_path, capsys):
    files = {name: tmp_path / f"out.{name}" for name in ("html", "csv", "jsonl", "junit")}
    code = main(
        [
            "eval",
            "--ground-truth",
            str(EXAMPLE_GT),
            "--outputs",
            str(EXAMPLE_OUTPUTS),
            "--result-file",
            str(tmp_path / "r.json"),
            "--json",
            *(arg for name, path in files.items() for arg in (f"--{name}", str(path))),
        ]
    )
    assert code == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    for path in files.values():
        assert path.stat().st_size > 0
        assert f"Wrote {path}" in captured.err
    result = load_result(tmp_path / "r.json")
    assert summary["n_cases"] == len(result.cases)
    html = files["html"].read_text(encoding="utf-8")
    assert "<mark" in html and 'class="groundtruth"' in html
    assert len(list(csv.DictReader(files["csv"].open()))) == len(result.cases)
    assert len(files["jsonl"].read_text().splitlines()) == len(result.judgments)
    assert ET.parse(files["junit"]).getroot().get("tests") == str(len(result.cases))


@pytest.mark.slow
def test_report_from_a_result_file_with_texts(result_file, tmp_path, capsys):
    html, junit = tmp_path / "report.html", tmp_path / "junit.xml"
    code = main(
        [
            "report",
            str(result_file),
            "-o",
            str(html),
            "--junit",
            str(junit),
            "--ground-truth",
            str(EXAMPLE_GT),
            "--outputs",
            str(EXAMPLE_OUTPUTS),
            "--title",
            "Sweep <42>",
        ]
    )
    assert code == 0
    text = html.read_text(encoding="utf-8")
    assert "<title>Sweep &lt;42&gt;</title>" in text
    assert "<mark" in text and 'class="diagnosis"' in text
    assert junit.exists()
    assert f"Wrote {html}" in capsys.readouterr().err


def test_report_defaults_to_an_html_beside_the_result(result_file):
    target = result_file.with_suffix(".html")
    target.unlink(missing_ok=True)
    assert main(["report", str(result_file)]) == 0
    text = target.read_text(encoding="utf-8")
    assert "--ground-truth DIR --outputs DIR" in text and "<mark" not in text


def test_report_on_bad_input_exits_2_and_writes_nothing(result_file, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": "0"}')
    html = tmp_path / "r.html"
    assert main(["report", str(bad), "-o", str(html)]) == 2
    assert "schema_version" in capsys.readouterr().err
    missing = tmp_path / "nowhere"
    assert main(["report", str(result_file), "-o", str(html), "--ground-truth", str(missing)]) == 2
    assert str(missing) in capsys.readouterr().err
    assert not html.exists()


def test_cli_parser_imports_no_report_machinery():
    code = (
        "import sys; from judge.cli import build_parser; build_parser(); "
        "print(sorted(m for m in ('matplotlib', 'judge.report', 'litellm') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
