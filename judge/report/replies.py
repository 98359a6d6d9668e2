"""The raw replies behind a result's calls, read from the store the result names, for the
report's case details (`judge store logs` shows the same)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..checklist.results import EvalResult

if TYPE_CHECKING:
    from ..store import LoggedReply, Store


@dataclass
class CallReplies:
    """The raw replies behind one call of a case, from the store, as they arrived."""

    anchor: str
    dimension_id: str
    judge: str
    requests: list[LoggedReply]


@dataclass(frozen=True, slots=True)
class Asked:
    """What the report needs of a call to find its raw replies."""

    judge: str
    prompt_hash: str
    dimension_id: str


class ReplySource:
    """The store a result names (`config.store`), opened read-only at the first look-up, for
    the raw replies behind the result's calls. A store that is not there, or cannot be read,
    gives none, and `note` says why."""

    def __init__(self, result: EvalResult):
        found = result.config.get("store")
        self.path = Path(found) if isinstance(found, str) and found else None
        self._store: Store | None = None
        self.note: str | None = None
        if self.path is not None and not self.path.is_file():
            self.note = f"{self.path} (not found here: no raw replies)"
            self.path = None

    @property
    def found(self) -> bool:
        return self.path is not None

    def requests(self, call: Asked) -> list[LoggedReply]:
        """The requests behind `call`, each reply as a page can carry it (`_printable`)."""
        if self.path is None or not call.prompt_hash:
            return []
        store = self._open()
        found = store.replies_for(call.judge, call.prompt_hash) if store is not None else []
        return [_printable(r) for r in found]

    def _open(self) -> Store | None:
        from ground_truth.errors import InputError

        from ..errors import StorageError
        from ..store import Store

        if self._store is None and self.path is not None:
            try:
                self._store = Store(self.path, readonly=True)
            except (InputError, StorageError) as exc:
                self.note = f"{self.path} (cannot be read: {exc}; no raw replies)"
                self.path = None
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


def _printable(logged: LoggedReply) -> LoggedReply:
    """A logged request whose reply a page can carry: a lone surrogate (a reply may hold
    one) as its escape, which UTF-8 can encode."""
    reply = logged.reply
    if reply is None:
        return logged
    shown = reply.encode("utf-8", "backslashreplace").decode("utf-8")
    return logged if shown == reply else logged.model_copy(update={"reply": shown})
