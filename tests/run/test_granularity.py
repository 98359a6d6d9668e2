"""`--granularity submission`: one call per submission asking every question, split back into
one validated verdict per dimension, stored under its own key, and working with shards, merge,
dry runs, replay and panels."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from judge import DimensionVerdict, EvalOptions, JudgeTask, QuestionAnswer, evaluate, load_rubric
from judge.checklist.judgment import unscored
from judge.checklist.rubric import WHOLE, parts_of, whole_submission
from judge.cli import main
from judge.run.granularity import split
from judge.testing import FakeProvider, FakeProviderConfig

RUBRIC = load_rubric("sregym-v3")
ALL_IDS = [q.id for d in RUBRIC.dimensions for q in d.questions]


class Recorder:
    """Answers Yes to every question it is asked, except those in `skip`; records each task."""

    name = "recorder"

    def __init__(self, skip: set[str] | None = None, extra: str | None = None) -> None:
        self.tasks: list[JudgeTask] = []
        self.skip = skip or set()
        self.extra = extra

    def describe(self) -> dict:
        return {"name": "recorder", "model": None, "params": {}}

    def judge(self, task: JudgeTask) -> DimensionVerdict:
        self.tasks.append(task)
        ids = [q for q in task.question_ids if q not in self.skip]
        ids += [self.extra] if self.extra else []
        return DimensionVerdict(
            answers=[QuestionAnswer(question_id=q, answer="Yes", evidence="") for q in ids]
        )


def _run(example_inputs, judge, granularity: str, **options):
    specs, subs = example_inputs
    opts = EvalOptions(granularity=granularity, **options)  # type: ignore[arg-type]
    return evaluate(specs, subs, rubric=RUBRIC, judge=judge, options=opts)


def test_one_call_per_submission_asks_every_question(example_inputs) -> None:
    per_dimension, whole = Recorder(), Recorder()
    a = _run(example_inputs, per_dimension, "dimension")
    b = _run(example_inputs, whole, "submission")
    n = len(a.cases)
    assert len(per_dimension.tasks) == 3 * n and len(whole.tasks) == n
    assert {t.dimension.id for t in whole.tasks} == {WHOLE}
    assert all(t.question_ids == ALL_IDS for t in whole.tasks)
    assert "Question ids: " + ", ".join(ALL_IDS) in whole.tasks[0].prompt.messages[-1]["content"]
    assert [c.model_dump(exclude={"judgments"}) for c in b.cases] == [
        c.model_dump(exclude={"judgments"}) for c in a.cases
    ]
    assert {j.dimension_id for j in b.judgments} == {"D1", "D2", "D3"}
    assert [(j.question_id, j.answer) for j in b.judgments] == [
        (j.question_id, j.answer) for j in a.judgments
    ]
    assert {c.dimension_id for c in b.calls} == {WHOLE} and len(b.calls) == n
    assert (a.config["granularity"], b.config["granularity"]) == ("dimension", "submission")


def test_an_omitted_question_is_unscored_in_its_own_dimension_only(example_inputs) -> None:
    result = _run(example_inputs, Recorder(skip={"D2-Q3"}), "submission")
    case = result.cases[0]
    by_question = {j.question_id: j for j in case.judgments}
    assert by_question["D2-Q3"].answer is None
    assert by_question["D2-Q3"].unscored_reason.startswith("judge_omitted")
    assert all(j.answer == "Yes" for q, j in by_question.items() if q != "D2-Q3")
    scores = {d.dimension_id: d for d in case.dimensions}
    assert scores["D2"].n_unscored == 1 and scores["D1"].n_unscored == 0
    assert case.complete


def test_an_unknown_id_rejects_the_whole_call(example_inputs) -> None:
    result = _run(example_inputs, Recorder(extra="D9-Q9"), "submission")
    judgments = [j for j in result.judgments if j.incident_id == result.cases[0].incident_id]
    assert len(judgments) == 9 * len(
        [c for c in result.cases if c.incident_id == judgments[0].incident_id]
    )
    assert all(
        j.answer is None and "unknown question id D9-Q9" in j.unscored_reason for j in judgments
    )


def test_split_keeps_each_dimensions_answers_and_the_calls_error() -> None:
    whole = whole_submission(RUBRIC.dimensions)
    assert parts_of(whole) == RUBRIC.dimensions and parts_of(RUBRIC.dimensions[0]) is None
    failed = unscored(ALL_IDS, "timeout from m: slow", "timeout")
    parts = split(failed, RUBRIC.dimensions, "j")
    assert [[a.question_id for a in p.answers] for p in parts] == [
        [q.id for q in d.questions] for d in RUBRIC.dimensions
    ]
    assert {(p.error, p.error_kind) for p in parts} == {("timeout from m: slow", "timeout")}
    answered = DimensionVerdict(
        answers=[QuestionAnswer(question_id=q, answer="No") for q in ALL_IDS], requests=1
    )
    assert all(p.error is None and p.requests == 0 for p in split(answered, RUBRIC.dimensions, "j"))


def test_an_unknown_granularity_is_refused(example_inputs) -> None:
    with pytest.raises(ValueError, match="granularity 'question'"):
        _run(example_inputs, Recorder(), "question")


class StoredRecorder(Recorder):
    """A `Recorder` the store keeps (it implements `Cacheable`)."""

    name = "stored-recorder"

    def cache_identity(self) -> dict:
        return {"model": None, "params": {}, "schema": "yes-to-all"}


def test_a_per_dimension_store_names_the_change_to_one_call(example_inputs, tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    _run(example_inputs, StoredRecorder(), "dimension", store=store)
    judge = StoredRecorder()
    result = _run(example_inputs, judge, "submission", store=store)
    assert len(judge.tasks) == len(result.cases), "no per-dimension answer served the call"
    assert {c.cache_miss for c in result.calls} == {
        "granularity changed: the store holds this case's answers per dimension, "
        "asked per submission now"
    }
    again = StoredRecorder()
    _run(example_inputs, again, "submission", store=store)
    assert again.tasks == []


def test_evaluate_submission_takes_the_granularity(example_inputs) -> None:
    from judge import evaluate_submission

    specs, subs = example_inputs
    spec = next(s for s in specs if s.id == subs[0].incident_id)
    judge = Recorder()
    options = EvalOptions(granularity="submission")
    case = evaluate_submission(spec, subs[0], rubric=RUBRIC, judge=judge, options=options)
    assert len(judge.tasks) == 1 and len(case.judgments) == len(ALL_IDS)
    assert [d.dimension_id for d in case.dimensions] == ["D1", "D2", "D3"]


def _eval(gt: Path, outputs: Path, result: Path, *extra: str) -> dict:
    code = main(["eval", "--ground-truth", str(gt), "--outputs", str(outputs),
                 "--result-file", str(result), "--no-progress", *extra])  # fmt: skip
    assert code == 0
    return json.loads(result.read_text())


def test_rules_judge_scores_the_same_at_either_granularity(
    example_ground_truth, example_outputs, tmp_path
) -> None:
    a = _eval(
        example_ground_truth, example_outputs, tmp_path / "a.json", "--granularity", "dimension"
    )
    b = _eval(
        example_ground_truth, example_outputs, tmp_path / "b.json", "--granularity", "submission"
    )
    assert a["overall"] == b["overall"]
    assert [(j["question_id"], j["answer"]) for j in a["judgments"]] == [
        (j["question_id"], j["answer"]) for j in b["judgments"]
    ]


@pytest.mark.slow
def test_llm_store_keys_each_granularity_apart_and_names_the_change(
    example_ground_truth, example_outputs, tmp_path, capsys
) -> None:
    gt, out = example_ground_truth, example_outputs
    with FakeProvider(FakeProviderConfig(seed=5)) as server:
        llm = ("--judge-model", "openai/fake-judge", "--api-base", server.url,
               "--store", str(tmp_path / "s.sqlite"))  # fmt: skip
        whole = _eval(gt, out, tmp_path / "w.json", *llm, "--granularity", "submission")
        n = len(whole["cases"])
        assert len(server.calls) == n, "one request per submission"
        assert whole["usage"]["calls_made"] == n
        again = _eval(gt, out, tmp_path / "w2.json", *llm, "--granularity", "submission")
        assert len(server.calls) == n and again["usage"]["cache_hits"] == n
        per_dim = _eval(gt, out, tmp_path / "d.json", *llm, "--granularity", "dimension")
        assert len(server.calls) == n + 3 * n, "a submission's answer never serves a dimension"
        misses = {c["cache_miss"] for c in per_dim["calls"] if not c["cached"]}
        assert any("granularity changed" in (m or "") for m in misses), misses
        assert whole["overall"]["n_scored_questions"] == per_dim["overall"]["n_scored_questions"]
    incident = whole["cases"][0]["incident_id"]
    trial = whole["cases"][0]["trial"]
    capsys.readouterr()
    store = str(tmp_path / "s.sqlite")
    assert main(["store", "explain", store, "--incident", incident, "--trial", trial,
                 "--dimension", "D2"]) == 0  # fmt: skip
    shown = capsys.readouterr().out
    assert f"{trial} * (granularity submission)" in shown
    assert f"{trial} D2 (granularity dimension)" in shown and f"{trial} D1 " not in shown


@pytest.mark.slow
def test_submission_shards_merge_into_the_single_run_and_refuse_mixing(
    example_ground_truth, example_outputs, tmp_path, capsys
) -> None:
    gt, out = example_ground_truth, example_outputs
    whole = ("--granularity", "submission")
    one = _eval(gt, out, tmp_path / "one.json", *whole)
    shards = [tmp_path / f"s{i}.json" for i in (1, 2, 3)]
    for i, path in enumerate(shards, 1):
        _eval(gt, out, path, *whole, "--shard", f"{i}/3")
    merged = tmp_path / "merged.json"
    assert main(["merge", *map(str, shards), "-o", str(merged)]) == 0
    result = json.loads(merged.read_text())
    for part in ("judgments", "cases", "overall", "calls"):
        assert result[part] == one[part], part
    other = tmp_path / "d2.json"
    _eval(gt, out, other, "--shard", "2/3", "--granularity", "dimension")
    capsys.readouterr()
    assert main(["merge", str(shards[0]), str(other), str(shards[2]), "-o", str(merged)]) == 2
    assert "granularity" in capsys.readouterr().err


def test_dry_run_writes_one_prompt_per_submission(
    example_ground_truth, example_outputs, tmp_path
) -> None:
    prompts = tmp_path / "p.jsonl"
    main(["eval", "--ground-truth", str(example_ground_truth), "--outputs", str(example_outputs),
          "--dry-run", "--prompts-file", str(prompts), "--granularity", "submission"])  # fmt: skip
    rows = [json.loads(line) for line in prompts.read_text().splitlines()]
    assert len(rows) == len({(r["incident_id"], r["trial"]) for r in rows})
    assert {r["dimension_id"] for r in rows} == {WHOLE}
    assert all(r["question_ids"] == ALL_IDS for r in rows)


@pytest.mark.slow
def test_replay_and_a_repeat_panel_at_submission_granularity(
    example_ground_truth, example_outputs, tmp_path
) -> None:
    gt, out = example_ground_truth, example_outputs
    whole = ("--granularity", "submission")
    with FakeProvider(FakeProviderConfig(seed=5)) as server:
        llm = ("--judge-model", "openai/fake-judge", "--api-base", server.url)
        first = _eval(gt, out, tmp_path / "r.json", *llm, *whole, "--repeat", "2")
        calls = server.calls
    n = len(first["cases"])
    # One request per submission and member, by the run's own count and by the provider's: each
    # submission's prompt, asking every question, came twice. The provider's log is read for this
    # run's prompts only: a port is shared by the whole machine, and a request another process
    # sent to a closed port that this server was then given would be logged here as well.
    assert first["usage"]["requests"] == 2 * n and first["usage"]["retries"] == 0
    asked = Counter(c.messages_hash for c in calls if set(c.question_ids) == set(ALL_IDS))
    assert len(asked) == n and set(asked.values()) == {2}
    assert {j["judge"] for j in first["member_judgments"]} >= {"llm:openai/fake-judge#1"}
    store = tmp_path / "r.sqlite"
    replayed = _eval(gt, out, tmp_path / "p.json", "--judge-model", f"replay:{store}",
                     "--replay-judge", "llm:openai/fake-judge#1", *whole)  # fmt: skip
    assert replayed["overall"]["n_unscored_questions"] == 0
    member = [j for j in first["member_judgments"] if j["judge"] == "llm:openai/fake-judge#1"]
    assert [(j["question_id"], j["answer"]) for j in replayed["judgments"]] == [
        (j["question_id"], j["answer"]) for j in member
    ]
