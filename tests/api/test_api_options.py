"""`EvalOptions` groups a run's settings (`Limits`, `Control`, `Storage`), and a group's field
given by its name lands in its group."""

from __future__ import annotations

import pytest

from judge import Control, EvalOptions, Limits, Storage


def test_a_field_given_by_its_name_lands_in_its_group() -> None:
    flat = EvalOptions(max_concurrent=8, store="run.sqlite", grace=3.0, k=2)
    grouped = EvalOptions(
        k=2,
        limits=Limits(max_concurrent=8),
        control=Control(grace=3.0),
        storage=Storage(store="run.sqlite"),
    )
    assert flat == grouped
    assert flat.limits.max_concurrent == 8 and flat.storage.store == "run.sqlite"


def test_a_named_field_overrides_a_copy_of_the_group_given() -> None:
    limits = Limits(max_concurrent=2, rpm=60)
    options = EvalOptions(limits=limits, max_concurrent=9)
    assert options.limits == Limits(max_concurrent=9, rpm=60)
    assert limits.max_concurrent == 2  # the caller's group is left as it was


def test_an_unknown_option_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="max_concurency"):
        EvalOptions(max_concurency=3)
