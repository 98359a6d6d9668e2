"""The built wheel ships the rubrics and the templates, and loads the default rubric from itself."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import REPO

from judge import load_rubric

PROBE = (
    "from judge.checklist.rubric import load_rubric, rubrics_dir; "
    "from judge.selftest.goldens import goldens_path; "
    "r = load_rubric('sregym-v3'); print(rubrics_dir(), r.hash, goldens_path(r))"
)


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{args}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "-o", str(out), str(REPO)],
        REPO,
    )
    [built] = out.glob("diagnosis_judge-*.whl")
    return built


@pytest.mark.slow
def test_wheel_holds_rubrics_and_templates(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "judge/_rubrics/sregym-v3.yaml" in names
    assert "judge/_rubrics/sregym-v3.goldens.yaml" in names  # `judge selftest --rubric`
    for template in sorted((REPO / "judge" / "templates").glob("*.j2")):
        assert f"judge/templates/{template.name}" in names
    assert "judge/__main__.py" in names
    assert any(n.startswith("ground_truth/") for n in names)
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "judge = judge.cli:run" in zipfile.ZipFile(wheel).read(entry_points).decode()


@pytest.mark.slow
def test_installed_wheel_loads_the_default_rubric(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(site),
            str(wheel),
        ],
        tmp_path,
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    where = "import judge, ground_truth; print(judge.__file__); print(ground_truth.__file__)"
    for module_file in _run([sys.executable, "-c", where], tmp_path, env).split():
        assert Path(module_file).is_relative_to(site), "imported from the checkout, not the wheel"
    rubric_dir, digest, goldens = _run([sys.executable, "-c", PROBE], tmp_path, env).split()
    assert Path(rubric_dir).is_relative_to(site)
    assert Path(goldens) == Path(rubric_dir) / "sregym-v3.goldens.yaml"
    assert digest == load_rubric("sregym-v3").hash
