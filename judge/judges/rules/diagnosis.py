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

import bisect
import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Literal

from ground_truth.models import ComponentRef

from . import answers, names, systems, taxonomy
from .size import Excerpt, SizePolicy
from .spans import QUOTE_WIDTH, Joined, lower_same_length, pieces, quote_span
from .truth import Relation, Truth, same

Role = Literal["blamed", "exonerated", "effect", "mentioned", "listed", "context"]
# Roles whose text is not part of what the diagnosis claims.
NOT_CLAIMED = frozenset({"exonerated", "listed", "context"})
LIST_OF_EVERYTHING = 4
# A namespace stated this close to a mention (same clause) qualifies it.
NAMESPACE_REACH = 60

_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s]))+[.!?]*")
_CLAUSE_BREAK = re.compile(
    r";|,?\s+but\s+|\s+while\s+|\s+whereas\s+|,?\s+although\s+|,?\s+however,?\s+|,\s+and\s+"
    r"|\s*\((?=[^)]*\b(?:sees?|saw|shows?|showed|logs?|logged|reports?|observed)\b)"
    r"|\s+and\s+(?=(?:the\s+)?[\w-]+(?:\s+\w+)?\s+(?:is|are|was|were|looks?|seems?|appears?)"
    r"\s+(?:healthy|fine|running|normal|ok|unaffected))",
    re.I,
)
_EXONERATING = re.compile(
    r"(?<!not )(?<!n't )(?<!un)\bhealthy\b|\b(?:is|are|looks?|seems?|appears?)\s+(?:to be\s+)?(?:fine|normal|ok|okay)\b"
    r"|\bnot\s+(?:the\s+)?(?:root\s+)?cause\b|\bnot\s+(?:the|a)\s+(?:problem|issue|culprit)\b"
    r"|\bnot\s+(?:an?\s+)?[\w-]+\s+(?:issue|problem)\b|\bunaffected\b|\brecovered\b|\bruled?\s+out\b"
    r"|\bno\s+(?:errors?|issues?|problems?|anomal\w+)\b|\bworking\s+(?:fine|normally|correctly|as expected)\b"
    r"|\b(?:functioning|operating|running|behaving)\s+(?:normally|correctly|as expected|fine)\b"
    r"|\bnot\s+(?:involved|related|at fault|responsible)\b|\bexonerat\w+|\bhealthy\b(?=.*\bnot\b)"
    r"|\b(?:only|merely|simply|just)\s+(?:because|due\s+to|as\s+a\s+(?:result|consequence|side[- ]effect))\b",
    re.I,
)
_AFTER_CUE = re.compile(
    r"\bbecause(?:\s+of)?\b|\bdue\s+to\b|\bcaused\s+by\b|\b(?:as\s+)?a\s+result\s+of\b|\bthe\s+result\s+of\b"
    r"|\bstem(?:s|med|ming)?\s+from\b|\bowing\s+to\b|\btriggered\s+by\b|\battribut\w+\s+to\b"
    r"|\boriginat\w+\s+(?:in|from|at|with)\b|\blies\s+(?:in|with)\b"
    r"|\broot[-_ ]?cause[s]?\b(?:\s+(?:is|was|appears to be|seems to be|of\s+[^,.]*?\s+is|lies\s+in|:)|[\"']?\s*:)?"
    r"|\bfaulty[-_ ]components?\b[\"']?\s*:|\b(?:the\s+)?cause\s*(?:is|was)?\s*:"
    r"|\bculprit\s+(?:is|was)\b|\b(?:problem|issue|fault)\s+(?:is|lies|was)\s+(?:in|with)\b"
    r"|\bsince\b|\bbroken\s+by\b|\b(?:affected|impacted|hit|slowed(?:\s+down)?|degraded)\s+by\b"
    r"|^\W*hypothesis\s*#?\s*\d*\s*[:.)-]",
    re.I,
)
_EFFECT_CUE = re.compile(
    r"\bcausing\b|\bcaus(?:es|ed)\s+(?!by)|\blead(?:s|ing)?\s+to\b|\bled\s+to\b|\bresult(?:s|ed|ing)?\s+in\b"
    r"|\bwhich\s+(?:in\s+turn\s+)?(?:prevents|breaks|makes|means|blocks|triggers)\b|\bso\s+that\b|,\s*so\b"
    r"|\btherefore\b|\bthus\b|\bhence\b|\bpreventing\b|\bmaking\b|\bbreaking\b|\bconsequently\b"
    r"|\bso\s+(?=(?:the|pods?|requests?|it|its|they|calls?|traffic)\b)"
    r"|\baffect(?:s|ing)?\b(?!\s+by)|\bimpact(?:s|ing)\b(?!\s+by)"
    r"|\b(?:propagat|cascad|spread)\w*\s+(?:\w+\s+)?(?:to|into|through)\b",
    re.I,
)
_BLAME_CUE = re.compile(
    r"\broot[-_ ]?cause\b|\bculprit\b|\bat\s+fault\b|\bresponsible\b|\bfaulty\b|\bmis-?configur\w*"
    r"|\bwrong(?:ly)?\b|\bincorrect(?:ly)?\b|\binvalid\b|\bbad\b|\bbroken\b|\bbuggy\b|\bmissing\b|\blacks?\b"
    r"|\bnon-?existent\b|\bdoes(?:\s+not|n't)\s+exist\b|\bset\s+to\b|\bconfigured\s+(?:to|with|for)\b"
    r"|\bpoints?\s+to\b|\bpointing\s+to\b|\b(?:was|were|been|is|are)\s+(?:changed|modified|altered|updated|scaled|deleted|removed|revoked|patched)\b"
    r"|\bexpired\b|\bmismatch\w*|\bexhaust\w*|\btoo\s+(?:low|high|small|large|aggressive|short|strict|many)\b"
    r"|\bindicat\w+|\bsuggest\w*|\bthe\s+(?:problem|issue|fault)\s+is\b|\bis\s+the\s+(?:problem|issue|cause)\b"
    r"|\bblock\w*\b|\bdenies\b|\bdenied\b|\brevoked\b|\bcorrupt\w*|\bleak\w*|\bflood\w*|\boverload\w*"
    r"|\bbottleneck\b|\bmost\s+likely\b|\bprobabl[ey]\b|\bi\s+(?:suspect|believe)\b|\bmisrout\w*|\bshadow\w*|\bexceed\w*|\binsufficient\b|\bdeadlock\w*|\bcontention\b|\bstale\b",
    re.I,
)
# `X ..., which is the root cause`, `X is the culprit`: the cause is written before the cue.
_CAUSE_BEFORE = re.compile(
    r"\b(?:which|that|this|it|and)\s+(?:is|was|seems\s+to\s+be|appears\s+to\s+be)\s+(?:the\s+|a\s+)?"
    r"(?:likely\s+|probable\s+)?(?:root[- ]?cause|culprit|cause)\b"
    r"|\bis\s+(?:the\s+)?(?:root[- ]?cause|culprit)\b\s*(?:[.;,:(]|$)",
    re.I,
)
_LIST_HEDGE = re.compile(
    r"\b(?:could|might|may)\s+be\s+(?:any|one)\s+of\b|\bsuspects\b|\bsuspect\s*(?:list|components?)?\s*:|\bcandidates?\b|\bany\s+of\s*:"
    r"|\bone\s+of\s+(?:these|the\s+following)\b|\bcheck(?:ing)?\s+(?:each|all|every)\b",
    re.I,
)
# Ranked hypotheses: the most likely one is the claim; a sentence opened by one of these, or a
# line under a heading such as `## Alternative hypotheses`, is an alternative, not a claim.
_ALTERNATIVE = re.compile(
    r"\W*(?:\d+[.)]\s*)?(?:(?:much\s+|far\s+)?less\s+likely|unlikely|alternatively|alternative\s+"
    r"(?:hypothes[ie]s|explanations?|causes?)|another\s+possibility|other\s+possibilities"
    r"|lower[- ]probability|low\s+probability|(?:second|third|fourth)[- ](?:most\s+likely|hypothesis)"
    r"|ruled\s+out)\b",
    re.I,
)
# `X could be the root cause of Y`: the cause before it, what it caused after it.
_CAUSE_OF = re.compile(
    r"\b(?:is|are|was|were|be|being)\s+(?:the\s+|a\s+|one\s+)?(?:likely\s+|probable\s+|main\s+|real\s+)?"
    r"(?:root[-_ ]?)?cause\s+(?:of|for|behind)\b"
)
_RELATIVE_END = re.compile(r"\b(?:which|that|this|it|what|and)\s*$")
# `the logs of X indicate Y`: what is observed comes before the verb, what is claimed after it.
_EVIDENTIAL = re.compile(
    r"\b(?:indicat(?:e|es|ed|ing|ive\s+of)|suggest(?:s|ed|ing|ive\s+of)?)\b(?:\s+that\b)?"
)
_HEADING = re.compile(r"[ \t]*(?:#{1,6}[ \t]+|\*\*)([^\n]*)")
_LINE = re.compile(r"[^\n]*")
# A line that reports, not claims: a propagation path, a log line, a table row.
_ARROW = r"\s*(?:--?\([\w ./-]*\)--?>|-->|->|→)\s*"
_CONTEXT_LINE = re.compile(
    r"[\s>*`-]*(?:propagation[\s_-]*path|call[\s_-]*(?:path|chain)|trace[\s_-]*path)\s*:"
    rf"|[\s>*`-]*[\w.\[\]-]+(?:{_ARROW}[\w.\[\] -]+?){{2,}}[\s`.]*$"
    r"|[\s>*`\[-]*\d{4}-\d{2}-\d{2}[ t]\d{1,2}:\d{2}|[\s>*`\[-]*\d{1,2}:\d{2}:\d{2}[.,\d]*\s"
)
# An inline quote of pasted output: backticks or quotes around a log line.
_QUOTED_OUTPUT = re.compile(
    r"`[^`\n]*(?:\d{1,2}:\d{2}:\d{2}|\|[^`\n]*\||\b(?:error|warn\w*|info|debug|fatal)\b\s*[:|\]])[^`\n]*`"
    r"|\"[^\"\n]*(?:\d{1,2}:\d{2}:\d{2}|\|[^\"\n]*\|)[^\"\n]*\""
)
# Ranked hypotheses: `Hypothesis 2:` (and below) opens an alternative; so does item 2 (and below)
# of a numbered list introduced as ranked ("most likely first").
_RANKED_ITEM = re.compile(
    r"[\s>*#-]*(?:\*\*)?(?:hypothesis|candidate|possibility|option|suspect)\s*#?\s*(\d+)\b"
)
_NUMBERED_ITEM = re.compile(r"[\s>*-]*(\d+)[.)]\s")
_RANKED_INTRO = re.compile(
    r"\b(?:most\s+likely\s+first|ranked|in\s+order\s+of\s+(?:likelihood|probability|confidence)"
    r"|(?:ordered|sorted)\s+by\s+(?:likelihood|probability|confidence))\b"
)
_OBSERVATION = re.compile(
    r"\blogs?\b|\blogged\b|\bshows?\b|\bsees?\b|\bshowing\b|\breports?\b|\bobserv\w+|\bkubectl\b"
    r"|\bevents?\b|\bmetrics?\b|\btraces?\b|\breceiv\w+|\balerts?\b|\balarms?\b",
    re.I,
)
# What follows a component that is the subject of its clause (`X is`, `X, which`, `X has`).
_SUBJECT_AFTER = re.compile(
    r"[`'\")]*\s*(?:,\s*(?:which|that)\b|(?:is|are|was|were|has|have|had|does|did|keeps?|drops?|sends?"
    r"|blocks?|rejects?|returns?|holds?|uses?|floods?|crash\w*|fails?|failed)\b)",
    re.I,
)
# Prepositions that make what follows the target of something else (`waits for X`, `calls to X`).
_TARGET_BEFORE = re.compile(
    r"\b(?:to|towards?|for|from|by|via|against|instead\s+of|reach\w*|connect\w*\s+to|calls?\s+to"
    r"|requests?\s+to|waiting\s+for)\s+(?:the\s+|its\s+|a\s+|an\s+|their\s+)?(?:[\w-]+\s+){0,2}[`'\"(]?$",
    re.I,
)
# What may precede the subject of a clause (`most likely the search service ...`).
_CLAUSE_OPENING = re.compile(
    r"[\W\d]*(?:(?:the|most|likely|probably|possibly|maybe|perhaps|i|we|suspect|believe|think|that|so"
    r"|deployment|service|pod)[\s:,`'\"]+)*",
    re.I,
)
_AFFECTING_BEFORE = re.compile(
    r"\b(?:overload|overwhelm|flood|saturat|exhaust|starv|hammer|affect|impact|swamp|bombard|hit"
    r"|slow|degrad|stress)\w*\s+(?:down\s+)?(?:the\s+|its\s+|their\s+|all\s+|every\s+)?"
    r"(?:[\w-]+\s+)?(?:(?:for|of|on|in|to|at)\s+(?:the\s+)?)?[`'\"(]?$"
)
_PRONOUN_SUBJECT = re.compile(
    r"^\W*(?:its|their|it|they|his|her|the\s+(?:client|caller)s?)\b", re.I
)
_REMEDY = re.compile(
    r"\b(?:fix|restore|roll(?:ing)?\s*(?:\w+\s+)?back|revert|re-?add|correct|set\s+(?:it\s+)?back|scale\s+(?:\w+\s+)?back)\b",
    re.I,
)
_FAILING = re.compile(
    r"\bfail\w*|\bcrash\w*|\berror\w*|\bdown\b|\bbroken\b|\bnot\s+working\b|\bunavailable\b|\bunhealthy\b"
    r"|\brestart\w*|\bstuck\b|\bdegraded\b|\bproblem\w*|\bissues?\b|\bfaulty\b|\boomkilled\b|\bpending\b"
    r"|\bnot\s+ready\b|\bnever\s+ready\b|\bnotready\b|\brefused\b|\btim(?:es|ed|ing)?\s*out\b|\b[45]\d\d\b",
    re.I,
)
_NO_FAULT = re.compile(
    r"\bno\s+(?:[\w-]+\s+)?(?:faults?|issues?|problems?|anomal\w+|faulty\s+components?|root[- ]?causes?|errors?)"
    r"\s+(?:\w+\s+){0,3}(?:found|detected|identified|observed|present)\b"
    r"|\b(?:could\s+not|couldn't|unable\s+to|cannot|can't|did\s+not|didn't|failed\s+to)\s+"
    r"(?:identify|find|determine|locate|pinpoint|detect)\s+(?:a\s+|any\s+|the\s+|an\s+)?(?:\w+\s+)?"
    r"(?:root[- ]?causes?|faults?|issues?|problems?|culprits?|anything|faulty)\b"
    r"|\b(?:everything|all\s+(?:\w+\s+)?(?:pods|services|components|deployments))\s+(?:is|are|appears?|looks?|seems?)"
    r"\s+(?:to\s+be\s+)?(?:healthy|fine|normal|running)\b|\bno\s+faulty\b|\bnothing\s+(?:is\s+)?wrong\b"
    r"|\bno\s+fault\b|\b(?:anomal\w+|faults?|incidents?|problems?)\s+detected\s*:\s*no\b",
    re.I,
)
_OPEN_QUESTION = re.compile(
    r"\b(?:verify|check|confirm|determine|inspect|investigate|establish|test|see|whether\s+or\s+not)"
    r"\s+(?:[\w-]+\s+){0,2}?(?:whether|if)\b",
    re.I,
)
"""`verify whether the refused IPs were serving recommendation pods`: what is to be checked is a
question, not a claim."""
_UNDETERMINED = re.compile(
    r"\b(?:root|underlying)\s+causes?\s+(?:\w+\s+){0,2}(?:cannot|could\s+not|can't|couldn't|"
    r"(?:is|was|has|remains?)\s+not|(?:is|was|has|remains?)\s+yet\s+to)\s+(?:be\s+|been\s+)?"
    r"(?:established|determined|identified|confirmed)"
    r"|\bno\s+(?:root|underlying)\s+causes?\s+(?:can|could)\s+be\s+(?:established|determined)"
    r"|\b(?:does|do|did)\s+not\s+establish\s+(?:the\s+)?(?:underlying\s+|root\s+)?(?:cause|trigger)"
    r"|\b(?:root|underlying)\s+causes?\s+(?:is\s+|remains\s+)?(?:unknown|undetermined|unclear)"
    r"|\binsufficient\s+evidence\b",
    re.I,
)
"""The diagnosis says its root cause is not established: it claims no cause by implication."""
_OBJECT_BEFORE = re.compile(
    r"\b(?:to|reach|reaching|connect(?:ing)?\s+to|connections?\s+to|calls?\s+to|requests?\s+to|talk(?:ing)?\s+to"
    r"|rout\w*\s+to|points?\s+to|pointing\s+to|instead\s+of|for|on|in|from|with|against|towards?|into|by|of|via)"
    r"\s+(?:the\s+|its\s+|a\s+|an\s+|their\s+)?(?:[\w-]+\s+){0,2}[`'\"(]?$",
    re.I,
)
_WORDS = re.compile(r"[a-z][a-z']*")
# Terse notes (`svc/x: targetPort 9999 -> refused; fix it.`) are written in clauses; a salad is not.
_CLAUSE_PUNCTUATION = re.compile(r"[;:,](?=\s)|->|=>|\.(?=\s+\S)")
_FUNCTION_WORDS = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "has",
        "have",
        "had",
        "the",
        "a",
        "an",
        "to",
        "of",
        "in",
        "on",
        "for",
        "with",
        "by",
        "because",
        "so",
        "that",
        "which",
        "it",
        "its",
        "and",
        "but",
        "not",
        "no",
        "from",
        "due",
        "cannot",
        "can't",
        "does",
        "did",
        "do",
        "this",
        "these",
        "there",
        "their",
        "they",
        "as",
        "at",
        "or",
        "if",
        "when",
        "while",
        "than",
        "then",
        "into",
        "after",
        "before",
        "since",
    ]
)
_COORDINATED = re.compile(
    r"^[`'\")]*(?:\s*(?:deployments?|services?|pods?|statefulsets?)\s*)?(?:,\s*|\s+(?:and|or|as well as|plus|along with)\s+"
    r"|\s*,\s*(?:and|or)\s+)(?:the\s+|both\s+)?[`'\"(]*$"
)
_CANDIDATE = re.compile(
    r"\b(?:deployments?|services?|statefulsets?|daemonsets?|configmaps?|secrets?|pods?|cronjobs?|nodes?"
    r"|clusters?|jobs?|replicasets?|ingress(?:es)?|networkpolic(?:y|ies)|horizontalpodautoscalers?"
    r"|persistentvolumeclaims?)\s*/\s*([a-z0-9][a-z0-9._-]*[a-z0-9])"
    r"|\bthe\s+[`'\"]?([a-z][a-z0-9]*(?:-[a-z0-9]+)+)[`'\"]?\s+(?:deployment|service|pod|statefulset|daemonset|configmap|secret)s?\b"
    r"|`([a-z][a-z0-9]*(?:-[a-z0-9]+)+)`"
    r"|(?<![\w./-])([a-z][a-z0-9]*(?:-[a-z0-9]+)*-(?:service|svc|server|api|db|proxy|gateway|worker|controller|operator))"
    r"(?![\w.-])",
    re.I,
)


