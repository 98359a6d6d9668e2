"""The `judge` command end to end: the example run, dry runs, exit codes, schemas, bad input.

Most runs call `judge.cli.main([...])` in-process; a few start `python -m judge` for real.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from helpers import REPO, eval_args

from ground_truth import InputError
from judge import load_result, load_rubric
from judge.cli import main

JUDGE_ENV = ("JUDGE_MODEL", "JUDGE_BASE_URL", "JUDGE_API_KEY")
SENTINEL = b'{"schema_version": "1", "note": "an earlier result that must survive"}\n'


def run(argv: list[str]) -> tuple[int, str, str]:
    """`judge ARGV` in-process: (exit code, stdout, stderr); argparse exits become codes."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def python_judge(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or REPO,
        timeout=120,
    )


@pytest.fixture(scope="module")
def example_run(
    tmp_path_factory: pytest.TempPathFactory, example_ground_truth: Path, example_outputs: Path
) -> dict[str, Any]:
    result = tmp_path_factory.mktemp("example") / "results.json"
    with pytest.MonkeyPatch.context() as patch:  # module scope: conftest's scrub is per test
        for name in JUDGE_ENV:
            patch.delenv(name, raising=False)
        code, out, err = run(eval_args(example_ground_truth, example_outputs, result))
    data = json.loads(result.read_text(encoding="utf-8")) if result.exists() else None
    return {"code": code, "out": out, "err": err, "result": data, "path": result}


# ------------------------------------------------------------------ the example run


def test_example_run_succeeds_with_the_rules_judge(example_run) -> None:
    assert example_run["code"] == 0, example_run["err"]
    out = example_run["out"]
    assert "Judge: rules" in out
    assert "offline" in out
    assert str(example_run["path"]) in out.replace("\n", "")


def test_example_result_file_config(example_run) -> None:
    result = example_run["result"]
    assert result["schema_version"] == "2"
    rubric = load_rubric("sregym-v3")
    assert result["config"]["rubric"]["name"] == "sregym-v3"
    assert result["config"]["rubric"]["hash"] == rubric.hash
    assert result["config"]["rubric"]["version"] == "3.0"
    assert result["config"]["judge"]["name"] == "rules"
    assert result["config"]["judge"]["model"] is None
    text = json.dumps(result).lower()
    assert "api_key" not in text


def test_example_every_case_scored_with_nine_judgments(example_run, example_outputs) -> None:
    result = example_run["result"]
    on_disk = {(f.parent.parent.name, f.parent.name) for f in example_outputs.glob("*/*/*.json")}
    cases = {(c["incident_id"], c["trial"]): c for c in result["cases"]}
    assert set(cases) == on_disk
    assert all(c["complete"] and c["composite"] is not None for c in cases.values())
    per_case: dict[tuple[str, str], list[dict]] = {}
    for j in result["judgments"]:
        per_case.setdefault((j["incident_id"], j["trial"]), []).append(j)
    assert set(per_case) == on_disk
    expected_ids = [f"D{d}-Q{q}" for d in (1, 2, 3) for q in (1, 2, 3)]
    for key, judgments in per_case.items():
        assert sorted(j["question_id"] for j in judgments) == expected_ids, key
        for j in judgments:
            assert j["answer"] in ("Yes", "No", None)
            assert (j["answer"] is None) == (j["unscored_reason"] is not None)
            assert j["judge"] == "rules"
            assert j["prompt_hash"] == ""  # the rules judge reads no prompt
            assert j["dimension_id"] == j["question_id"][:2]
    assert result["missing"] == [] and result["orphans"] == []


def test_example_scores_spread(example_run) -> None:
    cases = example_run["result"]["cases"]
    composites = [c["composite"] for c in cases]
    passed = [c["passed"] for c in cases]
    assert any(passed) and not all(passed)
    assert max(composites) >= 0.85 and min(composites) <= 0.4
    for c in cases:
        assert c["passed"] == (c["composite"] >= 0.70 - 1e-9)
        assert [d["dimension_id"] for d in c["dimensions"]] == ["D1", "D2", "D3"]
    overall = example_run["result"]["overall"]
    assert overall["n_cases"] == len(cases)
    assert 0 < overall["pass_rate"]["value"] < 1
    ci = overall["mean_composite"]["ci"]
    assert ci["low"] <= overall["mean_composite"]["value"] <= ci["high"]


