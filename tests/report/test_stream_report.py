"""`judge report` on a large run: a summary page and pages of case details; checks up front."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import EXAMPLE, FIXTURES

from judge import EvalResult, load_result
from judge.checklist.items import SpilledSeq
from judge.checklist.texts import load_texts
from judge.cli import main
from judge.report import html, view

FIXTURE = FIXTURES / "exports" / "result.json"


@pytest.fixture(scope="module")
def exported_result() -> EvalResult:
    return load_result(FIXTURE)


@pytest.fixture(scope="module")
def texts(exported_result: EvalResult):
    return load_texts(
        EXAMPLE / "ground_truth", EXAMPLE / "outputs", exported_result.config.get("rubric")
    )


def _write(exported_result, texts, path: Path, per_page: int) -> list[Path]:
    html.write_html(path, exported_result, texts=texts, max_single_page=10, per_page=per_page)
    return sorted((path.parent / "report-cases").glob("page-*.html"))


def test_small_runs_keep_one_page(exported_result, texts, tmp_path: Path) -> None:
    path = html.write_html(tmp_path / "report.html", exported_result, texts=texts)
    assert not (tmp_path / "report-cases").exists()
    assert path.read_text(encoding="utf-8").count('<details class="case"') == len(
        exported_result.cases
    )


def test_large_runs_get_a_summary_and_case_pages(exported_result, texts, tmp_path: Path) -> None:
    pages = _write(exported_result, texts, tmp_path / "report.html", per_page=8)
    summary = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert [p.name for p in pages] == [f"page-00{n}.html" for n in range(1, 5)]
    assert '<details class="case"' not in summary and 'id="case-pages"' in summary
    assert f"{len(exported_result.cases)} cases are too many for one page" in summary
    texts_of = {p.name: p.read_text(encoding="utf-8") for p in pages}
    anchors = [
        a for t in texts_of.values() for a in re.findall(r'<details class="case" id="([^"]+)"', t)
    ]
    assert sorted(anchors) == sorted(f"case-{n}" for n in range(len(exported_result.cases)))
    for text in texts_of.values():
        assert "Content-Security-Policy" in text and "<script>" in text and "<mark" in text
        assert 'href="../report.html"' in text
    assert (
        'rel="next"' in texts_of["page-001.html"] and 'rel="prev"' not in texts_of["page-001.html"]
    )
    for href in re.findall(r'<td class="incident"><a href="([^"]+)">', summary):
        page, anchor = href.split("#")
        assert f'id="{anchor}"' in (tmp_path / page).read_text(encoding="utf-8")


@pytest.mark.slow
def test_an_incident_spans_pages_and_stale_pages_go(exported_result, texts, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    one_each = _write(exported_result, texts, path, per_page=1)
    assert len(one_each) == len(exported_result.cases)
    first = exported_result.cases[0].incident_id
    holding = [p for p in one_each if f'<span class="id">{first}</span>' in p.read_text("utf-8")]
    assert len(holding) == sum(c.incident_id == first for c in exported_result.cases) > 1
    summary = path.read_text(encoding="utf-8")
    status = re.search(rf'data-incident="{first}">.*?data-v="(\w+)"', summary, re.S).group(1)
    for page in holding:
        badge = re.search(
            r'<span class="id">[^<]*</span> <span class="badge (\w+)"', page.read_text("utf-8")
        )
        assert badge.group(1) == status
    assert len(_write(exported_result, texts, path, per_page=16)) == 2


def test_long_problem_tables_are_cut_with_a_note(
    exported_result, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(view, "MAX_TABLE_ROWS", 2)
    page = html.render_html(exported_result)
    n_unscored = sum(j.answer is None for j in exported_result.judgments)
    assert f"Unscored questions ({n_unscored})" in page and n_unscored > 2
    assert "The first 2 are listed" in page
    assert page.count('<tr class="unscored"><td class="incident">') == 2


def test_report_checks_its_outputs_before_reading(tmp_path: Path, capsys) -> None:
    result = tmp_path / "r.json"
    result.write_bytes(FIXTURE.read_bytes())
    kept = tmp_path / "kept.csv"
    kept.write_text("earlier\n")
    plain = tmp_path / "a-file"  # a folder is refused already while parsing (issue 35)
    plain.write_text("")
    code = main(["report", str(result), "--csv", str(kept), "--junit", str(plain / "out.xml")])
    assert code == 2
    assert "--junit" in capsys.readouterr().err
    assert kept.read_text() == "earlier\n"


def test_report_never_writes_over_its_result(tmp_path: Path, capsys) -> None:
    result = tmp_path / "r.json"
    result.write_bytes(FIXTURE.read_bytes())
    assert main(["report", str(result), "--jsonl", str(result)]) == 2
    assert "is the result file being reported on" in capsys.readouterr().err
    assert result.read_bytes() == FIXTURE.read_bytes()


def test_report_reads_a_result_over_the_limit_with_max_input_mb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    from ground_truth.reading import max_input_bytes, set_max_input_mb
    from judge.checklist import results

    monkeypatch.setattr(results, "MAX_RESULT_MB", 0.01)
    limit = max_input_bytes()
    try:
        set_max_input_mb(0.01)
        assert main(["report", str(FIXTURE), "--csv", str(tmp_path / "c.csv")]) == 2
        assert "a result file may be" in capsys.readouterr().err
        args = ["report", str(FIXTURE), "--csv", str(tmp_path / "c.csv"), "--max-input-mb", "1"]
        assert main(args) == 0
    finally:
        set_max_input_mb(limit / 2**20)


@pytest.mark.parametrize("per_page", [None, 8])
def test_a_spilled_result_makes_the_same_report(
    exported_result, texts, tmp_path: Path, per_page: int | None
) -> None:
    """A result whose cases, judgments and calls were read into a spill file (as a large one
    is) gives the same pages as one read into memory, on one page or several."""
    spilled = load_result(FIXTURE, spill_from=0)
    assert isinstance(spilled.judgments, SpilledSeq) and isinstance(spilled.cases, SpilledSeq)
    written = {}
    for name, result in (("kept", exported_result), ("spilled", spilled)):
        folder = tmp_path / name
        folder.mkdir()
        if per_page is None:
            html.write_html(folder / "report.html", result, texts=texts)
        else:
            _write(result, texts, folder / "report.html", per_page=per_page)
        written[name] = {
            p.relative_to(folder): p.read_bytes() for p in folder.rglob("*.html") if p.is_file()
        }
    assert written["spilled"] == written["kept"] and len(written["kept"]) >= 1
