"""Who a diagnosis blames, once its components are found: in a cause only the subject and what is
coordinated with it (not the objects of its verbs, nor what the cause does something to); a cause
naming no component is about its clause's (else its sentence's) subject; without any cause, what
is said to fail; under a located headline, what the section names only in passing is evidence.
"""

from __future__ import annotations

import bisect
import re

from ground_truth.models import ComponentRef

from . import names
from .cues import (
    AFFECTING_BEFORE,
    CLAUSE_OPENING,
    COORDINATED,
    FAILING,
    FAULT_SPEC_FIELDS,
    HEADLINE_FILLER,
    NAMED_ROOT_CAUSE,
    OBJECT_BEFORE,
    PRONOUN_SUBJECT,
    SUBJECT_AFTER,
    TARGET_BEFORE,
    WORDS,
)
from .parsed import (
    NOT_CLAIMED,
    TAIL_REACH,
    Diagnosis,
    Mention,
    Segment,
    by_segment,
    coordinated,
    end_of,
    segment_of,
    tail,
)
from .truth import same


def release_objects(diagnosis: Diagnosis, mentions: list[Mention]) -> None:
    """In a cause, only the subject and what is coordinated with it (`X and Y are
    misconfigured`) is blamed; another component in it (`X's env var points to Y`, `Y's
    client of X`) is context. Without an origin in the cause, a component after an object
    preposition is context and any other is blamed."""
    grouped = by_segment(diagnosis, mentions)
    starts = [m.start for m in mentions]
    for segment in diagnosis.segments:
        if segment.role != "blamed":
            continue
        _release_the_affected(diagnosis, segment, grouped.get(id(segment), []))
        inside = [m for m in grouped.get(id(segment), []) if m.role == "blamed"]
        if not inside:
            continue
        lead = diagnosis.low[segment.start : inside[0].start]
        if PRONOUN_SUBJECT.search(lead) and OBJECT_BEFORE.search(tail(lead)):
            _blame_the_referent(diagnosis, mentions, starts, segment)
            for mention in inside:
                mention.role = "mentioned"
            continue
        if _all_targets(diagnosis, segment, inside):
            for mention in inside:
                mention.role = "mentioned"
            continue
        if any(m.origin for m in inside) and not _origin_only_as_object(diagnosis, inside):
            _keep_origin_and_its_coordinates(diagnosis, inside)
            continue
        previous = inside[0]
        for mention in inside[1:]:
            gap = diagnosis.low[end_of(diagnosis, previous) : mention.start]
            joined = same(mention.component, previous.component) or COORDINATED.match(gap)
            if not joined and OBJECT_BEFORE.search(tail(gap)):
                mention.role = "mentioned"
                continue
            previous = mention


def _release_the_affected(diagnosis: Diagnosis, segment: Segment, inside: list[Mention]) -> None:
    """`the request flood overloads frontend-proxy`: the object of a verb that says what a
    cause does to something is what suffers it, not the cause (but `saturates X's CPU` is about
    X)."""
    low, previous_end = diagnosis.low, segment.start
    for mention in inside:
        gap = low[previous_end : mention.start]
        end = end_of(diagnosis, mention)
        previous_end = end
        if mention.role != "blamed" or low.startswith("'s", end):
            continue
        if AFFECTING_BEFORE.search(tail(gap)):
            mention.role = "effect"


def _all_targets(diagnosis: Diagnosis, segment: Segment, inside: list[Mention]) -> bool:
    """`the init container waits for a legacy-config service`: every component in the cause is
    what its unnamed subject points at; the cause is about the subject (see blame_the_subject)."""
    previous_end = segment.start
    for mention in inside:
        if not TARGET_BEFORE.search(tail(diagnosis.low[previous_end : mention.start])):
            return False
        previous_end = end_of(diagnosis, mention)
    return True


def _origin_only_as_object(diagnosis: Diagnosis, inside: list[Mention]) -> bool:
    """`kube-proxy, which drops packets to checkout`: another component is the subject and the
    origin only its object."""
    first = inside[0]
    segment = segment_of(diagnosis, first.start)
    opens = bool(segment and CLAUSE_OPENING.fullmatch(diagnosis.low[segment.start : first.start]))
    if first.origin or not (
        opens
        or SUBJECT_AFTER.match(diagnosis.low, (end := end_of(diagnosis, first)), end + TAIL_REACH)
    ):
        return False
    if segment and TARGET_BEFORE.search(tail(diagnosis.low[segment.start : first.start])):
        return False
    previous_end = end_of(diagnosis, first)
    for mention in inside[1:]:
        gap = diagnosis.low[previous_end : mention.start]
        if mention.origin and not OBJECT_BEFORE.search(tail(gap)):
            return False
        previous_end = end_of(diagnosis, mention)
    return True


