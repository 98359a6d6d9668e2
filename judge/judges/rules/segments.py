"""A diagnosis's text cut into role-tagged segments: sentences, then the parts of a sentence
inside or outside a ranked alternative, then clauses, each read for its cues (a cause after
`because`, an effect after `causing`, blame, exoneration, a hedge, an open question). Lines that
report rather than claim (a propagation path, a log line, quoted output) and the places a
structured answer blames are read whole with one role.
"""

from __future__ import annotations

import bisect
import re
from itertools import pairwise

from . import answers, taxonomy
from .caseless import Caseless
from .cues import (
    AFTER_CUE,
    ALERT_LINE,
    ALTERNATIVE,
    BLAME_CUE,
    CAUSE_BEFORE,
    CAUSE_OF,
    CLAUSE_BREAK,
    CLAUSE_PUNCTUATION,
    CONSEQUENCE_OPENING,
    CONTEXT_LINE,
    EFFECT_CUE,
    EFFECT_LABEL,
    EVIDENTIAL,
    EXONERATING,
    FAILING,
    FAULT_SPEC_FIELDS,
    FUNCTION_WORDS,
    HEADING,
    HOLDER_BEFORE,
    LINE,
    LIST_HEDGE,
    NEXT_LABEL,
    NO_FAULT,
    NUMBERED_ITEM,
    OBSERVATION,
    OPEN_QUESTION,
    QUOTED_OUTPUT,
    RANKED_INTRO,
    RANKED_ITEM,
    RELATIVE_END,
    REMEDY,
    SENTENCE,
    STEP_LINE,
    TELEMETRY_SHOWS,
    WORDS,
)
from .parsed import TAIL_REACH, Role, Segment
from .spans import pieces

LIST_OF_EVERYTHING = 4


def is_word_salad(low: str) -> bool:
    """A list of names and keywords with hardly a grammatical word: it states nothing (a
    headline joined by a causal word, `web worker saturation causing load balancer 503s`, as
    SRE-Zero's agents submit a root cause, is a claim)."""
    words = WORDS.findall(low)
    if len(words) < 4 or (CLAUSE_PUNCTUATION.search(low.strip()) and not _keyword_list(low)):
        return False
    if not _keyword_list(low) and (EFFECT_CUE.search(low) or AFTER_CUE.search(low)):
        return False
    return sum(w in FUNCTION_WORDS for w in words) < 0.08 * len(words)


def _keyword_list(low: str) -> bool:
    """`dnspolicy, none, 8.8.8.8, user-service, resolution errors.`: four or more items of at
    most three words each, separated by commas, is a list of keywords, not a terse note."""
    items = [i for i in re.split(r"[,;]\s+", low.strip().rstrip(".")) if i]
    return len(items) >= LIST_OF_EVERYTHING and all(len(i.split()) <= 3 for i in items)


def _spans(
    pattern: re.Pattern[str] | Caseless, text: str, start: int, end: int
) -> list[tuple[int, int]]:
    spans, at = [], start
    for match in pattern.finditer(text, start, end):
        if match.start() > at:
            spans.append((at, match.start()))
        at = match.end()
    if at < end:
        spans.append((at, end))
    return spans


def segments_of(text: str, low: str, answer: answers.Answer) -> list[Segment]:
    """`text` (and `low`, its same-length lowercase copy) as role-tagged segments, in order."""
    segments: list[Segment] = []
    alternatives = _merged(_alternative_sections(low) + answer.alternatives)
    special = _special_spans(
        _context_spans(low) + answer.context + answer.categories,
        answer.places + [m.span(1) for m in FAULT_SPEC_FIELDS.finditer(low)],
        _downstream_lines(text, low),
    )
    section = spot = 0
    bounds = sorted({at for span in alternatives for at in span})
    for number, sentence in enumerate(SENTENCE.finditer(low)):
        opened = bool(ALTERNATIVE.match(low, sentence.start(), sentence.end()))
        follows = bool(CONSEQUENCE_OPENING.match(low, sentence.start(), sentence.end()))
        for part_start, part_end in _cut_at(bounds, sentence.start(), sentence.end()):
            while section < len(alternatives) and alternatives[section][1] <= part_start:
                section += 1
            alternative = opened or (
                section < len(alternatives) and alternatives[section][0] <= part_start
            )
            while spot < len(special) and special[spot][1] <= part_start:
                spot += 1
            first = len(segments)
            _read_part(low, segments, special, spot, number, alternative, part_start, part_end)
            if follows:
                _as_consequence(segments[first:])
    return segments


def _as_consequence(segments: list[Segment]) -> None:
    """A sentence that opens as a consequence (`As a result, ...`, `Users observe ...`) tells
    what followed: what it says of its components is an effect, clause by clause."""
    for segment in segments:
        if segment.role in {"blamed", "mentioned"}:
            segment.role, segment.strong = "effect", False


