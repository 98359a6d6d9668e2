"""SRE-Zero's text rules for `resolve_incident(root_cause, fix)`, and our alias tables.

Published rules (SRE-Zero `srezero/tasks/base.py`, commits cfba692 / e9a2eb5):

- Text is normalised: lower-cased, `_` and `-` read as spaces, whitespace collapsed. Matching is
  plain substring search in the normalised text (so `web` is found in `webserver`).
- Root cause matched: the whole normalised `root_cause` phrase occurs, or at least
  `max(1, ceil(n / 2))` of the `n` `root_cause_keywords` occur.
- Fix matched: every `fix_keywords` entry occurs (no keywords: always matched), or, failing that,
  the fallback: for a `restart_service` fix, a service alias and a restart verb occur; for an
  `update_config` fix, a service alias and a config-key alias occur, and, where the task fixes an
  `exact_value`, that value (or, for booleans, a word meaning it) occurs too.

The fallback's tables are ours, derived from the 40 task configs of SRE-Zero v0.6 (the
`root_cause`, `fix_keywords` and the `resolve_incident(...)` texts of `expected_action_pattern`),
keyed by the real config keys. SRE-Zero v0.6 has its own tables; ours differ on purpose:

- SRE-Zero keys some aliases by names no config uses (`memory limit mb`, `visibility timeout
  seconds`, `idle timeout seconds`, `backend weight canary`, `index enabled`), so for
  MAX_MEMORY_MB, VISIBILITY_TIMEOUT_MS, IDLE_TIMEOUT_MS, WEB_WEIGHT_PRIMARY and INDEX_* only the
  key's own words count there; here every key used by a `correct_fix` has aliases.
- Aliases and key words of three characters or fewer (`db`, `lb`, `web`, `use`, `id`, numbers)
  must occur as whole words, so `db` is not found in `feedback`.
- SRE-Zero counts `valid` as a word for `true`, which also matches `invalid`; we do not. For
  `*_VALID` keys the fix verbs of the configs (`refresh`, `renew`, `rotate`, `replace`) mean true.
- The v0.5 simulator that wrote the corpus run record had no fallback at all; every fix text in
  that record matches its keywords, so the fallback never decides a parity case.
"""

from __future__ import annotations

import re
from math import ceil
from typing import Any, Literal

from pydantic import BaseModel, Field

from ground_truth.formats.srezero import SREZeroCorrectFix, SREZeroTaskConfig

# Service -> names the task configs use for it ("increase web timeout", "db_pool_exhaustion",
# "misleading_lb_502_cache_rootcause", "web queue publish timeout").
SERVICE_ALIASES: dict[str, tuple[str, ...]] = {
    "web_server": ("web server", "web"),
    "database": ("database", "db"),
    "cache": ("cache",),
    "message_queue": ("message queue", "queue"),
    "load_balancer": ("load balancer", "balancer", "lb"),
}

# Config key -> phrases the task configs use for it (root cause, fix keywords, expected fix text).
KEY_ALIASES: dict[str, tuple[str, ...]] = {
    "AUTH_TOKEN_VALID": ("auth token", "authentication token", "token"),
    "CACHE_HOST": ("cache host",),
    "COMPRESSION_ENABLED": ("compression",),
    "CONSUMER_CONCURRENCY": ("consumer concurrency", "consumers"),
    "DB_POOL_SIZE": ("connection pool", "pool size", "database pool", "pool"),
    "DISK_QUOTA_GB": ("disk quota", "disk"),
    "HEALTH_CHECK_PATH": ("health check",),
    "IDLE_TIMEOUT_MS": ("idle timeout",),
    "INDEX_ORDERS_USER_ID": ("index",),
    "INDEX_PRODUCTS_SKU": ("sku index", "index"),
    "MAINTENANCE_MODE": ("maintenance",),
    "MAX_CONNECTIONS": ("connection limit", "max connections", "maximum connections"),
    "MAX_IN_FLIGHT": ("in flight", "inflight"),
    "MAX_MEMORY_MB": ("memory limit", "max memory", "memory"),
    "MAX_WORKERS": ("worker pool", "workers", "worker"),
    "QUERY_TIMEOUT_MS": ("query timeout",),
    "QUEUE_PUBLISH_TIMEOUT_MS": ("publish timeout", "queue publish"),
    "RATE_LIMIT_RPS": ("rate limit",),
    "READ_REPLICA_ENABLED": ("read replica", "replica"),
    "RETRY_LIMIT": ("retry limit", "retries"),
    "STICKY_SESSIONS": ("sticky sessions", "session affinity", "sticky"),
    "TIMEOUT_MS": ("timeout",),
    "TLS_CERT_VALID": ("tls certificate", "tls cert", "certificate"),
    "TTL_SECONDS": ("ttl", "time to live"),
    "USE_CACHE": ("cache usage", "use cache", "web cache"),
    "VISIBILITY_TIMEOUT_MS": ("visibility timeout",),
    "WEB_WEIGHT_PRIMARY": ("backend weight", "web weight", "weight"),
}

# Words of a key that carry no meaning on their own (flags and units).
KEY_NOISE_WORDS = frozenset({"enabled", "valid", "ms", "mb", "gb", "rps", "seconds"})
RESTART_VERBS = ("restart", "reboot", "recover", "bring back", "bounce", "relaunch")
TRUE_WORDS = ("enable", "true", "turn on", "switch on")
TRUE_WORDS_FOR_VALIDITY = ("refresh", "renew", "rotate", "replace")
FALSE_WORDS = ("disable", "false", "turn off", "switch off")
SHORT = 3


