"""Marking evidence in a huge diagnosis takes memory in proportion to the diagnosis, a small
multiple of it, never a Python object per character (issue 35: one 50 MB diagnosis took 5 GB
and 5 minutes with `--html`; `benchmarks/html_large.py` measures the whole command). Memory
is measured with tracemalloc, never time; and the lenient search still finds what it found."""

from __future__ import annotations

import tracemalloc

import pytest

from judge.checklist.highlight import find_quote, highlight

BASE = (
    "The product-catalog deployment pulls a non-existent image tag (app-image:latest), "
    "so pods fail with ImagePullBackOff.\n"
)
TEXT = "".join(f"{BASE[:-1]} copy {i}.\n" for i in range(20_000))  # about 2.4 MB


def peak_bytes(fn, *args) -> int:
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "quote",
    [
        "pods fail with ImagePullBackOff",  # exact, early
        "PODS   fail\n with imagepullbackoff. copy 19999",  # lenient only, at the very end
        "nothing of the kind is in this diagnosis",  # not there: the whole text is searched
    ],
)
def test_finding_a_quote_takes_memory_in_proportion_to_the_text(quote: str) -> None:
    assert peak_bytes(find_quote, TEXT, quote) <= 3 * len(TEXT)


def test_marking_nine_quotes_takes_a_small_multiple_of_the_text() -> None:
    quotes = [(f"D{i}", q) for i, q in enumerate([
        "image tag", "IMAGE  TAG (APP-IMAGE:LATEST)", "not here at all", "copy 19999",
        "'pods fail with ImagePullBackOff...'", "product-catalog", "a", "x" * 50, "latest",
    ])]  # fmt: skip
    assert peak_bytes(highlight, TEXT, quotes) <= 8 * len(TEXT)


def test_the_lenient_search_finds_what_it_found_before() -> None:
    text = "Root cause:  the Product-Catalog\n deployment pulls app-image:latest."
    start, end = find_quote(text, "the product-catalog deployment") or (0, 0)
    assert text[start:end] == "the Product-Catalog\n deployment"
    start, end = find_quote(text, "“pulls APP-IMAGE:latest…”") or (0, 0)
    assert text[start:end] == "pulls app-image:latest"
    assert find_quote("tripod pods pod", "pod") == (12, 15)  # on word boundaries
    assert find_quote("tripods", "pod") == (3, 6)  # else the first
    assert find_quote(text, "nowhere") is None


def test_a_quote_met_a_million_times_inside_words_is_marked_where_it_is_a_word() -> None:
    text = "ab" * 1_000_000 + " a "
    assert find_quote(text, "a") == (2_000_001, 2_000_002)
    assert peak_bytes(find_quote, text, "a") <= 3 * len(text)
