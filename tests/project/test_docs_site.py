"""The documentation site: its CLI reference names every flag of every `judge` command (it is
written from the parsers at build time, `judge.cli.reference`), its API reference every name the
three packages export, and `mkdocs build --strict` passes (a broken link or reference fails)."""

from __future__ import annotations

import html
import re
import subprocess
import sys

import pytest
from helpers import REPO

import agreement
import ground_truth
import judge
from judge.cli import build_parser
from judge.cli.reference import commands, reference


def parser_flags() -> dict[str, set[str]]:
    """Every subcommand's title (`judge labels serve`) with its option strings."""
    return {
        " ".join(("judge", *path)): {
            name for action in parser._actions for name in action.option_strings
        }
        - {"-h", "--help"}
        for path, parser, _ in commands(build_parser())
        if path
    }


def page_sections(text: str, heading: str) -> dict[str, str]:
    """The page's sections by their heading's command (`## `judge eval`` in Markdown)."""
    parts = re.split(heading, text)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def flags_in(section: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", section))


def test_the_cli_reference_lists_every_flag_of_every_command_under_its_own_heading():
    sections = page_sections(reference(), r"(?m)^## `(judge[^`]*)`$")
    flags = parser_flags()
    assert set(sections) == set(flags)
    for title, wanted in flags.items():
        listed = {f for line in sections[title].splitlines() if line.startswith("- ")
                  for f in flags_in(line.split(":", 1)[0])}  # fmt: skip
        assert listed == wanted, title


def test_the_cli_reference_shows_defaults_choices_and_ranges():
    text = reference()
    assert "`--max-concurrent` `MAX_CONCURRENT`: judge calls in flight (default 5)" in text
    assert "[an integer from 1 to 1_000]" in text
    assert "`--granularity` `{dimension,submission}` (default `submission`)" in text
    assert "(required; a path (a file or folder))" in text  # -g of judge eval


@pytest.mark.slow
def test_the_site_builds_strict_with_every_flag_and_every_exported_name(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    cli = html.unescape(re.sub(r"<[^>]+>", "", (tmp_path / "cli" / "index.html").read_text()))
    sections = page_sections(cli, r"\n(judge(?: [a-z-]+)*)¶\n")
    for title, wanted in parser_flags().items():
        assert wanted <= flags_in(sections[title]), title
    api = (tmp_path / "api" / "index.html").read_text()
    ids = set(re.findall(r'id="((?:judge|ground_truth|agreement)\.[\w.]+)"', api))
    for module in (judge, ground_truth, agreement):
        for name in module.__all__:
            home = getattr(module, name).__module__.split(".")[0] if callable(
                getattr(module, name)) else module.__name__  # fmt: skip
            assert any(i in ids for i in (f"{module.__name__}.{name}", f"{home}.{name}",
                       f"agreement.calibrate.{name}")), f"{module.__name__}.{name}"  # fmt: skip


README = REPO / "README.md"


def test_the_readme_is_a_front_door_of_at_most_150_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 150


def test_the_readme_s_test_command_is_the_one_ci_runs():
    readme = README.read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    install = re.search(r'pip install --quiet -e "(\.\[[\w,]+\])"', ci)
    run = re.search(r"exec (python -m pytest -m \"not realmodel\")", ci)
    assert install and run
    assert f'pip install -e "{install.group(1)}" && {run.group(1)}' in readme


def test_every_link_of_the_readme_names_a_file_of_the_repository():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if "://" not in link]
    assert local and all((REPO / link).is_file() for link in local), local
