"""The reply format each (model, endpoint) accepted, remembered across runs in the store.

A run that negotiated `json_object+schema` with a llama.cpp server keeps it in the store's
metadata; the next run on that store starts from it instead of asking for `json_schema` again
and waiting out the refusal. A remembered mode is only a starting point: a later refusal still
steps down from it, and a mode the user forces with `--structured-output` wins.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, runtime_checkable

from ..judges.structured import Negotiation
from ..store import Store


@runtime_checkable
class Negotiating(Protocol):
    """A judge that negotiates its reply format (the llm judge)."""

    negotiation: Negotiation

    @property
    def structured_output_key(self) -> str: ...


def adopt_remembered(
    judges: Iterable[object], store: Store | None, note: Callable[[str], None] | None = None
) -> None:
    """Start each negotiating judge from the mode the store remembers for its endpoint."""
    if store is None:
        return
    for judge in judges:
        if isinstance(judge, Negotiating):
            mode = store.get_meta(judge.structured_output_key)
            if mode is not None and judge.negotiation.adopt(mode) and note is not None:
                note(f"{judge.structured_output_key}: starting with {mode!r} (kept in the store)")


def remember(judges: Iterable[object], store: Store | None) -> None:
    """Keep each negotiating judge's confirmed mode for the next run on this store (a mode
    the user forced is not a finding about the server, so it is not kept)."""
    if store is None:
        return
    for judge in judges:
        if not isinstance(judge, Negotiating):
            continue
        negotiation = judge.negotiation
        if negotiation.requested == "auto" and negotiation.confirmed:
            key = judge.structured_output_key
            if store.get_meta(key) != negotiation.mode:
                store.set_meta(key, negotiation.mode)
