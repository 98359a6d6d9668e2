"""The Python API in any event loop: a script, a notebook's running loop, async harnesses."""

from __future__ import annotations

import asyncio

import pytest
from helpers import EXAMPLE

from ground_truth import load_specs, load_submissions
from judge import (
    evaluate,
    evaluate_async,
    evaluate_submission,
    evaluate_submission_async,
    load_rubric,
)


@pytest.fixture(scope="module")
def case() -> tuple[list, list]:
    specs = load_specs(EXAMPLE / "ground_truth" / "incorrect_image.yaml")
    subs = [s for s in load_submissions(EXAMPLE / "outputs") if s.incident_id == specs[0].id]
    return specs, subs


@pytest.fixture(scope="module")
def expected(case) -> list[float | None]:
    """What a plain script gets: the reference for every other way of calling."""
    return [c.composite for c in evaluate(*case).cases]


def test_evaluate_and_evaluate_submission_inside_a_running_loop(case, expected) -> None:
    specs, subs = case

    async def notebook_cell() -> tuple[list[float | None], float | None]:
        asyncio.get_running_loop()  # what Jupyter has while a cell runs
        result = evaluate(specs, subs, rubric="sregym-v3")
        one = evaluate_submission(specs[0], subs[0])
        return [c.composite for c in result.cases], one.composite

    composites, one = asyncio.run(notebook_cell())
    assert composites == expected
    assert one == expected[0]


def test_the_async_variants_take_rubric_names_and_the_same_arguments(case, expected) -> None:
    specs, subs = case

    async def harness() -> tuple[list[float | None], float | None]:
        result = await evaluate_async(specs, subs, "sregym-v3")
        one = await evaluate_submission_async(specs[0], subs[0], rubric="sregym-v3")
        return [c.composite for c in result.cases], one.composite

    composites, one = asyncio.run(harness())
    assert composites == expected
    assert one == expected[0]


def test_async_variants_run_concurrently_in_one_loop(case, expected) -> None:
    specs, subs = case
    rubric = load_rubric("sregym-v3")

    async def harness() -> list[float | None]:
        cases = await asyncio.gather(
            *(evaluate_submission_async(specs[0], sub, rubric) for sub in subs)
        )
        return [c.composite for c in cases]

    assert asyncio.run(harness()) == expected


def test_a_bad_rubric_name_is_an_input_error_in_async_code(case) -> None:
    from ground_truth import InputError

    with pytest.raises(InputError, match="no-such-rubric"):
        asyncio.run(evaluate_async(*case, rubric="no-such-rubric"))