def test_result_file_matches_its_schema(example_run) -> None:
    code, out, _ = run(["schema", "result"])
    assert code == 0
    schema = json.loads(out)
    jsonschema.validators.validator_for(schema).check_schema(schema)
    jsonschema.validate(example_run["result"], schema)


def test_result_file_round_trips(example_run, tmp_path) -> None:
    result = load_result(example_run["path"])
    assert result.config["rubric"]["hash"] == load_rubric("sregym-v3").hash
    assert len(result.judgments) == 9 * len(result.cases)
    broken = dict(example_run["result"])
    del broken["overall"]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_result(path)
    assert (caught.value.path, caught.value.field) == (str(path), "overall")
    path.write_text(json.dumps({**broken, "schema_version": "0"}), encoding="utf-8")
    with pytest.raises(InputError, match="schema_version"):
        load_result(path)


def test_missing_and_orphans_reported(tmp_path, example_ground_truth, example_outputs) -> None:
    gt, outputs = tmp_path / "gt", tmp_path / "outputs"
    gt.mkdir()
    for name in ("incorrect_image", "network_policy_block"):
        shutil.copy(example_ground_truth / f"{name}.yaml", gt)
    shutil.copytree(example_outputs / "incorrect_image", outputs / "incorrect_image")
    shutil.copytree(example_outputs / "valkey_auth_disruption", outputs / "not_in_ground_truth")
    result = tmp_path / "r.json"
    code, out, err = run(eval_args(gt, outputs, result))
    assert code == 0, err
    data = json.loads(result.read_text(encoding="utf-8"))
    assert data["missing"] == ["network_policy_block"]
    orphans = {(o["incident_id"], o["trial"]) for o in data["orphans"]}
    trials = {p.name for p in (outputs / "not_in_ground_truth").iterdir()}
    assert orphans == {("not_in_ground_truth", t) for t in trials}
    assert {c["incident_id"] for c in data["cases"]} == {"incorrect_image"}
    assert data["overall"]["n_missing"] == 1
    assert "network_policy_block" in out


def test_dimensions_flag_rescales(tmp_path, example_ground_truth, example_outputs) -> None:
    result = tmp_path / "r.json"
    code, _, err = run(
        eval_args(example_ground_truth, example_outputs, result, "--dimensions", "D1,D3")
    )
    assert code == 0, err
    data = json.loads(result.read_text(encoding="utf-8"))
    weights = data["config"]["rubric"]["weights"]
    assert set(weights) == {"D1", "D3"}
    assert weights["D1"] == pytest.approx(0.33 / 0.67)
    assert {j["dimension_id"] for j in data["judgments"]} == {"D1", "D3"}
    assert len(data["judgments"]) == 6 * len(data["cases"])


def test_empty_diagnosis_is_scored_all_no(tmp_path, example_ground_truth) -> None:
    outputs = tmp_path / "outputs"
    for trial, text in (("1", ""), ("2", "  \n\t ")):
        path = outputs / "incorrect_image" / trial / "agent_output.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"diagnosis": text}), encoding="utf-8")
    result = tmp_path / "r.json"
    code, _, err = run(eval_args(example_ground_truth / "incorrect_image.yaml", outputs, result))
    assert code == 0, err
    data = json.loads(result.read_text(encoding="utf-8"))
    assert len(data["cases"]) == 2
    for case in data["cases"]:
        assert case["complete"] is True
        assert case["composite"] == 0
        assert case["passed"] is False
    assert len(data["judgments"]) == 18
    assert all(j["answer"] == "No" for j in data["judgments"])


# ------------------------------------------------------------------ dry run, exit codes