@dataclass
class Mention:
    """A component named in a diagnosis at `start`: its role in the clause (blamed, exonerated,
    effect, mentioned, listed or context), whether it is outside the incident (`foreign`), the
    fault's origin, blamed in so many words (`strong`), and how the name as written stands to
    the origin (`relation`: the origin itself, an instance of it, the service it is an instance
    of, a sibling instance); `inferred` when the blame was read from a cause that does not
    name it (`its logs show ...`, a failing component with no cause stated).
    """

    component: ComponentRef
    start: int
    role: Role
    foreign: bool = False
    origin: bool = False
    strong: bool = False
    relation: Relation = "none"
    inferred: bool = False
    written: str = ""


@dataclass
class Segment:
    """A span `[start, end)` of the lowercased diagnosis with one role, its clause and sentence."""

    start: int
    end: int
    role: Role
    clause: int = 0
    sentence: int = 0
    strong: bool = False
    observed: bool = False


@dataclass
class Diagnosis:
    """A diagnosis as the rules judge reads it: role-tagged segments, component mentions, the
    text of what it blames and claims, and whether it says there is no fault or is word salad.
    """

    text: str
    low: str
    segments: list[Segment]
    mentions: list[Mention] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    no_fault: bool = False
    salad: bool = False
    has_cause: bool = False
    cause: Joined = field(default_factory=Joined)
    claim: Joined = field(default_factory=Joined)
    impact: Joined = field(default_factory=Joined)
    headline: Joined = field(default_factory=Joined)
    stated_type: Joined = field(default_factory=Joined)
    category: Joined = field(default_factory=Joined)
    excerpt: Excerpt | None = None

    @property
    def cause_text(self) -> str:
        """What the diagnosis blames, lowercased: its cause segments joined."""
        return self.cause.text

    @property
    def claim_text(self) -> str:
        """What the diagnosis claims, lowercased: all but its exonerating and listed segments."""
        return self.claim.text

    @functools.cached_property
    def effect_keys(self) -> frozenset[str]:
        """The name keys (`names.keys`) of every component the diagnosis names as suffering."""
        return frozenset(
            k for m in self.mentions if m.role == "effect" for k in names.keys(m.component)
        )

    @property
    def blamed(self) -> list[Mention]:
        return [m for m in self.mentions if m.role == "blamed"]

    @property
    def positive_claim(self) -> bool:
        return bool(self.blamed)

    @property
    def origin_blamed(self) -> bool:
        return any(m.origin for m in self.blamed)

    def wrongly_blamed(self, involved: Callable[[Mention], bool]) -> list[Mention]:
        """Blamed components that are not involved. Where the origin is blamed, a component only
        weakly implicated (named in a clause that merely mentions a mechanism, or said to fail)
        is context: the fault is put at the origin, the other is its client or victim."""
        origin = self.origin_blamed
        return [
            m
            for m in self.blamed
            if not involved(m) and (m.strong or not origin or self._beside_the_origin(m))
        ]

    def _beside_the_origin(self, mention: Mention) -> bool:
        """Coordinated with a blamed origin in one clause (`frontend-0, frontend-1 and
        frontend-2 are out of memory`): blamed as much as the origin is."""
        segment = _segment_of(self, mention.start)
        origins = self._blamed_origins_by_segment.get(id(segment), [])
        return any(_coordinated(self, m, mention) for m in origins)

    @functools.cached_property
    def _blamed_origins_by_segment(self) -> dict[int, list[Mention]]:
        return _by_segment(self, [m for m in self.mentions if m.origin and m.role == "blamed"])

    def role_at(self, at: int) -> Role | None:
        """The role of the segment holding offset `at` (None between segments)."""
        segment = _segment_of(self, at)
        return segment.role if segment else None

    def quote(self, at: int, end: int | None = None, width: int = QUOTE_WIDTH) -> str:
        """The sentence holding `text[at:end]`, verbatim: cut to about `width` characters around
        it at word boundaries when longer (see `quote_span`)."""
        start, stop = quote_span(self.text, at, at if end is None else end, width)
        return self.text[start:stop]

    def claim_quote(self, at: int, width: int = QUOTE_WIDTH) -> str:
        """The quote for offset `at` of `claim_text`."""
        return self.quote(self.claim.origin(at), width=width)

    def cause_quote(self, at: int, width: int = QUOTE_WIDTH) -> str:
        """The quote for offset `at` of `cause_text`."""
        return self.quote(self.cause.origin(at), width=width)


