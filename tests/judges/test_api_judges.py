"""The judge extension point: a user's judge, sync or async, checked when built, found by name,
entry point or `module:Class`, with its capabilities (store, gate) taken from named protocols."""

from __future__ import annotations

import asyncio
import json
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLE

from ground_truth import load_specs, load_submissions
from judge import (
    Cacheable,
    DimensionVerdict,
    EvalOptions,
    Gated,
    Judge,
    JudgeTask,
    QuestionAnswer,
    RulesJudge,
    evaluate,
    make_judge,
    register_judge,
)
from judge.judges import PanelJudge, build_judge
from judge.judges.base import NullGate
from judge.judges.registry import unregister_judge
from judge.run.control import Gate


def _answers(task: JudgeTask, answer: str = "Yes") -> DimensionVerdict:
    return DimensionVerdict(
        answers=[
            QuestionAnswer(question_id=q, answer=answer, evidence="x", confidence="High")
            for q in task.question_ids
        ]
    )


class SyncJudge:
    name = "sync"

    def __init__(self) -> None:
        self.threads: set[str] = set()

    def describe(self) -> dict[str, Any]:
        return {"name": "sync", "model": None, "params": {}}

    def judge(self, task: JudgeTask) -> DimensionVerdict:
        self.threads.add(threading.current_thread().name)
        return _answers(task)


class AsyncJudge:
    name = "async"

    def describe(self) -> dict[str, Any]:
        return {"name": "async", "model": None, "params": {}}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        await asyncio.sleep(0)
        return _answers(task, "No")


class NoDescribe:
    name = "broken"
    calls = 0

    def judge(self, task: JudgeTask) -> DimensionVerdict:
        NoDescribe.calls += 1
        return _answers(task)


@pytest.fixture(scope="module")
def one_incident() -> tuple[list[Any], list[Any]]:
    specs = load_specs(EXAMPLE / "ground_truth" / "incorrect_image.yaml")
    subs = [s for s in load_submissions(EXAMPLE / "outputs") if s.incident_id == specs[0].id]
    return specs, subs


@pytest.fixture()
def registry():
    names: list[str] = []

    def register(name: str, factory: Any) -> None:
        register_judge(name, factory)
        names.append(name)

    yield register
    for name in names:
        unregister_judge(name)


def test_a_sync_judge_runs_in_a_worker_thread_and_scores(one_incident) -> None:
    judge = SyncJudge()
    result = evaluate(*one_incident, judge=judge)
    assert [c.composite for c in result.cases] == [1.0, 1.0, 1.0]
    assert threading.main_thread().name not in judge.threads
    assert result.config["judge"]["label"] == "sync"


def test_an_async_judge_scores(one_incident) -> None:
    result = evaluate(*one_incident, judge=AsyncJudge())
    assert {c.composite for c in result.cases} == {0.0}
    assert {j.judge for j in result.judgments} == {"async"}


def test_a_judge_without_describe_fails_before_any_call(one_incident) -> None:
    with pytest.raises(TypeError, match=r"NoDescribe\) is not a Judge: it has no describe"):
        evaluate(*one_incident, judge=NoDescribe())  # type: ignore[arg-type]
    assert NoDescribe.calls == 0
    assert not isinstance(NoDescribe(), Judge)
    with pytest.raises(TypeError, match="panel member 2"):
        PanelJudge([SyncJudge(), NoDescribe()])  # type: ignore[list-item]


def test_the_builtin_judges_are_judges() -> None:
    assert isinstance(RulesJudge(), Judge)
    assert not isinstance(RulesJudge(), Cacheable)
    assert not isinstance(RulesJudge(), Gated)


def test_a_custom_judges_verdicts_are_validated_like_any_other(one_incident) -> None:
    class Sloppy(SyncJudge):
        def judge(self, task: JudgeTask) -> DimensionVerdict:
            verdict = _answers(task)
            verdict.answers = verdict.answers[1:]  # leaves the first question out
            return verdict

    result = evaluate(*one_incident, judge=Sloppy(), options=EvalOptions(granularity="dimension"))
    first = [j for j in result.judgments if j.question_id.endswith("-Q1")]
    assert first and all(j.answer is None for j in first)
    assert all("judge_omitted" in (j.unscored_reason or "") for j in first)
    assert result.errors == {"judge_omitted": len(result.calls)}


def test_register_judge_by_name_with_args(registry) -> None:
    registry("const", lambda args=None: ConstJudge(args or "Yes"))
    assert make_judge("const").answer == "Yes"  # type: ignore[attr-defined]
    assert make_judge("const:No").answer == "No"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="already registered"):
        register_judge("const", lambda: None)
    with pytest.raises(ValueError, match="cannot register a judge as 'rules'"):
        register_judge("rules", ConstJudge)


def test_a_factory_that_builds_no_judge_fails_at_make_judge(registry) -> None:
    registry("nothing", lambda: object())
    with pytest.raises(TypeError, match=r"judge 'nothing' .* is not a Judge"):
        make_judge("nothing")


def test_module_class_names_any_importable_judge() -> None:
    judge = make_judge("test_api_judges:SyncJudge")
    assert isinstance(judge, SyncJudge)
    with pytest.raises(ValueError, match="cannot import no_such_module"):
        make_judge("no_such_module.sub:Judge")
    with pytest.raises(ValueError, match="has no class or function Missing"):
        make_judge("test_api_judges:Missing")


