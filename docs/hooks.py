"""MkDocs hook: the CLI reference page (`cli.md`), written from the `judge` command's argparse
parsers at build time (`judge.cli.reference`), so the page cannot drift from the flags."""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files


def on_files(files: Files, config: Any) -> Files:
    from judge.cli.reference import reference

    files.append(File.generated(config, "cli.md", content=reference()))
    return files
