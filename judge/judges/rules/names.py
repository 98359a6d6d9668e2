"""How people write a component's name, as one compiled pattern per component.

`user-service` is also `user-svc`, `userservice`, `user service`, a pod `user-service-7d9f8-x2k1p`
and `social-network/Deployment/user-service`; `mongodb-geo` is also `mongo-geo` and `geo-db`;
`postgresql` is `postgres`; `valkey-cart` and `redis-cart` are one another. A name that is a
common word (`rpc`, `basic`) or a namespace (`namespace/hotel-reservation`) is only recognised
next to its kind (`the rpc ConfigMap`, `the hotel-reservation namespace`), and an origin that is
every deployment (`*`) by a phrase that says so (`all deployments`, `every service`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ground_truth.models import ComponentRef

from . import literals

_SUFFIX_WORDS = r"service|svc|srv|deployment|deploy|pods?|server|container|app|microservice|statefulset|daemonset"
_POD_HASH = r"(?:-(?=[a-z]*\d)[a-z0-9]{1,10}){0,2}"
_NAME_CHAR = "[a-z0-9_-]"
_LEFT = f"(?<!{_NAME_CHAR})"
_RIGHT = r"(?![a-z0-9_]|-[a-z])"
# `profile databases` is mongodb-profile, not profile (unless the name is a store's own).
_NOT_STORE_AFTER = r"(?!\s+(?:databases?|db|cache|mongo\w*|redis|memcached|datastore)\b)"
STORE_SYNONYMS: dict[str, tuple[str, ...]] = {
    "mongodb": ("mongodb", "mongo"),
    "mongo": ("mongodb", "mongo"),
    "postgresql": ("postgresql", "postgres", "postgre"),
    "postgres": ("postgresql", "postgres"),
    "redis": ("redis", "valkey"),
    "valkey": ("valkey", "redis"),
    "memcached": ("memcached", "memcache"),
}
# Token spellings that name the same thing inside a name (`geo-db` is `the geo database`).
TOKEN_SYNONYMS: dict[str, tuple[str, ...]] = {"db": ("db", "database")}
# Names that are ordinary words: recognised only beside their kind or in a qualified form.
COMMON_WORDS = frozenset(
    [
        "all",
        "rpc",
        "basic",
        "default",
        "main",
        "config",
        "app",
        "api",
        "data",
        "cache",
        "system",
        "network",
        "cluster",
        "node",
        "web",
        "server",
        "service",
        "storage",
        "memory",
        "auth",
    ]
)
# Service names that are also English words (`rate`, `user`, `search`): a bare mention of one the
# truth does not list counts unless it is part of a compound (`error rate`, `user requests`).
SERVICE_WORDS = frozenset(
    [
        "ad",
        "cart",
        "rate",
        "user",
        "search",
        "profile",
        "quote",
        "email",
        "payment",
        "shipping",
        "accounting",
        "currency",
        "reservation",
        "recommendation",
        "text",
        "media",
        "url",
        "post",
        "home",
        "checkout",
    ]
)
_NOT_A_SERVICE_BEFORE = (
    r"(?<!error )(?<!errors )(?<!success )(?<!failure )(?<!request )(?<!retry )(?<!hit )"
    r"(?<!miss )(?<!drop )(?<!sample )(?<!end )(?<!high )(?<!low )(?<!the end )"
    r"(?<!admin )(?<!root )(?<!database )(?<!db )"
)
_NOT_A_SERVICE_AFTER = (
    r"(?!\s+(?:limits?|limiting|limiter|names?|ids?|agents?|experience|input|interface|space|data"
    r"|accounts?|traffic|sessions?|requests?|queries|page|pages|results?|engine|box|bar|logs?"
    r"|paths?|flows?|actions?|operations?|ui|credentials?|roles?)\b)(?!-facing)"
)
# `quote this sentence`, `rate the answer`: a service word followed by an object is a verb.
_NOT_A_VERB = r"(?![a-z0-9_-]|\s+(?:this|these|those|the|a|an|it|them|its|their)\b)"
KIND_WORDS: dict[str, str] = {
    "configmap": r"config\s*map|configmap|config",
    "namespace": r"namespace|ns",
    "node": r"node|worker|host",
    "secret": r"secret",
    "cronjob": r"cron\s*job|cronjob",
    "topic": r"topic",
    "clusterrole": r"cluster\s*role|clusterrole",
}
# Origins a truth names by kind only (`the stale PersistentVolumes`, `disk read/write
# operations`): any mention of the kind names them.
KIND_ONLY = {
    "persistentvolume": r"persistent\s*volumes?|pvs?|pvcs?|persistent\s*volume\s*claims?|volumes?",
    "namespace": r"namespaces?",
    "disk": r"disks?|storage|volumes?|block\s+devices?|sectors?",
}
_WILDCARD_KIND = {
    "deployment": r"deployments|services|microservices|workloads|pods|components",
    "node": r"nodes?|worker nodes?|kubelet",
    "configmap": r"config\s*maps?|configmaps?",
}


def tokens(name: str) -> list[str]:
    """A name's lowercased parts, split on `-`, `_`, `.` and whitespace."""
    return [t for t in re.split(r"[-_\s.]+", name.lower()) if t]


