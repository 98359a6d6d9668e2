"""Per-agent summaries when several agents answered the same incidents."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import EXAMPLE, FIXTURES

from ground_truth import Submission, load_specs
from judge import evaluate
from judge.cli import main

RIGHT = "The checkout deployment's PRODUCT_CATALOG_ADDR points to port 8082 instead of 8080; root cause."
WRONG = "The frontend is broken because the cart service is out of memory."


def test_two_agents_get_their_own_summaries() -> None:
    spec = load_specs(EXAMPLE / "ground_truth" / "incorrect_port_assignment.yaml")
    subs = [
        Submission(incident_id=spec[0].id, trial=f"{agent}-{i}", agent=agent, diagnosis=text)
        for agent, text in (("good", RIGHT), ("bad", WRONG))
        for i in range(2)
    ]
    result = evaluate(spec, subs)
    assert set(result.by_agent) == {"good", "bad"}
    assert (
        result.by_agent["good"].mean_composite.value > result.by_agent["bad"].mean_composite.value
    )
    assert result.by_agent["bad"].pass_rate.value == 0
    assert result.by_agent["good"].n_cases == 2


def test_one_agent_has_no_breakdown() -> None:
    spec = load_specs(EXAMPLE / "ground_truth" / "incorrect_port_assignment.yaml")
    result = evaluate(spec, [Submission(incident_id=spec[0].id, agent="only", diagnosis=RIGHT)])
    assert result.by_agent is None


def test_sregym_submissions_file_reports_each_agent(tmp_path: Path, capsys) -> None:
    data = (
        FIXTURES / "formats" / "sregym" / "service_port_conflict_hotel_reservation_submissions.json"
    )
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "eval",
                "--ground-truth",
                str(data),
                "--outputs",
                str(data),
                "--result-file",
                str(out),
                "--no-store",
            ]
        )
        == 0
    )
    by_agent = json.loads(out.read_text())["by_agent"]
    assert len(by_agent) == 6
    assert "By agent" in capsys.readouterr().out
