"""Rubric loading: SREGym's v3.0 checklist as shipped, and every validation error named precisely."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from helpers import FIXTURES

from ground_truth import InputError
from judge import load_rubric
from judge.checklist.rubric import available_rubrics, rubrics_dir

# SREGym's file, verbatim (tests/fixtures/formats/ATTRIBUTION.md)
SREGYM_V3 = FIXTURES / "formats" / "sregym" / "rca_checklists.v3.0.head.yaml"


def test_default_rubric_is_sregym_3x3() -> None:
    rubric = load_rubric()
    assert rubric.name == "sregym-v3"
    assert rubric.version == "3.0"
    assert rubric.scoring.threshold == 0.70
    assert rubric.scoring.weights == {"D1": 0.33, "D2": 0.33, "D3": 0.34}
    assert [d.id for d in rubric.dimensions] == ["D1", "D2", "D3"]
    assert [q.id for d in rubric.dimensions for q in d.questions] == [
        f"D{d}-Q{q}" for d in (1, 2, 3) for q in (1, 2, 3)
    ]
    assert all(q.text and q.evaluator_hint for d in rubric.dimensions for q in d.questions)
    assert re.fullmatch(r"[0-9a-f]{16}", rubric.hash)
    assert "sregym-v3" in available_rubrics()


def test_by_name_and_by_path_give_the_same_rubric() -> None:
    by_name = load_rubric("sregym-v3")
    by_path = load_rubric(rubrics_dir() / "sregym-v3.yaml")
    assert by_path.hash == by_name.hash
    assert by_path.model_dump(exclude={"name", "path"}) == by_name.model_dump(
        exclude={"name", "path"}
    )


def test_sregym_v3_file_loads_unchanged_with_the_shipped_hash() -> None:
    path = SREGYM_V3
    upstream = load_rubric(path)
    shipped = load_rubric("sregym-v3")
    assert upstream.hash == shipped.hash
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert upstream.scoring.weights == raw["scoring"]["weights"]
    assert [q.text for d in upstream.dimensions for q in d.questions] == [
        q["text"] for d in raw["dimensions"] for q in d["questions"]
    ]


def test_hash_follows_content_not_location(tmp_path: Path) -> None:
    shipped = load_rubric("sregym-v3")
    text = (rubrics_dir() / "sregym-v3.yaml").read_text(encoding="utf-8")
    copy = tmp_path / "copy.yaml"
    copy.write_text("# a comment changes nothing\n" + text, encoding="utf-8")
    assert load_rubric(copy).hash == shipped.hash
    changed = tmp_path / "changed.yaml"
    changed.write_text(text.replace("threshold: 0.70", "threshold: 0.75"), encoding="utf-8")
    assert load_rubric(changed).hash != shipped.hash


def test_small_valid_fixture_loads(bad_dir: Path) -> None:
    rubric = load_rubric(bad_dir / "rubrics" / "valid_two_dimensions.yaml")
    assert rubric.question_count == 3


@pytest.mark.parametrize(
    ("fixture", "field", "words"),
    [
        ("duplicate_dimension_id", "dimensions[1].id", "duplicate dimension id 'D2'"),
        ("duplicate_question_id", "dimensions[1].questions[1].id", "duplicate question id 'D1-Q2'"),
        ("negative_weight", "scoring.weights.D1", "must be >= 0"),
        ("weights_not_one", "scoring.weights", "not renormalised"),
        ("threshold_above_one", "scoring.threshold", "between 0 and 1"),
        ("threshold_negative", "scoring.threshold", "between 0 and 1"),
        ("dimension_without_questions", "dimensions[1].questions", "has no questions"),
        ("weight_unknown_dimension", "scoring.weights.D9", "unknown dimension 'D9'"),
        ("dimension_without_weight", "scoring.weights.D2", "'D2' has no weight"),
        ("malformed", "line ", "invalid YAML"),
    ],
)
def test_validation_error_names_file_and_field(
    bad_dir: Path, fixture: str, field: str, words: str
) -> None:
    path = bad_dir / "rubrics" / f"{fixture}.yaml"
    with pytest.raises(InputError) as caught:
        load_rubric(path)
    err = caught.value
    assert err.path == str(path)
    assert err.field is not None and err.field.startswith(field)
    assert words in str(err)
    assert str(path) in str(err) and field in str(err)


def test_weights_not_summing_to_one_says_the_sum(bad_dir: Path) -> None:
    with pytest.raises(InputError, match=r"sum to 1\.1, expected 1"):
        load_rubric(bad_dir / "rubrics" / "weights_not_one.yaml")


def test_malformed_yaml_names_the_line(bad_dir: Path) -> None:
    path = bad_dir / "rubrics" / "malformed.yaml"
    with pytest.raises(InputError) as caught:
        load_rubric(path)
    line = int(caught.value.field.removeprefix("line "))
    assert 4 <= line <= 6  # the unclosed `{` opens on line 4; YAML notices it at 5


def test_unknown_name_lists_shipped_rubrics() -> None:
    with pytest.raises(InputError) as caught:
        load_rubric("no-such-rubric")
    assert caught.value.field == "--rubric"
    assert "no-such-rubric" in str(caught.value)
    for name in available_rubrics():
        assert name in str(caught.value)


def test_missing_rubric_path_is_named(tmp_path: Path) -> None:
    path = tmp_path / "absent.yaml"
    with pytest.raises(InputError, match=r"absent\.yaml"):
        load_rubric(path)


def test_rubric_that_is_not_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- just\n- a list\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected a mapping"):
        load_rubric(path)


def test_pydantic_errors_name_the_field(tmp_path: Path) -> None:
    path = tmp_path / "no_scoring.yaml"
    path.write_text('version: "1"\ndimensions: []\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_rubric(path)
    assert caught.value.field == "scoring"


def test_select_rescales_weights() -> None:
    rubric = load_rubric("sregym-v3")
    one = rubric.select(["D3"])
    assert [d.id for d in one.dimensions] == ["D3"]
    assert one.scoring.weights == {"D3": pytest.approx(1.0)}
    two = rubric.select(["D1", "D3"])
    assert [d.id for d in two.dimensions] == ["D1", "D3"]
    assert two.scoring.weights["D1"] == pytest.approx(0.33 / 0.67)
    assert two.scoring.weights["D3"] == pytest.approx(0.34 / 0.67)
    assert sum(two.scoring.weights.values()) == pytest.approx(1.0)
    assert rubric.scoring.weights == {"D1": 0.33, "D2": 0.33, "D3": 0.34}


def test_select_unknown_dimension_names_it() -> None:
    with pytest.raises(InputError) as caught:
        load_rubric("sregym-v3").select(["D1", "D7"])
    assert caught.value.field == "--dimensions"
    assert "D7" in str(caught.value)


def test_select_only_zero_weight_dimensions_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "zero.yaml"
    text = (rubrics_dir() / "sregym-v3.yaml").read_text(encoding="utf-8")
    text = text.replace("D1: 0.33", "D1: 0.0").replace("D2: 0.33", "D2: 0.66")
    path.write_text(text, encoding="utf-8")
    rubric = load_rubric(path)
    with pytest.raises(InputError) as caught:
        rubric.select(["D1"])
    assert caught.value.field == "--dimensions"
