"""A diagnosis, parsed once: which components it blames, exonerates or names as victims, what
mechanism and impact it claims, and whether it makes a root-cause claim at all.

Sentences are cut into clauses at `;`, `but`, `while`, `whereas`, `although`, `however` and
`, and`, so "X is misconfigured, while Y and Z are healthy" blames X and exonerates Y and Z.
In a clause:
- a *cause cue* after which the cause is written (`because`, `due to`, `caused by`, `the root
  cause is`, `stems from`) makes the text after it the cause and the text before it the effect;
- an *effect cue* (`causing`, `leading to`, `which prevents`, `, so`) makes the text before it
  the cause and the text after it the effect;
- a *blame cue* (`misconfigured`, `wrong`, `missing`, `is set to`, `points to`, `faulty`,
  `indicates`) makes the whole clause a cause.
A component named in a cause is blamed, except where it is the object of another blamed
component (`checkout is configured with the wrong port for product-catalog`), a value
(`product-catalog:8080`, `http://cart`), or named in another namespace than the truth's.
Without any cause in the whole diagnosis, a component said to fail (`X is crashing`) is what
the diagnosis presents as faulty. "No faults were detected" with nothing blamed is no claim.
"""

from __future__ import annotations

import re

from . import answers, names, taxonomy
from .blame import (
    bare_words_yield,
    blame_only_the_named,
    blame_the_failing,
    blame_the_subject,
    keep_to_the_headline,
    release_objects,
    the_fields_answer,
)
from .cues import NO_FAULT, UNDETERMINED
from .mentions import find_mentions
from .parsed import NOT_CLAIMED, Diagnosis, Mention, Segment, segment_of
from .segments import is_word_salad, line_end, ranked_sections, segments_of
from .size import SizePolicy
from .spans import Joined, lower_same_length
from .truth import Truth

__all__ = [
    "NOT_CLAIMED",
    "Diagnosis",
    "Mention",
    "Segment",
    "claimed_families",
    "claimed_in_headline",
    "mechanism_families",
    "parse_diagnosis",
]


def parse_diagnosis(text: str, truth: Truth, policy: SizePolicy | None = None) -> Diagnosis:
    """Read `text` (what `policy` keeps of it) against the ground truth: split it into
    role-tagged segments and find its component mentions. Word salad (not a structured answer,
    which is terse by design) gives an empty, `salad` diagnosis; a diagnosis that says there is
    no fault (and blames nothing outright) has its blamed mentions demoted to mentioned. What it
    says (headline, cause, claim, impact) is read without the names a submitted list holds.
    """
    excerpt = (policy or SizePolicy()).apply(text)
    text = excerpt.text
    low = lower_same_length(text)
    answer = answers.read_answer(low)
    if not (answer.items or answer.categories) and is_word_salad(low):
        return Diagnosis(text=text, low=low, segments=[], salad=True, excerpt=excerpt)
    segments = segments_of(text, low, answer)
    diagnosis = Diagnosis(
        text=text, low=low, segments=segments, starts=[s.start for s in segments], excerpt=excerpt
    )
    diagnosis.has_cause = any(s.role == "blamed" for s in segments)
    diagnosis.mentions = find_mentions(diagnosis, truth)
    release_objects(diagnosis, diagnosis.mentions)
    blame_the_subject(diagnosis)
    if not diagnosis.has_cause:
        blame_the_failing(diagnosis)
    if UNDETERMINED.search(low):
        blame_only_the_named(diagnosis)
    sections = [
        (start, end, [(start, line_end(low, start, end))])
        for start, end in ranked_sections(low, [], 1)
    ] + [(item.start, item.end, item.headline) for item in answer.claimed if item.headline]
    headlines = keep_to_the_headline(diagnosis, sections)
    the_fields_answer(diagnosis)
    bare_words_yield(diagnosis, truth.contributing)
    said = _blanked(low, answer.names_only + _where(low, truth))
    diagnosis.headline = _spaced(Joined.of(said, headlines))
    diagnosis.stated_type = _spaced(Joined.of(low, [t for i in answer.claimed for t in i.types]))
    diagnosis.category = _spaced(Joined.of(low, answer.categories))
    diagnosis.cause = Joined.of(said, [(s.start, s.end) for s in segments if s.role == "blamed"])
    diagnosis.claim = Joined.of(
        said, [(s.start, s.end) for s in segments if s.role not in NOT_CLAIMED]
    )
    diagnosis.impact = Joined.of(said, _impact_spans(diagnosis))
    said_no_fault = any(NO_FAULT.search(low, s.start, s.end) for s in segments)
    diagnosis.no_fault = said_no_fault and not any(m.strong for m in diagnosis.blamed)
    if diagnosis.no_fault:
        for mention in diagnosis.blamed:
            mention.role = "mentioned"
    return diagnosis


