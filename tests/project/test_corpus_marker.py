"""The suite's contract with the shared corpus: found in one place, read only by `corpus` tests,
deselected by default, and a selected corpus test fails (never skips) when the corpus is absent."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import helpers
import pytest
from helpers import CORPUS_ENV, OPT_IN, REPO, corpus, corpus_root


def test_corpus_root_defaults_beside_the_repo_and_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(CORPUS_ENV, raising=False)
    assert corpus_root() == REPO.parent / "shared" / "corpus"
    monkeypatch.setenv(CORPUS_ENV, str(tmp_path))
    assert corpus_root() == tmp_path


def test_an_unmarked_test_may_not_read_the_corpus() -> None:
    with pytest.raises(pytest.fail.Exception, match="not marked `corpus`"):
        corpus("sregym")


def test_a_missing_corpus_file_fails_naming_it_and_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(helpers, "_corpus_marked", True)
    monkeypatch.setattr(helpers, "CORPUS", tmp_path / "absent")
    with pytest.raises(pytest.fail.Exception) as failed:
        corpus("sregym", "x.json")
    message = str(failed.value)
    assert str(tmp_path / "absent" / "sregym" / "x.json") in message
    assert CORPUS_ENV in message


def test_the_opt_in_markers_are_registered_and_deselected_by_conftest() -> None:
    options = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    registered = {m.split(":")[0] for m in options["pytest"]["ini_options"]["markers"]}
    assert set(OPT_IN) <= registered
    assert "slow" in registered


def _pytest(*args: str, corpus_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, CORPUS_ENV: str(corpus_dir), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_selected_corpus_tests_fail_when_the_corpus_is_absent(tmp_path: Path) -> None:
    target = "tests/formats/test_formats_forge.py"
    default = _pytest(target, corpus_dir=tmp_path / "absent")
    assert default.returncode == 0, default.stdout + default.stderr
    assert "2 deselected" in default.stdout and "skipped" not in default.stdout
    fast = _pytest(target, "-m", "not slow", corpus_dir=tmp_path / "absent")
    assert fast.returncode == 0, fast.stdout + fast.stderr
    assert "2 deselected" in fast.stdout and "skipped" not in fast.stdout
    asked = _pytest(target, "-m", "corpus", corpus_dir=tmp_path / "absent")
    assert asked.returncode == 1, asked.stdout + asked.stderr
    assert "marked `corpus`" in asked.stdout and CORPUS_ENV in asked.stdout
    assert "skipped" not in asked.stdout
