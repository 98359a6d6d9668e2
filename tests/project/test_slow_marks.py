"""`benchmarks/slow_marks.py`: a test's time from pytest's durations, and the marks it gets wrong."""

from __future__ import annotations

from helpers import BENCHMARKS, load_script

slow_marks = load_script(BENCHMARKS / "slow_marks.py")

RUN = """
============================= slowest durations ==============================
3.10s call     tests/run/test_a.py::test_slow_one
0.40s setup    tests/run/test_a.py::test_slow_one
2.50s call     tests/cli/test_b.py::test_param[a b-1]
0.30s call     tests/cli/test_b.py::test_marked_but_quick
0.01s teardown tests/cli/test_b.py::test_marked_but_quick
1.00s call     tests/cli/test_b.py::test_only_here
================ 4 passed in 7.31s ================
"""
AGAIN = """
2.20s call     tests/run/test_a.py::test_slow_one
1.10s call     tests/cli/test_b.py::test_param[a b-1]
0.20s call     tests/cli/test_b.py::test_marked_but_quick
"""


def test_setup_call_and_teardown_add_up_per_test() -> None:
    times = slow_marks.durations(RUN)
    assert times == {
        "tests/run/test_a.py::test_slow_one": 3.5,
        "tests/cli/test_b.py::test_param[a b-1]": 2.5,
        "tests/cli/test_b.py::test_marked_but_quick": 0.31,
        "tests/cli/test_b.py::test_only_here": 1.0,
    }


def test_the_least_time_of_the_tests_every_run_has() -> None:
    times = slow_marks.least([slow_marks.durations(RUN), slow_marks.durations(AGAIN)])
    assert times == {
        "tests/run/test_a.py::test_slow_one": 2.2,
        "tests/cli/test_b.py::test_param[a b-1]": 1.1,
        "tests/cli/test_b.py::test_marked_but_quick": 0.2,
    }


def test_unmarked_slow_tests_and_marked_quick_ones_are_listed() -> None:
    times = slow_marks.least([slow_marks.durations(RUN), slow_marks.durations(AGAIN)])
    marked = {"tests/cli/test_b.py::test_marked_but_quick"}
    unmarked, idle = slow_marks.report(times, marked, threshold=2.0, well_under=0.5)
    assert unmarked == ["   2.20s  tests/run/test_a.py::test_slow_one"]
    assert idle == ["   0.20s  tests/cli/test_b.py::test_marked_but_quick"]