def test_dry_run_writes_prompts_and_no_result(tmp_path, example_ground_truth, example_outputs):
    result = tmp_path / "r.json"
    code, out, err = run(eval_args(example_ground_truth, example_outputs, result, "--dry-run"))
    assert code == 0, err
    assert not result.exists()
    prompts = result.with_suffix(".prompts.jsonl")
    rows = [json.loads(line) for line in prompts.read_text(encoding="utf-8").splitlines()]
    n_subs = len(list(example_outputs.glob("*/*/agent_output.json")))
    assert len(rows) == n_subs  # one call per submission, the default
    per_sub: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        per_sub.setdefault((row["incident_id"], row["trial"]), []).append(row["dimension_id"])
        assert row["messages"][-1]["role"] == "user"
        assert "Question ids: " in row["messages"][-1]["content"]
        assert len(row["question_ids"]) == 9
    assert all(d == ["*"] for d in per_sub.values())
    assert "no judge was called" in out


def test_json_flag_prints_only_json(tmp_path, example_ground_truth, example_outputs) -> None:
    code, out, err = run(
        eval_args(example_ground_truth, example_outputs, tmp_path / "r.json", "--json")
    )
    assert code == 0, err
    overall = json.loads(out)
    assert overall["n_cases"] == len(list(example_outputs.glob("*/*/agent_output.json")))


def test_fail_under(tmp_path, example_ground_truth, example_outputs) -> None:
    args = eval_args(example_ground_truth, example_outputs, tmp_path / "r.json")
    assert run([*args, "--fail-under", "0.99"])[0] == 1
    assert run([*args, "--fail-under", "0.05"])[0] == 0


# ------------------------------------------------------------------ other commands


@pytest.mark.parametrize("kind", ["spec", "submission", "result"])
def test_schema_is_valid_json_schema(kind: str) -> None:
    code, out, _ = run(["schema", kind])
    assert code == 0
    schema = json.loads(out)
    jsonschema.validators.validator_for(schema).check_schema(schema)
    assert schema["type"] == "object"


def test_spec_and_submission_schemas_accept_the_examples(example_ground_truth, example_outputs):
    spec_schema = json.loads(run(["schema", "spec"])[1])
    for path in sorted(example_ground_truth.glob("*.yaml")):
        jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), spec_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"ground_truth": "no id"}, spec_schema)
    sub_schema = json.loads(run(["schema", "submission"])[1])
    jsonschema.validate({"incident_id": "a", "trial": "1", "diagnosis": "x"}, sub_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"incident_id": "a"}, sub_schema)


def test_rubric_validate_ok() -> None:
    path = Path(load_rubric("sregym-v3").path)
    code, out, _ = run(["rubric", "validate", str(path)])
    assert code == 0
    assert "valid" in out and load_rubric("sregym-v3").hash in out


def test_rubric_validate_bad(bad_dir: Path) -> None:
    path = bad_dir / "rubrics" / "weights_not_one.yaml"
    code, _, err = run(["rubric", "validate", str(path)])
    assert code == 2
    assert str(path) in err and "scoring.weights" in err and "not renormalised" in err
    assert "Traceback" not in err


def test_version() -> None:
    code, out, _ = run(["--version"])
    assert code == 0
    assert out.startswith("judge ") and out.split()[1][0].isdigit()


def test_no_command_is_usage_error() -> None:
    assert run([])[0] == 2


# ------------------------------------------------------------------ bad input