def is_word_salad(low: str) -> bool:
    """A list of names and keywords with hardly a grammatical word: it states nothing."""
    words = _WORDS.findall(low)
    if len(words) < 4 or (_CLAUSE_PUNCTUATION.search(low.strip()) and not _keyword_list(low)):
        return False
    return sum(w in _FUNCTION_WORDS for w in words) < 0.08 * len(words)


def _keyword_list(low: str) -> bool:
    """`dnspolicy, none, 8.8.8.8, user-service, resolution errors.`: four or more items of at
    most three words each, separated by commas, is a list of keywords, not a terse note."""
    items = [i for i in re.split(r"[,;]\s+", low.strip().rstrip(".")) if i]
    return len(items) >= LIST_OF_EVERYTHING and all(len(i.split()) <= 3 for i in items)


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
    segments = _segments(low, answer)
    diagnosis = Diagnosis(
        text=text, low=low, segments=segments, starts=[s.start for s in segments], excerpt=excerpt
    )
    diagnosis.has_cause = any(s.role == "blamed" for s in segments)
    diagnosis.mentions = _mentions(diagnosis, truth)
    _blame_the_subject(diagnosis)
    if not diagnosis.has_cause:
        _blame_the_failing(diagnosis)
    if _UNDETERMINED.search(low):
        _blame_only_the_named(diagnosis)
    sections = [
        (start, end, [(start, _line_end(low, start, end))])
        for start, end in _ranked_sections(low, [], 1)
    ] + [(item.start, item.end, item.headline) for item in answer.claimed if item.headline]
    headlines = _keep_to_the_headline(diagnosis, sections)
    said = _blanked(low, answer.names_only)
    diagnosis.headline = _spaced(Joined.of(said, headlines))
    diagnosis.stated_type = _spaced(Joined.of(low, [t for i in answer.claimed for t in i.types]))
    diagnosis.category = _spaced(Joined.of(low, answer.categories))
    diagnosis.cause = Joined.of(said, [(s.start, s.end) for s in segments if s.role == "blamed"])
    diagnosis.claim = Joined.of(
        said, [(s.start, s.end) for s in segments if s.role not in NOT_CLAIMED]
    )
    diagnosis.impact = Joined.of(said, _impact_spans(diagnosis))
    said_no_fault = any(_NO_FAULT.search(low, s.start, s.end) for s in segments)
    diagnosis.no_fault = said_no_fault and not any(m.strong for m in diagnosis.blamed)
    if diagnosis.no_fault:
        for mention in diagnosis.blamed:
            mention.role = "mentioned"
    return diagnosis


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
        segment = _segment_of(diagnosis, mention.start)
        if segment is not None:
            other = bool(names.keys(mention.component) & cleared)
            about_others[segment.sentence] = about_others.get(segment.sentence, True) and other
    return [
        (s.start, s.end)
        for s in diagnosis.segments
        if s.role not in {"exonerated", "listed"}
        and (s.role in {"blamed", "effect"} or not about_others.get(s.sentence, False))
    ]