_CANONICAL_STORE = {
    "mongo": "mongodb",
    "postgres": "postgresql",
    "valkey": "redis",
    "memcache": "memcached",
}
_DROPPED = {"service", "svc", "srv", "deployment", "deploy", "db", "database"}


@lru_cache(maxsize=8192)
def canonical(name: str) -> str:
    """A key two spellings of one component share: `user-svc`/`userservice`/`user-service`."""
    parts = [_CANONICAL_STORE.get(t, t) for t in tokens(name)]
    while len(parts) > 1 and parts[-1] in _DROPPED:
        if parts[-1] in {"db", "database"} and parts[0] not in STORE_SYNONYMS:
            break
        parts.pop()
    joined = "".join(parts)
    for suffix in ("service", "svc"):
        if joined.endswith(suffix) and len(joined) > len(suffix):
            joined = joined[: -len(suffix)]
    return joined


def keys(component: ComponentRef) -> frozenset[str]:
    """The `canonical` keys of all of a component's names: two components that share one are
    the same component (see `truth.same`)."""
    return frozenset(canonical(n) for n in component.all_names())


def _spellings(token: str) -> tuple[str, ...]:
    return STORE_SYNONYMS.get(token) or TOKEN_SYNONYMS.get(token) or (token,)


def _token_regex(token: str) -> str:
    spellings = _spellings(token)
    if len(spellings) > 1:
        return "(?:" + "|".join(re.escape(s) for s in spellings) + ")"
    return re.escape(spellings[0])


def _body(parts: list[str]) -> str:
    return r"[-_ .]?".join(_token_regex(p) for p in parts)


def _variants(name: str) -> list[list[str]]:
    """Token lists for one name: itself, without `-db`, a store name moved (`geo-db`), the first
    label of a dotted name (`pod-policy` of `pod-policy.validation.k8s.io`), and the first two or
    three words of a long one (`tidb-operator` of `tidb-operator-controller-manager`)."""
    parts = tokens(name)
    variants = [parts]
    if "." in name and "-" in name.split(".")[0]:
        variants.append(tokens(name.split(".")[0]))
    if len(parts) >= 4:
        variants.extend([parts[:2], parts[:3]])
    if len(parts) > 2 and parts[-1] in {"db", "database"} and parts[0] in STORE_SYNONYMS:
        variants.append(parts[:-1])
    base = variants[-1]
    if len(base) > 1 and base[0] in STORE_SYNONYMS:
        variants.append([*base[1:], "db"])
    return variants


