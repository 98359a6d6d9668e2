"""Fixtures several report tests share."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.ratings import label_csv, noisy, truth, verdicts_of

from agreement.synthetic import result_from_answers


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> list[Path]:
    """Two judges' result files and one person's label sheet on synthetic ratings."""
    tmp = tmp_path_factory.mktemp("agreement")
    base = truth()
    alice = noisy(base, 0.05, 3)
    paths = []
    for name, flip, seed in (("openai/judge-one", 0.1, 1), ("judge-two", 0.25, 2)):
        path = tmp / f"{name.rsplit('/', 1)[-1]}.json"
        result = result_from_answers(noisy(base, flip, seed, missing=0.05), model=name)
        path.write_text(json.dumps(result))
        paths.append(path)
    return [*paths, label_csv(tmp / "alice.csv", alice, "alice", verdicts_of(alice))]
