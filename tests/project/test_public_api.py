"""The supported API is what the three packages export (docs/ARCHITECTURE.md, "The public
surface"): every exported name resolves and says what it is, and every room of `judge/` has a
one-line docstring saying what it holds."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest
from helpers import REPO

PACKAGES = ("judge", "ground_truth", "agreement")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_resolves_and_has_a_docstring(package):
    module = importlib.import_module(package)
    assert module.__all__, f"{package} exports nothing"
    assert len(set(module.__all__)) == len(module.__all__), f"{package}.__all__ repeats a name"
    undocumented = []
    for name in module.__all__:
        value = getattr(module, name)  # AttributeError names a broken export
        if (inspect.isclass(value) or inspect.isfunction(value)) and not inspect.getdoc(value):
            undocumented.append(name)
    assert not undocumented, f"{package} exports without a docstring: {undocumented}"


def _rooms() -> list[Path]:
    judge = REPO / "judge"
    modules = [p for p in judge.glob("*.py") if p.name != "__main__.py"]
    packages = [p / "__init__.py" for p in judge.iterdir() if (p / "__init__.py").is_file()]
    return sorted(modules + packages)


def test_each_room_of_judge_says_what_it_is():
    silent = [
        str(p.relative_to(REPO))
        for p in _rooms()
        if not (ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) or "").strip()
    ]
    assert not silent, f"modules without a docstring: {silent}"


def test_judge_top_level_stays_about_a_dozen_rooms():
    rooms = [p for p in _rooms() if p.name != "__init__.py" or p.parent.name != "judge"]
    assert len(rooms) <= 14, [str(p.relative_to(REPO)) for p in rooms]  # audit made 14


def test_the_architecture_page_names_every_room():
    page = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    for room in _rooms():
        name = room.parent.name if room.name == "__init__.py" else room.stem
        if name != "judge":
            assert f"`{name}" in page, f"docs/ARCHITECTURE.md does not mention judge/{name}"


@pytest.mark.parametrize(
    ("package", "names"),
    [
        ("judge", ["AuditReport", "audit_judge", "audit_judge_async"]),  # issue 40
        ("judge", ["GuaranteeCheck", "check_guarantee"]),  # issue 39
        ("agreement", ["RankReport", "RankCorrelation", "rank_stability", "spearman_rho"]),
        ("agreement", ["Ranking", "rank_confidence", "shift_test", "stratified_ppi_mean"]),
    ],
)
def test_the_audit_and_the_guarantee_both_stay_exported(package, names):
    exported = set(importlib.import_module(package).__all__)
    assert not set(names) - exported
