"""Which judge `judge eval` runs and where its calls go: flags, the environment, a `.env` file
and the names ITBench and SREGym use, resolved in one place and never dropped silently.

`.env` is read from the working directory (`--env-file PATH` names another, `--no-env-file`
skips it) with python-dotenv, as ITBench's `client.py` does with `load_dotenv()`: each name it
sets goes into the environment of the run unless the environment already has it (real
variables win), so provider keys litellm reads (`OPENAI_API_KEY`, ...) may live there too.

Each setting, strongest source first; an empty value counts as unset, and a weaker source
that says something else is printed as a note, never dropped without a word:

| setting  | flag                | ITBench          | SREGym           |
|----------|---------------------|------------------|------------------|
| model    | `--judge-model`     | `JUDGE_MODEL`    | `JUDGE_MODEL_ID` |
| endpoint | `--api-base`        | `JUDGE_BASE_URL` | `JUDGE_API_BASE` |
| API key  | `--api-key-env VAR` | `JUDGE_API_KEY`  | `JUDGE_API_KEY`  |

No silent fall-back to the rules judge: an endpoint, key or replay setting with no model, or a
model string that is neither one of this tool's judges (`registry.names_a_judge`) nor a model
litellm knows (a provider prefix, or a name in its model list) with no endpoint to take it, is
bad input (exit 2) before any call, saying what was found and what was expected.

With an endpoint, a model string that names no litellm provider (`GCP/gemini-2.5-pro` at a
gateway, `meta-llama/Llama-3.1-8B` at vLLM, `my-model`) is sent as-is to that OpenAI-compatible
endpoint, as ITBench's client sends it: the judge asks litellm for `openai/<name>`. What
litellm knows is read from the data files it ships (its provider table and model list),
without importing it.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from pathlib import Path

from ground_truth.errors import InputError

ENV_FILE = Path(".env")
MODEL_NAMES = ("JUDGE_MODEL", "JUDGE_MODEL_ID")
ENDPOINT_NAMES = ("JUDGE_BASE_URL", "JUDGE_API_BASE")
KEY_NAME = "JUDGE_API_KEY"
EXAMPLE_MODEL = "openai/gpt-4o-mini"


@dataclass(frozen=True)
class Value:
    """One setting as found: the flag or variable that gave it, its text, and from where."""

    name: str
    text: str
    origin: str

    def shown(self, secret: bool = False) -> str:
        """`JUDGE_MODEL='x' (from .env)`; a secret shows its name and origin only."""
        what = self.name if secret else f"{self.name}={self.text!r}"
        return f"{what} (from {self.origin})"


@dataclass
class EnvFile:
    """The `.env` file read, if any, and the names it set (those the environment lacked)."""

    path: Path | None = None
    added: frozenset[str] = frozenset()


@dataclass
class JudgeSettings:
    """The judge settings of one run, each with where it came from, and what to tell the user."""

    models: list[Value] = field(default_factory=list)
    api_base: Value | None = None
    api_key: Value | None = None
    replay: list[Value] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def load_env_file(
    given: Path | None, skip: bool, environ: MutableMapping[str, str] | None = None
) -> EnvFile:
    """Read `given` (else `./.env` when there is one) into `environ` (default `os.environ`),
    leaving every name the environment already has. A named file that cannot be read is bad
    input (exit 2)."""
    environ = os.environ if environ is None else environ
    if skip:
        return EnvFile()
    path = given or ENV_FILE
    if given is None and not path.is_file():
        return EnvFile()
    if not path.is_file():
        raise InputError(
            path, "no such file (expected a .env file of NAME=value lines)", "--env-file"
        )
    from dotenv import dotenv_values

    try:
        values = dotenv_values(path, encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot be read: {exc}", "--env-file") from None
    added = set()
    for name, value in values.items():
        if value is not None and name not in environ:
            environ[name] = value
            added.add(name)
    return EnvFile(path, frozenset(added))


def resolve(
    args: argparse.Namespace, env_file: EnvFile, environ: MutableMapping[str, str] | None = None
) -> JudgeSettings:
    """The judge settings `args` and the environment give, by the precedence in the module
    docstring; InputError for an empty `--judge-model` or an `--api-key-env` that is unset."""
    environ = os.environ if environ is None else environ

    def variable(name: str) -> Value | None:
        text = (environ.get(name) or "").strip()
        origin = f".env file {env_file.path}" if name in env_file.added else "the environment"
        return Value(name, text, origin) if text else None

    settings = JudgeSettings()
    for model in args.judge_model or []:
        if not model.strip():
            raise InputError("--judge-model", "is empty: expected a judge or model name")
        settings.models.append(Value("--judge-model", model.strip(), "the command line"))
    named = [v for v in map(variable, MODEL_NAMES) if v is not None]
    settings.models = settings.models or named[:1]
    settings.notes += _overridden(settings.models[:1], named)
    flag = Value("--api-base", args.api_base, "the command line") if args.api_base else None
    bases = [v for v in (flag, *map(variable, ENDPOINT_NAMES)) if v is not None]
    settings.api_base = _endpoint(bases[0]) if bases else None
    settings.notes += _overridden(bases[:1], bases[1:])
    settings.api_key = _api_key(args, variable)
    settings.replay = [
        Value(f"--{name.replace('_', '-')}", str(given), "the command line")
        for name in ("replay_store", "replay_judge")
        if (given := getattr(args, name, None))
    ]
    return settings


def _endpoint(value: Value) -> Value:
    """The endpoint used, checked as `--api-base` is while parsing (`judge.cli.flags`): a
    variable holding no http(s) URL is bad input naming it, found before any call."""
    from .flags import ENDPOINT, endpoint

    try:
        endpoint(value.text)
    except ValueError:
        raise InputError(
            value.origin, f"expected {ENDPOINT}, got {value.text!r}", value.name
        ) from None
    return value


def _overridden(used: list[Value], others: list[Value]) -> list[str]:
    if not used:
        return []
    return [
        f"{other.shown()} is not used: {used[0].shown()} takes precedence"
        for other in others
        if other.name != used[0].name and other.text != used[0].text
    ]


def _api_key(args: argparse.Namespace, variable) -> Value | None:
    if args.api_key_env:
        key = variable(args.api_key_env)
        if key is None:
            raise InputError(
                args.api_key_env, "the environment variable is not set", "--api-key-env"
            )
        return key
    return variable(KEY_NAME)


def check(settings: JudgeSettings) -> list[str]:
    """The model strings to build the judges from, after the checks in the module docstring
    (InputError, exit 2, when one fails); notes for the user go into `settings.notes`."""
    if not settings.models:
        _no_silent_rules(settings)
        return []
    return [_route(model, settings) for model in settings.models]


def _no_silent_rules(settings: JudgeSettings) -> None:
    found = [v.shown() for v in (settings.api_base, *settings.replay) if v is not None]
    if settings.api_key is not None:
        found.append(settings.api_key.shown(secret=True))
    if found:
        raise InputError(
            "--judge-model",
            f"no judge model is set, but {', '.join(found)} is: the run would fall back to "
            f"the offline rules judge. Expected a model in --judge-model, JUDGE_MODEL or "
            f"JUDGE_MODEL_ID (e.g. {EXAMPLE_MODEL}), or --judge-model rules to use the "
            "rules judge on purpose",
        )


def _route(model: Value, settings: JudgeSettings) -> str:
    """The string to build the judge from: this tool's judges and models litellm can place as
    they are, a name no litellm provider claims as `openai/<name>` for the endpoint."""
    from ..judges.registry import names_a_judge

    text = model.text
    if names_a_judge(text):
        if text == "rules" and settings.api_base is not None:
            settings.notes.append(
                f"{settings.api_base.shown()} is not used: the rules judge calls no endpoint"
            )
        return text
    prefix, slash, _ = text.partition("/")
    if slash and is_litellm_provider(prefix):
        return text
    base = settings.api_base
    if base is not None:
        settings.notes.append(
            f"{model.shown()} names no litellm provider: it is sent as-is to the "
            f"OpenAI-compatible endpoint {base.text} (litellm model openai/{text})"
        )
        return f"openai/{text}"
    if litellm_knows(text):
        return text
    raise InputError(model.name, _unknown_model(model))


def _unknown_model(model: Value) -> str:
    from ..judges.registry import registered_judges, similar_judge_names

    close = similar_judge_names(model.text)
    mean = f" (did you mean {' or '.join(repr(n) for n in close)}?)" if close else ""
    registered = ", ".join(registered_judges()) or "none"
    return (
        f"{model.text!r} (from {model.origin}) is not a judge this tool can use{mean}. Expected one of: the rules "
        f"judge ('rules'); a registered judge (registered: {registered}); package.module:Class; "
        f"a model litellm knows, with its provider prefix (e.g. {EXAMPLE_MODEL}, "
        "anthropic/..., ollama/...) or a name in litellm's model list; or any model name "
        "together with an OpenAI-compatible endpoint in --api-base, JUDGE_BASE_URL or "
        "JUDGE_API_BASE"
    )


def _litellm_data(name: str) -> Path | None:
    """A data file inside the installed litellm package, found without importing litellm."""
    spec = importlib.util.find_spec("litellm")
    for location in (spec.submodule_search_locations or []) if spec else []:
        path = Path(location) / name
        if path.is_file():
            return path
    return None


@functools.cache
def _json_keys(name: str, inner: str | None = None) -> frozenset[str] | None:
    path = _litellm_data(name)
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path else None
        data = data[inner] if inner and isinstance(data, dict) else data
    except (OSError, ValueError, KeyError):
        return None
    return frozenset(data) if isinstance(data, dict) else None


def is_litellm_provider(prefix: str) -> bool:
    """Whether litellm routes `prefix/...` to a provider of that name (its bundled provider
    table); True when the table cannot be read (litellm then decides)."""
    known = _json_keys("provider_endpoints_support_backup.json", "providers")
    return known is None or prefix in known


def litellm_knows(model: str) -> bool:
    """Whether `model` is in litellm's bundled model list (`gpt-4o-mini`, `claude-3-5-haiku-...`);
    True when the list cannot be read (litellm then decides)."""
    known = _json_keys("model_prices_and_context_window_backup.json")
    return known is None or model in known


def judge_settings(args: argparse.Namespace) -> tuple[list[str] | None, JudgeSettings]:
    """`judge eval`'s judge settings: the `.env` file read, every source resolved and checked
    (exit 2 on a failed check), the notes printed to stderr. Returns the model strings to build
    the judges from (None: the rules judge, no model named) and the settings."""
    import sys

    env_file = load_env_file(args.env_file, args.no_env_file)
    settings = resolve(args, env_file)
    models = check(settings) or None
    for note in settings.notes:
        print(f"note: {note}", file=sys.stderr)
    return models, settings
