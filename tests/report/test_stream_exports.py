"""The exports, written a row, a line, a testcase at a time, are the same bytes as before."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import FIXTURES

from judge import load_result
from judge.errors import StorageError
from judge.report import exports

FIXTURE = FIXTURES / "exports"
WRITERS = {
    "cases.csv": exports.write_csv,
    "judgments.jsonl": exports.write_jsonl,
    "junit.xml": exports.write_junit,
}


@pytest.mark.parametrize("spill_from", [0, 10**9])
@pytest.mark.parametrize("name", sorted(WRITERS))
def test_streamed_export_is_the_earlier_one(name: str, spill_from: int, tmp_path: Path) -> None:
    """The same bytes whether the result's items were read into memory or a spill file."""
    result = load_result(FIXTURE / "result.json", spill_from=spill_from)
    written = WRITERS[name](tmp_path / name, result)
    assert written.read_bytes() == (FIXTURE / name).read_bytes()


def test_the_fixture_covers_every_junit_outcome() -> None:
    xml = (FIXTURE / "junit.xml").read_text(encoding="utf-8")
    assert "<failure" in xml and "<skipped" in xml and "(no submission)" in xml
    assert '<error type="server"' in xml


def test_a_junit_suite_with_no_testcase(tmp_path: Path) -> None:
    result = load_result(FIXTURE / "result.json").model_copy(update={"cases": [], "missing": []})
    xml = exports.junit_xml(result)
    assert 'tests="0"' in xml and xml.endswith("  </properties>\n</testsuite>\n")


def test_a_failed_export_keeps_the_earlier_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = load_result(FIXTURE / "result.json")
    target = exports.write_csv(tmp_path / "cases.csv", result)
    before = target.read_bytes()

    def failing(result):
        yield "incident_id\n"
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(exports, "csv_rows", failing)
    with pytest.raises(StorageError, match="earlier file is unchanged"):
        exports.write_csv(target, result)
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["cases.csv"]