def _cut_at(bounds: list[int], start: int, end: int) -> list[tuple[int, int]]:
    """`[start, end)` cut at the sorted offsets `bounds` that fall inside it."""
    cuts = bounds[bisect.bisect_right(bounds, start) : bisect.bisect_left(bounds, end)]
    return list(pairwise([start, *cuts, end]))


def _read_part(
    low: str,
    segments: list[Segment],
    special: list[tuple[int, int, Role]],
    spot: int,
    number: int,
    alternative: bool,
    part_start: int,
    part_end: int,
) -> None:
    """The segments of one part of sentence `number` (inside or outside an alternative)."""
    for start, end, role in _around(special, spot, part_start, part_end):
        if role is not None:
            strong = role == "blamed" and not alternative
            segments.append(
                Segment(
                    start, end, "listed" if alternative else role, len(segments), number, strong
                )
            )
            continue
        for piece_start, piece_end in pieces(low, start, end):
            for clause_start, clause_end in _spans(CLAUSE_BREAK, low, piece_start, piece_end):
                clause = len(segments)
                for segment in _clause(low, clause_start, clause_end):
                    segment.clause, segment.sentence = clause, number
                    if alternative:
                        segment.role, segment.strong = "listed", False
                    segments.append(segment)


def _around(
    spans: list[tuple[int, int, Role]], first: int, start: int, end: int
) -> list[tuple[int, int, Role | None]]:
    """`[start, end)` cut into (start, end, the role of the span it is in, or None) parts by
    the sorted, disjoint `spans` from index `first` on."""
    out: list[tuple[int, int, Role | None]] = []
    at = start
    for span_start, span_end, role in spans[first:]:
        if span_start >= end:
            break
        if span_start > at:
            out.append((at, span_start, None))
        if min(span_end, end) > max(at, span_start):
            out.append((max(at, span_start), min(span_end, end), role))
        at = max(at, span_end)
    if at < end:
        out.append((at, end, None))
    return out


def _special_spans(
    context: list[tuple[int, int]],
    places: list[tuple[int, int]],
    downstream: list[tuple[int, int]],
) -> list[tuple[int, int, Role]]:
    """Spans read whole with one role: context (paths, log lines, quoted output), the places a
    structured answer blames (`"location": "node-6"`) and the lines that tell what the fault did
    downstream (an effect); sorted, disjoint (the first of two overlapping spans is kept)."""
    tagged: list[tuple[int, int, Role]] = [(s, e, "context") for s, e in context]
    tagged += [(s, e, "blamed") for s, e in places]
    tagged += [(s, e, "effect") for s, e in downstream]
    out: list[tuple[int, int, Role]] = []
    for span in sorted(tagged):
        if not out or span[0] >= out[-1][1]:
            out.append(span)
    return out


def _context_spans(low: str) -> list[tuple[int, int]]:
    """Lines and inline quotes that report rather than claim (propagation paths, log lines,
    pasted output), as sorted, disjoint spans."""
    spans = []
    for line in LINE.finditer(low):
        if line.end() == line.start():
            continue
        if CONTEXT_LINE.match(low, line.start(), line.end()):
            spans.append((line.start(), line.end()))
            continue
        spans.extend(m.span() for m in QUOTED_OUTPUT.finditer(low, line.start(), line.end()))
    return spans


def _downstream_lines(text: str, low: str) -> list[tuple[int, int]]:
    """Propagation steps and alerts fired on a component (`STEP_LINE`, `ALERT_LINE`): the
    labelling guide's "a component only mentioned in a propagation path or an alert line is not
    blamed", for the lines ITBench's ground truth and its agents write one step or alert at a
    time. Each is read whole as an effect: its components suffer, its words still say what
    happened (the mechanism and the impact)."""
    lines = [
        line.span()
        for line in LINE.finditer(low)
        if line.end() > line.start()
        and (
            STEP_LINE.match(low, line.start(), line.end())
            or ALERT_LINE.match(text, line.start(), line.end())
        )
    ]
    return lines + _labelled_effects(text)


def _labelled_effects(text: str) -> list[tuple[int, int]]:
    """`Symptoms: A; B.`, `Affected: X, Y.`, `**Impact:** ...`: what follows such a label, up to
    the end of its line or the next label, lists what the fault did."""
    spans = []
    for label in EFFECT_LABEL.finditer(text):
        stop = NEXT_LABEL.search(text, label.end())
        spans.append((label.start(), stop.start() + 1 if stop else len(text)))
    return spans


