"""SIGTERM/SIGINT at every moment of `judge eval`, not only during the run loop: exit 130, and
either a result and exports written in full or a message saying none was written. Also the
second signal, a stop while calls wait in the gate, and calls cut off counted in
`attempt_errors`. The provider is the fake one on 127.0.0.1; signals go to this process."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from helpers import EXAMPLE, eval_args, one_incident_args

import judge.checklist.results as results
import judge.cli.eval as eval_cli
import judge.run.control as control
import judge.run.isolated as isolated
import judge.run.loop as loop
import judge.run.result as assembly
from judge.cli import main
from judge.testing import FakeProvider, FakeProviderConfig, read_call_log


class Killed(Exception):
    """What an unhandled SIGTERM raises in these tests instead of killing pytest."""


@pytest.fixture(autouse=True)
def _signals(monkeypatch):
    def killed(signum, frame):
        raise Killed(signal.Signals(signum).name)

    previous = signal.signal(signal.SIGTERM, killed)
    yield
    signal.signal(signal.SIGTERM, previous)


def sigterm_before(monkeypatch, owner, name: str) -> None:
    """Replace `owner.name` by itself preceded by a SIGTERM to this process."""
    original = getattr(owner, name)

    def wrapped(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapped)


def run(tmp_path: Path, config: FakeProviderConfig | None = None, *extra: str) -> tuple[int, int]:
    with FakeProvider(config or FakeProviderConfig()) as provider:
        code = main(
            one_incident_args(
                tmp_path / "r.json", "--judge-model", "openai/fake-judge", "--api-base",
                provider.url, "--no-progress", "--csv", str(tmp_path / "r.csv"), *extra,
            )
        )  # fmt: skip
        return code, len(provider.calls)


def saved(tmp_path: Path) -> tuple[dict, list[dict]]:
    with (tmp_path / "r.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    return json.loads((tmp_path / "r.json").read_text()), rows


def test_sigterm_while_loading_inputs_writes_nothing_and_says_so(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    sigterm_before(monkeypatch, eval_cli, "load_inputs")
    code, n_calls = run(tmp_path)
    err = capsys.readouterr().err
    assert code == 130 and n_calls == 0
    assert "SIGTERM before any judge was called; no result was written" in err
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "r.csv").exists()


def test_sigterm_just_before_the_loop_stops_it_at_once(tmp_path: Path, monkeypatch) -> None:
    sigterm_before(monkeypatch, loop.Run, "_take_units")
    code, n_calls = run(tmp_path)
    result, rows = saved(tmp_path)
    assert code == 130 and n_calls == 0
    assert result["stopped"]["kind"] == "interrupted" and "SIGTERM" in result["stopped"]["message"]
    assert result["complete"] is False and len(result["incomplete"]) == 3
    assert len(rows) == 3 and result["exit_code"] == 130


@pytest.mark.parametrize(
    "where",
    [(assembly, "Tally"), (results, "write_result"), (eval_cli, "write_exports")],
    ids=["scoring", "writing the result", "writing the exports"],
)
def test_sigterm_before_the_last_call_still_writes_everything(
    tmp_path: Path, monkeypatch, capsys, where
) -> None:
    sigterm_before(monkeypatch, *where)
    code, n_calls = run(tmp_path)
    result, rows = saved(tmp_path)
    assert code == 130 and n_calls == 3  # one call per submission
    assert result["complete"] is True and len(result["calls"]) == 3
    assert result["exit_code"] == 130 and "after the last call" in result["exit_reason"]
    assert len(rows) == 3 and {r["trial"] for r in rows} == {c["trial"] for c in result["cases"]}
    assert "SIGTERM after the last call" in capsys.readouterr().err  # the exit line is on stderr


@pytest.mark.slow
def test_a_second_signal_cuts_calls_off_without_waiting_for_the_grace(
    tmp_path: Path, monkeypatch
) -> None:
    log = tmp_path / "calls.jsonl"
    finished = threading.Event()
    stopping = threading.Event()
    ignored: list[bool] = []
    original = control.Gate.stop

    def stop(self, kind, message) -> None:
        original(self, kind, message)
        stopping.set()

    monkeypatch.setattr(control.Gate, "stop", stop)

    def operator() -> None:
        while not log.exists() or len(read_call_log(log)) < 2:
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)
        stopping.wait(60)  # the first signal has stopped the run: the next one is the second
        os.kill(os.getpid(), signal.SIGINT)
        ignored.append(not finished.wait(60))  # without a second signal: the 600 s grace

    config = FakeProviderConfig(latency=30, log_path=log)  # replies never come in time
    thread = threading.Thread(target=operator)
    thread.start()
    try:
        code, n_calls = run(tmp_path, config, "--max-concurrent", "2", "--grace", "600")
    finally:
        finished.set()
        thread.join()
    result, _ = saved(tmp_path)
    assert ignored == [False]
    assert code == 130 and n_calls == 2 and result["calls"] == []
    assert result["attempt_errors"] == {"cut_off": 2}  # the two requests in flight


def test_a_stop_while_calls_wait_in_the_gate(tmp_path: Path, monkeypatch) -> None:
    pause = tmp_path / "pause"
    pause.write_text("")
    waiting = threading.Event()
    original = control.Gate._wait_paused

    async def wait_paused(self):
        waiting.set()
        return await original(self)

    monkeypatch.setattr(control.Gate, "_wait_paused", wait_paused)

    def operator() -> None:
        waiting.wait(60)
        os.kill(os.getpid(), signal.SIGTERM)

    thread = threading.Thread(target=operator)
    thread.start()
    code, n_calls = run(tmp_path, None, "--pause-file", str(pause))
    thread.join()
    result, rows = saved(tmp_path)
    assert waiting.is_set() and pause.exists()
    assert code == 130 and n_calls == 0 and result["calls"] == []
    assert result["stopped"]["kind"] == "interrupted" and "attempt_errors" in result
    assert result["attempt_errors"] == {}  # nothing was sent, so nothing was cut off
    assert all(j["unscored_reason"].startswith("not judged") for j in result["judgments"])
    assert len(rows) == 3


def test_a_stop_abandons_a_long_rules_judge_call(tmp_path: Path, monkeypatch) -> None:
    """The rules judge runs where the run can abandon it (`judge.run.isolated`): a SIGTERM
    during a call on a diagnosis of a megabyte (seconds of work) ends the run without it, as
    not judged, instead of waiting for it and then ignoring the stop."""
    gt = EXAMPLE / "ground_truth" / "incorrect_image.yaml"
    trial = tmp_path / "out" / "incorrect_image" / "1"
    trial.mkdir(parents=True)
    example = json.loads((EXAMPLE / "outputs/incorrect_image/1/agent_output.json").read_text())
    long = {"diagnosis": example["diagnosis"] * 2400}  # about 1.1 MB
    (trial / "agent_output.json").write_text(json.dumps(long))
    sent = threading.Event()
    original = isolated._Child.ask

    async def ask(self, task):
        call = asyncio.ensure_future(original(self, task))
        await asyncio.sleep(0)  # the task is asked
        while self.unsent():  # the writer thread takes the task to the child
            await asyncio.sleep(0.01)
        sent.set()
        return await call

    monkeypatch.setattr(isolated._Child, "ask", ask)

    def operator() -> None:
        sent.wait(60)  # the call is under way in the rules judge's process
        os.kill(os.getpid(), signal.SIGTERM)

    thread = threading.Thread(target=operator)
    thread.start()
    code = main(eval_args(gt, tmp_path / "out", tmp_path / "r.json", "--no-progress"))
    thread.join()
    result = json.loads((tmp_path / "r.json").read_text())
    assert code == 130 and result["complete"] is False
    assert result["incomplete"] == [
        {"incident_id": "incorrect_image", "trial": "1", "dimensions": ["D1", "D2", "D3"]}
    ]
    reasons = {j["unscored_reason"] for j in result["judgments"]}
    assert reasons == {"not judged: interrupted by SIGTERM; calls in flight have 30 s to finish"}
