"""`benchmarks/validity.py`, loaded as a module for the tests of the validity benchmark."""

from __future__ import annotations

from . import BENCHMARKS, load_script

QUESTIONS = ["D1-Q1", "D1-Q2", "D1-Q3", "D2-Q1", "D2-Q2", "D2-Q3", "D3-Q1", "D3-Q2", "D3-Q3"]
"""The questions of sregym-v3, the rubric the validity sets are labelled with."""


validity = load_script(BENCHMARKS / "validity.py", "validity_bench")