def _alternative_sections(low: str) -> list[tuple[int, int]]:
    """Spans under a markdown heading that names alternatives, up to the next heading, and
    lower-ranked hypotheses (`Hypothesis 2:`, item 2 of a list ranked most likely first), up to
    the next hypothesis or heading; sorted and disjoint."""
    headings = [m for m in HEADING.finditer(low) if m.start() == 0 or low[m.start() - 1] == "\n"]
    sections = []
    ends = [h.start() for h in headings[1:]] + [len(low)]
    for heading, end in zip(headings, ends[: len(headings)], strict=True):
        if ALTERNATIVE.match(heading.group(1)):
            sections.append((heading.end(), end))
    return _merged(sections + ranked_sections(low, [h.start() for h in headings], 2))


def ranked_sections(low: str, headings: list[int], rank: int) -> list[tuple[int, int]]:
    """Sections opened by a hypothesis (or an item of a list ranked most likely first)
    numbered `rank` or more (`rank` 1 only: the first hypothesis), each up to the next
    hypothesis, item or heading."""
    marks: list[tuple[int, int]] = []
    ranked_list = False
    for line in LINE.finditer(low):
        if line.end() == line.start():
            continue
        item = RANKED_ITEM.match(low, line.start(), line.end())
        if item is None and ranked_list:
            item = NUMBERED_ITEM.match(low, line.start(), line.end())
        if item is not None:
            marks.append((line.start(), int(item.group(1))))
        elif RANKED_INTRO.search(low, line.start(), line.end()):
            ranked_list = True
    stops = sorted({*headings, *(at for at, _ in marks), len(low)})
    return [
        (at, stops[bisect.bisect_right(stops, at)] if at < stops[-1] else len(low))
        for at, number in marks
        if (number >= 2 if rank >= 2 else number == 1)
    ]


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _observed_before(clause: str, at: int) -> bool:
    """`the LOG alerts from redis-cart-0 indicate ...`: what comes before the evidential verb
    is an observation (not `X is OOMKilled, which indicates ...`, where it is a claim)."""
    lead = clause[:at]
    return bool(OBSERVATION.search(lead)) and not RELATIVE_END.search(lead[-TAIL_REACH:])


def _clause(low: str, start: int, end: int) -> list[Segment]:
    """A clause as segments: cause (`blamed`, strong when an explicit cue says so), effect,
    exonerating, or a plain mention."""
    clause = low[start:end]
    if question := OPEN_QUESTION.search(clause):
        asked = Segment(start + question.start(), end, "context")
        return [*(_clause(low, start, start + question.start()) if question.start() else []), asked]
    if NO_FAULT.search(clause) or (
        EXONERATING.search(clause) and not BLAME_CUE.search(EXONERATING.sub(" ", clause))
    ):
        return [Segment(start, end, "exonerated")]
    if LIST_HEDGE.search(clause):
        return [Segment(start, end, "listed")]
    if CAUSE_BEFORE.search(clause):
        return [Segment(start, end, "blamed", strong=True)]
    if TELEMETRY_SHOWS.match(clause) and not AFTER_CUE.search(clause):
        return [Segment(start, end, "mentioned", observed=True)]
    if (cue := EVIDENTIAL.search(clause)) and _observed_before(clause, cue.start()):
        return [
            Segment(start, start + cue.end(), "mentioned", observed=True),
            *_clause(low, start + cue.end(), end),
        ]
    if cue := CAUSE_OF.search(clause):
        return [
            Segment(start, start + cue.start(), "blamed", strong=True),
            Segment(start + cue.end(), end, "effect"),
        ]
    if cue := AFTER_CUE.search(clause):
        before = Segment(start, start + cue.start(), "effect")
        after = [Segment(start + cue.end(), end, "blamed", strong=True)]
        lead = clause[: cue.start()]
        if (BLAME_CUE.search(lead) and not FAILING.search(lead)) or HOLDER_BEFORE.search(lead):
            before.role, before.strong = "blamed", True
        if effect := EFFECT_CUE.search(clause, cue.end()):
            after = [
                Segment(start + cue.end(), start + effect.start(), "blamed", strong=True),
                Segment(start + effect.end(), end, "effect"),
            ]
        return [before, *after]
    if cue := EFFECT_CUE.search(clause):
        cause_text = clause[: cue.start()]
        strong = bool(BLAME_CUE.search(cause_text) or REMEDY.search(cause_text))
        return [
            Segment(start, start + cue.start(), "blamed", strong=strong),
            Segment(start + cue.end(), end, "effect"),
        ]
    if BLAME_CUE.search(clause) or REMEDY.search(clause):
        return [Segment(start, end, "blamed", strong=True)]
    if not OBSERVATION.search(clause) and taxonomy.families_in(clause):
        return [Segment(start, end, "blamed")]
    return [Segment(start, end, "mentioned")]


def line_end(low: str, start: int, end: int) -> int:
    found = low.find("\n", start, end)
    return end if found < 0 else found