def _keep_origin_and_its_coordinates(diagnosis: Diagnosis, inside: list[Mention]) -> None:
    """A cause naming the origin is about the right fault: the other components it names are
    its context (`checkout's PRODUCT_CATALOG_ADDR points to product-catalog`), unless written
    as co-culprits beside a blamed one (`frontend and cart are misconfigured`)."""
    kept = [m for m in inside if m.origin]
    for mention in inside:
        if mention.origin:
            continue
        neighbours = [k for k in kept if k is not mention]
        if any(coordinated(diagnosis, mention, k) for k in neighbours):
            kept.append(mention)
        else:
            mention.role = "mentioned"


def _blame_the_referent(
    diagnosis: Diagnosis, mentions: list[Mention], starts: list[int], segment: Segment
) -> None:
    """`its client for Y is misconfigured`: `its` is the previous sentence's subject."""
    i = bisect.bisect_left(starts, segment.start) - 1
    while i >= 0 and mentions[i].role in NOT_CLAIMED:
        i -= 1
    if i < 0:
        return
    home = segment_of(diagnosis, mentions[i].start)
    while i > 0 and segment_of(diagnosis, mentions[i - 1].start) is home:
        i -= 1
    mentions[i].role, mentions[i].strong = "blamed", segment.strong
    mentions[i].inferred = True


def keep_to_the_headline(
    diagnosis: Diagnosis, sections: list[tuple[int, int, list[tuple[int, int]]]]
) -> list[tuple[int, int]]:
    """`Hypothesis 1: node CPU load at node-6.` then its description and justification (or a
    structured answer's first item, whose headline is its `type` and `location`): where the
    headline blames a component in so many words, what the section says of others only in
    passing (services that show alerts, a caller named as evidence) is its evidence, not more
    culprits. The headlines that do, as spans."""
    starts = [m.start for m in diagnosis.mentions]
    headlines: list[tuple[int, int]] = []
    for start, end, spans in sections:
        first, last = bisect.bisect_left(starts, start), bisect.bisect_left(starts, end)
        inside = diagnosis.mentions[first:last]

        def in_headline(mention: Mention, spans: list[tuple[int, int]] = spans) -> bool:
            return any(s <= mention.start < e for s, e in spans)

        if not any(m.role == "blamed" and m.strong and in_headline(m) for m in inside):
            continue
        headlines.extend(spans)
        for mention in inside:
            evidence = not mention.strong or mention.inferred
            if not in_headline(mention) and mention.role == "blamed" and evidence:
                mention.role = "mentioned"
    return sorted(headlines)


def blame_the_subject(diagnosis: Diagnosis) -> None:
    """`X fails to pull its image due to "pull access denied"`, `X requires TLS but its
    certificate is invalid`: a cause naming no component is about the component its clause,
    else its sentence, else the diagnosis is about."""
    mentions = [m for m in diagnosis.mentions if m.role not in NOT_CLAIMED and not m.foreign]
    grouped = by_segment(diagnosis, diagnosis.mentions)
    starts = [m.start for m in mentions]
    effects_by_clause: dict[int, list[Mention]] = {}
    first_by_sentence: dict[int, Mention] = {}
    for mention in mentions:
        located = segment_of(diagnosis, mention.start)
        if located is None or located.observed:
            continue
        first_by_sentence.setdefault(located.sentence, mention)
        if located.role == "effect":
            effects_by_clause.setdefault(located.clause, []).append(mention)
    any_blamed = any(m.role == "blamed" for m in mentions)
    for segment in diagnosis.segments:
        if (
            segment.role != "blamed"
            or len(WORDS.findall(diagnosis.low, segment.start, segment.end)) < 2
        ):
            continue
        if any(m.role == "blamed" for m in grouped.get(id(segment), [])):
            continue
        text = diagnosis.low[segment.start : segment.end]
        before = bisect.bisect_left(starts, segment.start)
        referent = mentions[before - 1 : before] if before else []
        same_clause = [
            m for m in effects_by_clause.get(segment.clause, []) if m.start < segment.start
        ]
        first = first_by_sentence.get(segment.sentence)
        same_sentence = [first] if first is not None and first.start < segment.start else []
        if PRONOUN_SUBJECT.search(text) and referent:
            chosen = referent
        else:
            topic = [] if any_blamed else mentions[:1]
            chosen = same_clause or same_sentence or topic
        for mention in chosen:
            if mention.role != "blamed" or segment.strong:
                mention.strong = mention.strong or segment.strong
            mention.inferred = mention.inferred or mention.role != "blamed"
            mention.role = "blamed"
            any_blamed = True


