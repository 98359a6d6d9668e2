"""Every agreement figure README.md and benchmarks/README.md state is what the command named for
it prints on the committed data (`benchmarks/pinned_figures.yaml`), so a change that moves a
number must change the README in the same commit. The commands read ground truths and agent texts
in the shared corpus: those tests are marked `corpus`; the checker itself is tested without it."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import BENCHMARKS, CORPUS, CORPUS_ENV, REPO
from pydantic import BaseModel, ConfigDict

PINS = BENCHMARKS / "pinned_figures.yaml"
FIGURE = re.compile(r"-?\d+\.\d+%?")  # agreement figures: 0.83, -0.50, 0.0%
REGION = "<!-- pinned: {name} -->"
REGION_END = "<!-- /pinned -->"
BENCHMARKS = ("validity.py", "selective.py")
"""The scripts a pinned command may run (each takes `--json PATH`)."""


class Pin(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str
    values: dict[str, str]


class PinnedFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file: str
    command: str
    region: str | None = None
    pins: list[Pin]


def load_table(path: Path = PINS) -> list[PinnedFile]:
    return [PinnedFile.model_validate(row) for row in yaml.safe_load(path.read_text("utf-8"))]


def value_at(data: Any, path: str) -> Any:
    """`a.b[key=value].c.0`: keys, list indexes, and list elements picked by one key's value."""
    for part in path.split("."):
        name, _, selector = part.partition("[")
        if name:
            data = data[int(name)] if isinstance(data, list) else data[name]
        if selector:
            key, _, wanted = selector.rstrip("]").partition("=")
            matches = [item for item in data if str(item.get(key)) == wanted]
            if len(matches) != 1:
                raise KeyError(f"{path}: {len(matches)} elements with {key}={wanted}")
            data = matches[0]
    return data


def rendered(pin: Pin, data: Any) -> str:
    return pin.text.format(**{name: value_at(data, path) for name, path in pin.values.items()})


def unpinned_figures(text: str, region: str, pinned: list[str]) -> list[str]:
    """The figures inside `region` of `text` that no pinned text accounts for."""
    start = text.index(REGION.format(name=region))
    block = text[start : text.index(REGION_END, start)]
    for line in pinned:
        block = block.replace(line, "")
    return FIGURE.findall(block)


@cache
def command_output(command: str) -> Any:
    """The command's `--json`, run from the repository's root on the committed data."""
    args = shlex.split(command)
    assert args[:2] in (["python", f"benchmarks/{name}"] for name in BENCHMARKS), command
    env = {**os.environ, CORPUS_ENV: str(CORPUS)}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "numbers.json"
        subprocess.run(
            [sys.executable, *args[1:], "--json", str(out)],
            cwd=REPO,
            env=env,
            check=True,
            capture_output=True,
            text=True,
            timeout=600,
        )
        return json.loads(out.read_text("utf-8"))


TABLE = load_table()


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("row", "pin"),
    [(row, pin) for row in TABLE for pin in row.pins],
    ids=lambda x: x.file if isinstance(x, PinnedFile) else x.text[:40],
)
@pytest.mark.slow
def test_the_file_states_what_the_command_prints(row, pin, corpus_dir):
    expected = rendered(pin, command_output(row.command))
    text = (REPO / row.file).read_text("utf-8")
    assert expected in text, f"{row.file} should say {expected!r} (`{row.command}`)"


@pytest.mark.corpus
@pytest.mark.parametrize("row", [r for r in TABLE if r.region], ids=lambda r: r.region)
def test_every_figure_of_a_pinned_region_is_pinned(row, corpus_dir):
    data = command_output(row.command)
    text = (REPO / row.file).read_text("utf-8")
    left = unpinned_figures(text, row.region, [rendered(p, data) for p in row.pins])
    assert left == [], f"{row.file}, region {row.region}: figures with no pin: {left}"


@pytest.mark.corpus
def test_every_committed_real_case_loads_its_incident_with_its_adapter(corpus_dir):
    from helpers.validity import validity

    real = validity.real
    sources = [s for names in real.read_split().values() for s in names]
    cases = [c for s in sources for c in real.load_source(real.REAL / "cases" / f"{s}.yaml")]
    specs = real.build_specs(cases, corpus_dir)
    assert {c.incident_id for c in cases} == {s.id for s in specs}


def test_the_table_names_files_that_exist_and_commands_that_print_json():
    assert TABLE
    for row in TABLE:
        assert (REPO / row.file).is_file(), row.file
        assert row.command.split()[:2] in (["python", f"benchmarks/{n}"] for n in BENCHMARKS)
        assert "--json" not in row.command
        for pin in row.pins:
            assert set(re.findall(r"{(\w+)", pin.text)) == set(pin.values), pin.text
        if row.region:
            assert REGION.format(name=row.region) in (REPO / row.file).read_text("utf-8")


def test_value_at_reads_keys_indexes_and_picks_list_elements_by_key():
    data = {"splits": [{"split": "tune", "n": 1}, {"split": "test", "n": [5, 7]}]}
    assert value_at(data, "splits[split=test].n.1") == 7
    assert value_at(data, "splits.0.n") == 1
    with pytest.raises(KeyError, match="0 elements with split=dev"):
        value_at(data, "splits[split=dev].n")


def test_a_moved_number_is_caught_and_an_unpinned_figure_is_found():
    pin = Pin(text="| a | {k:.2f} |", values={"k": "x.k"})
    assert rendered(pin, {"x": {"k": 0.754}}) == "| a | 0.75 |"
    text = "intro 0.10\n<!-- pinned: r -->\n| a | 0.75 |\n| b (95% CI) | 0.3 | 1.5% |\n<!-- /pinned -->\n"
    assert rendered(pin, {"x": {"k": 0.71}}) not in text
    assert unpinned_figures(text, "r", ["| a | 0.75 |"]) == ["0.3", "1.5%"]
