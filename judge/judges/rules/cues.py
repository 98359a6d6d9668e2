"""The words and punctuation that say what a passage of a diagnosis does: where a clause breaks,
which cue makes the text after it a cause (`because`, `due to`) or before it one (`causing`),
what blames, exonerates, hedges, reports (a log line, a propagation path), asks, or says there is
no fault. `segments.py` cuts the text with these; `mentions.py` and `blame.py` read the roles of
the components inside. Every pattern is over lowercased text; those written to ignore case are
`Caseless`, which then run without the flag (see `caseless.py`).
"""

from __future__ import annotations

import re

from .caseless import Caseless

SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s]))+[.!?]*")
CLAUSE_BREAK = Caseless(
    r";|,?\s+but\s+|\s+while\s+|\s+whereas\s+|,?\s+although\s+|,?\s+however,?\s+|,\s+and\s+"
    r"|\s*\((?=[^)]*\b(?:sees?|saw|shows?|showed|logs?|logged|reports?|observed)\b)"
    r"|\s+and\s+(?=(?:the\s+)?[\w-]+(?:\s+\w+)?\s+(?:is|are|was|were|looks?|seems?|appears?)"
    r"\s+(?:healthy|fine|running|normal|ok|unaffected))",
)
EXONERATING = Caseless(
    r"\bhealthy(?<!not healthy)(?<!n't healthy)(?<!unhealthy)(?<!otherwise healthy)\b"
    r"|\b(?:is|are|looks?|seems?|appears?)\s+(?:to be\s+)?(?:fine|normal|ok|okay)\b"
    r"|\bnot\s+(?:the\s+)?(?:root\s+)?cause\b|\bnot\s+(?:the|a)\s+(?:problem|issue|culprit)\b"
    r"|\bnot\s+(?:an?\s+)?[\w-]+\s+(?:issue|problem|misconfiguration|fault|bug)\b|\bunaffected\b|\brecovered\b|\bruled?\s+out\b"
    r"|\bno\s+(?:errors?|issues?|problems?|anomal\w+)\b|\bworking\s+(?:fine|normally|correctly|as expected)\b"
    r"|\b(?:functioning|operating|running|behaving)\s+(?:normally|correctly|as expected|fine)\b"
    r"|\bnot\s+(?:involved|related|at fault|responsible)\b|\bexonerat\w+|\bhealthy\b(?=.*\bnot\b)"
    r"|\b(?:only|merely|simply|just)\s+(?:because|due\s+to|as\s+a\s+(?:result|consequence|side[- ]effect))\b",
)
AFTER_CUE = Caseless(
    r"(?:\bbecause(?:\s+of)?\b|\bdue\s+to\b|\bcaused\s+by\b|\b(?:as\s+)?a\s+result\s+of\b|\bthe\s+result\s+of\b"
    r"|\bstem(?:s|med|ming)?\s+from\b|\bowing\s+to\b|\btriggered\s+by\b|\battribut\w+\s+to\b"
    r"|\boriginat\w+\s+(?:in|from|at|with)\b|\blies\s+(?:in|with)\b"
    r"|\broot[-_ ]?cause[s]?\b(?:\s+(?:is|was|appears to be|seems to be|of\s+[^,.]*?\s+is|lies\s+in|:)|[\"']?\s*:)?"
    r"|\bfaulty[-_ ]components?\b[\"']?\s*:|\b(?:the\s+)?cause\s*(?:is|was)?\s*:"
    r"|\bculprit\s+(?:is|was)\b|\b(?:problem|issue|fault)\s+(?:is|lies|was)\s+(?:in|with)\b"
    r"|\bsince\b|\bbroken\s+by\b|\b(?:affected|impacted|hit|slowed(?:\s+down)?|degraded)\s+by\b)"
    r"|^\W*hypothesis\s*#?\s*\d*\s*[:.)-]",
)
EFFECT_CUE = Caseless(
    r"(?:\bcausing\b|\bcaus(?:es|ed)\s+(?!by)|\blead(?:s|ing)?\s+to\b|\bled\s+to\b|\bresult(?:s|ed|ing)?\s+in\b"
    r"|\bwhich\s+(?:in\s+turn\s+)?(?:prevents|breaks|makes|means|blocks|triggers)\b|\bso\s+that\b"
    r"|\btherefore\b|\bthus\b|\bhence\b|\bpreventing\b|\bmaking\b|\bbreaking\b|\bconsequently\b"
    r"|\bso\s+(?=(?:the|pods?|requests?|it|its|they|calls?|traffic)\b)"
    r"|\baffect(?:s|ing)?\b(?!\s+by)|\bimpact(?:s|ing)\b(?!\s+by)"
    r"|\b(?:propagat|cascad|spread)\w*\s+(?:\w+\s+)?(?:to|into|through)\b)"
    r"|,\s*so\b",  # after the others: they begin with a word, it with a comma
)
# A clause that opens by saying it is a consequence (`As a result, the ReplicaSet cannot ...`), or
# by what users see (`Users observe empty carts and checkout blocking`): a symptom, whatever it
# names.
CONSEQUENCE_OPENING = Caseless(
    r"\W*(?:as\s+a\s+(?:result|consequence)\b(?!\s+of)|consequently\b|in\s+turn\b"
    r"|(?:the\s+|end[- ])?(?:users?|customers?|clients?|shoppers?)\s+(?:\w+\s+)?"
    r"(?:observe|see|experience|notice|encounter|face|hit|get)[sd]?\b)",
)
BLAME_CUE = Caseless(
    r"\broot[-_ ]?cause\b|\bculprit\b|\bat\s+fault\b|\bresponsible\b|\bfaulty\b|\bmis-?configur\w*"
    r"|\bwrong(?:ly)?\b|\bincorrect(?:ly)?\b|\binvalid\b|\bbad\b|\bbroken\b|\bbuggy\b|\bmissing\b|\blacks?\b"
    r"|\bnon-?existent\b|\bdoes(?:\s+not|n't)\s+exist\b|\bset\s+to\b|\bconfigured\s+(?:to|with|for)\b"
    r"|\bpoints?\s+to\b|\bpointing\s+to\b|\b(?:was|were|been|is|are)\s+(?:changed|modified|altered|updated|scaled|deleted|removed|revoked|patched)\b"
    r"|\bexpired\b|\bmismatch\w*|\bexhaust\w*|\btoo\s+(?:low|high|small|large|aggressive|short|strict|many)\b"
    r"|\bindicat\w+|\bsuggest\w*|\bthe\s+(?:problem|issue|fault)\s+is\b|\bis\s+the\s+(?:problem|issue|cause)\b"
    r"|\bblock\w*\b|\bdenies\b|\bdenied\b|\brevoked\b|\bcorrupt\w*|\bleak\w*|\bflood\w*|\boverload\w*"
    r"|\bdisabled\b|\b(?:turned|switched)\s+off\b|\b(?:lower|higher|shorter|longer|smaller|larger)\s+than\b"
    r"|\bbottleneck\b|\bmost\s+likely\b|\bprobabl[ey]\b|\bi\s+(?:suspect|believe)\b|\bmisrout\w*|\bshadow\w*|\bexceed\w*|\binsufficient\b|\bdeadlock\w*|\bcontention\b|\bstale\b",
)
# `Message queue logs show consumers blocked ...`, `Web metrics show worker utilization at
# capacity`: a finding read off a component's telemetry is evidence, not a cause (unless a cause
# cue says so: `... metrics show saturation, the root cause`).
TELEMETRY_SHOWS = re.compile(
    r"\W*(?:the\s+)?(?:[\w.-]+\s+){1,3}?(?:logs?|metrics?|events?|traces?|dashboards?|alerts?)\s+"
    r"(?:\w+\s+)?(?:show|shows|showed|report|reports|reported|record|records|recorded|reveal\w*"
    r"|contain\w*|are|were|look|looks|looked)\b"
)
# `X has the root cause Y`, `X holds the likely cause`: the cause lies in X, which is blamed too.
HOLDER_BEFORE = re.compile(
    r"\b(?:has|have|had|holds?|held|contains?|carries)\s+(?:the|a|an|its)\s+(?:likely\s+|probable\s+|actual\s+|real\s+)?$"
)
# `X ..., which is the root cause`, `X is the culprit`: the cause is written before the cue.
CAUSE_BEFORE = Caseless(
    r"\b(?:which|that|this|it|and)\s+(?:is|was|seems\s+to\s+be|appears\s+to\s+be)\s+(?:the\s+|a\s+)?"
    r"(?:likely\s+|probable\s+)?(?:root[- ]?cause|culprit|cause)\b"
    r"|\bis\s+(?:the\s+)?(?:root[- ]?cause|culprit)\b\s*(?:[.;,:(]|$)",
)
LIST_HEDGE = Caseless(
    r"\b(?:could|might|may)\s+be\s+(?:any|one)\s+of\b"
    r"|\b(?:could|might|may)\s+be\s+(?:either\s+)?[\w`'\"-]+(?:\s*,\s*[\w`'\"-]+)+,?\s+or\s+[\w`'\"-]+"
    r"|\bsuspects\b|\bsuspect\s*(?:list|components?)?\s*:|\bcandidates?\b|\bany\s+of\s*:"
    r"|\bone\s+of\s+(?:these|the\s+following)\b|\bcheck(?:ing)?\s+(?:each|all|every)\b",
)
# Ranked hypotheses: the most likely one is the claim; a sentence opened by one of these, or a
# line under a heading such as `## Alternative hypotheses`, is an alternative, not a claim.
ALTERNATIVE = Caseless(
    r"\W*(?:\d+[.)]\s*)?(?:(?:much\s+|far\s+)?less\s+likely|unlikely|alternatively|alternative\s+"
    r"(?:hypothes[ie]s|explanations?|causes?)|another\s+possibility|other\s+possibilities"
    r"|lower[- ]probability|low\s+probability|(?:second|third|fourth)[- ](?:most\s+likely|hypothesis)"
    r"|ruled\s+out)\b",
)
# `X could be the root cause of Y`: the cause before it, what it caused after it.
CAUSE_OF = re.compile(
    r"\b(?:is|are|was|were|be|being)\s+(?:the\s+|a\s+|one\s+)?(?:likely\s+|probable\s+|main\s+|real\s+)?"
    r"(?:root[-_ ]?)?cause\s+(?:of|for|behind)\b"
)
RELATIVE_END = re.compile(r"\b(?:which|that|this|it|what|and)\s*$")
# `the logs of X indicate Y`: what is observed comes before the verb, what is claimed after it.
EVIDENTIAL = re.compile(
    r"\b(?:indicat(?:e|es|ed|ing|ive\s+of)|suggest(?:s|ed|ing|ive\s+of)?)\b(?:\s+that\b)?"
)
HEADING = re.compile(r"[ \t]*(?:#{1,6}[ \t]+|\*\*)([^\n]*)")
LINE = re.compile(r"[^\n]*")
# A line that reports, not claims: a propagation path, a log line, a table row.
ARROW = r"\s*(?:--?\([\w ./-]*\)--?>|-->|->|→)\s*"
CONTEXT_LINE = re.compile(
    r"[\s>*`-]*(?:propagation[\s_-]*path|call[\s_-]*(?:path|chain)|trace[\s_-]*path)\s*:"
    r"|[\s>*`#-]*(?:recommended|suggested|proposed)\s+(?:actions?|fix(?:es)?|remediation|mitigation)\s*:"
    rf"|[\s>*`-]*[\w.\[\]-]+(?:{ARROW}[\w.\[\] -]+?){{2,}}[\s`.]*$"
    r"|[\s>*`\[-]*\d{4}-\d{2}-\d{2}[ t]\d{1,2}:\d{2}|[\s>*`\[-]*\d{1,2}:\d{2}:\d{2}[.,\d]*\s"
)
# A line that tells what the fault did downstream: a propagation step (`- Service a -> Service b:
# condition; effect: ...`, as ITBench writes its ground truth and its agents their propagations)
# or an alert fired on a component (`- HighRequestErrorRate on Service b: ...`; over the text as
# written, for the alert's CamelCase name). What it names is where the fault travelled or showed.
_ENDPOINT = r"[\w./\[\]-]+(?: [\w./\[\]-]+){0,3}"
STEP_LINE = re.compile(rf"[ \t>*`-]*{_ENDPOINT}{ARROW}{_ENDPOINT}:\s")
ALERT_LINE = re.compile(
    r"[ \t>*`-]*[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+\s+(?:on|for|at)\s+[^\n:]{1,120}:\s"
)
# A labelled list of what the fault did (`Symptoms: A; B.`, `Affected: X, Y.`, `Impact: ...`), up
# to the end of its line or the next label after a full stop.
EFFECT_LABEL = Caseless(
    r"(?:(?<=^)|(?<=[\n.:;])|(?<=\*\*))[ \t>*]*(?:symptoms?|alerts?|affected(?:\s+components?)?|impact(?:ed)?"
    r"|victims?|observed)(?:\*\*)?\s*:(?:\*\*)?",
)
NEXT_LABEL = re.compile(r"\.\s+(?:\*\*)?[A-Z][\w ]{0,30}(?:\*\*)?:|\n")
# SREGym's structured root cause, `[fault_spec] component=X; namespace=Y || description` (what its
# problems hand the judge, and a form an agent may be asked to answer in): the fields blame X in Y.
FAULT_SPEC_FIELDS = re.compile(r"\[fault_spec\]\s*(component\s*=[^|\n]{0,400}?)\s*\|\|")
# `the geo user's roles`, `the admin user's password`: an account a database knows by that name,
# not the component (the `user` service included).
ACCOUNT = re.compile(
    r"\b[a-z][\w-]*\s+user(?:'s)?(?![\w-])(?=\s*(?:[\w/-]+\s+){0,2}?(?:roles?|privileges?|permissions?"
    r"|passwords?|credentials?|grants?|access|account)\b)"
)
# A root cause written as a name (`Root cause: cache (Service).`, `Root cause: Pod ad in namespace
# otel-demo.`): the headline up to its full stop, and what may sit around the names in one.
NAMED_ROOT_CAUSE = re.compile(
    r"(?:^|(?<=[\n>*]))[ \t*>]*root[ _-]?causes?\s*:\**\s*([^.\n]{1,200})"
)
HEADLINE_FILLER = re.compile(
    r"\([\w\s-]{1,40}\)|\bin\s+(?:the\s+)?namespace\s+[\w-]+|\b(?:and|the|[a-z]*chaos|schedule|deployments?"
    r"|services?|pods?|statefulsets?|daemonsets?|configmaps?|secrets?|nodes?|namespace)\b|[,;:/`'\"*]"
)
# An inline quote of pasted output: backticks or quotes around a log line.
QUOTED_OUTPUT = re.compile(
    r"`[^`\n]*(?:\d{1,2}:\d{2}:\d{2}|\|[^`\n]*\||\b(?:error|warn\w*|info|debug|fatal)\b\s*[:|\]])[^`\n]*`"
    r"|\"[^\"\n]*(?:\d{1,2}:\d{2}:\d{2}|\|[^\"\n]*\|)[^\"\n]*\""
)
# Ranked hypotheses: `Hypothesis 2:` (and below) opens an alternative; so does item 2 (and below)
# of a numbered list introduced as ranked ("most likely first").
RANKED_ITEM = re.compile(
    r"[\s>*#-]*(?:\*\*)?(?:hypothesis|candidate|possibility|option|suspect)\s*#?\s*(\d+)\b"
)
NUMBERED_ITEM = re.compile(r"[\s>*-]*(\d+)[.)]\s")
RANKED_INTRO = re.compile(
    r"\b(?:most\s+likely\s+first|ranked|in\s+order\s+of\s+(?:likelihood|probability|confidence)"
    r"|(?:ordered|sorted)\s+by\s+(?:likelihood|probability|confidence))\b"
)
OBSERVATION = Caseless(
    r"\blogs?\b|\blogged\b|\bshows?\b|\bsees?\b|\bshowing\b|\breports?\b|\bobserv\w+|\bkubectl\b"
    r"|\bevents?\b|\bmetrics?\b|\btraces?\b|\breceiv\w+|\balerts?\b|\balarms?\b",
)
# What follows a component that is the subject of its clause (`X is`, `X, which`, `X has`).
SUBJECT_AFTER = Caseless(
    r"[`'\")]*\s*(?:,\s*(?:which|that)\b|(?:is|are|was|were|has|have|had|does|did|keeps?|drops?|sends?"
    r"|blocks?|rejects?|returns?|holds?|uses?|floods?|crash\w*|fails?|failed)\b)",
)
# Prepositions that make what follows the target of something else (`waits for X`, `calls to X`).
TARGET_BEFORE = Caseless(
    r"\b(?:to|towards?|for|from|by|via|against|than|instead\s+of|reach\w*|connect\w*\s+to|calls?\s+to"
    r"|requests?\s+to|waiting\s+for)\s+(?:the\s+|its\s+|a\s+|an\s+|their\s+)?(?:[\w-]+\s+){0,2}[`'\"(]?$",
)
# What may precede the subject of a clause (`most likely the search service ...`).
CLAUSE_OPENING = Caseless(
    r"[\W\d]*(?:(?:the|most|likely|probably|possibly|maybe|perhaps|i|we|suspect|believe|think|that|so"
    r"|deployment|service|pod)[\s:,`'\"]+)*",
)
AFFECTING_BEFORE = re.compile(
    r"\b(?:overload|overwhelm|flood|saturat|exhaust|starv|hammer|affect|impact|swamp|bombard|hit"
    r"|slow|degrad|stress(?!chaos))\w*\s+(?:down\s+)?(?:the\s+|its\s+|their\s+|all\s+|every\s+)?"
    r"(?:[\w-]+\s+)?(?:(?:for|of|on|in|to|at)\s+(?:the\s+)?)?[`'\"(]?$"
)
PRONOUN_SUBJECT = Caseless(r"^\W*(?:its|their|it|they|his|her|the\s+(?:client|caller)s?)\b")
REMEDY = Caseless(
    r"\b(?:fix|restore|roll(?:ing)?\s*(?:\w+\s+)?back|revert|re-?add|correct|set\s+(?:it\s+)?back|scale\s+(?:\w+\s+)?back)\b",
)
FAILING = Caseless(
    r"\bfail\w*|\bcrash\w*|\berror\w*|\bdown\b|\bbroken\b|\bnot\s+working\b|\bunavailable\b|\bunhealthy\b"
    r"|\brestart\w*|\bstuck\b|\bdegraded\b|\bproblem\w*|\bissues?\b|\bfaulty\b|\boomkilled\b|\bpending\b"
    r"|\bnot\s+ready\b|\bnever\s+ready\b|\bnotready\b|\brefused\b|\btim(?:es|ed|ing)?\s*out\b|\b[45]\d\d\b",
)
NO_FAULT = Caseless(
    r"\bno\s+(?:[\w-]+\s+)?(?:faults?|issues?|problems?|anomal\w+|faulty\s+components?|root[- ]?causes?|errors?)"
    r"\s+(?:\w+\s+){0,3}(?:found|detected|identified|observed|present)\b"
    r"|\b(?:could\s+not|couldn't|unable\s+to|cannot|can't|did\s+not|didn't|failed\s+to)\s+"
    r"(?:identify|find|determine|locate|pinpoint|detect)\s+(?:a\s+|any\s+|the\s+|an\s+)?(?:\w+\s+)?"
    r"(?:root[- ]?causes?|faults?|issues?|problems?|culprits?|anything|faulty)\b"
    r"|\b(?:everything|all\s+(?:\w+\s+)?(?:pods|services|components|deployments))\s+(?:is|are|appears?|looks?|seems?)"
    r"\s+(?:to\s+be\s+)?(?:healthy|fine|normal|running)\b|\bno\s+faulty\b|\bnothing\s+(?:is\s+)?wrong\b"
    r"|\bno\s+fault\b|\b(?:anomal\w+|faults?|incidents?|problems?)\s+detected\s*:\s*no\b"
    r"|\bdetection(?:\s+answer)?\s*[:=]\s*[\"'`]?no\b|\bno[_ -]op\b",
)
OPEN_QUESTION = Caseless(
    r"\b(?:verify|check|confirm|determine|inspect|investigate|establish|test|see|whether\s+or\s+not)"
    r"\s+(?:[\w-]+\s+){0,2}?(?:whether|if)\b",
)
"""`verify whether the refused IPs were serving recommendation pods`: what is to be checked is a
question, not a claim."""
UNDETERMINED = Caseless(
    r"\b(?:root|underlying)\s+causes?\s+(?:\w+\s+){0,2}(?:cannot|could\s+not|can't|couldn't|"
    r"(?:is|was|has|remains?)\s+not|(?:is|was|has|remains?)\s+yet\s+to)\s+(?:be\s+|been\s+)?"
    r"(?:established|determined|identified|confirmed)"
    r"|\bno\s+(?:root|underlying)\s+causes?\s+(?:can|could)\s+be\s+(?:established|determined)"
    r"|\b(?:does|do|did)\s+not\s+establish\s+(?:the\s+)?(?:underlying\s+|root\s+)?(?:cause|trigger)"
    r"|\b(?:root|underlying)\s+causes?\s+(?:is\s+|remains\s+)?(?:unknown|undetermined|unclear)"
    r"|\binsufficient\s+evidence\b",
)
"""The diagnosis says its root cause is not established: it claims no cause by implication."""
OBJECT_BEFORE = Caseless(
    r"\b(?:to|reach|reaching|connect(?:ing)?\s+to|connections?\s+to|calls?\s+to|requests?\s+to|talk(?:ing)?\s+to"
    r"|rout\w*\s+to|points?\s+to|pointing\s+to|instead\s+of|for|on|in|from|with|against|towards?|into|by|of|via|than)"
    r"\s+(?:the\s+|its\s+|a\s+|an\s+|their\s+)?(?:[\w-]+\s+){0,2}[`'\"(]?$",
)
WORDS = re.compile(r"[a-z][a-z']*")
# Terse notes (`svc/x: targetPort 9999 -> refused; fix it.`) are written in clauses; a salad is not.
CLAUSE_PUNCTUATION = re.compile(r"[;:,](?=\s)|->|=>|\.(?=\s+\S)")
FUNCTION_WORDS = frozenset(
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
COORDINATED = re.compile(
    r"^[`'\")]*(?:\s*(?:deployments?|services?|pods?|statefulsets?)\s*)?(?:,\s*|\s+(?:and|or|as well as|plus|along with)\s+"
    r"|\s*,\s*(?:and|or)\s+)(?:the\s+|both\s+)?[`'\"(]*$"
)
CANDIDATE = Caseless(
    r"\b(?:deployments?|services?|statefulsets?|daemonsets?|configmaps?|secrets?|pods?|cronjobs?|nodes?"
    r"|clusters?|jobs?|replicasets?|ingress(?:es)?|networkpolic(?:y|ies)|horizontalpodautoscalers?"
    r"|persistentvolumeclaims?)\s*/\s*([a-z0-9][a-z0-9._-]*[a-z0-9])"
    r"|\bthe\s+[`'\"]?([a-z][a-z0-9]*(?:-[a-z0-9]+)+)[`'\"]?\s+(?:deployment|service|pod|statefulset|daemonset|configmap|secret)s?\b"
    r"|`([a-z][a-z0-9]*(?:-[a-z0-9]+)+)`"
    r"|\b(?:deployment|service|statefulset|daemonset|configmap|secret|pod|cronjob|job|replicaset"
    r"|networkpolicy|\w+chaos|schedule)\s+([a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?![\w.-])"
    r"|(?<![\w./-])([a-z][a-z0-9]*(?:-[a-z0-9]+)*-(?:service|svc|server|api|db|proxy|gateway|worker|controller|operator))"
    r"(?![\w.-])",
)
