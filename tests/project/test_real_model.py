"""`benchmarks/real_model.py` over a fake-provider run, and (opt-in) the llm judge against a real
local server: `JUDGE_REAL_BASE_URL=http://127.0.0.1:8765/v1 pytest -m realmodel`."""

from __future__ import annotations

import json
import os

import pytest
from helpers import BENCHMARKS, EXAMPLE, load_script

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from ground_truth import Submission, load_specs, load_submissions
from judge import EvalOptions, evaluate, make_judge, write_result
from judge.testing import FakeProvider, FakeProviderConfig
from judge.testing.formats import LLAMA_CPP_PYTHON_FORMATS


def real_model_module():
    return load_script(BENCHMARKS / "real_model.py")


@pytest.mark.slow
def test_report_on_the_sregym_bench_through_a_llama_cpp_like_server(tmp_path, capsys) -> None:
    bench = real_model_module()
    paths = bench.write_sregym_bench(tmp_path / "bench")
    specs = load_specs(paths["specs"])
    subs = load_submissions(paths["submissions"])
    assert len(specs) == len(subs) == 29
    config = FakeProviderConfig(
        response_formats=LLAMA_CPP_PYTHON_FORMATS,
        format_refusal="llama-cpp-python",
        answer_policy=lambda qid, messages: "Yes",
    )
    store = tmp_path / "r.sqlite"
    with FakeProvider(config) as provider:
        judge = make_judge("openai/fake-judge", api_base=provider.url, timeout=5, retry_wait=0.01)
        options = EvalOptions(store=store, granularity="dimension")  # 87 calls, as that run
        result = evaluate(specs, subs, judge=judge, options=options)
    out = tmp_path / "r.json"
    write_result(result, out)
    summary = bench.summarize(out, store, [paths["labels"]], wall_seconds=87.0)
    assert summary["structured_output"] == "json_object+schema"
    assert summary["calls_made"] == 87 and summary["attempt_errors"] == {"format_refused": 1}
    assert summary["replies"]["clean"] == 87 and summary["replies"]["shares"]["clean"] == 1.0
    assert summary["seconds_per_call"]["wall_per_call"] == pytest.approx(1.0)
    assert summary["seconds_per_call"]["n"] == 86
    assert summary["tokens_per_submission"]["submissions"] == 29
    assert summary["yes_rate"] == 1.0
    verdict = next(r for r in summary["kappa"] if r["level"] == "verdict" and r["unit"] == "all")
    assert verdict["annotator"] == "sregym-developer" and verdict["n"] == 29
    assert verdict["kappa"] == pytest.approx(0.0)  # a judge that always says Yes: chance level
    assert bench.main(["report", str(out), "--labels", str(paths["labels"])]) == 0
    printed = capsys.readouterr().out
    assert "**json_object+schema** (refused: json_schema)" in printed
    assert "| verdict | all | sregym-developer | 29 |" in printed


# ------------------------------------------------------------------ opt-in: a real server


@pytest.mark.realmodel
def test_real_local_model_end_to_end(request) -> None:
    if "realmodel" not in (request.config.option.markexpr or ""):
        pytest.skip("a real model run takes minutes: select it with -m realmodel")
    base = os.environ.get("JUDGE_REAL_BASE_URL")
    if not base:
        pytest.skip("JUDGE_REAL_BASE_URL is not set (e.g. http://127.0.0.1:8765/v1)")
    model = os.environ.get("JUDGE_REAL_MODEL", "openai/qwen2.5-coder-1.5b-instruct")
    specs = load_specs(EXAMPLE / "ground_truth" / "incorrect_image.yaml")
    sub: Submission = next(
        s for s in load_submissions(EXAMPLE / "outputs") if s.incident_id == specs[0].id
    )
    judge = make_judge(model, api_base=base, timeout=900)
    result = evaluate(specs, [sub], judge=judge, options=EvalOptions(max_concurrent=1))
    described = result.config["judge"]
    assert described["structured_output"] in {
        "json_schema",
        "json_object+schema",
        "json_object",
        "prompt",
    }
    refused = described["structured_output_negotiation"]["refused"]
    assert result.attempt_errors.get("format_refused", 0) == len(refused)  # never retried
    assert all(j.answer is not None or j.unscored_reason for j in result.judgments)
    assert described["replies"]["total"] >= 3
    print(json.dumps({k: described[k] for k in ("structured_output", "replies", "repairs")}))


def test_the_no_hints_variant_drops_only_the_evaluator_hints(tmp_path) -> None:
    from judge import PromptRenderer, load_rubric

    bench = real_model_module()
    variant = bench.write_variant("no-hints", tmp_path / "no-hints")
    spec = load_specs(EXAMPLE / "ground_truth")[0]
    sub = Submission(incident_id=spec.id, diagnosis="The checkout pod ran out of memory.")
    dimension = load_rubric().dimensions[0]
    shipped = PromptRenderer().render(spec, sub, dimension).messages
    plain = PromptRenderer(variant).render(spec, sub, dimension).messages
    assert all(q.evaluator_hint in shipped[1]["content"] for q in dimension.questions)
    assert not any(q.evaluator_hint in plain[1]["content"] for q in dimension.questions)
    assert all(q.text in plain[1]["content"] for q in dimension.questions)
    assert plain[0] == shipped[0]
    hint_lines = [line for line in shipped[1]["content"].splitlines() if "Hint:" in line]
    assert plain[1]["content"].splitlines() == [
        line for line in shipped[1]["content"].splitlines() if line not in hint_lines
    ]


def test_the_worked_example_variant_adds_one_example_per_question(tmp_path) -> None:
    from judge import PromptRenderer, load_rubric

    bench = real_model_module()
    variant = bench.write_variant("worked-example", tmp_path / "worked")
    spec = load_specs(EXAMPLE / "ground_truth")[0]
    sub = Submission(incident_id=spec.id, diagnosis="The checkout pod ran out of memory.")
    for dimension in load_rubric().dimensions:
        shipped = PromptRenderer().render(spec, sub, dimension).messages[1]["content"]
        worked = PromptRenderer(variant).render(spec, sub, dimension).messages[1]["content"]
        assert worked.count("  Example: ") == len(dimension.questions)
        assert worked.count(bench.WORKED_CASE) == 1
        for q in dimension.questions:
            assert bench.WORKED_EXAMPLES[q.id] in worked
        kept = [line for line in worked.splitlines() if not line.startswith("  Example: ")]
        assert [line for line in kept if bench.WORKED_CASE not in line] == shipped.splitlines()
