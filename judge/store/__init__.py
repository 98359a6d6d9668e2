"""The judgment store: one SQLite file that is the cache, the checkpoint and the replay source.

One row per (case, dimension) answer a judge gave, keyed by a content hash of what decides
the answer (see `KeyParts`); the parts are stored beside it, so a miss can say what changed.
Failed calls go to their own table: they are kept for the record, never served as answers.

Plain JSON in TEXT columns (no pickle), readable with the `sqlite3` shell:

    sqlite3 results.sqlite "select judge, dimension_id, json_extract(answers, '$[0].answer')
                            from judgments limit 5"

WAL journal with `synchronous=NORMAL`: every `put` is its own committed transaction, or, in a
large run, commits with its batch (`grouped`: one transaction a few seconds or a thousand
answers); a committed WAL transaction survives the process being killed (only an OS crash or
power loss can lose the last ones). The API key is never handed to the store: params come from the judge's
`cache_identity()`, which leaves secrets out, and `judge.judges.mask.scrub_params` drops any
that slip in.

`Store` is the one class callers use; each part of it is a module of this package, over one
open file (`file`: opening, version, deleted-or-replaced safety, `meta`): `answers` (with the
`replies` behind each: every request's prompt and raw reply, `judge store logs`), `leases`,
`batches` and `merge`; `grouped` is the batch of answers waiting for its commit. `keys` is what answers are stored under, `migrations` the schema, and
`failures` SQLite's errors in words. Import from `judge.store`, not from its modules.
"""

from __future__ import annotations

from typing import Any

from .answers import Answers
from .batches import Batches, StoredBatch
from .keys import COMPONENTS, CaseRef, KeyParts, short_hash
from .leases import Claim, Leases
from .merge import Merging, StoreMerge, is_sqlite_file, merge_stores
from .migrations import READABLE_VERSIONS, STORE_VERSION
from .replies import CallLog, LogFilter, LoggedReply

__all__ = [
    "COMPONENTS",
    "READABLE_VERSIONS",
    "STORE_VERSION",
    "CallLog",
    "CaseRef",
    "Claim",
    "KeyParts",
    "LogFilter",
    "LoggedReply",
    "Store",
    "StoreMerge",
    "StoredBatch",
    "is_sqlite_file",
    "merge_stores",
    "short_hash",
]


class Store(Answers, Leases, Batches, Merging):
    """A judgment store on disk: its answers, leases, provider batches and merging, over one
    file opened safely. Use from one thread (the event loop's); other processes may read or
    write the same file at the same time (WAL, busy timeout)."""

    def stats(self) -> dict[str, Any]:
        """Answers by judge, failed calls by kind, tokens, cost, logged requests and every
        provider batch."""
        return {
            **self.answer_stats(),
            "replies": self.reply_stats(),
            "batches": self.batch_stats(),
        }