def test_repeat_builds_a_panel_of_fresh_renamed_user_judges(registry) -> None:
    registry("const", lambda args=None: ConstJudge(args or "Yes"))
    panel = build_judge(["const"], repeat=2)
    assert isinstance(panel, PanelJudge)
    assert [m.name for m in panel.members] == ["const-Yes#1", "const-Yes#2"]


class ConstJudge:
    def __init__(self, answer: str = "Yes") -> None:
        self.answer = answer
        self.name = f"const-{answer}"

    def describe(self) -> dict[str, Any]:
        return {"name": "const", "model": None, "params": {"answer": self.answer}}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        return _answers(task, self.answer)


def write_plugin(root: Path) -> Path:
    """An installed distribution (a dist-info on sys.path) declaring a judge by entry point."""
    (root / "plugin_judges.py").write_text(
        textwrap.dedent(
            """
            from judge import DimensionVerdict, QuestionAnswer

            class PluginJudge:
                def __init__(self, args=None):
                    self.name = "plugin"
                    self.args = args

                def describe(self):
                    return {"name": "plugin", "model": None, "params": {"args": self.args}}

                def judge(self, task):
                    return DimensionVerdict(answers=[
                        QuestionAnswer(question_id=q, answer="Yes", evidence=self.args or "")
                        for q in task.question_ids
                    ])
            """
        )
    )
    info = root / "plugin_judges-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plugin-judges\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[diagnosis_judge.judges]\nplugged = plugin_judges:PluginJudge\n"
    )
    return root


def test_an_entry_point_makes_a_judge_available_by_name(tmp_path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(write_plugin(tmp_path)))
    judge = make_judge("plugged:from-the-command-line")
    assert judge.describe()["params"] == {"args": "from-the-command-line"}
    from judge.judges import registered_judges

    assert registered_judges()["plugged"] == "entry point plugin_judges:PluginJudge"


class GatedCachedJudge:
    """Uses both optional capabilities: the run's gate and the store."""

    name = "gated"

    def __init__(self) -> None:
        self.gate: Any = NullGate()
        self.gates_seen: set[type] = set()
        self.calls = 0

    def describe(self) -> dict[str, Any]:
        return {"name": "gated", "model": "m", "params": {}}

    def cache_identity(self) -> dict[str, Any]:
        return {"model": "m", "params": {}, "schema": "v1"}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        self.calls += 1
        self.gates_seen.add(type(self.gate))
        async with self.gate.slot(10):
            pass
        self.gate.succeeded(10, 10, 5, 0.01)
        return _answers(task)


def test_capabilities_come_from_the_named_protocols(one_incident, tmp_path) -> None:
    judge = GatedCachedJudge()
    assert isinstance(judge, Gated) and isinstance(judge, Cacheable)
    store = tmp_path / "store.sqlite"
    first = evaluate(*one_incident, judge=judge, options=EvalOptions(store=store))
    assert judge.gates_seen == {Gate} and isinstance(judge.gate, NullGate)
    # one call per submission (the default granularity): three submissions, three calls
    assert first.usage is not None and first.usage.requests == judge.calls == 3
    assert first.usage.cost_usd == pytest.approx(0.03)
    second = evaluate(*one_incident, judge=judge, options=EvalOptions(store=store))
    assert judge.calls == 3  # all three answers came from the store
    assert second.usage is not None and second.usage.cache_hits == 3


def test_the_cli_loads_a_judge_by_module_class_and_by_entry_point(
    tmp_path, monkeypatch, capsys
) -> None:
    from judge.cli import main

    monkeypatch.syspath_prepend(str(write_plugin(tmp_path)))
    gt = EXAMPLE / "ground_truth" / "incorrect_image.yaml"
    argv = ["eval", "--ground-truth", str(gt), "--outputs", str(EXAMPLE / "outputs")]
    for model, name in (
        ("plugin_judges:PluginJudge", "plugin"),  # sync, by module:Class
        ("plugged:ARGS", "plugin"),  # sync, by entry point
        ("test_api_judges:AsyncJudge", "async"),  # async, by module:Class
    ):
        result = tmp_path / "result.json"
        code = main([*argv, "--result-file", str(result), "--judge-model", model, "--json"])
        assert code == 0, capsys.readouterr().err
        data = json.loads(result.read_text())
        assert data["config"]["judge"]["name"] == name
        assert len(data["judgments"]) == 27 and all(j["answer"] for j in data["judgments"])
    bad = ["--result-file", str(tmp_path / "bad.json"), "--judge-model", "nowhere.mod:Judge"]
    assert main([*argv, *bad]) == 2
    err = capsys.readouterr().err
    assert "--judge-model" in err and "cannot import nowhere.mod" in err
    assert not (tmp_path / "bad.json").exists()


def test_the_judge_protocols_docstring_example_runs(one_incident) -> None:
    example = Judge.__doc__.split("::\n", 1)[1]  # type: ignore[union-attr]
    namespace: dict[str, Any] = {}
    exec(textwrap.dedent(example), namespace)
    judge = namespace["OriginJudge"]()
    assert isinstance(judge, Judge)
    result = evaluate(*one_incident, judge=judge)
    assert {j.judge for j in result.judgments} == {"origin"}
    assert all(j.answer is not None for j in result.judgments)