def blame_the_failing(diagnosis: Diagnosis) -> None:
    """Without any cause, a component said to fail is what the diagnosis presents as faulty."""
    failing: dict[int, bool] = {}
    for mention in diagnosis.mentions:
        if mention.role not in {"mentioned", "effect"}:
            continue
        segment = segment_of(diagnosis, mention.start)
        if segment is None:
            continue
        if id(segment) not in failing:
            failing[id(segment)] = bool(FAILING.search(diagnosis.low, segment.start, segment.end))
        if failing[id(segment)]:
            mention.role, mention.inferred = "blamed", True


def blame_only_the_named(diagnosis: Diagnosis) -> None:
    """A diagnosis that says its root cause is not established blames only the components it
    names as a cause: what it reports failing (the subject of a finding, the service whose
    requests failed) is where the fault showed, not a claim about where it lies."""
    for mention in diagnosis.mentions:
        if mention.role == "blamed" and mention.inferred:
            mention.role, mention.inferred = "mentioned", False


def the_fields_answer(diagnosis: Diagnosis) -> None:
    """A diagnosis written as SREGym's structured root cause (`[fault_spec] component=X;
    namespace=Y || description`), or opening with a root cause that is names only (`Root
    cause: cache (Service).`, `Root cause: Pod ad in namespace otel-demo.`), answers which
    component there; the rest explains how: what else it names is the mechanism's context, not
    more culprits."""
    fields = [m.span(1) for m in FAULT_SPEC_FIELDS.finditer(diagnosis.low)]
    fields += [
        m.span(1) for m in NAMED_ROOT_CAUSE.finditer(diagnosis.low) if _names_only(diagnosis, m)
    ]
    if not fields:
        return
    inside = [m for m in diagnosis.blamed if any(a <= m.start < b for a, b in fields)]
    if not inside:
        return
    for mention in diagnosis.blamed:
        if mention not in inside:
            mention.role = "mentioned"


def _names_only(diagnosis: Diagnosis, headline: re.Match[str]) -> bool:
    """Whether a root-cause headline holds nothing but component names, their kinds and a
    namespace (no verb: `Root cause: X is misconfigured` is a claim read as any other)."""
    start, end = headline.span(1)
    text = list(diagnosis.low[start:end])
    for mention in diagnosis.mentions:
        if start <= mention.start < end:
            stop = min(end, mention.start + max(len(mention.written), 1))
            text[mention.start - start : stop - start] = " " * (stop - mention.start)
    rest = HEADLINE_FILLER.sub(" ", "".join(text))
    return not rest.strip() and any(start <= m.start < end for m in diagnosis.blamed)


def bare_words_yield(diagnosis: Diagnosis, contributing: list[ComponentRef]) -> None:
    """The origin written by the first word of its name alone (`Web TIMEOUT_MS is too low` of
    `web_server`, `redis` of `redis-cart`) is not the origin the diagnosis blames where it
    first blames another component by name: after `load_balancer timeout configuration too
    low.` the bare word is the owner of a setting read as evidence, not the culprit."""
    blamed = diagnosis.blamed
    bare = [m for m in blamed if m.origin and _bare_first_word(m)]
    if not bare:
        return
    lead = blamed[0]
    if lead.origin or lead.foreign or _bare_first_word(lead):
        return
    if any(same(lead.component, c) for c in contributing):
        return
    for mention in bare:
        mention.origin = False


def _bare_first_word(mention: Mention) -> bool:
    """Written as one word that is the first of its component's name of several words and not
    the name itself shorn of a kind (`user` of `user-service` is the name)."""
    written = names.tokens(mention.written)
    parts = names.tokens(mention.component.name)
    return (
        len(written) == 1
        and len(parts) > 1
        and parts[0] == written[0]
        and names.canonical(mention.written) != names.canonical(mention.component.name)
    )