@lru_cache(maxsize=8192)
def name_regex(
    name: str, kind: str = "", strict: bool = False, plain: bool = False
) -> re.Pattern[str]:
    """The pattern for one name; `strict` asks a bare common word for a qualifier; `plain`
    takes the name as written, whatever word it is (a system that names its components `cache`
    and `database`)."""
    parts = tokens(name)
    if name in {"*", "all"} and kind.lower() in KIND_ONLY:
        return re.compile(rf"\b(?:{KIND_ONLY[kind.lower()]})\b")
    if name in {"*", "all"} and kind.lower() == "node":
        return re.compile(r"\b(?:worker\s+|the\s+|that\s+|one\s+|a\s+)?nodes?\b(?!/)|\bkubelet\b")
    if name in {"*", "all"}:
        words = _WILDCARD_KIND.get(kind.lower(), _WILDCARD_KIND["deployment"])
        return re.compile(
            rf"\b(?:{words}|deployment|service|pod|workload)\s*/\s*(?:all|\*)(?![\w-])"
            rf"|\b(?:all|every|each|across)\s+(?:of\s+)?(?:the\s+)?(?:[\w-]+\s+)?(?:{words})\b"
            rf"|\b(?:{words})\s+(?:are|were)\s+all\b|\bcluster[- ]wide\b|\bevery\s+\w+\s+(?:{words})\b"
        )
    if not parts:
        return re.compile(r"(?!x)x")
    service_named = len(parts) > 1 and parts[-1] in {"service", "svc"}
    alternatives = []
    for variant in _variants(name):
        if service_named and variant is not None and variant[-1] in {"service", "svc"}:
            body = _body(variant[:-1]) + rf"[-_ ]?(?:service|svc|srv)(?:[-_ ]?(?:{_SUFFIX_WORDS}))?"
        elif variant[-1].isdigit():
            body = (
                _body(variant) + r"(?![-.]?\d)"
            )  # `frontend-2` is one instance, not `frontend2-0`
        elif len(variant) < len(parts) - (parts[-1] in {"db", "database"}):
            # A long name's first words (`ts-order` of `ts-order-other-service`) with a kind
            # glued on (`ts-order-service`) is another name, not the long one shortened.
            body = _body(variant) + rf"(?![-_](?:{_SUFFIX_WORDS}))(?:\s(?:{_SUFFIX_WORDS}))?"
        else:
            body = _body(variant) + rf"(?:[-_ ]?(?:{_SUFFIX_WORDS}))?"
        alternatives.append(body + ("" if variant[-1].isdigit() else _POD_HASH))
    bare = "(?:" + "|".join(alternatives) + ")"
    if plain:
        return re.compile(_LEFT + bare + _RIGHT)
    kind_low = kind.lower()
    needs_kind = kind_low == "namespace" or (len(parts) == 1 and parts[0] in COMMON_WORDS)
    if strict and len(parts) == 1 and parts[0] in SERVICE_WORDS:
        # `_LEFT` first (lookbehinds at one offset commute): `_starts` reads it
        return re.compile(_LEFT + _NOT_A_SERVICE_BEFORE + bare + _RIGHT + _NOT_A_SERVICE_AFTER)
    if len(parts) == 1 and parts[0] in SERVICE_WORDS:
        bare += _NOT_A_VERB
    if needs_kind and (strict or kind_low):
        kind_words = KIND_WORDS.get(kind_low) or (
            re.escape(kind_low) if kind_low else _SUFFIX_WORDS
        )
        quote = r"[`'\"]?"
        return re.compile(
            rf"(?:{kind_words})\s*(?:/|:|named|called)?\s*{quote}{_LEFT}{bare}{_RIGHT}"
            rf"|{_LEFT}{bare}{_RIGHT}{quote}\s*\(?\s*(?:{kind_words})\b"
            rf"|[`'\"]{bare}[`'\"]"
        )
    store = any(p in STORE_SYNONYMS or p in {"db", "database"} for p in parts)
    return re.compile(_LEFT + bare + _RIGHT + ("" if store else _NOT_STORE_AFTER))