# ---------------------------------------------------------------- segments


def _spans(pattern: re.Pattern[str], text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, at = [], start
    for match in pattern.finditer(text, start, end):
        if match.start() > at:
            spans.append((at, match.start()))
        at = match.end()
    if at < end:
        spans.append((at, end))
    return spans


def _segments(low: str, answer: answers.Answer) -> list[Segment]:
    segments: list[Segment] = []
    alternatives = _merged(_alternative_sections(low) + answer.alternatives)
    special = _special_spans(
        _context_spans(low) + answer.context + answer.categories, answer.places
    )
    section = spot = 0
    bounds = sorted({at for span in alternatives for at in span})
    for number, sentence in enumerate(_SENTENCE.finditer(low)):
        opened = bool(_ALTERNATIVE.match(low, sentence.start(), sentence.end()))
        for part_start, part_end in _cut_at(bounds, sentence.start(), sentence.end()):
            while section < len(alternatives) and alternatives[section][1] <= part_start:
                section += 1
            alternative = opened or (
                section < len(alternatives) and alternatives[section][0] <= part_start
            )
            while spot < len(special) and special[spot][1] <= part_start:
                spot += 1
            _read_part(low, segments, special, spot, number, alternative, part_start, part_end)
    return segments


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
            for clause_start, clause_end in _spans(_CLAUSE_BREAK, low, piece_start, piece_end):
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
    context: list[tuple[int, int]], places: list[tuple[int, int]]
) -> list[tuple[int, int, Role]]:
    """Spans read whole with one role: context (paths, log lines, quoted output) and the
    places a structured answer blames (`"location": "node-6"`); sorted, disjoint (the first
    of two overlapping spans is kept)."""
    tagged: list[tuple[int, int, Role]] = [(s, e, "context") for s, e in context]
    tagged += [(s, e, "blamed") for s, e in places]
    out: list[tuple[int, int, Role]] = []
    for span in sorted(tagged):
        if not out or span[0] >= out[-1][1]:
            out.append(span)
    return out


