"""The result file written and read piece by piece: same text, same result, same errors."""

from __future__ import annotations

import io
import json
from array import array
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ground_truth import InputError
from ground_truth.reading import max_input_bytes, set_max_input_mb
from judge import EvalResult, Judgment, load_result, write_result
from judge.checklist import results
from judge.checklist.items import SpilledSeq
from judge.checklist.json_stream import JSONStreamError, ObjectReader
from judge.checklist.judgment import compact
from judge.checklist.results import result_json
from judge.errors import StorageError


def test_streamed_text_is_the_old_serialisation(example_result: EvalResult) -> None:
    assert "".join(result_json(example_result)) == example_result.model_dump_json(indent=2)


def test_streamed_text_with_empty_lists_and_awkward_text(example_result: EvalResult) -> None:
    odd = example_result.judgments[0].model_copy(
        update={"evidence": 'a "quote"\n\x1b[31m é \u2028'}
    )
    result = example_result.model_copy(update={"cases": [], "calls": [], "judgments": [odd]})
    assert "".join(result_json(result)) == result.model_dump_json(indent=2)


def test_streamed_file_loads_like_the_old_one(example_result: EvalResult, tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(example_result.model_dump_json(indent=2), encoding="utf-8")
    write_result(example_result, new)
    assert new.read_text(encoding="utf-8") == old.read_text(encoding="utf-8")
    before = EvalResult.model_validate(json.loads(old.read_text(encoding="utf-8")))
    assert load_result(new) == before
    assert load_result(old).model_dump() == example_result.model_dump()


def test_a_failure_while_streaming_keeps_the_earlier_file(
    example_result: EvalResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "r.json"
    write_result(example_result, target)
    earlier = target.read_text(encoding="utf-8")

    def broken(result: EvalResult):
        yield "{"
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(results, "result_json", broken)
    with pytest.raises(StorageError, match="earlier file is unchanged"):
        write_result(example_result, target)
    assert target.read_text(encoding="utf-8") == earlier
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_unknown_members_go_to_extras(example_result: EvalResult, tmp_path: Path) -> None:
    data = json.loads(example_result.model_dump_json())
    data["agreement"] = {"levels": []}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    extras: dict = {}
    assert load_result(path, extras).overall == example_result.overall
    assert extras == {"agreement": {"levels": []}}


def test_a_bad_judgment_names_its_index(example_result: EvalResult, tmp_path: Path) -> None:
    data = json.loads(example_result.model_dump_json())
    data["judgments"][2]["answer"] = "Maybe"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_result(path)
    assert caught.value.field == "judgments.2.answer"
    assert str(path) in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"schema_version": "1", "cases": [', "not a readable result file"),
        ('{"schema_version": "1"} []', "extra data"),
        ("[1, 2]", "expected '{'"),
        ('{"schema_version": "0"}', "expected schema_version '1'"),
        ("{}", "expected schema_version '1'"),
    ],
)
def test_unreadable_files_are_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message) as caught:
        load_result(path)
    assert caught.value.path == str(path)


def test_an_absurdly_large_result_is_refused(
    example_result: EvalResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.json"
    write_result(example_result, path)
    limit = max_input_bytes()
    monkeypatch.setattr(results, "MAX_RESULT_MB", 0.1)
    try:
        set_max_input_mb(0.1)
        with pytest.raises(InputError, match=r"larger than the 0\.1 MB a result file may be"):
            load_result(path)
        set_max_input_mb(1)  # a higher --max-input-mb lets it through
        assert load_result(path).overall == example_result.overall
    finally:
        set_max_input_mb(limit / 2**20)


def test_loaded_judgments_share_their_fields_set(
    example_result: EvalResult, tmp_path: Path
) -> None:
    path = tmp_path / "r.json"
    write_result(example_result, path)
    loaded = load_result(path)
    first, second = loaded.judgments[:2]
    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__
    calls = loaded.calls
    assert calls[0].__pydantic_fields_set__ is calls[1].__pydantic_fields_set__
    dims = loaded.cases[0].dimensions
    assert dims[0].__pydantic_fields_set__ is dims[1].__pydantic_fields_set__


def test_compact_shares_only_a_full_fields_set() -> None:
    full = dict(incident_id="i", trial="t", dimension_id="d", question_id="q", answer="Yes")
    a = compact(
        Judgment(
            **full,
            evidence=None,
            confidence=None,
            confidence_score=None,
            unscored_reason=None,
            judge="r",
            prompt_hash="h",
            identity=None,
            stage=None,
            abstained=False,
        )
    )
    b = compact(
        Judgment(
            **full,
            evidence=None,
            confidence=None,
            confidence_score=None,
            unscored_reason=None,
            judge="r",
            prompt_hash="h",
            identity=None,
            stage=None,
            abstained=False,
        )
    )
    partial = compact(Judgment(**full, judge="r", prompt_hash="h"))
    assert a.__pydantic_fields_set__ is b.__pydantic_fields_set__
    assert partial.__pydantic_fields_set__ is not a.__pydantic_fields_set__
    partial.evidence = "x"  # assigning adds to the instance's own set only
    assert "evidence" not in Judgment(**full, judge="r", prompt_hash="h").model_fields_set


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["a", "b", "long", "x y"]), json_values),
    st.integers(1, 12),
    st.sampled_from([None, 0, 2]),
)
@pytest.mark.slow
def test_reader_reads_what_json_loads_reads(data: dict, chunk: int, indent: int | None) -> None:
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    members = {}
    for key, value in ObjectReader(io.StringIO(text), chunk=chunk).members({"long"}):
        members[key] = list(value) if key == "long" and isinstance(data[key], list) else value
    assert members == data


def test_an_unconsumed_streamed_member_is_skipped() -> None:
    text = '{"long": [1, 22, [3]], "after": 1234567}'
    keys = [key for key, _ in ObjectReader(io.StringIO(text), chunk=3).members({"long"})]
    assert keys == ["long", "after"]
    values = dict(ObjectReader(io.StringIO(text), chunk=3).members())
    assert values == {"long": [1, 22, [3]], "after": 1234567}


def test_reader_errors_name_the_position() -> None:
    with pytest.raises(JSONStreamError, match="at character 9"):
        dict(ObjectReader(io.StringIO('{"a": 1, ]')).members())


@pytest.mark.parametrize("spill_from", [0, 5, 40])
def test_a_large_result_is_read_into_a_spill_file(
    example_result: EvalResult, tmp_path: Path, spill_from: int
) -> None:
    path, again = tmp_path / "r.json", tmp_path / "again.json"
    write_result(example_result, path)
    loaded = load_result(path, spill_from=spill_from)
    assert isinstance(loaded.judgments, SpilledSeq) and isinstance(loaded.calls, SpilledSeq)
    assert loaded == load_result(path, spill_from=10**9)
    write_result(loaded, again)
    assert again.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("spill_from", [0, 10**9])
def test_a_judgment_given_twice_is_found_spilled_or_not(
    example_result: EvalResult, tmp_path: Path, spill_from: int
) -> None:
    twice = [*example_result.judgments, example_result.judgments[3]]
    path = tmp_path / "r.json"
    write_result(example_result.model_copy(update={"judgments": twice}), path)
    with pytest.raises(InputError, match=f"judgments.{len(twice) - 1}: .*answered twice"):
        load_result(path, spill_from=spill_from)


def test_repeated_keys_are_found_in_small_and_large_sets() -> None:
    for n in (3, 50_000):
        keys = array("q", range(-n, n, 2))
        assert not results._repeated(keys)
        keys.append(keys[n // 3])
        assert results._repeated(keys)
