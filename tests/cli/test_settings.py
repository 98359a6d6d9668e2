"""`judge eval` as a drop-in for ITBench's and SREGym's judge settings (issue 24): a `.env` file,
their variable names with a stated precedence, ITBench's short flags, and never a silent
fall-back to the rules judge. The runs over real HTTP are in test_drop_in.py."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from helpers import one_incident_args

from ground_truth import InputError
from judge import register_judge
from judge.cli import build_parser, main
from judge.cli.settings import EnvFile, check, load_env_file, resolve
from judge.judges import unregister_judge


def eval_args(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["eval", "-g", "gt", "-o", "out", *argv])


def settle(environ: dict[str, str], *argv: str, env_file: EnvFile | None = None):
    args = eval_args(*argv)
    settings = resolve(args, env_file or EnvFile(), environ)
    return check(settings), settings


def test_itbench_short_flags_name_ground_truth_outputs_and_result_file() -> None:
    args = build_parser().parse_args(["eval", "-g", "GT", "-o", "OUT", "-r", "res.json"])
    assert (args.ground_truth, args.outputs, args.result_file) == (
        Path("GT"),
        Path("OUT"),
        Path("res.json"),
    )


def test_a_dotenv_file_fills_only_what_the_environment_leaves_unset(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text(
        'export JUDGE_BASE_URL="http://gateway.example/v1"\n'
        'export JUDGE_API_KEY=""\n'
        'export JUDGE_MODEL="GCP/gemini-2.5-pro"\n'
    )
    environ = {"JUDGE_MODEL": "openai/gpt-4o-mini"}
    loaded = load_env_file(env, skip=False, environ=environ)
    assert loaded.added == {"JUDGE_BASE_URL", "JUDGE_API_KEY"}
    assert environ["JUDGE_MODEL"] == "openai/gpt-4o-mini"  # the real environment wins
    models, settings = settle(environ, env_file=loaded)
    assert models == ["openai/gpt-4o-mini"]
    assert settings.api_base.origin == f".env file {env}"
    assert settings.api_key is None  # ITBench's empty key: no key
    assert settings.models[0].origin == "the environment"


def test_no_env_file_reads_none_and_a_named_one_must_exist(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("JUDGE_MODEL=openai/x\n")
    assert load_env_file(None, skip=True, environ={}) == EnvFile()
    environ: dict[str, str] = {}
    assert load_env_file(None, skip=False, environ=environ).path == Path(".env")
    assert environ == {"JUDGE_MODEL": "openai/x"}
    with pytest.raises(InputError, match="--env-file: no such file"):
        load_env_file(tmp_path / "missing.env", skip=False, environ={})


@pytest.mark.parametrize(
    ("environ", "argv", "model", "base"),
    [
        # SREGym's names alone
        ({"JUDGE_MODEL_ID": "ollama/llama3", "JUDGE_API_BASE": "http://h:11434"}, [],
         "ollama/llama3", "http://h:11434"),
        # ITBench's names beat SREGym's; a flag beats both
        ({"JUDGE_MODEL": "openai/a", "JUDGE_MODEL_ID": "openai/b"}, [], "openai/a", None),
        ({"JUDGE_MODEL": "openai/a", "JUDGE_MODEL_ID": "openai/b"},
         ["--judge-model", "openai/c"], "openai/c", None),
        ({"JUDGE_BASE_URL": "http://a", "JUDGE_API_BASE": "http://b", "JUDGE_MODEL": "openai/m"},
         [], "openai/m", "http://a"),
        ({"JUDGE_BASE_URL": "http://a", "JUDGE_MODEL": "openai/m"}, ["--api-base", "http://c"],
         "openai/m", "http://c"),
    ],
)  # fmt: skip
def test_precedence_flag_then_itbench_then_sregym(environ, argv, model, base) -> None:
    models, settings = settle(environ, *argv)
    assert models == [model]
    assert (settings.api_base.text if settings.api_base else None) == base


def test_a_setting_that_loses_to_another_is_printed_never_dropped_silently() -> None:
    _, settings = settle({"JUDGE_MODEL": "openai/a", "JUDGE_MODEL_ID": "openai/b"})
    assert settings.notes == [
        "JUDGE_MODEL_ID='openai/b' (from the environment) is not used: "
        "JUDGE_MODEL='openai/a' (from the environment) takes precedence"
    ]


def test_the_api_key_comes_from_judge_api_key_or_the_variable_named() -> None:
    _, settings = settle({"JUDGE_API_KEY": "k1", "JUDGE_MODEL": "openai/m"})
    assert settings.api_key.text == "k1"
    _, settings = settle(
        {"JUDGE_API_KEY": "k1", "MINE": "k2", "JUDGE_MODEL": "openai/m"}, "--api-key-env", "MINE"
    )
    assert settings.api_key.text == "k2"


@pytest.mark.parametrize(
    ("model", "sent"),
    [
        ("GCP/gemini-2.5-pro", "openai/GCP/gemini-2.5-pro"),  # ITBench's template
        ("meta-llama/Llama-3.1-8B-Instruct", "openai/meta-llama/Llama-3.1-8B-Instruct"),
        ("my-model", "openai/my-model"),
        ("hosted_vllm/my-model", "hosted_vllm/my-model"),  # a litellm provider: as it is
        ("openai/gpt-4o-mini", "openai/gpt-4o-mini"),
        ("rules", "rules"),
    ],
)
def test_with_an_endpoint_a_name_no_provider_claims_goes_there_as_it_is(model, sent) -> None:
    models, settings = settle({"JUDGE_MODEL": model, "JUDGE_BASE_URL": "http://gw/v1"})
    assert models == [sent]
    if sent.startswith("openai/") and not model.startswith("openai/"):
        assert "names no litellm provider: it is sent as-is" in settings.notes[0]


@pytest.mark.parametrize(
    "found",
    [
        {"JUDGE_BASE_URL": "http://gw/v1"},
        {"JUDGE_API_BASE": "http://gw/v1"},
        {"JUDGE_API_KEY": "sk-secret-value"},
    ],
)
def test_a_judge_setting_without_a_model_is_refused_not_run_with_rules(found) -> None:
    with pytest.raises(InputError) as refused:
        settle(found)
    message = str(refused.value)
    name = next(iter(found))
    assert f"no judge model is set, but {name}" in message
    assert "would fall back to the offline rules judge" in message
    assert "--judge-model rules" in message
    assert "sk-secret-value" not in message


def test_rules_named_on_purpose_runs_and_says_the_endpoint_is_unused() -> None:
    models, settings = settle({"JUDGE_BASE_URL": "http://gw/v1"}, "--judge-model", "rules")
    assert models == ["rules"]
    assert "the rules judge calls no endpoint" in settings.notes[0]


@pytest.mark.parametrize("model", ["origni", "GCP/gemini-2.5-pro", "gpt-9-imaginary"])
def test_a_name_that_is_no_judge_and_no_model_litellm_knows_is_refused(model) -> None:
    register_judge("origin", lambda: None)
    try:
        with pytest.raises(InputError) as refused:
            settle({}, "--judge-model", model)
    finally:
        unregister_judge("origin")
    message = str(refused.value)
    assert f"{model!r} (from the command line) is not a judge this tool can use" in message
    assert "registered: cascade, origin" in message  # cascade: built in, by name
    assert ("did you mean 'origin'?" in message) == (model == "origni")


@pytest.mark.parametrize("model", ["gpt-4o-mini", "anthropic/claude-x", "pkg.mod:Judge"])
def test_models_litellm_knows_and_judge_references_pass(model) -> None:
    assert settle({}, "--judge-model", model)[0] == [model]


def run(args: list[str], capsys) -> tuple[int, str]:
    code = main(args)
    return code, capsys.readouterr().err


def test_eval_exits_2_before_any_call_when_dotenv_names_an_endpoint_but_no_model(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    Path(".env").write_text('export JUDGE_BASE_URL="http://127.0.0.1:9/v1"\n')
    code, err = run(one_incident_args(tmp_path / "r.json"), capsys)
    assert code == 2
    assert "JUDGE_BASE_URL='http://127.0.0.1:9/v1' (from .env file .env)" in err
    assert not (tmp_path / "r.json").exists()
    monkeypatch.delenv("JUDGE_BASE_URL")  # the run put it into this process's environment
    assert main([*one_incident_args(tmp_path / "r.json"), "--no-env-file"]) == 0


def test_eval_exits_2_on_a_mistyped_judge_name(tmp_path: Path, capsys) -> None:
    code, err = run(one_incident_args(tmp_path / "r.json", "--judge-model", "rulez"), capsys)
    assert code == 2
    assert "'rulez' (from the command line) is not a judge" in err
    assert "did you mean 'rules'?" in err


def test_sregym_names_reach_the_judge(tmp_path: Path, monkeypatch, capsys) -> None:
    """JUDGE_MODEL_ID=rules is named on purpose: the run says so and uses it."""
    monkeypatch.setenv("JUDGE_MODEL_ID", "rules")
    code, _ = run(one_incident_args(tmp_path / "r.json", "--no-progress"), capsys)
    assert code == 0
    assert json.loads((tmp_path / "r.json").read_text())["config"]["judge"]["name"] == "rules"