@lru_cache(maxsize=8192)
def _needed_words(name: str) -> tuple[tuple[tuple[str, ...], ...], ...] | None:
    """What a text must hold for `name_regex(name, ...)` to match in it, whatever its kind,
    `strict` and `plain`: for one of the name's variants, one spelling of each of its tokens
    (each pattern `name_regex` builds holds a variant's tokens in every alternative). None when
    that cannot be said (a wildcard's patterns name no token)."""
    if name in {"*", "all"}:
        return None
    parts = tokens(name)
    service_named = len(parts) > 1 and parts[-1] in {"service", "svc"}
    needed = []
    for variant in _variants(name) if parts else []:
        written = variant[:-1] if service_named and variant[-1] in {"service", "svc"} else variant
        if not written:
            return None
        needed.append(tuple(_spellings(t) for t in written))
    return tuple(needed)


NameSearcher = tuple[
    tuple[tuple[tuple[str, ...], ...], ...] | None, re.Pattern[str], re.Pattern[str] | None
]
Searcher = list[NameSearcher]
"""A component's names as `find_spans` searches them: each name's needed words, its pattern and
where a match of it can begin (`_starts`)."""


def searcher(component: ComponentRef, strict: bool = False, plain: bool = False) -> Searcher:
    """What `find_spans` runs for `component` (a caller searching many texts keeps it)."""
    kind = component.kind or ""
    return [_name_searcher(n, kind, strict, plain) for n in component.all_names()]


@lru_cache(maxsize=8192)
def _name_searcher(name: str, kind: str, strict: bool, plain: bool) -> NameSearcher:
    pattern = name_regex(name, kind, strict, plain)
    starts = _starts(pattern)
    return _needed_words(name), pattern if starts else literals.guarded(pattern), starts


