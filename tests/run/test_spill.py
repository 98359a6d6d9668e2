"""A large run's judgments and call records live in an anonymous temporary file (`judge.checklist.spill`)
and are read back on use: the result looks and serialises exactly as when they were kept in
memory, the file lives as long as the result, leaves no name behind and no open descriptor,
and a spill file that cannot be written fails the run like any storage error."""

from __future__ import annotations

import copy
import gc
import hashlib
import os
import pickle
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest
from helpers import EXAMPLE

from ground_truth import Submission, load_specs, load_submissions
from judge import (
    CaseResult,
    DimensionVerdict,
    EvalOptions,
    EvalResult,
    JudgeTask,
    Judgment,
    QuestionAnswer,
    evaluate,
    make_judge,
    write_result,
)
from judge.checklist import spill
from judge.checklist.items import SpilledSeq, WithParts, item_text
from judge.checklist.judgment import Usage
from judge.checklist.results import result_json
from judge.checklist.scoring import score_case
from judge.checklist.spill import SpillFile
from judge.cli import main
from judge.errors import StorageError
from judge.judges import PanelJudge
from judge.run import loop as engine

SPECS = load_specs(EXAMPLE / "ground_truth")
SUBS = load_submissions(EXAMPLE / "outputs")


def judgment(n: int, answer: str | None = "Yes") -> Judgment:
    return Judgment(
        incident_id="inc",
        trial=str(n),
        dimension_id="D1",
        question_id=f"D1-Q{n % 3}",
        answer=answer,  # type: ignore[arg-type]
        evidence=f'quote {n} \u00e9\u2014\n"x"',
        judge="rules",
        prompt_hash="",
    )


def spilled(models: list[Judgment]) -> SpilledSeq[Judgment]:
    file = SpillFile()
    return file.sequence(Judgment, [file.add(m) for m in models])


# ------------------------------------------------------------------ the sequence


def test_the_sequence_reads_back_what_was_written_like_a_list() -> None:
    items = [judgment(n, "No" if n % 2 else None) for n in range(7)]
    seq = spilled(items)
    assert isinstance(seq, Sequence) and len(seq) == 7
    assert list(seq) == items and seq == items and items == seq
    assert seq[0] == items[0] and seq[-1] == items[-1] and seq[3] is not seq[3]
    with pytest.raises(IndexError):
        seq[7]
    assert isinstance(seq[2:5], SpilledSeq) and seq[2:5] == items[2:5] and seq[::-2] == items[::-2]
    assert seq[1:1] == [] and len(seq[5:]) == 2
    assert judgment(3) not in seq and items[4] in seq and seq.index(items[4]) == 4
    assert seq != items[:-1] and seq != [*items[:-1], judgment(99)] and seq != "x"
    assert seq == spilled(items) and seq[1:] != spilled(items)
    assert list(seq.texts()) == [item_text(j) for j in items]
    assert repr(seq) == "SpilledSeq[Judgment](7 items)"


def test_items_in_order_whatever_order_they_were_written_in() -> None:
    file = SpillFile()
    numbers = [file.add(judgment(n)) for n in range(20)]
    order = numbers[10:] + numbers[:10:-1] + numbers[:1]
    expected = [judgment(n) for n in order]
    assert list(file.sequence(Judgment, order)) == expected


def test_pickling_or_copying_gives_a_plain_list() -> None:
    items = [judgment(n) for n in range(3)]
    seq = spilled(items)
    for copied in (pickle.loads(pickle.dumps(seq)), copy.deepcopy(seq), copy.copy(seq)):
        assert type(copied) is list and copied == items