def _context_spans(low: str) -> list[tuple[int, int]]:
    """Lines and inline quotes that report rather than claim (propagation paths, log lines,
    pasted output), as sorted, disjoint spans."""
    spans = []
    for line in _LINE.finditer(low):
        if line.end() == line.start():
            continue
        if _CONTEXT_LINE.match(low, line.start(), line.end()):
            spans.append((line.start(), line.end()))
            continue
        spans.extend(m.span() for m in _QUOTED_OUTPUT.finditer(low, line.start(), line.end()))
    return spans


def _alternative_sections(low: str) -> list[tuple[int, int]]:
    """Spans under a markdown heading that names alternatives, up to the next heading, and
    lower-ranked hypotheses (`Hypothesis 2:`, item 2 of a list ranked most likely first), up to
    the next hypothesis or heading; sorted and disjoint."""
    headings = [m for m in _HEADING.finditer(low) if m.start() == 0 or low[m.start() - 1] == "\n"]
    sections = []
    ends = [h.start() for h in headings[1:]] + [len(low)]
    for heading, end in zip(headings, ends[: len(headings)], strict=True):
        if _ALTERNATIVE.match(heading.group(1)):
            sections.append((heading.end(), end))
    return _merged(sections + _ranked_sections(low, [h.start() for h in headings], 2))


