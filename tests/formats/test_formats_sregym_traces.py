"""SREGym agent traces: the submitted diagnosis read out of each agent's own session file.

The fixtures are excerpts of SREGym's published trace fixtures (MIT; see ATTRIBUTION.md): for
each of the six agents, the text read here must be the one the project's validity cases hold
(`benchmarks/validity/real/cases/sregym-*.yaml`), which their collector cut out by hand as the
text SREGym's conductor received.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from helpers import BENCHMARKS, FIXTURES, quiet

from ground_truth import load_submissions
from ground_truth.formats.registry import detect
from ground_truth.formats.sregym_traces import curl_solution, load_trace_submissions

TRACES = FIXTURES / "formats" / "sregym-traces"
CASES = BENCHMARKS / "validity" / "real" / "cases"
PROBLEM = "service_port_conflict_hotel_reservation"


def published_texts() -> dict[str, str]:
    """Session file name -> the diagnosis the validity case holds for it."""
    texts = {}
    for file in sorted(CASES.glob("sregym-*.yaml")):
        for case in yaml.safe_load(file.read_text(encoding="utf-8")):
            origin = case.get("origin") or {}
            if origin.get("repo") == "SREGym/SREGym" and case.get("diagnosis"):
                texts[Path(origin["path"]).name] = case["diagnosis"]
    return texts


def canonical(tmp_path: Path, tool: str, session: Path) -> Path:
    """`results/<batch>/<tool>/<problem>/run_1/<session>`, as SREGym archives a run."""
    run = tmp_path / "results" / "batch-1" / tool / PROBLEM / "run_1"
    run.mkdir(parents=True)
    shutil.copy(session, run / session.name)
    return tmp_path / "results"


def test_four_runs_beside_their_results_give_the_published_texts():
    subs, found = quiet(load_submissions, TRACES)
    texts = published_texts()
    by_file = {Path(s.source["file"]).name: s for s in subs}
    for name in (
        "74bfdd52-f1bd-477d-98c8-306bde810080.jsonl",
        "rollout-2026-06-29T16-58-06-019f1451-1903-7092-b4ca-73a57d9bdd9d.jsonl",
        "session-ses_0e8fabe63ffe91KaErs7Mh9g5O.json",
        "0704_1458_service_port_conflict_hotel_reservation_stratus_agent_trajectory.jsonl",
    ):
        assert by_file[name].diagnosis == texts[name], name
    assert {s.incident_id for s in subs} == {PROBLEM}
    assert sorted(s.trial for s in subs) == [
        "claudecode/20260629_053343",
        "codex/20260629_170110",
        "opencode/20260630_053808",
        "stratus/0704_1458",
        "stratus/0705_1200",
    ]
    # Copilot and Gemini sessions carry no problem id and lie in no run folder: skipped, said
    skipped = [w for w in found if "cannot be told" in str(w)]
    assert {Path(str(w.path)).name for w in skipped} == {
        "copilot-cli.jsonl",
        "session-fdaf509c.jsonl",
    }
    assert all("results/<batch>/<tool>/<problem_id>/run_<n>/" in str(w) for w in skipped)


@pytest.mark.parametrize(
    ("tool", "session"),
    [
        ("copilot", "copilot_run_real/copilot-cli.jsonl"),
        ("gemini", "gemini_run/sessions/2026/07/04/session-fdaf509c.jsonl"),
    ],
)
def test_a_run_folder_names_the_problem_tool_and_run(tmp_path, tool, session):
    results = canonical(tmp_path, tool, TRACES / session)
    assert detect(results, "submissions").name == "sregym"
    (sub,), _ = quiet(load_submissions, results)
    assert (sub.incident_id, sub.trial) == (PROBLEM, f"{tool}/run_1")
    assert sub.diagnosis == published_texts()[Path(session).name]
    model = {"copilot": "claude-sonnet-4-6", "gemini": "gemini-3.5-flash"}[tool]
    assert sub.agent == f"{tool} ({model})"


def test_the_first_post_the_shell_refused_is_passed_over():
    """Claude Code's first POST held `didn't` inside a single-quoted string: bash refused it
    and nothing reached the conductor; the second POST is the graded one."""
    (sub,), _ = quiet(load_trace_submissions, TRACES / "claudecode_run")
    curls = [a for a in sub.trajectory.actions if "/submit" in str(a.args.get("command", ""))]
    assert len(curls) >= 2
    assert curls[0].model_extra.get("submission") is None
    assert curls[1].model_extra["submission"] == sub.diagnosis
    assert sub.source["submitted_at_call"] == curls[1].step


def test_the_trajectory_keeps_every_call_and_the_run_results():
    (sub,), _ = quiet(load_trace_submissions, TRACES / "codex_run")
    actions = sub.trajectory.actions
    assert [a.step for a in actions] == list(range(1, len(actions) + 1))
    submitted = [a.model_extra.get("submission") for a in actions if "submission" in a.model_extra]
    assert submitted[0] == sub.diagnosis and submitted[-1] == ""  # then the mitigation's empty POST
    assert sub.trajectory.metrics["agent_run"]["problem_id"] == PROBLEM
    assert sub.source["context"][0].endswith(".json")


def test_a_stratus_trace_names_its_problem_inside(tmp_path):
    renamed = tmp_path / "trajectory.jsonl"
    shutil.copy(
        TRACES
        / "stratus_run_ids"
        / "0705_1200_service_port_conflict_hotel_reservation_stratus_agent_trajectory.jsonl",
        renamed,
    )
    (sub,), _ = quiet(load_trace_submissions, tmp_path)
    assert (sub.incident_id, sub.trial) == (PROBLEM, "agent/0705_1200")
    assert sub.diagnosis.strip()


def test_curl_bodies_as_the_shell_and_json_read_them():
    assert curl_solution('curl -s -X POST http://h:8000/submit -d \'{"solution": "a b"}\'') == "a b"
    assert curl_solution('curl http://h/submit --data=\'{"solution": "x"}\'') == "x"
    assert curl_solution('curl http://h/submit -d \'{"solution": "didn\'t"}\'') is None
    assert curl_solution("curl http://h/submit -d 'not json'") is None
    assert curl_solution('curl http://h/health -d \'{"solution": "x"}\'') is None
    assert curl_solution("echo /submit") is None


def test_a_trace_without_any_submission_is_not_claimed(tmp_path):
    session = tmp_path / "results" / "b" / "codex" / PROBLEM / "run_1" / "s.jsonl"
    session.parent.mkdir(parents=True)
    call = {"type": "function_call", "name": "shell", "arguments": json.dumps({"cmd": "ls"})}
    session.write_text(json.dumps({"note": "POST /submit later"}) + "\n" + json.dumps(call) + "\n")
    assert detect(tmp_path, "submissions").name != "sregym"
    with pytest.raises(ValueError, match="holds no SREGym agent submissions, results CSVs or"):
        load_submissions(tmp_path, "sregym")