def test_a_model_takes_a_spilled_sequence_unread_and_a_list_as_before() -> None:
    items = [judgment(n) for n in range(3)]
    seq = spilled(items)
    case = CaseResult(
        incident_id="inc", trial="1", composite=None, passed=None, complete=False,
        dimensions=[], judgments=seq,
    )  # fmt: skip
    assert case.judgments is seq and case.answer("D1-Q2") == items[2]
    listed = case.model_copy(update={"judgments": items})
    assert case == listed
    from_dicts = CaseResult.model_validate({**listed.model_dump(), "judgments": [
        j.model_dump() for j in items]})  # fmt: skip
    assert type(from_dicts.judgments) is list and from_dicts.judgments == items
    with pytest.raises(ValueError, match=r"judgments\.0"):
        CaseResult.model_validate({**listed.model_dump(), "judgments": [{"answer": "Maybe"}]})


# ------------------------------------------------------------------ a run, spilled or not


class Mixed:
    """Yes, No, an unscored answer, usage, and now and then an error, all by the case."""

    def __init__(self, name: str) -> None:
        self.name = name

    def describe(self) -> dict:
        return {"name": self.name, "model": None}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        seed = f"{self.name}{task.submission.trial}{task.submission.incident_id}{task.dimension.id}"
        roll = int(hashlib.sha256(seed.encode()).hexdigest(), 16)
        if roll % 11 == 0:
            raise RuntimeError("the judge broke")
        answers = [
            QuestionAnswer(
                question_id=q,
                answer=(None, "Yes", "No")[(roll >> i) % 3],  # type: ignore[arg-type]
                evidence=f"{self.name} on {q}",
                confidence="Low",
                unscored_reason="unsure" if (roll >> i) % 3 == 0 else None,
            )
            for i, q in enumerate(task.question_ids)
        ]
        usage = Usage(prompt_tokens=roll % 1000, completion_tokens=7, cost_usd=0.25)
        return DimensionVerdict(answers=answers, usage=usage, requests=1)


def inputs() -> tuple[list, list[Submission]]:
    subs = [s.model_copy(update={"trial": f"{s.trial}-{n}"}) for n in range(4) for s in SUBS]
    return SPECS, [*subs, Submission(incident_id=SUBS[0].incident_id, trial="blank", diagnosis=" ")]


def pair(judge=None, specs=None, subs=None, **options) -> tuple[EvalResult, EvalResult]:
    """The same run with spilling on and off (the second with the first's timestamp)."""
    if specs is None:
        specs, subs = inputs()
    judge = judge or PanelJudge([Mixed("a"), Mixed("b")])
    on, off = (
        evaluate(specs, subs, judge=judge, options=EvalOptions(spill=s, **options))
        for s in (True, False)
    )
    return on, off.model_copy(update={"created_at": on.created_at})


@pytest.mark.slow
@pytest.mark.parametrize("granularity", ["dimension", "submission"])
def test_a_spilled_run_equals_one_kept_in_memory(granularity: str) -> None:
    on, off = pair(granularity=granularity)
    assert isinstance(on.judgments, SpilledSeq) and isinstance(on.calls, SpilledSeq)
    assert isinstance(on.member_judgments, SpilledSeq)
    assert type(off.judgments) is list and type(off.calls) is list
    assert len(on.judgments) == len(off.judgments) == len(on.cases) * 9
    assert len(on.member_judgments) == len(off.member_judgments) > 0  # the panel's members'
    pairs = (
        (on.judgments, off.judgments),
        (on.member_judgments, off.member_judgments),
        (on.calls, off.calls),
    )
    for spilled_one, kept in pairs:
        assert all(a == b for a, b in zip(spilled_one, kept, strict=True))
    assert {c.error_kind for c in on.calls} == {None, "judge_error"}
    assert all(
        isinstance(a.judgments, SpilledSeq) and a.judgments == b.judgments and a == b
        for a, b in zip(on.cases, off.cases, strict=True)
    )
    assert on == off and on.model_dump() == off.model_dump()
    assert on.model_dump_json() == off.model_dump_json()
    assert "".join(result_json(on)) == "".join(result_json(off)) == off.model_dump_json(indent=2)


