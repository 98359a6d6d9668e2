"""Which prompt a call's inputs render to: `PromptRenderer.inputs_key` (a hash of the templates,
the spec, the dimension and the diagnosis) mapped to the rendered prompt's hash, written
whenever a prompt is rendered for a call. A rerun finds every stored answer's key from its
inputs without rendering a prompt; inputs the store has not seen are rendered as before.
Answers stay keyed by the prompt's hash, so a store written before this table existed still
answers (its prompts are rendered once, and remembered here)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from .failures import guarded
from .file import StoreFile, rows_in
from .migrations import has_table, same_hash, short


class PromptKeys(StoreFile):
    """Looking up and remembering prompt hashes by their render inputs."""

    @guarded
    def prompt_hashes(self, inputs: Iterable[str]) -> dict[str, str]:
        """The prompt hash of each of `inputs` the store has seen rendered."""
        if not has_table(self._db, "prompt_keys"):  # a store opened read-only, not migrated
            return {}
        sql = (
            "SELECT inputs, prompt_hash FROM prompt_keys"
            f" WHERE {short('inputs')} IN ({{marks}}) AND inputs IN ({{marks}})"
        )
        return dict(rows_in(self._db, sql, set(inputs), short=True))

    @guarded
    def remember_prompts(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Remember (inputs key, prompt hash) pairs, in one transaction."""
        rows = list(pairs)
        if not rows:
            return
        self._check_file()
        with self._transaction():
            insert_prompt_keys(self._db, rows)


def insert_prompt_keys(db: sqlite3.Connection, rows: list[tuple[str, str]]) -> None:
    """Inside the caller's transaction; inputs the store has are left as they are (it keeps
    them unique: `m009_short_indexes`)."""
    db.executemany(
        "INSERT INTO prompt_keys (inputs, prompt_hash) SELECT ?1, ?2"
        f" WHERE NOT EXISTS (SELECT 1 FROM prompt_keys WHERE {same_hash('inputs')})",
        rows,
    )
