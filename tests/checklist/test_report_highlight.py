"""Evidence highlighting: quotes found leniently, everything escaped, marks never inside entities."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judge.checklist.highlight import find_quote, highlight


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []
        self.marked: list[str] = []
        self._in_mark = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._in_mark += tag == "mark"

    def handle_endtag(self, tag):
        self._in_mark -= tag == "mark"

    def handle_data(self, data):
        self.text.append(data)
        if self._in_mark:
            self.marked.append(data)


def parse(html: str) -> _Collect:
    parser = _Collect()
    parser.feed(html)
    parser.close()
    return parser


def test_exact_quote_is_marked():
    out = highlight(
        "The checkout pod crashed. Memory is fine.", [("D1-Q1", "checkout pod crashed")]
    )
    assert str(out.html) == (
        'The <mark title="D1-Q1" data-q="D1-Q1">checkout pod crashed</mark>. Memory is fine.'
    )
    assert out.found == {"D1-Q1": True}
    assert out.n_marks == 1


def test_quote_found_ignoring_case_whitespace_quotes_and_ellipsis():
    text = "Root cause:\n  the   Product-Catalog service\trefuses connections on 8082."
    assert find_quote(text, "the product-catalog service refuses") == (
        text.index("the"),
        text.index("refuses") + len("refuses"),
    )
    assert find_quote(text, '"refuses connections on 8082…"') is not None
    assert find_quote(text, "refuses connections on 8082...") is not None


def test_missing_quote_is_reported_not_marked():
    out = highlight("nothing to see", [("Q", "absent words"), ("R", None), ("S", "")])
    assert out.found == {"Q": False}
    assert "<mark" not in out.html
    assert find_quote("", "x") is None


def test_overlapping_quotes_share_marks_with_both_labels():
    text = "alpha beta gamma delta"
    out = highlight(
        text, [("A", "alpha beta gamma"), ("B", "beta gamma delta")], {"A": "yes", "B": "no"}
    )
    doc = parse(str(out.html))
    assert "".join(doc.text) == text
    assert doc.marked == ["alpha ", "beta gamma", " delta"]
    assert 'class="mixed" title="A, B"' in out.html
    assert 'class="yes" title="A"' in out.html and 'class="no" title="B"' in out.html


def test_hostile_diagnosis_and_quote_stay_text():
    text = (
        "db <b>crashed</b> &lt;oops&gt; <script>alert(1)</script> "
        '<img src=x onerror="alert(2)"> end'
    )
    quote = "<b>crashed</b> &lt;oops&gt; <script>alert(1)</script>"
    out = highlight(text, [('Q"><script>', quote)])
    doc = parse(str(out.html))
    assert doc.tags == ["mark"]
    assert "".join(doc.text) == text
    assert doc.marked == [quote]
    assert "&amp;lt;oops&amp;gt;" in out.html
    assert 'title="Q&#34;&gt;&lt;script&gt;"' in out.html


def test_mark_never_splits_an_entity():
    text = "a & b < c"
    out = highlight(text, [("Q", "amp;"), ("R", "& b")])
    assert out.found == {"Q": False, "R": True}
    assert str(out.html) == 'a <mark title="R" data-q="R">&amp; b</mark> &lt; c'


@given(
    text=st.text(alphabet=st.sampled_from(list("ab <>&;\"'\n x")), max_size=40),
    start=st.integers(0, 40),
    length=st.integers(0, 12),
)
def test_any_text_round_trips_through_the_marks(text, start, length):
    quote = text[start : start + length]
    out = highlight(text, [("Q", quote)])
    doc = parse(str(out.html))
    assert set(doc.tags) <= {"mark"}
    assert "".join(doc.text) == text
    if quote.strip():
        assert out.found["Q"] is True


@pytest.mark.parametrize(
    ("text", "quote", "expected"),
    [
        ("The tripod pods lost their pod network.", "pod", "pod"),
        ("rapid API calls failed at the api gateway", "api gateway", "api gateway"),
        ("Redistribution, then Redis failed", "Redis", "Redis"),
        ("the PODS restarted; pods   are fine", "pods are", "pods   are"),
    ],
)
def test_a_quote_is_marked_as_a_whole_word_when_it_occurs_as_one(text, quote, expected) -> None:
    start, end = find_quote(text, quote)
    assert text[start:end] == expected
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    assert not before.isalnum() and not after.isalnum()


def test_a_quote_found_only_inside_a_word_is_still_marked() -> None:
    assert find_quote("checkoutservice crashed", "checkout") == (0, 8)
    assert find_quote("a nonexistent key", "existent") == (5, 13)
