"""`--shard I/N`: a stable share of the units that does not depend on order or on N's others."""

from __future__ import annotations

import random

import pytest

from judge.run.shard import Shard, select, unit_bucket, units_fingerprint

UNITS = [(f"incident-{i}", str(t), d) for i in range(40) for t in range(3) for d in "ABC"]


def test_every_unit_is_in_exactly_one_shard_and_the_shares_are_even() -> None:
    shards = [Shard(index=i, count=4) for i in range(1, 5)]
    held = [select(UNITS, s, lambda u: u)[0] for s in shards]
    assert sorted(u for share in held for u in share) == sorted(UNITS)
    assert all(abs(len(share) - len(UNITS) / 4) < len(UNITS) / 8 for share in held)


def test_the_share_does_not_depend_on_order_or_on_other_units() -> None:
    shard = Shard.parse("2/4")
    shuffled = random.Random(3).sample(UNITS, len(UNITS))
    mine = set(select(UNITS, shard, lambda u: u)[0])
    assert set(select(shuffled, shard, lambda u: u)[0]) == mine
    assert set(select(UNITS[:30], shard, lambda u: u)[0]) == mine & set(UNITS[:30])
    assert unit_bucket("incident-1", "0", "A", 4) == unit_bucket("incident-1", "0", "A", 4)


def test_the_result_records_the_share_and_a_fingerprint_of_the_whole_run() -> None:
    _, info = select(UNITS, Shard(index=1, count=2), lambda u: u)
    assert info is not None
    assert info["units"] == len(UNITS) and info["index"] == 1 and info["count"] == 2
    assert info["fingerprint"] == units_fingerprint(reversed(UNITS))
    assert info["fingerprint"] != units_fingerprint(UNITS[1:])
    assert select(UNITS, None, lambda u: u) == (UNITS, None)


@pytest.mark.parametrize("text", ["0/4", "5/4", "2", "a/b", "2/0", "-1/2", ""])
def test_bad_shard_text_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="--shard expects I/N"):
        Shard.parse(text)


def test_cli_refuses_a_bad_shard_with_exit_2(example_ground_truth, example_outputs, capsys) -> None:
    from judge.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["eval", "--ground-truth", str(example_ground_truth),
              "--outputs", str(example_outputs), "--shard", "5/4"])  # fmt: skip
    assert exit_.value.code == 2
    assert "--shard: expected I/N with 1 <= I <= N" in capsys.readouterr().err
