"""The rules judge's speed-ups change no answer: the lowercase twins of the cues, the strings a
pattern needs, the name prefilter, the vocabularies read in one pass, and what is worked out
once per spec."""

from __future__ import annotations

import re

import pytest
from helpers import EXAMPLE

from ground_truth import load_specs, load_submissions
from judge.checklist.prompts import Prompt
from judge.checklist.rubric import load_rubric, whole_submission
from judge.judges.base import JudgeTask
from judge.judges.rules import RulesJudge, cues, literals, names, taxonomy
from judge.judges.rules.caseless import Caseless, lowercase_twin
from judge.judges.rules.truth import parse_truth
from judge.judges.rules.vocabulary import Vocabulary

SPECS = load_specs(EXAMPLE / "ground_truth")
SUBMISSIONS = load_submissions(EXAMPLE / "outputs")
CUES = [getattr(cues, n) for n in dir(cues) if isinstance(getattr(cues, n), Caseless)]
# Texts where case folding matters: uppercase, and letters that fold to ASCII ones under
# re.IGNORECASE (the dotted capital I, the long s, the Kelvin sign).
ODD = [
    "The ROOT CAUSE is that X is Misconfigured; Y is HEALTHY.",
    "İt waſ cauſed by the \u212aubelet, which is missing.",
    "because of a wrong port, causing errors, but cart is fine",
]


def texts() -> list[str]:
    out = [s.diagnosis for s in SUBMISSIONS] + [s.ground_truth for s in SPECS] + ODD
    return out + [t.lower() for t in out]


@pytest.mark.parametrize("cue", CUES, ids=lambda c: c.pattern[:30])
def test_a_cue_matches_as_its_case_insensitive_pattern_does(cue: Caseless) -> None:
    plain = re.compile(cue.pattern, re.IGNORECASE)
    for text in texts():
        assert [m.span() for m in cue.finditer(text)] == [m.span() for m in plain.finditer(text)]
        assert cue.sub("_", text) == plain.sub("_", text)
        for start in range(0, len(text), 37):
            found, expected = cue.search(text, start), plain.search(text, start)
            assert (found and found.span()) == (expected and expected.span())
            found, expected = cue.match(text, start), plain.match(text, start)
            assert (found and found.span()) == (expected and expected.span())


def test_a_pattern_that_could_match_an_uppercase_letter_keeps_the_flag() -> None:
    for pattern in [r"[A-Z]x", r"\x41b", r"[!-~]", r"(?:foo|BAR)", "ı", r"(?<!Not )x", r"[^A]"]:
        cue = Caseless(pattern)
        assert cue.twin is cue.as_written, pattern
    assert Caseless(r"\bfoo\b|ba[a-z]").twin is not Caseless(r"\bfoo\b|ba[a-z]").as_written


def test_every_match_holds_a_string_the_pattern_needs() -> None:
    patterns = [c.twin for c in CUES if c.twin is not c.as_written]
    for pattern in patterns:
        needed = literals.needed(pattern)
        for text in texts():
            if pattern.search(text):
                assert needed is None or any(s in text for s in needed), pattern.pattern[:40]
    assert literals.needed(re.compile(r"ab(c|d)e")) == ("ab",)
    assert literals.needed(re.compile(r"(?:x|yz)+q?")) == ("x", "yz")
    assert literals.needed(re.compile(r"(?:foo)?bar|b*")) is None
    assert literals.needed(re.compile(r"abc", re.I)) is None


# The cues as they were written before they were reordered for speed (`literals.guarded` finds
# no first characters behind a leading lookbehind, and the engine factors a word boundary out of
# alternatives only when all of them open with it).
REWRITTEN = {
    "EXONERATING": (
        r"(?<!not )(?<!n't )(?<!un)(?<!otherwise )\bhealthy\b",
        r"\bhealthy(?<!not healthy)(?<!n't healthy)(?<!unhealthy)(?<!otherwise healthy)\b",
    ),
    "AFTER_CUE": (r"|^\W*hypothesis", r")|^\W*hypothesis"),
    "EFFECT_CUE": (r"|\bso\s+that\b|,\s*so\b", r"|\bso\s+that\b"),
}


def _as_written_before(name: str) -> str:
    pattern = getattr(cues, name).pattern
    before, after = REWRITTEN[name]
    pattern = pattern.replace(after, before, 1)
    if name == "AFTER_CUE":
        return pattern.removeprefix("(?:")
    if name == "EFFECT_CUE":
        return pattern.removeprefix("(?:").replace(r"\b)|,\s*so\b", r"\b", 1)
    return pattern


@pytest.mark.parametrize("name", REWRITTEN)
def test_a_cue_reordered_for_speed_matches_as_before(name: str) -> None:
    cue = getattr(cues, name)
    before = re.compile(_as_written_before(name), re.IGNORECASE)
    assert before.pattern != cue.pattern
    extra = ["not healthy; otherwise healthy, unhealthy", "hypothesis 2: because x", "a, so the"]
    for text in texts() + extra:
        pieces = [text, *re.split(r"[.;,\n]", text)]
        for piece in pieces:
            assert [m.span() for m in cue.finditer(piece)] == [
                m.span() for m in before.finditer(piece)
            ], piece[:60]