def _where(low: str, truth: Truth) -> list[tuple[int, int]]:
    """The origin's names (with their kinds) and the truth's namespaces as written: they say
    where, and are no mechanism (`social-network` is no network fault, `coredns` no DNS one),
    as the truth's own mechanism is read (`truth.py`)."""
    spans = names.name_spans(low, truth.origins)
    for namespace in truth.namespaces:
        pattern = rf"(?<![\w/.:-]){re.escape(namespace.lower())}(?![\w/:-]|\.\w)"
        spans += [m.span() for m in re.finditer(pattern, low)]
    return spans


def _blanked(low: str, spans: list[tuple[int, int]]) -> str:
    """`low` with `spans` blanked out, offsets kept."""
    for start, end in spans:
        low = low[:start] + " " * (end - start) + low[end:]
    return low


def _impact_spans(diagnosis: Diagnosis) -> list[tuple[int, int]]:
    """The segments whose symptoms are this fault's impact as the diagnosis tells it: its
    causes, their consequences, and the symptoms it reports (quoted logs included), but not
    what it says in exonerating or alternative segments, nor in a sentence about components it
    rules out only (`cart shows errors, but cart is not the cause`: a symptom of another
    service, not of this fault)."""
    blamed = {k for m in diagnosis.blamed for k in names.keys(m.component)}
    cleared = {
        k
        for m in diagnosis.mentions
        if m.role == "exonerated"
        for k in names.keys(m.component)
        if k not in blamed
    }
    about_others: dict[int, bool] = {}
    for mention in diagnosis.mentions:
        segment = segment_of(diagnosis, mention.start)
        if segment is not None:
            other = bool(names.keys(mention.component) & cleared)
            about_others[segment.sentence] = about_others.get(segment.sentence, True) and other
    return [
        (s.start, s.end)
        for s in diagnosis.segments
        if s.role not in {"exonerated", "listed"}
        and (s.role in {"blamed", "effect"} or not about_others.get(s.sentence, False))
    ]


def _spaced(joined: Joined) -> Joined:
    """A fault type written as an identifier (`container_memory_load`) read as words."""
    joined.text = joined.text.replace("_", " ")
    return joined


def claimed_in_headline(diagnosis: Diagnosis) -> bool:
    """Whether the diagnosis states its fault type in a hypothesis' headline (`Hypothesis 1:
    container CPU load at X`): that is its claim, whatever the justification mentions."""
    return bool(taxonomy.families_in(diagnosis.headline.text))


def mechanism_families(diagnosis: Diagnosis) -> set[str]:
    """The families the diagnosis states as the mechanism: its headline's, else its causes',
    else anything it claims."""
    for text in (diagnosis.headline.text, diagnosis.cause_text, diagnosis.claim_text):
        families = taxonomy.families_in(text)
        if families:
            return families
    return set()


def claimed_families(diagnosis: Diagnosis) -> tuple[set[str], set[str], set[str]]:
    """(families, categories, generic groups) the diagnosis claims: what its causes say (`because
    of a port problem` is a category, whatever else it mentions), else what it says at all."""
    cause = diagnosis.headline.text if claimed_in_headline(diagnosis) else diagnosis.cause_text
    families = taxonomy.families_in(cause)
    categories, generic = taxonomy.categories_in(cause), taxonomy.generic_groups_in(cause)
    if families or categories or generic:
        return families, categories, generic
    text = diagnosis.claim_text
    return (
        taxonomy.families_in(text),
        taxonomy.categories_in(text),
        taxonomy.generic_groups_in(text),
    )