def bad_cases(bad: Path, example_gt: Path, example_out: Path, tmp: Path) -> dict[str, tuple]:
    """name -> (eval args, strings stderr must hold)."""
    empty = tmp / "empty_outputs"
    (empty / "some_incident" / "1").mkdir(parents=True)
    specs = bad / "specs"
    return {
        "malformed yaml": (
            ["--ground-truth", specs / "malformed.yaml", "--outputs", example_out],
            [str(specs / "malformed.yaml"), "line ", "invalid YAML"],
        ),
        "spec missing id": (
            ["--ground-truth", specs / "missing_id.yaml", "--outputs", example_out],
            [str(specs / "missing_id.yaml"), ": id: ", "required"],
        ),
        "unknown rubric": (
            ["--ground-truth", example_gt, "--outputs", example_out, "--rubric", "nope-v9"],
            ["nope-v9", "--rubric", "sregym-v3"],
        ),
        "bad rubric file": (
            [
                "--ground-truth",
                example_gt,
                "--outputs",
                example_out,
                "--rubric",
                bad / "rubrics" / "duplicate_question_id.yaml",
            ],
            [str(bad / "rubrics" / "duplicate_question_id.yaml"), "dimensions[1].questions[1].id"],
        ),
        "non-utf8 spec": (
            ["--ground-truth", specs / "non_utf8.yaml", "--outputs", example_out],
            [str(specs / "non_utf8.yaml"), "not UTF-8", "offset"],
        ),
        "no submissions": (
            ["--ground-truth", example_gt, "--outputs", empty],
            [str(empty), "no submissions"],
        ),
        "submission missing diagnosis": (
            ["--ground-truth", example_gt, "--outputs", bad / "outputs_no_diagnosis"],
            [
                str(bad / "outputs_no_diagnosis" / "incorrect_image" / "1" / "agent_output.json"),
                ": diagnosis: ",
            ],
        ),
        "broken prompt template": (
            [
                "--ground-truth",
                example_gt,
                "--outputs",
                example_out,
                "--prompt-template",
                _broken_template(tmp / "templates"),
            ],
            [str(tmp / "templates"), "template error", "line 1"],
        ),
        "unknown dimension": (
            ["--ground-truth", example_gt, "--outputs", example_out, "--dimensions", "D1,D8"],
            ["--dimensions", "D8"],
        ),
    }


def _broken_template(directory: Path) -> Path:
    directory.mkdir()
    (directory / "dimension.j2").write_text("{% for %}\n", encoding="utf-8")
    return directory


BAD_CASES = [
    "malformed yaml",
    "spec missing id",
    "unknown rubric",
    "bad rubric file",
    "non-utf8 spec",
    "no submissions",
    "submission missing diagnosis",
    "broken prompt template",
    "unknown dimension",
]


@pytest.mark.parametrize("name", BAD_CASES)
def test_bad_input_exits_2_and_keeps_the_earlier_result(
    name, tmp_path, bad_dir, example_ground_truth, example_outputs
) -> None:
    args, needles = bad_cases(bad_dir, example_ground_truth, example_outputs, tmp_path)[name]
    result = tmp_path / "results.json"
    result.write_bytes(SENTINEL)
    code, out, err = run(["eval", *map(str, args), "--result-file", str(result)])
    assert code == 2
    for needle in needles:
        assert needle in err, (needle, err)
    assert "Traceback" not in err + out
    assert result.read_bytes() == SENTINEL
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["results.json"]


def test_bad_input_in_a_real_process(tmp_path, bad_dir, example_outputs) -> None:
    result = tmp_path / "results.json"
    result.write_bytes(SENTINEL)
    spec = bad_dir / "specs" / "malformed.yaml"
    proc = python_judge(
        "-m",
        "judge",
        *map(str, eval_args(spec, example_outputs, result)),
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert str(spec) in proc.stderr and "line " in proc.stderr
    assert "Traceback" not in proc.stderr
    assert result.read_bytes() == SENTINEL


def test_example_in_a_real_process(tmp_path, example_ground_truth, example_outputs) -> None:
    result = tmp_path / "results.json"
    proc = python_judge(
        "-m",
        "judge",
        *map(str, eval_args(example_ground_truth, example_outputs, result, "--json")),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Judge: rules" in proc.stderr  # --json: messages on stderr
    data = json.loads(result.read_text(encoding="utf-8"))
    assert data["config"]["judge"]["name"] == "rules"
    assert data["overall"]["n_cases"] == len(list(example_outputs.glob("*/*/agent_output.json")))


def test_help_does_not_import_litellm(tmp_path) -> None:
    proc = python_judge("-X", "importtime", "-m", "judge", "--help", cwd=tmp_path)
    assert proc.returncode == 0
    assert "eval" in proc.stdout
    imported = proc.stderr.splitlines()
    assert any(line.rstrip().endswith("judge.cli") for line in imported), "importtime ran"
    assert not [line for line in imported if "litellm" in line]