def test_the_example_result_file_is_byte_for_byte_the_same(tmp_path: Path) -> None:
    on, off = pair(make_judge(), SPECS, SUBS)
    write_result(on, tmp_path / "on.json")
    write_result(off, tmp_path / "off.json")
    assert (tmp_path / "on.json").read_bytes() == (tmp_path / "off.json").read_bytes()


def test_small_runs_keep_their_items_in_memory_and_large_ones_spill(monkeypatch) -> None:
    small = evaluate(SPECS, SUBS)
    assert len(small.calls) < engine.SPILL_FROM_UNITS and type(small.judgments) is list
    monkeypatch.setattr(engine, "SPILL_FROM_UNITS", len(small.calls))
    assert isinstance(evaluate(SPECS, SUBS).judgments, SpilledSeq)


# ------------------------------------------------------------------ the file's life


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_result_reads_long_after_its_run_and_the_file_has_no_name(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = evaluate(SPECS, SUBS, options=EvalOptions(spill=True))
    expected = evaluate(SPECS, SUBS, options=EvalOptions(spill=False))
    case = result.cases[0]
    del result
    for _ in range(3):
        evaluate(SPECS, SUBS[:1], options=EvalOptions(spill=True))
    gc.collect()
    assert case.judgments == expected.cases[0].judgments
    assert list(tmp_path.iterdir()) == []  # unlinked from the start: nothing to leave behind


def test_many_runs_hold_no_file_descriptor_once_their_results_are_gone() -> None:
    evaluate(SPECS, SUBS[:1], options=EvalOptions(spill=False))  # whatever a first run opens
    before = open_fds()
    kept = evaluate(SPECS, SUBS[:1], options=EvalOptions(spill=True))
    assert open_fds() == before + 1
    for _ in range(100):
        result = evaluate(SPECS, SUBS[:1], options=EvalOptions(spill=True))
        assert len(result.judgments) == 9
    del result
    assert open_fds() == before + 1  # freed as each result went, not by the garbage collector
    del kept
    assert open_fds() == before


# ------------------------------------------------------------------ what the file holds


def test_items_are_written_compressed_a_block_at_a_time() -> None:
    file = SpillFile()
    items = [judgment(n) for n in range(2000)]
    numbers = [file.add(m) for m in items]
    file.flush()
    texts = sum(len(item_text(m).encode()) for m in items)
    size = os.fstat(file._fd).st_size
    assert 0 < size < texts / 4  # similar items, as a run's are
    order = [*numbers[1500:], *numbers[:1500:7]]  # blocks out of order, one read again
    assert list(file.texts(order)) == [item_text(items[n]) for n in order]


def test_items_read_back_and_forth_decompress_each_block_once(monkeypatch) -> None:
    """A result reads a case's judgments together, which a run wrote some blocks apart: the
    blocks read last stay decompressed (`CACHED_BLOCKS`), the oldest going first."""
    file = SpillFile()
    numbers = [file.add(judgment(n)) for n in range(2000)]
    file.flush()
    blocks = {file._block[n] for n in numbers}
    assert 4 <= len(blocks) <= spill.CACHED_BLOCKS
    decompressed: list[bytes] = []
    decompress = spill.zlib.decompress
    monkeypatch.setattr(
        spill.zlib, "decompress", lambda data: decompressed.append(data) or decompress(data)
    )
    order = [n for pair in zip(numbers, reversed(numbers), strict=True) for n in pair]
    assert list(file.texts(order)) == [item_text(judgment(n)) for n in order]
    assert len(decompressed) == len(blocks)
    monkeypatch.setattr(spill, "CACHED_BLOCKS", 1)
    file._cached.clear()
    list(file.texts(order))
    assert len(decompressed) > len(numbers)  # one block kept: about one per item read


def test_items_not_yet_written_are_read_from_memory() -> None:
    file = SpillFile()
    numbers = [file.add(judgment(n)) for n in range(3)]
    assert list(file.texts(reversed(numbers))) == [item_text(judgment(n)) for n in (2, 1, 0)]
    assert os.fstat(file._fd).st_size == 0  # reading wrote nothing
    file.add(judgment(3))
    file.flush()
    assert next(file.texts([3])) == item_text(judgment(3))


def test_a_damaged_block_is_a_storage_error_naming_the_spill_file() -> None:
    file = SpillFile()
    file.add(judgment(1))
    file.flush()
    os.pwrite(file._fd, b"\0" * 8, 0)
    with pytest.raises(StorageError, match="damaged") as caught:
        next(file.texts([0]))
    assert "temporary spill file" in caught.value.path


# ------------------------------------------------------------------ a spill file that fails


@pytest.fixture
def full_disk(monkeypatch) -> None:
    """Every spill file is /dev/full, whose writes fail with ENOSPC; written early and often."""
    monkeypatch.setattr(
        spill.tempfile,
        "TemporaryFile",
        lambda **_: open("/dev/full", "r+b", buffering=0),  # noqa: SIM115
    )
    monkeypatch.setattr(spill, "FLUSH_BYTES", 1)


def test_a_spill_file_that_cannot_be_written_fails_the_run(full_disk) -> None:
    with pytest.raises(StorageError, match="disk full") as caught:
        evaluate(SPECS, SUBS, options=EvalOptions(spill=True))
    assert "temporary spill file" in caught.value.path


def test_eval_with_a_full_spill_disk_exits_4_and_writes_nothing(
    tmp_path: Path, full_disk, monkeypatch, capsys
) -> None:
    monkeypatch.setattr(engine, "SPILL_FROM_UNITS", 1)
    path = tmp_path / "r.json"
    path.write_text("the earlier result\n")
    args = ["eval", "--ground-truth", str(EXAMPLE / "ground_truth")]
    args += ["--outputs", str(EXAMPLE / "outputs"), "--result-file", str(path), "--no-progress"]
    assert main(args) == 4
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "spill file" in err and "disk full" in err, err
    assert path.read_text() == "the earlier result\n"


def test_a_write_that_fails_at_the_end_fails_the_run_too(monkeypatch) -> None:
    monkeypatch.setattr(
        spill.tempfile,
        "TemporaryFile",
        lambda **_: open("/dev/full", "r+b", buffering=0),  # noqa: SIM115
    )
    with pytest.raises(StorageError, match="disk full"):
        evaluate(SPECS, SUBS, options=EvalOptions(spill=True))  # all fits in the buffer


def test_score_case_takes_a_spilled_sequence() -> None:
    from judge import load_rubric

    items = [judgment(n, ("Yes", "No", None)[n % 3]) for n in range(6)]
    case = score_case("inc", "1", spilled(items), load_rubric())
    assert case.dimensions[0].n_yes == 2 and case.dimensions[0].n_unscored == 2
    assert case.judgments == items


def test_spilled_cases_read_back_with_their_judgments_and_two_agents_summed_up() -> None:
    specs, subs = inputs()
    subs = [s.model_copy(update={"agent": "ab"[n % 2]}) for n, s in enumerate(subs)]
    on, off = pair(make_judge(), specs, subs)
    assert isinstance(on.cases, WithParts) and type(off.cases) is list
    assert on.by_agent is not None and on.by_agent == off.by_agent
    assert on.overall == off.overall and on.incidents == off.incidents
    assert list(on.cases) == off.cases and on.cases[-1] == off.cases[-1]
    assert [c.judgments for c in on.cases] == [c.judgments for c in off.cases]
    chosen = [5, 0, 3]
    assert isinstance(on.cases[2:7], WithParts) and isinstance(on.cases.subset(chosen), WithParts)
    assert [c.judgments for c in on.cases[2:7]] == [c.judgments for c in off.cases[2:7]]
    assert [c.judgments for c in on.cases.subset(chosen)] == [
        off.cases[i].judgments for i in chosen
    ]
    assert len({id(c.__pydantic_fields_set__) for c in on.cases}) == 1