def normalize_text(value: str) -> str:
    """Lowercased, `_` and `-` as spaces, whitespace collapsed: how SRE-Zero compares text."""
    return " ".join(value.lower().replace("_", " ").replace("-", " ").split())


def contains(phrase: str, normalized_text: str, *, whole_word: bool = False) -> bool:
    """Substring search; phrases of three characters or fewer must be whole words."""
    phrase = normalize_text(phrase)
    if not phrase:
        return False
    if len(phrase) > SHORT and not whole_word:
        return phrase in normalized_text
    pattern = rf"(?<![a-z0-9.]){re.escape(phrase)}(?![a-z0-9]|\.[0-9])"
    return re.search(pattern, normalized_text) is not None


class RootCauseMatch(BaseModel):
    """Why a submitted root cause did or did not match."""

    text: str
    phrase: str
    phrase_matched: bool
    keywords_matched: list[str] = Field(default_factory=list)
    keywords_missing: list[str] = Field(default_factory=list)
    keywords_required: int
    matched: bool


class FixMatch(BaseModel):
    """Why a submitted fix text did or did not match."""

    text: str
    keywords_matched: list[str] = Field(default_factory=list)
    keywords_missing: list[str] = Field(default_factory=list)
    via: Literal["keywords", "no_keywords", "alias_fallback"] | None = None
    service_alias: str | None = None
    restart_verb: str | None = None
    key_alias: str | None = None
    value_term: str | None = None
    matched: bool


def match_root_cause(task: SREZeroTaskConfig, text: str) -> RootCauseMatch:
    """Whether `text` names the task's root cause: the whole phrase, or at least half its
    keywords (at least one), after normalising both.
    """
    normalized = normalize_text(text)
    phrase = normalize_text(task.root_cause)
    hits = [k for k in task.root_cause_keywords if normalize_text(k) in normalized]
    required = max(1, ceil(len(task.root_cause_keywords) / 2))
    phrase_matched = phrase in normalized
    return RootCauseMatch(
        text=text,
        phrase=phrase,
        phrase_matched=phrase_matched,
        keywords_matched=hits,
        keywords_missing=[k for k in task.root_cause_keywords if k not in hits],
        keywords_required=required,
        matched=phrase_matched or len(hits) >= required,
    )


def match_fix_text(fix: SREZeroCorrectFix, text: str) -> FixMatch:
    """Whether `text` describes the correct fix: every fix keyword (or none to match), else an
    alias fallback (service plus restart verb, or config key and value).
    """
    normalized = normalize_text(text)
    hits = [k for k in fix.fix_keywords if normalize_text(k) in normalized]
    base: dict[str, Any] = {
        "text": text,
        "keywords_matched": hits,
        "keywords_missing": [k for k in fix.fix_keywords if k not in hits],
    }
    if not fix.fix_keywords:
        return FixMatch(**base, via="no_keywords", matched=True)
    if len(hits) == len(fix.fix_keywords):
        return FixMatch(**base, via="keywords", matched=True)
    found = _fallback(fix, normalized)
    return FixMatch(**base, **found, via="alias_fallback" if found["matched"] else None)


def _fallback(fix: SREZeroCorrectFix, normalized: str) -> dict[str, Any]:
    service = _first(service_aliases(fix.service), normalized)
    if fix.action_type == "restart_service":
        verb = _first(RESTART_VERBS, normalized)
        return {"service_alias": service, "restart_verb": verb, "matched": bool(service and verb)}
    if fix.action_type != "update_config" or fix.key is None:
        return {"service_alias": service, "matched": False}
    key = _key_term(fix.key, normalized)
    value = _value_term(fix, normalized) if fix.exact_value is not None else None
    value_ok = fix.exact_value is None or value is not None
    return {
        "service_alias": service,
        "key_alias": key,
        "value_term": value,
        "matched": bool(service and key and value_ok),
    }


def service_aliases(service: str) -> tuple[str, ...]:
    """The names `service` may go by in text: its normalised name and any known aliases."""
    return (normalize_text(service), *SERVICE_ALIASES.get(service, ()))


def _key_term(key: str, normalized: str) -> str | None:
    phrase = normalize_text(key)
    if contains(phrase, normalized):
        return phrase
    words = [w for w in phrase.split() if w not in KEY_NOISE_WORDS]
    if words and all(contains(w, normalized) for w in words):
        return " ".join(words)
    return _first(KEY_ALIASES.get(key.upper(), ()), normalized)


def _value_term(fix: SREZeroCorrectFix, normalized: str) -> str | None:
    value = fix.exact_value
    if isinstance(value, bool):
        words: tuple[str, ...] = TRUE_WORDS if value else FALSE_WORDS
        if value and (fix.key or "").upper().endswith("VALID"):
            words = (*words, *TRUE_WORDS_FOR_VALIDITY)
        return _first(words, normalized)
    text = str(value)
    return text if contains(text, normalized, whole_word=isinstance(value, int | float)) else None


def _first(phrases: tuple[str, ...], normalized: str) -> str | None:
    return next((p for p in phrases if contains(p, normalized)), None)
