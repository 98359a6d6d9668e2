"""The ratings table and its readers: result JSON, label CSV, the label template."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from helpers import REPO

from agreement import (
    LABEL_COLUMNS,
    ItemKey,
    LabelFileError,
    RaterLabels,
    RatingTable,
    normalize_answer,
    read_labels,
    read_ratings,
    read_result,
    write_label_template,
)
from agreement.ratings import derive_dimensions
from agreement.synthetic import result_from_answers

ANSWERS = {
    ("inc-1", "1", "D1-Q1"): "Yes",
    ("inc-1", "1", "D1-Q2"): "Yes",
    ("inc-1", "1", "D2-Q1"): "No",
    ("inc-2", "1", "D1-Q1"): "No",
    ("inc-2", "1", "D1-Q2"): None,
    ("inc-2", "1", "D2-Q1"): "Yes",
}


def write_csv(
    path: Path, rows: list[list[str]], encoding: str = "utf-8", delimiter: str = ","
) -> Path:
    with open(path, "w", encoding=encoding, newline="") as handle:
        csv.writer(handle, delimiter=delimiter).writerows(rows)
    return path


# --- normalisation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["yes", "Yes", "YES", " yes ", "true", "TRUE", "1", "pass", "PASS", True, 1]
)
def test_yes_spellings(value):
    assert normalize_answer(value) == "Yes"


@pytest.mark.parametrize("value", ["no", "No", "false", "FALSE", "0", "fail", "Fail", False, 0])
def test_no_spellings(value):
    assert normalize_answer(value) == "No"


@pytest.mark.parametrize("value", ["", "  ", None])
def test_empty_is_missing(value):
    assert normalize_answer(value) is None


@pytest.mark.parametrize("value", ["maybe", "y", "n", "2", "N/A", 0.5, 2, "yes!"])
def test_anything_else_is_rejected_naming_file_and_row(value):
    with pytest.raises(LabelFileError) as info:
        normalize_answer(value, path="labels.csv", row=7)
    assert str(info.value).startswith("labels.csv: row 7: answer: ")
    assert info.value.row == 7 and info.value.field == "answer" and info.value.path == "labels.csv"


# --- judge result files -----------------------------------------------------------------------


def test_result_levels_and_rater_name():
    result = result_from_answers(ANSWERS, judge="llm", model="gpt-x", threshold=0.5)
    table = read_result(result)
    assert table.names == ["gpt-x"]
    q = table.labels("gpt-x", "question")
    assert q[ItemKey("inc-1", "1", "D1-Q1")] == "Yes"
    assert q[ItemKey("inc-2", "1", "D1-Q2")] is None  # unscored stays missing, never No
    d = table.labels("gpt-x", "dimension")
    assert d[ItemKey("inc-1", "1", "D1")] == "Yes"  # 2/2
    assert d[ItemKey("inc-2", "1", "D1")] == "No"  # 0/1 scored
    assert d[ItemKey("inc-1", "1", "D2")] == "No"
    v = table.labels("gpt-x", "verdict")
    assert v[ItemKey("inc-1", "1", "verdict")] == "Yes"  # composite (1 + 0)/2 = 0.5
    assert table["gpt-x"].composites[("inc-2", "1")] == pytest.approx(0.5)
    assert table.dimension_map() == {"D1-Q1": "D1", "D1-Q2": "D1", "D2-Q1": "D2"}


def test_rater_falls_back_to_judge_name_and_can_be_overridden(tmp_path):
    result = result_from_answers(ANSWERS, judge="rules")
    assert read_result(result).names == ["rules"]
    assert read_result(result, rater="mine").names == ["mine"]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(result))
    assert read_result(path).names == ["rules"]
    assert read_result(path)["rules"].source == str(path)


def test_dimension_pass_threshold_is_a_table_setting():
    result = result_from_answers({("i", "1", "D1-Q1"): "Yes", ("i", "1", "D1-Q2"): "No"})
    key = ItemKey("i", "1", "D1")
    assert read_ratings([result], dimension_pass=0.5).labels("llm", "dimension")[key] == "Yes"
    assert read_ratings([result], dimension_pass=0.6).labels("llm", "dimension")[key] == "No"


def test_same_judge_name_in_two_results_is_two_raters_not_repeats(tmp_path):
    result = result_from_answers(ANSWERS, model="m")
    table = read_ratings([result, result, result_from_answers(ANSWERS, model="other"), result])
    assert table.names == ["m", "m (2)", "other", "m (3)"]
    paths = [tmp_path / "c.json", *(tmp_path / d / "run.json" for d in "abd")]
    for path in paths:
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(result))
    names = read_ratings(paths).names
    assert names == ["m", "m (run.json)", f"m ({paths[2]})", f"m ({paths[3]})"]


def test_panel_members_split_by_judge_field():
    result = result_from_answers(ANSWERS, judge="panel")
    member_rows = []
    for member, flip in (("a", False), ("b", True)):
        for row in result["judgments"]:
            copy = dict(row, judge=member)
            if flip and copy["answer"]:
                copy["answer"] = {"Yes": "No", "No": "Yes"}[copy["answer"]]
            member_rows.append(copy)
    panel = dict(result, judgments=member_rows)
    with pytest.raises(LabelFileError, match="by_judge=True"):
        read_result(panel)
    table = read_result(panel, by_judge=True)
    assert table.names == ["panel", "a", "b"]
    assert table.labels("a", "question")[ItemKey("inc-1", "1", "D1-Q1")] == "Yes"
    assert table.labels("b", "question")[ItemKey("inc-1", "1", "D1-Q1")] == "No"
    assert table.labels("panel", "verdict")  # the cases stay with the panel
    assert table.labels("b", "dimension")[ItemKey("inc-1", "1", "D1")] == "No"  # derived


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda r: r["judgments"][1].update(answer="maybe"), "judgments[1].answer"),
        (lambda r: r["judgments"][0].pop("incident_id"), "judgments[0].incident_id: missing"),
        (lambda r: r["cases"][0].update(composite="high"), "cases[0].composite"),
        (lambda r: r.update(judgments={"a": 1}), "judgments: expected a list"),
    ],
)
def test_bad_result_files_name_the_field(tmp_path, mutate, expected):
    result = result_from_answers(ANSWERS)
    mutate(result)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(result))
    with pytest.raises(LabelFileError) as info:
        read_result(path)
    assert str(info.value).startswith(str(path))
    assert expected in str(info.value)


def test_not_json_or_not_a_result(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("{not json")
    with pytest.raises(LabelFileError, match="not valid JSON"):
        read_result(bad)
    bad.write_text('{"something": 1}')
    with pytest.raises(LabelFileError, match="not a judge result"):
        read_result(bad)
    with pytest.raises(LabelFileError, match="cannot read"):
        read_result(tmp_path / "missing.json")


# --- label CSVs -------------------------------------------------------------------------------

HEADER = ["incident_id", "trial", "question_id", "answer", "annotator"]


def test_labels_csv_with_two_annotators_and_verdict_rows(tmp_path):
    path = write_csv(
        tmp_path / "labels.csv",
        [
            HEADER,
            ["inc-1", "1", "D1-Q1", "yes", "alice"],
            ["inc-1", "1", "D1-Q1", "No", "bob"],
            ["inc-1", "1", "verdict", "pass", "alice"],
            ["inc-1", "1", "Verdict", "FAIL", "bob"],
            ["inc-2", "", "D1-Q1", "", "alice"],
            ["", "", "", "", ""],
        ],
    )
    table = read_labels(path)
    assert table.names == ["alice", "bob"]
    assert all(r.kind == "human" for r in table.raters)
    assert table.labels("alice", "question")[ItemKey("inc-1", "1", "D1-Q1")] == "Yes"
    assert table.labels("bob", "question")[ItemKey("inc-1", "1", "D1-Q1")] == "No"
    assert table.labels("alice", "verdict")[ItemKey("inc-1", "1", "verdict")] == "Yes"
    assert table.labels("bob", "verdict")[ItemKey("inc-1", "1", "verdict")] == "No"
    assert table.labels("alice", "question")[ItemKey("inc-2", "1", "D1-Q1")] is None


def test_default_annotator_is_the_argument_or_file_stem(tmp_path):
    path = write_csv(
        tmp_path / "carol.csv", [["incident_id", "question_id", "answer"], ["i", "verdict", "1"]]
    )
    assert read_labels(path).names == ["carol"]
    assert read_labels(path, annotator="dave").names == ["dave"]


def test_bom_and_semicolons_and_extra_columns(tmp_path):
    path = write_csv(
        tmp_path / "excel.csv",
        [["Incident_ID", "question_id", "Answer", "comment"], ["i", "D1-Q1", "Yes", "très bien"]],
        encoding="utf-8-sig",
        delimiter=";",
    )
    assert read_labels(path, annotator="x").labels("x", "question") == {
        ItemKey("i", "1", "D1-Q1"): "Yes"
    }


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        (
            [HEADER, ["i", "1", "D1-Q1", "yes", "a"], ["i", "1", "D1-Q2", "maybe", "a"]],
            "row 3: answer: 'maybe'",
        ),
        ([HEADER, ["", "1", "D1-Q1", "yes", "a"]], "row 2: incident_id: empty incident_id"),
        ([HEADER, ["i", "1", "", "yes", "a"]], "row 2: question_id: empty question_id"),
        ([["incident_id", "answer"], ["i", "yes"]], "row 1: missing column(s) question_id"),
        (
            [HEADER, ["i", "1", "D1-Q1", "yes", "a"], ["i", "1", "D1-Q1", "no", "a"]],
            "row 3: answer: annotator 'a'",
        ),
        ([HEADER, ["i", "1", "D1-Q1", "yes", "a", "extra"]], "row 2: 6 cells but the header has 5"),
        ([HEADER], "no label rows"),
    ],
)
def test_bad_label_files_name_file_and_row(tmp_path, rows, expected):
    path = write_csv(tmp_path / "bad.csv", rows)
    with pytest.raises(LabelFileError) as info:
        read_labels(path)
    assert str(info.value).startswith(f"{path}: ")
    assert expected in str(info.value)


def test_not_utf8_and_empty_files(tmp_path):
    latin = tmp_path / "latin.csv"
    latin.write_bytes("incident_id,question_id,answer\nété,verdict,yes\n".encode("latin-1"))
    with pytest.raises(LabelFileError, match="not UTF-8"):
        read_labels(latin)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(LabelFileError, match="empty file"):
        read_labels(empty)


def test_duplicate_row_with_same_answer_is_fine(tmp_path):
    path = write_csv(
        tmp_path / "d.csv",
        [HEADER, ["i", "1", "verdict", "yes", "a"], ["i", "1", "verdict", "1", "a"]],
    )
    assert read_labels(path).labels("a", "verdict") == {ItemKey("i", "1", "verdict"): "Yes"}


def test_same_annotator_across_files_is_merged_and_conflicts_rejected(tmp_path):
    one = write_csv(tmp_path / "one.csv", [HEADER, ["i", "1", "D1-Q1", "yes", "alice"]])
    two = write_csv(tmp_path / "two.csv", [HEADER, ["i", "1", "verdict", "no", "alice"]])
    table = read_ratings([one, two])
    assert table.names == ["alice"]
    assert table.count("alice", "question") == 1 and table.count("alice", "verdict") == 1
    three = write_csv(tmp_path / "three.csv", [HEADER, ["i", "1", "D1-Q1", "no", "alice"]])
    with pytest.raises(LabelFileError, match=r"three\.csv"):
        read_ratings([one, three])


# --- the table --------------------------------------------------------------------------------


def test_pairs_are_aligned_by_key_never_by_position():
    a = RaterLabels("a", "judge")
    b = RaterLabels("b", "human")
    keys = [ItemKey(f"i{n}", "1", "verdict") for n in range(4)]
    for key, answer in zip(keys, ["Yes", "No", "Yes", None], strict=True):
        a.labels["verdict"][key] = answer
    for key, answer in zip(reversed(keys), ["No", "Yes", "Yes", "Yes"], strict=True):  # other order
        b.labels["verdict"][key] = answer
    b.labels["verdict"][ItemKey("only-b", "1", "verdict")] = "No"
    paired = RatingTable([a, b]).paired("a", "b", "verdict")
    assert paired.keys == keys[:3]
    assert paired.a == ["Yes", "No", "Yes"]
    assert paired.b == ["Yes", "Yes", "Yes"]  # by position it would start with b's first "No"


def test_no_overlap_gives_no_pairs():
    a, b = RaterLabels("a", "judge"), RaterLabels("b", "judge")
    a.labels["verdict"][ItemKey("x", "1", "verdict")] = "Yes"
    b.labels["verdict"][ItemKey("y", "1", "verdict")] = "Yes"
    assert RatingTable([a, b]).paired("a", "b", "verdict").keys == []


def test_human_dimension_pass_is_derived_from_question_labels(tmp_path):
    questions = {
        ItemKey("i", "1", "D1-Q1"): "Yes",
        ItemKey("i", "1", "D1-Q2"): "No",
        ItemKey("i", "1", "D1-Q3"): "No",
        ItemKey("i", "1", "D2-Q1"): None,
    }
    derived = derive_dimensions(
        questions, {"D1-Q1": "D1", "D1-Q2": "D1", "D1-Q3": "D1", "D2-Q1": "D2"}
    )
    assert derived == {ItemKey("i", "1", "D1"): "No", ItemKey("i", "1", "D2"): None}
    # without a dimension_id column the map comes from a judge in the same table
    path = write_csv(
        tmp_path / "h.csv",
        [HEADER, ["inc-1", "1", "D1-Q1", "yes", "h"], ["inc-1", "1", "D1-Q2", "yes", "h"]],
    )
    table = read_ratings([result_from_answers(ANSWERS), path])
    assert table.labels("h", "dimension") == {ItemKey("inc-1", "1", "D1"): "Yes"}


def test_unknown_rater_error_lists_known_ones():
    with pytest.raises(KeyError, match="raters: a"):
        RatingTable([RaterLabels("a", "judge")])["zzz"]


# --- the template ----------------------------------------------------------------------------


def test_template_rows_columns_and_round_trip(tmp_path):
    result = result_from_answers(ANSWERS)
    path = tmp_path / "labels.csv"
    n = write_label_template(
        result,
        path,
        {"inc-1": "checkout has the wrong port", "inc-2": "geo image is broken"},
        question_texts={"D1-Q1": "Does it name the faulty component?"},
        diagnoses={("inc-1", "1"): "The checkout port is 8082.", "inc-2": "Geo crashed."},
    )
    assert n == 8  # 3 questions + 1 verdict per case, 2 cases
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # BOM: Excel opens UTF-8 correctly
    with open(path, encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == list(LABEL_COLUMNS)
    assert [r["question_id"] for r in rows[:4]] == ["D1-Q1", "D1-Q2", "D2-Q1", "verdict"]
    assert rows[0]["question_text"] == "Does it name the faulty component?"
    assert rows[0]["dimension_id"] == "D1"
    assert rows[0]["ground_truth"] == "checkout has the wrong port"
    assert rows[0]["diagnosis"] == "The checkout port is 8082."
    assert rows[4]["diagnosis"] == "Geo crashed."
    assert rows[3]["question_text"].startswith("Final verdict")
    assert all(r["answer"] == "" for r in rows)  # people label blind
    assert "Yes" not in raw.decode("utf-8-sig").split("\n", 1)[1].replace("Yes = pass", "")
    # fill it in and read it back
    for i, r in enumerate(rows):
        r["answer"] = "yes" if i % 2 else "no"
        r["annotator"] = "eve"
    with open(path, "w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=LABEL_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    table = read_labels(path)
    assert table.count("eve", "question") == 6 and table.count("eve", "verdict") == 2
    assert table["eve"].dimension_of == {"D1-Q1": "D1", "D1-Q2": "D1", "D2-Q1": "D2"}


def test_empty_template_reads_as_all_missing(tmp_path):
    path = tmp_path / "t.csv"
    write_label_template(result_from_answers(ANSWERS), path, annotator="zoe")
    table = read_labels(path)
    assert table.names == ["zoe"]
    assert table.count("zoe", "question") == 0


def test_sources_can_be_named_with_tuples(tmp_path):
    path = write_csv(
        tmp_path / "x.csv", [["incident_id", "question_id", "answer"], ["i", "verdict", "1"]]
    )
    result = result_from_answers(ANSWERS, model="m")
    table = read_ratings([(result, "first"), (result, "second"), (path, "pat")])
    assert table.names == ["first", "second", "pat"]


def test_agreement_imports_neither_judge_nor_ground_truth():
    import ast

    package = REPO / "agreement"
    for module in package.glob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for name in names:
                assert name.split(".")[0] not in ("judge", "ground_truth"), (
                    f"{module.name} imports {name}"
                )
