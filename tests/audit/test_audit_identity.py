"""Which model answered is kept with every answer (issue 40): the model version the reply
names, its `system_fingerprint` and the seed sent, in the store (version 3, m006) and in the
result's judgments (a panel's members' in `member_judgments`), served again from the store, per
panel member, and absent (never made up) where a provider or an older store says nothing."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from helpers import EXAMPLE, FIXTURES

from judge.checklist.judgment import JudgeIdentity
from judge.cli import main
from judge.store import STORE_VERSION, KeyParts, Store
from judge.testing import FakeProvider, FakeProviderConfig

SPEC = EXAMPLE / "ground_truth" / "incorrect_image.yaml"
OUTPUTS = EXAMPLE / "outputs"
STORES = FIXTURES / "stores"


def run(tmp_path: Path, provider: FakeProvider, *flags: str, name: str = "r.json") -> dict:
    result = tmp_path / name
    code = main(
        ["eval", "-g", str(SPEC), "-o", str(OUTPUTS), "-r", str(result), "--no-progress",
         "--store", str(tmp_path / "s.sqlite"), "--api-base", provider.url, *flags]
    )  # fmt: skip
    assert code == 0
    return json.loads(result.read_text())


def identities(result: dict) -> set[tuple]:
    return {
        (j["judge"], *(j["identity"] or {}).values()) if j["identity"] else (j["judge"], None)
        for j in [*result["judgments"], *result["member_judgments"]]
    }


def test_every_judgment_names_the_model_version_fingerprint_and_seed(tmp_path: Path) -> None:
    config = FakeProviderConfig(model_version="gpt-4o-mini-2024-07-18", system_fingerprint="fp_a")
    with FakeProvider(config) as provider:
        first = run(tmp_path, provider, "--judge-model", "openai/gpt-4o-mini")
        again = run(tmp_path, provider, "--judge-model", "openai/gpt-4o-mini", name="again.json")
        asked = len(provider.calls)
    expected = {("llm:openai/gpt-4o-mini", "gpt-4o-mini-2024-07-18", "fp_a", 0)}
    assert identities(first) == expected
    assert identities(again) == expected  # served by the store, the identity with it
    assert again["usage"]["calls_made"] == 0 and asked == len(first["cases"])
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        rows = set(db.execute("SELECT model_version, system_fingerprint, seed FROM judgments"))
        version = db.execute("SELECT value FROM meta WHERE name = 'store_version'").fetchone()
    db.close()
    assert rows == {("gpt-4o-mini-2024-07-18", "fp_a", 0)} and version == (STORE_VERSION,)


def test_a_changed_backend_is_told_apart_and_a_silent_provider_gives_none(tmp_path: Path) -> None:
    with FakeProvider(FakeProviderConfig(system_fingerprint="fp_a")) as provider:
        before = run(tmp_path, provider, "--judge-model", "openai/m")
    with FakeProvider(FakeProviderConfig(system_fingerprint="fp_b")) as provider:
        after = run(tmp_path, provider, "--judge-model", "openai/m", "--refresh", name="b.json")
    with FakeProvider(FakeProviderConfig(system_fingerprint=None)) as provider:
        silent = run(tmp_path, provider, "--judge-model", "openai/m", "--refresh", name="c.json")
    assert identities(before) == {("llm:openai/m", "m", "fp_a", 0)}
    assert identities(after) == {("llm:openai/m", "m", "fp_b", 0)}
    assert identities(silent) == {("llm:openai/m", "m", None, 0)}


def test_each_panel_member_keeps_its_own(tmp_path: Path) -> None:
    with FakeProvider(FakeProviderConfig(system_fingerprint="fp_p")) as provider:
        result = run(tmp_path, provider, "--judge-model", "openai/a", "--samples", "3")
    members = {i for i in identities(result) if "#" in i[0]}
    assert members == {(f"llm:openai/a#{n}", "a", "fp_p", n - 1) for n in (1, 2, 3)}
    assert identities(result) - members == {("llm:openai/a[samples=3]", None)}


def test_an_older_store_reads_without_identity_and_migrates_to_empty_columns(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript((STORES / "store-v2-cb116ca.sql").read_text())
    db.close()
    parts = KeyParts("llm", "openai/m", "p1", "prompt-0", "schema", "rubric-0")
    with Store(path, readonly=True) as store:  # not migrated: no identity columns to read
        old = store.get(parts)
    assert old is not None and old.identity is None
    with Store(path) as store:
        migrated = store.get(parts)
    assert migrated is not None and migrated.identity is None
    assert JudgeIdentity.of(None, None, None) is None
