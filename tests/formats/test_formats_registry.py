"""The registry of format adapters: detection asks the adapters in order until one is certain, a
broken built-in or a crash while sniffing fails loudly, a third-party adapter registers through
the `diagnosis_judge.formats` entry point and a broken one is warned about and skipped."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import FORMATS, REPO

from ground_truth import InputError, PluginWarning, load_specs, load_submissions
from ground_truth.formats import registry
from ground_truth.formats.registry import AdapterError, FormatAdapter
from judge.cli import main

OPENRCA_CSV = FORMATS / "openrca" / "agent-Telecom.csv"

PLUGIN = '''
from pathlib import Path

from ground_truth.models import IncidentSpec, Submission


class ToyBench:
    """Reads `*.toy` files: one `id | ground truth | diagnosis` per line."""

    name = "toybench"
    looks_for = {"specs": "*.toy files", "submissions": "*.toy files"}

    def sniff(self, path, kind):
        return 1.0 if Path(path).suffix == ".toy" else 0.0

    def _rows(self, path):
        return [line.split(" | ") for line in Path(path).read_text().splitlines() if line]

    def load_specs(self, path):  # no `source`: the loader names the format
        return [IncidentSpec(id=i, ground_truth=g) for i, g, _ in self._rows(path)]

    def load_submissions(self, path):
        return [Submission(incident_id=i, trial="1", diagnosis=d) for i, _, d in self._rows(path)]


class Crashing(ToyBench):
    name = "crashing"

    def sniff(self, path, kind):
        return len(None)


def broken():
    raise ImportError("toybench needs a module that is not installed")
'''


def install_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *entries: str) -> None:
    """A fake installed distribution: a module and a `.dist-info` with entry points on sys.path."""
    (tmp_path / "toybench_plugin.py").write_text(textwrap.dedent(PLUGIN))
    info = tmp_path / "toybench_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toybench-plugin\nVersion: 1.0\n")
    lines = "\n".join(entries)
    (info / "entry_points.txt").write_text(f"[{registry.ENTRY_POINT_GROUP}]\n{lines}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "toybench_plugin", raising=False)


def toy_file(tmp_path: Path) -> Path:
    path = tmp_path / "cases.toy"
    gt = "[fault_spec] component=deployment/cart; namespace=shop || The cart ran out of memory."
    path.write_text(f"cart-oom | {gt} | The cart pod was OOM-killed.\n")
    return path


def test_every_builtin_adapter_follows_the_protocol() -> None:
    every = registry.adapters()
    assert [a.name for a in every][:2] == ["native", "itbench"]
    assert all(isinstance(a, FormatAdapter) for a in every)
    assert {"openrca", "forge", "sregym", "srezero", "aiopslab"} <= {a.name for a in every}


def test_third_party_adapter_from_an_entry_point_is_used(tmp_path, monkeypatch, capsys) -> None:
    install_plugin(tmp_path, monkeypatch, "toybench = toybench_plugin:ToyBench")
    path = toy_file(tmp_path)
    assert registry.detect(path, "specs").name == "toybench"
    specs = load_specs(path)
    assert [(s.id, s.source["format"]) for s in specs] == [("cart-oom", "toybench")]
    assert [s.diagnosis for s in load_submissions(path)] == ["The cart pod was OOM-killed."]
    assert load_specs(path, format="toybench")[0].id == "cart-oom"
    capsys.readouterr()
    assert main(["check", "--ground-truth", str(path), "--outputs", str(path), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["ground_truth"]["format"] == found["outputs"]["format"] == ["toybench"]


def test_an_adapter_that_cannot_be_loaded_is_skipped_with_a_warning(tmp_path, monkeypatch) -> None:
    install_plugin(tmp_path, monkeypatch, "toybench = toybench_not_installed:Adapter")
    with (
        pytest.warns(PluginWarning) as caught,
        pytest.raises(InputError, match="not a recognised ground truth format"),
    ):
        load_specs(toy_file(tmp_path))
    assert str(caught[0].message) == (
        "format plugin 'toybench' (entry point toybench_not_installed:Adapter, distribution"
        " toybench-plugin 1.0) skipped: ModuleNotFoundError: No module named"
        " 'toybench_not_installed'"
    )
    with pytest.raises(InputError, match=r"format: format plugin 'toybench' .* cannot be used"):
        load_specs(toy_file(tmp_path), format="toybench")


def test_an_adapter_that_crashes_while_sniffing_fails_loudly(tmp_path, monkeypatch) -> None:
    install_plugin(tmp_path, monkeypatch, "crashing = toybench_plugin:Crashing")
    mystery = tmp_path / "mystery.csv"
    mystery.write_text("a,b\n1,2\n")
    with pytest.raises(AdapterError, match=r"'crashing' crashed while sniffing.*TypeError"):
        load_specs(mystery)
    assert load_specs(OPENRCA_CSV)  # OpenRCA is certain before the plugin is asked


def test_an_entry_point_that_is_not_an_adapter_is_skipped(tmp_path, monkeypatch) -> None:
    install_plugin(tmp_path, monkeypatch, "toybench = toybench_plugin:Path")
    with pytest.warns(PluginWarning, match=r"'toybench' .* skipped: .* is not a format adapter"):
        assert "toybench" not in [a.name for a in registry.adapters()]


def test_a_plugin_may_not_take_a_builtin_name(tmp_path, monkeypatch) -> None:
    plugin = "class Native(ToyBench):\n    name = 'native'\n"
    install_plugin(
        tmp_path, monkeypatch, "mine = toybench_plugin:Native", "native = toybench_plugin:Native"
    )
    with (tmp_path / "toybench_plugin.py").open("a") as handle:
        handle.write(plugin)
    with pytest.warns(PluginWarning) as caught:
        every = registry.adapters()
    assert [a.name for a in every].count("native") == 1
    assert registry.get_adapter("native") is every[0]
    messages = sorted(str(w.message) for w in caught)
    assert "'mine' " in messages[0] and "the adapter is named 'native', not 'mine'" in messages[0]
    assert "'native' " in messages[1] and "skipped: the name 'native' is taken" in messages[1]


def test_a_broken_builtin_adapter_fails_loudly_when_reached(monkeypatch, tmp_path) -> None:
    import ground_truth.formats as formats

    monkeypatch.delattr(formats, "forge", raising=False)
    monkeypatch.setitem(sys.modules, "ground_truth.formats.forge", None)
    assert load_specs(OPENRCA_CSV)  # detected before forge is asked
    mystery = tmp_path / "mystery.csv"
    mystery.write_text("a,b\n1,2\n")
    with pytest.raises(ImportError):
        load_specs(mystery)


# ------------------------------------------------------------------ OpenRCA's own CSVs


def test_a_single_openrca_agent_csv_is_detected() -> None:
    specs = load_specs(OPENRCA_CSV)
    subs = load_submissions(OPENRCA_CSV)
    assert specs and {s.source["format"] for s in specs} == {"openrca"}
    assert subs and {s.source["format"] for s in subs} == {"openrca"}
    assert {s.incident_id for s in subs} <= {s.id for s in specs}


def test_a_folder_of_openrca_csvs_is_detected(tmp_path: Path) -> None:
    shutil.copy(OPENRCA_CSV, tmp_path / OPENRCA_CSV.name)
    shutil.copy(OPENRCA_CSV, tmp_path / "agent-Telecom-copy.csv")
    assert registry.detect(tmp_path, "specs").name == "openrca"
    subs = load_submissions(tmp_path)
    assert {s.source["format"] for s in subs} == {"openrca"}


def test_native_does_not_claim_csv_or_foreign_json(tmp_path: Path) -> None:
    native = registry.get_adapter("native")
    assert native.sniff(OPENRCA_CSV, "specs") == 0
    other = tmp_path / "meta.json"
    other.write_text('{"hello": "world"}')
    assert native.sniff(other, "specs") == 0


# ------------------------------------------------------------------ an unclaimed input


def test_an_unclaimed_input_lists_what_each_adapter_looked_for(tmp_path: Path) -> None:
    path = tmp_path / "mystery.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(InputError) as caught:
        load_specs(path)
    message = str(caught.value)
    assert caught.value.path == str(path) and caught.value.field == "format"
    assert "not a recognised ground truth format" in message
    for adapter in registry.adapters():
        assert f"\n  {adapter.name}: " in message
    assert "instruction, prediction, groundtruth" in message  # what openrca looked for


def test_an_unclaimed_input_says_why_an_adapter_could_not_read_it(tmp_path: Path) -> None:
    path = tmp_path / "specs"
    path.mkdir()
    (path / "a.yaml").write_text("id: [unclosed\n")
    (path / "b.csv").write_text("x\n")
    with pytest.raises(InputError) as caught:
        load_specs(path)
    assert "native: YAML/JSON incident specs" in str(caught.value)
    assert "a.yaml: line 2: invalid YAML" in str(caught.value)


def test_unknown_format_name_lists_the_adapters(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"unknown format 'nope'.*native, itbench"):
        load_specs(OPENRCA_CSV, format="nope")


def test_cross_check_of_a_format_not_installed_is_skipped(tmp_path: Path) -> None:
    specs = tmp_path / "specs.json"
    specs.write_text(json.dumps([{"id": "a", "ground_truth": "x", "source": {"format": "gone"}}]))
    assert main(["check", "--ground-truth", str(specs)]) == 0


# ------------------------------------------------------------------ imports


def _imports(path: Path, package: str) -> set[str]:
    """Every `ground_truth...` module `path` imports, at the top or inside a function."""
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    base = parts[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            anchor = base[: len(base) - node.level + 1] if node.level else []
            module = ".".join([*anchor, *([node.module] if node.module else [])])
            found |= {module, *(f"{module}.{alias.name}" for alias in node.names)}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {name for name in found if name.split(".")[0] == package}


def test_no_format_module_imports_its_way_back_to_itself() -> None:
    files = [
        REPO / "ground_truth" / "loaders.py",
        *(REPO / "ground_truth" / "formats").glob("*.py"),
    ]
    names = {".".join(f.relative_to(REPO).with_suffix("").parts): f for f in files}
    edges = {
        name: _imports(path, "ground_truth") & set(names) - {name} for name, path in names.items()
    }

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(
            n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in edges[start]
        )

    assert [name for name in edges if reaches(name, name, set())] == []


def test_detection_imports_only_the_adapters_it_asks(tmp_path: Path) -> None:
    code = (
        "import sys; from ground_truth import load_specs; load_specs(sys.argv[1]);"
        " print(sorted({m.split('.')[2] for m in sys.modules if m.startswith('ground_truth.formats.')}))"
    )

    def loaded(path: Path) -> list[str]:
        run = subprocess.run(
            [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
        )
        return ast.literal_eval(run.stdout)

    native = REPO / "examples" / "sregym-mini" / "ground_truth"
    assert loaded(native) == ["registry"]
    assert loaded(FORMATS / "itbench" / "scenarios") == ["files", "itbench", "registry"]
