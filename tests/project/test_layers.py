"""The order of the packages and of the rooms inside `judge/`, kept true by reading every import.

A room is a top-level folder or module of `judge/` (`judge/run/`, `judge/api.py`). It may import
rooms on a lower tier; it may import a room on its own tier only where that ties no two rooms into
a circle; it never imports upward. The packages: `ground_truth` and `agreement` import neither
`judge` nor each other. docs/ARCHITECTURE.md shows the same order, and a test below holds the page
to `ROOMS`.

Every import counts: at module level, inside functions, under `TYPE_CHECKING`, relative ones
resolved, `importlib.import_module("...")` literals, and the lazy tables of names that a package's
`__getattr__` imports on first use (any string in the module that names a module of the three
packages: `"judge.judges.cascade:cascade_judge"`, `".html"` beside `import_module(home, __name__)`).

    python tests/project/test_layers.py     # every edge against the order, and every circle of rooms
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

if __name__ == "__main__":  # run as a script: tests/ (where helpers is) is not on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from helpers import REPO

PACKAGES = ("ground_truth", "agreement", "judge")

# The rooms of judge/, bottom tier first; docs/ARCHITECTURE.md shows them top tier first.
# `judge` is the package's face (judge/__init__.py); `testing` is the fake provider users' tests
# import, which nothing of the judge may need.
ROOMS: tuple[tuple[str, ...], ...] = (
    ("errors",),
    ("checklist",),
    ("judges", "store", "resolution"),
    ("run",),
    ("api",),
    ("report", "labelling", "integrations", "selftest", "audit"),
    ("cli", "judge", "__main__", "testing"),
)
# The packages, bottom first; `ground_truth` and `agreement` are kept apart (SEPARATE).
PACKAGE_TIERS: tuple[tuple[str, ...], ...] = (("ground_truth", "agreement"), ("judge",))
SEPARATE = frozenset({("ground_truth", "agreement"), ("agreement", "ground_truth")})

_MODULE_STRING = re.compile(r"^(\.*[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?::[A-Za-z_]\w*)?$")


@dataclass(frozen=True)
class Edge:
    """`source` imports `target` at `path`:`line` (both dotted module names)."""

    source: str
    target: str
    path: Path
    line: int

    def where(self, root: Path) -> str:
        return f"{self.path.relative_to(root)}:{self.line}"


def modules_under(root: Path) -> dict[str, Path]:
    """Every module of the three packages under `root`, by dotted name."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _absolute(name: str, level: int, package: str) -> str:
    if level == 0:
        return name
    base = package.split(".")
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _calls_import_module(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__"):
                return True
    return False


def _imported(tree: ast.AST, package: str) -> Iterator[tuple[str, list[str], int]]:
    """(module, names taken from it, line) for every import statement and lazy module string."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node.module or "", node.level, package)
            yield module, [alias.name for alias in node.names], node.lineno
    if not _calls_import_module(tree):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = _MODULE_STRING.match(node.value)
            if match:
                name = match.group(1)
                level = len(name) - len(name.lstrip("."))
                yield _absolute(name.lstrip("."), level, package), [], node.lineno


def edges_of(module: str, path: Path, source: str, known: Iterable[str]) -> list[Edge]:
    """The imports of one module that land on a module of the three packages."""
    known = set(known)
    package = _package_of(module, path)
    edges: list[Edge] = []
    for target, names, line in _imported(ast.parse(source, str(path)), package):
        if target.split(".")[0] not in PACKAGES:
            continue
        submodules = {f"{target}.{name}" for name in names} & known
        from_package = target in known and len(submodules) < max(len(names), 1)
        for found in sorted(submodules | ({target} if from_package else set())):
            if found != module:
                edges.append(Edge(module, found, path, line))
    return edges


def read_edges(root: Path) -> list[Edge]:
    known = modules_under(root)
    return [
        edge
        for module, path in known.items()
        for edge in edges_of(module, path, path.read_text(encoding="utf-8"), known)
    ]


def room_of(module: str) -> str:
    """`judge.run.loop` -> `run`; `judge` -> `judge`; other packages are rooms of their own."""
    parts = module.split(".")
    if parts[0] != "judge":
        return parts[0]
    return parts[1] if len(parts) > 1 else "judge"


def _tier(tiers: tuple[tuple[str, ...], ...], name: str) -> int:
    for index, tier in enumerate(tiers):
        if name in tier:
            return index
    raise KeyError(name)


def upward(edges: Iterable[Edge]) -> list[tuple[Edge, str]]:
    """Each edge against the order, with what is wrong with it."""
    wrong: list[tuple[Edge, str]] = []
    for edge in edges:
        source_package, target_package = edge.source.split(".")[0], edge.target.split(".")[0]
        if source_package != target_package:
            if (source_package, target_package) in SEPARATE or _tier(
                PACKAGE_TIERS, target_package
            ) > _tier(PACKAGE_TIERS, source_package):
                wrong.append((edge, f"package {source_package} imports {target_package}"))
            continue
        if source_package != "judge":
            continue
        source, target = room_of(edge.source), room_of(edge.target)
        unplaced = [room for room in (source, target) if not any(room in t for t in ROOMS)]
        if unplaced:
            wrong.append((edge, f"room {unplaced[0]} is in no tier of ROOMS"))
        elif source != target and _tier(ROOMS, target) > _tier(ROOMS, source):
            wrong.append((edge, f"{source} imports {target}, which stands above it"))
    return wrong


def circles(edges: Iterable[Edge], group=room_of) -> list[list[str]]:
    """The groups (rooms by default) tied into a circle, each sorted, largest first."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        source, target = group(edge.source), group(edge.target)
        graph.setdefault(source, set())
        graph.setdefault(target, set())
        if source != target:
            graph[source].add(target)
    return sorted(
        (sorted(c) for c in _strongly_connected(graph) if len(c) > 1), key=lambda c: (-len(c), c)
    )


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    found.append(component)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def circle_edges(edges: Iterable[Edge], members: list[str], group=room_of) -> list[Edge]:
    inside = set(members)
    return [
        edge
        for edge in edges
        if group(edge.source) in inside
        and group(edge.target) in inside
        and group(edge.source) != group(edge.target)
    ]


def findings(root: Path) -> list[str]:
    """One line per edge against the order and per circle of rooms, naming file and line."""
    edges = read_edges(root)
    lines = [f"{edge.where(root)}: {why} ({edge.target})" for edge, why in upward(edges)]
    for members in circles(edges):
        ties: dict[tuple[str, str], list[Edge]] = {}
        for edge in circle_edges(edges, members):
            ties.setdefault((room_of(edge.source), room_of(edge.target)), []).append(edge)
        shown = "; ".join(
            f"{source}->{target} at {', '.join(e.where(root) for e in tied[:3])}"
            + (f" and {len(tied) - 3} more" if len(tied) > 3 else "")
            for (source, target), tied in sorted(ties.items())
        )
        lines.append(f"circle of rooms {' <-> '.join(members)}: {shown}")
    return lines


# ---------------------------------------------------------------------------------- the tests


def test_no_import_against_the_order_and_no_circle_of_rooms() -> None:
    found = findings(REPO)
    assert not found, "\n".join(found)


def private_imports(root: Path) -> list[str]:
    """`from module import _name` between modules of the three packages: a private name used
    where it was not defined is public in all but name."""
    found: list[str] = []
    for module, path in modules_under(root).items():
        package = _package_of(module, path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            target = _absolute(node.module or "", node.level, package)
            private = [a.name for a in node.names if a.name[0] == "_" and a.name[:2] != "__"]
            if private and target.split(".")[0] in PACKAGES:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {', '.join(private)}")
    return found


def test_no_private_name_is_imported_from_another_module() -> None:
    assert private_imports(REPO) == []


def test_every_room_of_judge_has_a_tier() -> None:
    rooms = {room_of(module) for module in modules_under(REPO) if module.startswith("judge")}
    placed = {room for tier in ROOMS for room in tier}
    assert rooms <= placed, f"rooms in no tier of ROOMS: {sorted(rooms - placed)}"


def test_architecture_page_shows_the_same_order() -> None:
    page = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    table = page.split("<!-- rooms: top tier first -->")[1].split("\n\n")[0]
    rows = [row.split("|")[1] for row in table.splitlines() if row.startswith("| `")]
    shown = [tuple(re.findall(r"`(\w+)`", cell)) for cell in rows]
    assert shown == list(reversed(ROOMS)), shown


def _house(root: Path, files: dict[str, str]) -> Path:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    for package in PACKAGES:
        (root / package).mkdir(exist_ok=True)
        (root / package / "__init__.py").touch()
    return root


def test_a_planted_upward_import_is_caught_with_file_and_line(tmp_path: Path) -> None:
    root = _house(
        tmp_path,
        {
            "judge/checklist/__init__.py": "",
            "judge/checklist/rubric.py": "import json\n\n\ndef f():\n    from ..run import loop\n",
            "judge/run/__init__.py": "",
            "judge/run/loop.py": "from judge.checklist.rubric import f\n",
            "ground_truth/models.py": "from agreement import stats\n",
            "agreement/stats.py": "",
        },
    )
    found = findings(root)
    assert any(
        line.startswith("judge/checklist/rubric.py:5: checklist imports run") for line in found
    ), found
    assert any(
        line.startswith("ground_truth/models.py:1: package ground_truth imports agreement")
        for line in found
    ), found
    assert not any(line.startswith("judge/run/loop.py") for line in found), found


def test_a_planted_circle_between_rooms_of_one_tier_is_caught(tmp_path: Path) -> None:
    root = _house(
        tmp_path,
        {
            "judge/report/__init__.py": "from . import html\n",
            "judge/report/html.py": "from judge.integrations.inspect import Scorer\n",
            "judge/integrations/__init__.py": "",
            "judge/integrations/inspect.py": "Scorer = 1\n",
        },
    )
    assert findings(root) == []
    (root / "judge/integrations/inspect.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..report import html\n"
    )
    found = findings(root)
    assert len(found) == 1, found
    assert found[0].startswith("circle of rooms integrations <-> report"), found
    assert "integrations->report at judge/integrations/inspect.py:3" in found[0], found


def test_lazy_tables_and_import_module_literals_are_edges(tmp_path: Path) -> None:
    root = _house(
        tmp_path,
        {
            "judge/store/__init__.py": (
                "from importlib import import_module\n"
                '_HOMES = {"Thing": ".file"}\n'
                'LATER = "judge.api:evaluate"\n'
                "def __getattr__(name):\n"
                "    return getattr(import_module(_HOMES[name], __name__), name)\n"
            ),
            "judge/store/file.py": "",
            "judge/api.py": "",
        },
    )
    edges = {(e.source, e.target, e.line) for e in read_edges(root)}
    assert ("judge.store", "judge.store.file", 2) in edges
    assert ("judge.store", "judge.api", 3) in edges
    assert findings(root) == [
        "judge/store/__init__.py:3: store imports api, which stands above it (judge.api)"
    ]


def test_a_planted_private_import_is_caught(tmp_path: Path) -> None:
    root = _house(
        tmp_path,
        {
            "judge/run/merge.py": "from ground_truth.matching import _order, visible\n",
            "judge/run/units.py": "from . import merge as _merge\nfrom .merge import __doc__\n",
            "ground_truth/matching.py": "",
        },
    )
    assert private_imports(root) == ["judge/run/merge.py:1: _order"]


if __name__ == "__main__":
    found = findings(REPO)
    print("\n".join(found) or "no import against the order, no circle of rooms")
    sys.exit(1 if found else 0)