def _ranked_sections(low: str, headings: list[int], rank: int) -> list[tuple[int, int]]:
    """Sections opened by a hypothesis (or an item of a list ranked most likely first)
    numbered `rank` or more (`rank` 1 only: the first hypothesis), each up to the next
    hypothesis, item or heading."""
    marks: list[tuple[int, int]] = []
    ranked_list = False
    for line in _LINE.finditer(low):
        if line.end() == line.start():
            continue
        item = _RANKED_ITEM.match(low, line.start(), line.end())
        if item is None and ranked_list:
            item = _NUMBERED_ITEM.match(low, line.start(), line.end())
        if item is not None:
            marks.append((line.start(), int(item.group(1))))
        elif _RANKED_INTRO.search(low, line.start(), line.end()):
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
    return bool(_OBSERVATION.search(lead)) and not _RELATIVE_END.search(lead[-TAIL_REACH:])


def _clause(low: str, start: int, end: int) -> list[Segment]:
    """A clause as segments: cause (`blamed`, strong when an explicit cue says so), effect,
    exonerating, or a plain mention."""
    clause = low[start:end]
    if question := _OPEN_QUESTION.search(clause):
        asked = Segment(start + question.start(), end, "context")
        return [*(_clause(low, start, start + question.start()) if question.start() else []), asked]
    if _NO_FAULT.search(clause) or (
        _EXONERATING.search(clause) and not _BLAME_CUE.search(_EXONERATING.sub(" ", clause))
    ):
        return [Segment(start, end, "exonerated")]
    if _LIST_HEDGE.search(clause):
        return [Segment(start, end, "listed")]
    if _CAUSE_BEFORE.search(clause):
        return [Segment(start, end, "blamed", strong=True)]
    if (cue := _EVIDENTIAL.search(clause)) and _observed_before(clause, cue.start()):
        return [
            Segment(start, start + cue.end(), "mentioned", observed=True),
            *_clause(low, start + cue.end(), end),
        ]
    if cue := _CAUSE_OF.search(clause):
        return [
            Segment(start, start + cue.start(), "blamed", strong=True),
            Segment(start + cue.end(), end, "effect"),
        ]
    if cue := _AFTER_CUE.search(clause):
        before = Segment(start, start + cue.start(), "effect")
        after = [Segment(start + cue.end(), end, "blamed", strong=True)]
        if _BLAME_CUE.search(clause[: cue.start()]) and not _FAILING.search(clause[: cue.start()]):
            before.role, before.strong = "blamed", True
        if effect := _EFFECT_CUE.search(clause, cue.end()):
            after = [
                Segment(start + cue.end(), start + effect.start(), "blamed", strong=True),
                Segment(start + effect.end(), end, "effect"),
            ]
        return [before, *after]
    if cue := _EFFECT_CUE.search(clause):
        cause_text = clause[: cue.start()]
        strong = bool(_BLAME_CUE.search(cause_text) or _REMEDY.search(cause_text))
        return [
            Segment(start, start + cue.start(), "blamed", strong=strong),
            Segment(start + cue.end(), end, "effect"),
        ]
    if _BLAME_CUE.search(clause) or _REMEDY.search(clause):
        return [Segment(start, end, "blamed", strong=True)]
    if taxonomy.families_in(clause) and not _OBSERVATION.search(clause):
        return [Segment(start, end, "blamed")]
    return [Segment(start, end, "mentioned")]


# ---------------------------------------------------------------- mentions


def _mentions(diagnosis: Diagnosis, truth: Truth) -> list[Mention]:
    low = diagnosis.low
    found: list[Mention] = []
    truth_names = truth.listed
    candidates: list[tuple[int, int, ComponentRef]] = []
    for component in truth.catalog + [
        c for c in truth_names if not any(same(c, k) for k in truth.catalog)
    ]:
        strict = not any(same(component, t) for t in truth_names)
        for start, end in names.find_spans(low, component, strict=strict):
            if not names.is_value_at(low, start):
                candidates.append((start, end, component))
    for start, end, component in _most_specific(candidates, low):
        found.append(_mention(diagnosis, truth, component, start, low[start:end]))
    found.extend(_unknown_components(diagnosis, truth, found))
    found.sort(key=lambda m: m.start)
    _mark_lists(diagnosis, found, truth)
    _release_objects(diagnosis, found)
    return found


def _most_specific(
    candidates: list[tuple[int, int, ComponentRef]], low: str
) -> list[tuple[int, int, ComponentRef]]:
    """Where a name is part of a longer one (`redis-cart` in `redis-cart-0`'s service, the
    service `shippingservice` in the pod `shippingservice-1`), the longer, or the one named
    exactly as written; other components written alike are all kept."""

    def exact(item: tuple[int, int, ComponentRef]) -> bool:
        written = names.canonical(low[item[0] : item[1]])
        return any(names.canonical(n) == written for n in item[2].all_names())

    kept: list[tuple[int, int, ComponentRef]] = []
    widest: tuple[int, int, ComponentRef] | None = None  # the kept match reaching furthest
    for item in sorted(candidates, key=lambda c: (c[0], c[0] - c[1], not exact(c))):
        start, end, component = item
        if widest is None or start >= widest[1] or not _one_family(widest[2], component):
            kept.append(item)
            if widest is None or end > widest[1]:
                widest = item
    return kept


