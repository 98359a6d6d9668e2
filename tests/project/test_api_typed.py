"""The wheel tells type checkers its packages are typed (PEP 561) and ships the integrations."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import REPO


@pytest.mark.slow
def test_the_wheel_ships_py_typed_for_each_package(tmp_path: Path) -> None:
    build = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "-o", str(tmp_path)]
    proc = subprocess.run([*build, str(REPO)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    [wheel] = tmp_path.glob("diagnosis_judge-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for package in ("judge", "ground_truth", "agreement"):
        assert f"{package}/py.typed" in names
    assert "judge/integrations/inspect.py" in names
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "Provides-Extra: inspect" in text
    assert "inspect-ai>=0.3; extra == 'inspect'" in text