def test_a_guard_changes_no_match() -> None:
    assert literals.guarded(re.compile(r"abc|\bd")).pattern == r"(?=[ad])(?:abc|\bd)"
    spaced = literals.guarded(re.compile(r";|\s+b")).pattern
    assert spaced.startswith("(?=[") and spaced.endswith(r"])(?:;|\s+b)")
    for plain in [r"abc", r"[ab]c", r"\w+\bx", r"(?<!x)\w", r"(?:ab|a)c", r"a|b"]:
        assert literals.guarded(re.compile(plain)).pattern == plain
    for cue in CUES:
        twin = lowercase_twin(cue.as_written)
        for text in [t.lower() for t in texts()]:
            assert [m.span() for m in cue.twin.finditer(text)] == [
                m.span() for m in twin.finditer(text)
            ]


def test_whitespace_is_what_backslash_s_matches() -> None:
    every = "".join(map(chr, range(0x110000)))
    assert {m.group() for m in re.finditer(r"\s", every)} == literals.WHITESPACE


def test_a_match_begins_with_one_of_the_first_characters() -> None:
    first = literals.first_characters
    assert first(re.compile(r"(?<![a-z])\bfoo|bar")) == frozenset("fb")
    assert first(re.compile(r"(?:a|b)?c+")) == frozenset("abc")
    assert first(re.compile(r"(?:x*|[p-r])\s")) == frozenset("xpqr") | literals.WHITESPACE
    assert first(re.compile(r"(?:x*|[p-r])\d")) is None  # `\d` after an optional part
    assert first(re.compile(r"[x-z]q|(?=w)w")) == frozenset("xyzw")
    for pattern in [r"\w+", r"a*", r"[^a]b", r".x", r"(?i:a)b"]:
        assert first(re.compile(pattern)) is None, pattern
    assert first(re.compile("ab", re.I)) is None
    for family in taxonomy.FAMILIES:
        chars = first(family.pattern)
        for text in texts():
            for match in family.pattern.finditer(text):
                assert chars is None or text[match.start()] in chars, family.name


VOCABULARIES = {
    "families": (taxonomy.families_in, {f.name: f.pattern for f in taxonomy.FAMILIES}),
    "categories": (
        taxonomy.categories_in,
        {f.name: f.category_pattern for f in taxonomy.FAMILIES if f.category_pattern},
    ),
    "generic": (taxonomy.generic_groups_in, taxonomy.GENERIC),
    "impacts": (taxonomy.impacts_in, taxonomy.IMPACTS),
}


@pytest.mark.parametrize("vocabulary", VOCABULARIES)
def test_a_vocabulary_finds_the_names_whose_patterns_search_finds(vocabulary: str) -> None:
    found, patterns = VOCABULARIES[vocabulary]
    pieces = [p for t in texts() for p in re.split(r"[.;,\n]", t.lower())]
    for text in [t.lower() for t in texts()] + pieces + ["", "x509", "tls x509 oom"]:
        expected = {name for name, pattern in patterns.items() if pattern.search(text)}
        assert found(text) == expected, text[:60]


def test_a_vocabulary_searches_whole_a_pattern_whose_first_characters_are_unknown() -> None:
    vocabulary = Vocabulary(
        [("word", re.compile(r"(?<![a-z])\w+ing")), ("oom", re.compile(r"(?<![a-z])oom"))],
        "[a-z]",
    )
    assert vocabulary.present("an oom while _loading") == {"word", "oom"}
    assert vocabulary.present("xoom") == set()
    with pytest.raises(ValueError, match="does not open with"):
        Vocabulary([("x", re.compile("x"))], "[a-z]")


def test_a_name_is_found_where_its_patterns_find_it() -> None:
    """`find_spans` skips a name whose words are absent; what it finds is what the patterns do."""
    for spec in SPECS:
        truth = parse_truth(spec)
        for component in truth.catalog:
            for text in [t.lower() for t in texts()]:
                for strict in (False, True):
                    spans: dict[int, int] = {}
                    for name in component.all_names():
                        pattern = names.name_regex(name, component.kind or "", strict)
                        for m in pattern.finditer(text):
                            spans[m.start()] = max(spans.get(m.start(), 0), m.end())
                    found = names.find_spans(text, component, strict)
                    assert found == sorted(spans.items()), (component.name, text[:60])


def test_one_judge_answers_across_specs_as_fresh_judges_do() -> None:
    """What is kept per spec (its truth and what the rules derive from it) never leaks into
    another spec's answers: one judge going back and forth answers as a new judge each time."""
    whole = whole_submission(load_rubric().dimensions)
    empty = Prompt(messages=[], hash="")
    shared = RulesJudge()
    diagnoses = [s.diagnosis for s in SUBMISSIONS[:6]]
    for _ in range(2):
        for spec in SPECS[:4]:
            for diagnosis in diagnoses:
                sub = SUBMISSIONS[0].model_copy(
                    update={"incident_id": spec.id, "diagnosis": diagnosis}
                )
                task = JudgeTask(spec, sub, whole, empty)
                assert shared.answer(task) == RulesJudge().answer(task)
