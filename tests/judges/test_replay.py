"""The replay judge answers from a store and never calls a provider; `judge store` reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import EXAMPLE_GT
from helpers.fake_runs import write_submissions

from judge.cli import main
from judge.testing import FakeProvider, FakeProviderConfig


def run(tmp_path: Path, result: str, *extra: str, n: int = 4) -> int:
    outputs = tmp_path / f"subs{n}.jsonl"
    if not outputs.exists():
        write_submissions(outputs, n)
    return main(
        ["eval", "--ground-truth", str(EXAMPLE_GT), "--outputs", str(outputs),
         "--result-file", str(tmp_path / result), "--no-progress", *extra]
    )  # fmt: skip


def answers(tmp_path: Path, result: str, judge: str | None = None) -> list[tuple]:
    data = json.loads((tmp_path / result).read_text())
    return sorted(
        (j["incident_id"], j["trial"], j["question_id"], j["answer"], j["evidence"])
        for j in data["judgments"]
        if judge is None or j["judge"] == judge
    )


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A store written by a real LLM run through the fake provider (then shut down)."""
    with FakeProvider(FakeProviderConfig(seed=12)) as provider:
        code = run(tmp_path, "llm.json", "--judge-model", "openai/fake-judge",
                   "--api-base", provider.url)  # fmt: skip
    assert code == 0
    return tmp_path / "llm.sqlite"


def test_replay_gives_the_recorded_answers_without_a_provider(tmp_path, recorded) -> None:
    code = run(tmp_path, "replay.json", "--judge-model", f"replay:{recorded}")
    assert code == 0
    assert answers(tmp_path, "replay.json") == answers(tmp_path, "llm.json")
    result = json.loads((tmp_path / "replay.json").read_text())
    assert result["config"]["judge"]["name"] == "replay"
    assert {c["judge"] for c in result["calls"]} == {"replay:llm:openai/fake-judge"}
    assert not (tmp_path / "replay.sqlite").exists()  # replaying writes no store of its own


@pytest.mark.slow
def test_replay_under_another_rubric_weighting_keeps_the_answers(tmp_path) -> None:
    """Answers asked per dimension replay a subset of the dimensions (answers asked per
    submission replay only the questions they were asked together)."""
    with FakeProvider(FakeProviderConfig(seed=12)) as provider:
        code = run(tmp_path, "dims.json", "--judge-model", "openai/fake-judge",
                   "--api-base", provider.url, "--granularity", "dimension")  # fmt: skip
    assert code == 0
    code = run(
        tmp_path, "d1.json", "--judge-model", "replay", "--replay-store",
        str(tmp_path / "dims.sqlite"), "--dimensions", "D1", "--granularity", "dimension",
    )  # fmt: skip
    assert code == 0
    d1 = [a for a in answers(tmp_path, "dims.json") if a[2].startswith("D1-")]
    assert answers(tmp_path, "d1.json") == d1


def test_a_prompt_the_store_never_saw_is_unscored_not_guessed(tmp_path, recorded) -> None:
    code = run(tmp_path, "more.json", "--judge-model", f"replay:{recorded}", n=6)
    result = json.loads((tmp_path / "more.json").read_text())
    assert code == 0
    new_trials = {"s4", "s5"}
    unseen = [j for j in result["judgments"] if j["trial"] in new_trials]
    assert unseen and all(j["answer"] is None for j in unseen)
    assert all("holds no answer" in j["unscored_reason"] for j in unseen)
    assert result["errors"] == {"not_in_store": 2}  # one call per submission


def test_replay_of_a_panel_names_its_members(tmp_path: Path) -> None:
    with FakeProvider(FakeProviderConfig(seed=13)) as provider:
        code = run(tmp_path, "panel.json", "--judge-model", "openai/fake-judge", "--repeat", "2",
                   "--api-base", provider.url)  # fmt: skip
    assert code == 0
    store = str(tmp_path / "panel.sqlite")
    assert run(tmp_path, "ambiguous.json", "--judge-model", f"replay:{store}") == 2
    members = ["llm:openai/fake-judge#1", "llm:openai/fake-judge#2"]
    args = [a for m in members for a in ("--replay-judge", m)]
    assert run(tmp_path, "replayed.json", "--judge-model", f"replay:{store}", *args) == 0
    for member in members:
        assert answers(tmp_path, "replayed.json", f"replay:{member}") == [
            a for a in answers(tmp_path, "panel.json", member)
        ]
    assert run(tmp_path, "x.json", "--judge-model", f"replay:{store}",
               "--replay-judge", "llm:nobody") == 2  # fmt: skip


def test_replay_needs_a_store(tmp_path: Path, capsys) -> None:
    assert run(tmp_path, "r.json", "--judge-model", "replay") == 2
    assert run(tmp_path, "r.json", "--judge-model", f"replay:{tmp_path / 'absent.sqlite'}") == 2
    assert "no such store" in capsys.readouterr().err


def test_store_stats_export_and_explain(tmp_path: Path, recorded, capsys) -> None:
    assert main(["store", "stats", str(recorded), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    # one stored answer per submission (the default granularity), each of nine questions
    assert stats["judgments"] == 4 and stats["cases"] == 4
    assert stats["by_judge"] == [
        {"judge": "llm:openai/fake-judge", "model": "openai/fake-judge", "judgments": 4}
    ]
    assert stats["cost_usd"] is None  # the fake model has no price: unknown, not 0

    assert main(["store", "export", str(recorded), "-o", str(tmp_path / "rows.jsonl")]) == 0
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and {r["judge"] for r in rows} == {"llm:openai/fake-judge"}
    assert all(len(r["answers"]) == 9 and r["usage"]["prompt_tokens"] > 0 for r in rows)

    incident = rows[0]["incident_id"]
    assert main(["store", "explain", str(recorded), "--incident", incident]) == 0
    shown = capsys.readouterr().out
    assert "params" in shown and '"temperature": 0.0' in shown and incident in shown