def _one_family(a: ComponentRef, b: ComponentRef) -> bool:
    """Whether one is an instance of the other."""
    return any(
        systems.instance_of(x, y) or systems.instance_of(y, x)
        for x in a.all_names()
        for y in b.all_names()
    )


def _mention(
    diagnosis: Diagnosis, truth: Truth, component: ComponentRef, start: int, written: str
) -> Mention:
    relation = truth.relation(written, component)
    if relation == "sibling":
        component = ComponentRef(name=written.strip("`'\"()[]-_ ."))
    origin = relation in {"exact", "instance", "container"} or truth.owned_by_origin(component)
    foreign = _foreign(diagnosis, truth, start)
    segment = _segment_of(diagnosis, start)
    role: Role = segment.role if segment else "mentioned"
    strong = bool(segment and segment.strong)
    return Mention(
        component, start, role, foreign, origin and not foreign, strong, relation, written=written
    )


def _role(diagnosis: Diagnosis, at: int) -> Role:
    segment = _segment_of(diagnosis, at)
    return segment.role if segment else "mentioned"


def _mark_lists(diagnosis: Diagnosis, mentions: list[Mention], truth: Truth) -> None:
    """`frontend, cart, checkout, ad, currency, ...`: a list of (half or more of) everything the
    application runs, bystanders included, blames none of them; four named culprits are blame."""
    application = sum(1 for c in truth.catalog if c.namespace in truth.namespaces)
    enough = max(LIST_OF_EVERYTHING, math.ceil(application / 2))
    by_segment: dict[int, list[Mention]] = {}
    for mention in mentions:
        segment = _segment_of(diagnosis, mention.start)
        if segment is not None:
            by_segment.setdefault(id(segment), []).append(mention)
    for group in by_segment.values():
        distinct = {names.canonical(m.component.name) for m in group}
        others = {names.canonical(m.component.name) for m in group if not m.origin}
        if len(distinct) >= enough and len(others) >= 2 and _comma_list(diagnosis.low, group):
            for mention in group:
                mention.role = "listed"


def _comma_list(low: str, group: list[Mention]) -> bool:
    gaps = [low[a.start + len(_token_at(low, a.start)) : b.start] for a, b in pairwise(group)]
    coordinated = sum(1 for gap in gaps if _COORDINATED.match(gap))
    return coordinated >= LIST_OF_EVERYTHING - 1


def _by_segment(diagnosis: Diagnosis, mentions: list[Mention]) -> dict[int, list[Mention]]:
    """Mentions grouped by the segment (its id) that holds them, in order."""
    grouped: dict[int, list[Mention]] = {}
    for mention in mentions:
        segment = _segment_of(diagnosis, mention.start)
        if segment is not None:
            grouped.setdefault(id(segment), []).append(mention)
    return grouped


def _segment_of(diagnosis: Diagnosis, at: int) -> Segment | None:
    """The segment holding offset `at` (segments are sorted and disjoint: a binary search)."""
    segments = diagnosis.segments
    i = bisect.bisect_right(diagnosis.starts, at) - 1
    if 0 <= i < len(segments) and segments[i].start <= at < segments[i].end:
        return segments[i]
    return None


_TOKEN = re.compile(r"[a-z0-9_-]+")
TOKEN_REACH = 160
# Patterns anchored at the end of a lead-in (`calls to the X`) read at most this much of it.
TAIL_REACH = 160


def _token_at(low: str, start: int) -> str:
    match = _TOKEN.match(low, start, start + TOKEN_REACH)
    return match.group(0) if match else ""


def _foreign(diagnosis: Diagnosis, truth: Truth, start: int) -> bool:
    """Named in a namespace other than the truth's (stated beside it or in its clause)."""
    if not truth.namespaces:
        return False
    known = {ns.lower() for ns in truth.namespaces}
    token_end = start + len(_token_at(diagnosis.low, start))
    beside = names.prefixed_namespace(diagnosis.low, start) or names.suffixed_namespace(
        diagnosis.low, token_end
    )
    if beside:
        return beside not in known
    segment = _segment_of(diagnosis, start)
    if segment is None:
        return False
    near = diagnosis.low[
        max(segment.start, start - NAMESPACE_REACH) : min(segment.end, token_end + NAMESPACE_REACH)
    ]
    stated = names.stated_namespaces(near)
    return bool(stated) and not stated & known


def _unknown_components(diagnosis: Diagnosis, truth: Truth, known: list[Mention]) -> list[Mention]:
    """Components the catalog does not know, blamed by name (`deployment/nginx-proxy`)."""
    found = []
    known_starts = {m.start for m in known}
    namespaces = {ns.lower() for ns in truth.namespaces}
    for match in _CANDIDATE.finditer(diagnosis.low):
        name = next(g for g in match.groups() if g)
        start = match.start(match.lastindex or 0)
        if start in known_starts or name in namespaces or ":" in name:
            continue
        ref = ComponentRef(name=name)
        if any(names.find(name, c) for c in truth.catalog) or any(
            same(ref, c) for c in truth.catalog
        ):
            continue
        segment = _segment_of(diagnosis, start)
        strong = bool(segment and segment.strong)
        found.append(
            Mention(
                ref,
                start,
                _role(diagnosis, start),
                _foreign(diagnosis, truth, start),
                strong=strong,
            )
        )
    return found


def _release_objects(diagnosis: Diagnosis, mentions: list[Mention]) -> None:
    """In a cause, only the subject and what is coordinated with it (`X and Y are
    misconfigured`) is blamed; another component in it (`X's env var points to Y`, `Y's
    client of X`) is context. Without an origin in the cause, a component after an object
    preposition is context and any other is blamed."""
    grouped = _by_segment(diagnosis, mentions)
    starts = [m.start for m in mentions]
    for segment in diagnosis.segments:
        if segment.role != "blamed":
            continue
        _release_the_affected(diagnosis, segment, grouped.get(id(segment), []))
        inside = [m for m in grouped.get(id(segment), []) if m.role == "blamed"]
        if not inside:
            continue
        lead = diagnosis.low[segment.start : inside[0].start]
        if _PRONOUN_SUBJECT.search(lead) and _OBJECT_BEFORE.search(_tail(lead)):
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
            gap = diagnosis.low[_end_of(diagnosis, previous) : mention.start]
            joined = same(mention.component, previous.component) or _COORDINATED.match(gap)
            if not joined and _OBJECT_BEFORE.search(_tail(gap)):
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
        end = _end_of(diagnosis, mention)
        previous_end = end
        if mention.role != "blamed" or low.startswith("'s", end):
            continue
        if _AFFECTING_BEFORE.search(_tail(gap)):
            mention.role = "effect"