def _starts(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """Where a match of a pattern opening with `_LEFT` can begin (`literals.word_starts`); None
    for a pattern that opens otherwise or whose first characters cannot be told."""
    chars = literals.first_characters(pattern) if pattern.pattern.startswith(_LEFT) else None
    return None if chars is None else literals.word_starts(chars, _NAME_CHAR)


def find(text_lower: str, component: ComponentRef, strict: bool = False) -> list[int]:
    """Start offsets of every mention of `component` in lowercased text."""
    return [start for start, _ in find_spans(text_lower, component, strict)]


def find_spans(
    text_lower: str, component: ComponentRef, strict: bool = False, plain: bool = False
) -> list[tuple[int, int]]:
    """`[start, end)` of every mention of `component` in lowercased text (the longest match of
    its names at each start), sorted."""
    return spans_of(text_lower, searcher(component, strict, plain))


def spans_of(text_lower: str, searched: Searcher) -> list[tuple[int, int]]:
    """`find_spans` with the component's `searcher`. A name none of whose variants has all its
    words in the text is not searched: none of its patterns could match."""
    spans: dict[int, int] = {}
    for needed, pattern, starts in searched:
        if needed is not None and not _written(text_lower, needed):
            continue
        if starts is None:
            found = [match.span() for match in pattern.finditer(text_lower)]
        else:
            found = _found_at(text_lower, pattern, starts)
        for start, end in found:
            spans[start] = max(spans.get(start, 0), end)
    return sorted(spans.items())


def _found_at(
    text: str, pattern: re.Pattern[str], starts: re.Pattern[str]
) -> list[tuple[int, int]]:
    """`pattern.finditer(text)`'s spans, the pattern tried only where `starts` finds a match can
    begin (each match from where the last ended, as `finditer` searches)."""
    found = []
    end = 0
    for start in starts.finditer(text):
        at = start.start()
        if at >= end and (match := pattern.match(text, at)):
            found.append(match.span())
            end = match.end()
    return found


def _written(text_lower: str, needed: tuple[tuple[tuple[str, ...], ...], ...]) -> bool:
    """Whether the text holds every word of some variant, each in one of its spellings.
    Loops, not any()/all() over generators: this runs for every component on every text."""
    for variant in needed:
        for spellings in variant:
            for spelling in spellings:
                if spelling in text_lower:
                    break
            else:  # this word is missing: the variant is not written
                break
        else:
            return True
    return False


_KIND_AFTER = re.compile(r"\s*\(\s*[a-z][a-z0-9-]*\s*\)")
_KIND_BEFORE = re.compile(r"(?:[a-z][\w.-]*/)+$")


def with_kind(text_lower: str, start: int, end: int) -> tuple[int, int]:
    """`[start, end)` of a name grown over the kind written beside it: `kubelet (node)`,
    `validatingwebhookconfiguration/pod-policy`, `otel-demo/deployment/cart`."""
    after = _KIND_AFTER.match(text_lower, end, end + 64)
    before = _KIND_BEFORE.search(text_lower, max(0, start - 128), start)
    return (before.start() if before else start), (after.end() if after else end)


def name_spans(text_lower: str, components: list[ComponentRef]) -> list[tuple[int, int]]:
    """Where `components` are named in lowercased text, each with the kind written beside it
    (wildcard names, `*`, name no particular component and are left out; a name used as a
    value, `yinfangchen/geo:app3`, is the value's)."""
    spans: list[tuple[int, int]] = []
    for component in components:
        named = component.model_copy(update={"aliases": [a for a in component.aliases if a != "*"]})
        if component.name == "*":
            continue
        spans.extend(
            with_kind(text_lower, s, e)
            for s, e in find_spans(text_lower, named)
            if not is_value_at(text_lower, s)
        )
    return spans


def mentions(text: str, component: ComponentRef) -> bool:
    """Whether `text` names `component` anywhere (case-insensitive)."""
    return bool(find(text.lower(), component))


# ---------------------------------------------------------------- namespaces stated in a text

_NAMESPACE_STATED = re.compile(
    r"\b(?:in|from|of|within|under)\s+(?:the\s+)?[`'\"]?([a-z0-9][a-z0-9-]*[a-z0-9])[`'\"]?\s+namespace\b"
    r"|\bnamespace\s*(?:[:=]\s*[`'\"]?|\s[`'\"])([a-z0-9][a-z0-9-]*[a-z0-9])"
    r"|\b(?:in|from|within)\s+(?:the\s+)?namespace\s+([a-z0-9][a-z0-9-]*[a-z0-9])"
    r"|(?:^|\s)-n\s+([a-z0-9][a-z0-9-]*[a-z0-9])"
    r"|(?<![\w/-])([a-z0-9][a-z0-9-]*[a-z0-9])/(?:deployments?|services?|pods?|statefulsets?|daemonsets?)/"
)
_NOT_NAMESPACES = frozenset(
    {"the", "same", "this", "that", "a", "its", "their", "app", "application"}
)


def stated_namespaces(text_lower: str) -> set[str]:
    """Namespaces a passage states explicitly (`in the staging namespace`, `-n staging`)."""
    found = set()
    for match in _NAMESPACE_STATED.finditer(text_lower):
        name = next(g for g in match.groups() if g)
        if name not in _NOT_NAMESPACES:
            found.add(name)
    return found


_PREFIXES = re.compile(
    r"(?<![\w./-])(?:([a-z0-9][a-z0-9-]*[a-z0-9])/)?([a-z0-9][a-z0-9-]*[a-z0-9])/$"
)


def prefixed_namespace(text_lower: str, start: int, text: str = "") -> str | None:
    """`staging/user-service`, `staging/deployment/user-service`: a namespace written right
    before a mention. A kind written there (`app/adservice`, `node/worker-01`, `svc/cart`, or
    any word with a capital in `text`, the same text as written: a namespace is a lowercase DNS
    label, `BGPPeer/x` is a kind) is the `Kind/Name` notation: the namespace is before the kind."""
    at = max(0, start - 128)
    before = text_lower[at:start]
    if not before.endswith(("/", "/\n")):  # where `_PREFIXES` can end
        return None
    match = _PREFIXES.search(before)
    if not match:
        return None

    def kind(group: int) -> bool:
        word = match.group(group)
        written = text[at + match.start(group) : at + match.end(group)] if text else word
        return word in KIND_PREFIXES or written != written.lower()

    first, last = match.groups()
    if text_lower[max(0, at + match.start() - 1) : at + match.start()] == "=":
        return None  # `component=resourcequota/x`: a key's value written Kind/Name
    if first:  # `ns/Kind/name`, `customresource/tidbcluster/basic`: the middle is a kind
        return None if kind(1) else first
    return None if kind(2) else last


def suffixed_namespace(text_lower: str, end: int) -> str | None:
    """`user-service.staging.svc`: a namespace in a DNS name right after a mention."""
    match = re.match(r"\.([a-z0-9][a-z0-9-]*[a-z0-9])(?:\.svc)", text_lower[end : end + 80])
    return match.group(1) if match else None


# Kinds written before a name in `Kind/Name` notation (kubectl's and Cloud-OpsBench's `app/`,
# `node/`, `namespace/`), lowercased.
KIND_PREFIXES = frozenset(
    {
        "app",
        "apps",
        "customresource",
        "cr",
        "resourcequota",
        "quota",
        "limitrange",
        "priorityclass",
        "storageclass",
        "poddisruptionbudget",
        "pdb",
        "application",
        "workload",
        "workloads",
        "deployment",
        "deployments",
        "deploy",
        "service",
        "services",
        "svc",
        "pod",
        "pods",
        "po",
        "statefulset",
        "sts",
        "daemonset",
        "ds",
        "configmap",
        "cm",
        "secret",
        "node",
        "ingress",
        "cronjob",
        "job",
        "namespace",
        "ns",
        "replicaset",
        "rs",
        "hpa",
        "pvc",
        "clusterrole",
        "role",
        "networkpolicy",
        "networkpolicies",
        "statefulsets",
        "daemonsets",
        "configmaps",
        "secrets",
        "nodes",
        "jobs",
        "cronjobs",
        "replicasets",
        "ingresses",
        "serviceaccount",
        "sa",
        "pv",
        "persistentvolume",
        "persistentvolumeclaim",
        "clusterrolebinding",
        "rolebinding",
        "horizontalpodautoscaler",
        "endpoints",
        "host",
    }
)


_VALUE_WORDS = re.compile(
    r"(?:intended|value|default|expected|original|correct|earlier|later|instead of|host|address)"
    r"\W{0,3}(?:\w+\W{1,3}){0,2}[`'\"]$"
)


# Keys whose value is the component itself (SREGym's `component=X`), not a setting naming it.
_COMPONENT_KEY = re.compile(
    r"(?<![\w-])(?:component|entity|object|target|workload|location)s?\s*=\s*(?:[\w-]+/)*$"
)
_VALUE_TOKEN = re.compile(r"[\w./-]*")
_WORD_TOKEN = re.compile(r"[a-z0-9_-]+")
_PORT_AFTER = re.compile(r":\d")
_TAG_AFTER = re.compile(r":[a-z0-9]")
VALUE_REACH = 40
_DOTTED_BEFORE = re.compile(r"[a-z0-9_]\.$")


def is_value_at(text_lower: str, start: int) -> bool:
    r"""A name used as a value, not as the component: `product-catalog:8080`, `repo/geo:app3`,
    `cart.astronomy-shop.svc`, `http://cart`, `ADDR=cart`, `the intended value \`frontend\``."""
    token = _VALUE_TOKEN.match(text_lower, start, start + VALUE_REACH * 4)
    end = token.end() if token else start
    word = _WORD_TOKEN.match(text_lower, start, start + VALUE_REACH * 4)
    word_end = word.end() if word else start
    before = text_lower[max(0, start - 8) : start]
    if _PORT_AFTER.match(text_lower, word_end, word_end + 2) or _PORT_AFTER.match(
        text_lower, end, end + 2
    ):
        return True
    if before.endswith("/") and _TAG_AFTER.match(text_lower, word_end, word_end + 2):
        return True  # an image reference: `yinfangchen/geo:app3`
    if before.endswith("=") and _COMPONENT_KEY.search(text_lower, max(0, start - 24), start):
        return False  # `component=checkout`: the key names the component itself
    if ".svc" in text_lower[start:end] or "://" in before or before.endswith("="):
        return True
    if _DOTTED_BEFORE.search(before):
        return True  # a part of a dotted identifier: `hipstershop.CartService/GetCart`
    return bool(_VALUE_WORDS.search(text_lower[max(0, start - VALUE_REACH) : start]))