def _all_targets(diagnosis: Diagnosis, segment: Segment, inside: list[Mention]) -> bool:
    """`the init container waits for a legacy-config service`: every component in the cause is
    what its unnamed subject points at; the cause is about the subject (see _blame_the_subject)."""
    previous_end = segment.start
    for mention in inside:
        if not _TARGET_BEFORE.search(_tail(diagnosis.low[previous_end : mention.start])):
            return False
        previous_end = _end_of(diagnosis, mention)
    return True


def _origin_only_as_object(diagnosis: Diagnosis, inside: list[Mention]) -> bool:
    """`kube-proxy, which drops packets to checkout`: another component is the subject and the
    origin only its object."""
    first = inside[0]
    segment = _segment_of(diagnosis, first.start)
    opens = bool(segment and _CLAUSE_OPENING.fullmatch(diagnosis.low[segment.start : first.start]))
    if first.origin or not (
        opens
        or _SUBJECT_AFTER.match(diagnosis.low, (end := _end_of(diagnosis, first)), end + TAIL_REACH)
    ):
        return False
    if segment and _TARGET_BEFORE.search(_tail(diagnosis.low[segment.start : first.start])):
        return False
    previous_end = _end_of(diagnosis, first)
    for mention in inside[1:]:
        gap = diagnosis.low[previous_end : mention.start]
        if mention.origin and not _OBJECT_BEFORE.search(_tail(gap)):
            return False
        previous_end = _end_of(diagnosis, mention)
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
        if any(_coordinated(diagnosis, mention, k) for k in neighbours):
            kept.append(mention)
        else:
            mention.role = "mentioned"


def _coordinated(diagnosis: Diagnosis, a: Mention, b: Mention) -> bool:
    first, second = (a, b) if a.start < b.start else (b, a)
    gap = diagnosis.low[_end_of(diagnosis, first) : second.start]
    return bool(_COORDINATED.match(gap))


def _tail(text: str) -> str:
    """The end of `text` that a pattern anchored at its end (`... to the $`) can reach."""
    return text[-TAIL_REACH:]


def _end_of(diagnosis: Diagnosis, mention: Mention) -> int:
    return mention.start + len(_token_at(diagnosis.low, mention.start))


def _blame_the_referent(
    diagnosis: Diagnosis, mentions: list[Mention], starts: list[int], segment: Segment
) -> None:
    """`its client for Y is misconfigured`: `its` is the previous sentence's subject."""
    i = bisect.bisect_left(starts, segment.start) - 1
    while i >= 0 and mentions[i].role in NOT_CLAIMED:
        i -= 1
    if i < 0:
        return
    home = _segment_of(diagnosis, mentions[i].start)
    while i > 0 and _segment_of(diagnosis, mentions[i - 1].start) is home:
        i -= 1
    mentions[i].role, mentions[i].strong = "blamed", segment.strong
    mentions[i].inferred = True


def _spaced(joined: Joined) -> Joined:
    """A fault type written as an identifier (`container_memory_load`) read as words."""
    joined.text = joined.text.replace("_", " ")
    return joined


def _line_end(low: str, start: int, end: int) -> int:
    found = low.find("\n", start, end)
    return end if found < 0 else found


def _keep_to_the_headline(
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


def _blame_the_subject(diagnosis: Diagnosis) -> None:
    """`X fails to pull its image due to "pull access denied"`, `X requires TLS but its
    certificate is invalid`: a cause naming no component is about the component its clause,
    else its sentence, else the diagnosis is about."""
    mentions = [m for m in diagnosis.mentions if m.role not in NOT_CLAIMED and not m.foreign]
    grouped = _by_segment(diagnosis, diagnosis.mentions)
    starts = [m.start for m in mentions]
    effects_by_clause: dict[int, list[Mention]] = {}
    first_by_sentence: dict[int, Mention] = {}
    for mention in mentions:
        located = _segment_of(diagnosis, mention.start)
        if located is None or located.observed:
            continue
        first_by_sentence.setdefault(located.sentence, mention)
        if located.role == "effect":
            effects_by_clause.setdefault(located.clause, []).append(mention)
    any_blamed = any(m.role == "blamed" for m in mentions)
    for segment in diagnosis.segments:
        if (
            segment.role != "blamed"
            or len(_WORDS.findall(diagnosis.low, segment.start, segment.end)) < 2
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
        if _PRONOUN_SUBJECT.search(text) and referent:
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


def _blame_the_failing(diagnosis: Diagnosis) -> None:
    """Without any cause, a component said to fail is what the diagnosis presents as faulty."""
    failing: dict[int, bool] = {}
    for mention in diagnosis.mentions:
        if mention.role not in {"mentioned", "effect"}:
            continue
        segment = _segment_of(diagnosis, mention.start)
        if segment is None:
            continue
        if id(segment) not in failing:
            failing[id(segment)] = bool(_FAILING.search(diagnosis.low, segment.start, segment.end))
        if failing[id(segment)]:
            mention.role, mention.inferred = "blamed", True


def _blame_only_the_named(diagnosis: Diagnosis) -> None:
    """A diagnosis that says its root cause is not established blames only the components it
    names as a cause: what it reports failing (the subject of a finding, the service whose
    requests failed) is where the fault showed, not a claim about where it lies."""
    for mention in diagnosis.mentions:
        if mention.role == "blamed" and mention.inferred:
            mention.role, mention.inferred = "mentioned", False


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
