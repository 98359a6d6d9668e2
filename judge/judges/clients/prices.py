"""The price of an OpenAI-compatible call, from litellm's bundled price map read as data.

The `openai` client does not import litellm (seconds, ~200 MB), but its prices are litellm's:
`model_prices_and_context_window_backup.json` inside the installed litellm package, the map
litellm itself uses with `LITELLM_LOCAL_MODEL_COST_MAP=True` (this project's default). The
file is 3.5 MB; only the entries asked for are decoded (a model's entry is found by its
top-level key, then decoded alone), so pricing costs milliseconds, not the 0.1-0.2 s a full
parse takes. The arithmetic is litellm's for OpenAI (`generic_cost_per_token`): uncached
prompt tokens at the input rate, cached ones at the cache-read rate (the input rate when the
map gives none), completion tokens at the output rate (reasoning tokens at their own rate
when the map has one), and a model's `_above_<N>k_tokens` rates once the prompt passes N.
`tests/test_clients_prices.py` checks it against litellm for every OpenAI chat model.
"""

from __future__ import annotations

import importlib.util
import json
import re
import threading
from pathlib import Path
from typing import Any

MAP_FILE = "model_prices_and_context_window_backup.json"
RATES = ("input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost")
_ABOVE = re.compile(r"_above_(\d+)(k?)_tokens$")


def litellm_data_file(name: str) -> Path | None:
    """A data file shipped inside the installed litellm package, found without importing it."""
    spec = importlib.util.find_spec("litellm")
    locations = spec.submodule_search_locations if spec is not None else None
    for location in locations or ():
        path = Path(location) / name
        if path.is_file():
            return path
    return None


class PriceMap:
    """Entries of litellm's price map by model name, each decoded when first asked for."""

    def __init__(self, path: Path | None):
        self.path = path
        self._data: bytes | None = None
        self._whole: dict[str, Any] | None = None
        self._entries: dict[str, dict[str, Any] | None] = {}
        self._lock = threading.Lock()

    def entry(self, name: str) -> dict[str, Any] | None:
        """The map's entry for `name`, or None when it has none."""
        with self._lock:
            if name not in self._entries:
                self._entries[name] = self._find(name)
            return self._entries[name]

    def _find(self, name: str) -> dict[str, Any] | None:
        if self.path is None:
            return None
        if self._data is None:
            self._data = self.path.read_bytes()  # searched as bytes: no 3.5 MB decoded
        if self._whole is None and not self._data.startswith(b'{\n    "'):
            self._whole = json.loads(self._data)  # not laid out as expected: read it all
        if self._whole is not None:
            found = self._whole.get(name)
            return found if isinstance(found, dict) else None
        key = f"\n    {json.dumps(name)}: {{".encode()  # find: ~25x a multiline regex
        start = self._data.find(key)
        end = self._data.find(b"\n    }", start) if start >= 0 else -1  # its closing line
        if end < 0:
            return None
        entry = json.loads(self._data[start + len(key) - 1 : end + len(b"\n    }")])
        return entry if isinstance(entry, dict) else None


PRICES = PriceMap(litellm_data_file(MAP_FILE))


def priced_entry(names: list[str | None], prices: PriceMap = PRICES) -> dict[str, Any] | None:
    """The first entry with a token price among `names` (each as given, then as
    `openai/NAME`): the model the provider says answered first, then the one asked for,
    as litellm picks them."""
    for name in names:
        if not name:
            continue
        for key in (name, f"openai/{name}"):
            entry = prices.entry(key)
            if entry is not None and any(entry.get(rate) is not None for rate in RATES[:2]):
                return entry
    return None


def cost(
    entry: dict[str, Any] | None,
    prompt_tokens: int | None,
    completion_tokens: int | None,
    cached_tokens: int | None = None,
    reasoning_tokens: int | None = None,
) -> float | None:
    """USD for one call at `entry`'s rates; None when there is no entry or no token count."""
    if entry is None or prompt_tokens is None or completion_tokens is None:
        return None
    rates = _rates(entry, prompt_tokens)
    input_rate, output_rate = rates["input_cost_per_token"], rates["output_cost_per_token"]
    cached = min(cached_tokens or 0, prompt_tokens)
    read_rate = rates["cache_read_input_token_cost"]
    prompt_cost = (prompt_tokens - cached) * input_rate + cached * (
        input_rate if read_rate is None else read_rate
    )
    reasoning = min(reasoning_tokens or 0, completion_tokens)
    reasoning_rate = entry.get("output_cost_per_reasoning_token")
    completion_cost = (completion_tokens - reasoning) * output_rate + reasoning * (
        output_rate if reasoning_rate is None else float(reasoning_rate)
    )
    return prompt_cost + completion_cost


def _rates(entry: dict[str, Any], prompt_tokens: int) -> dict[str, Any]:
    """The input, output and cache-read rates for a prompt of this length: the rates of the
    largest `_above_<N>k_tokens` tier the prompt passes over the base rates."""
    rates: dict[str, Any] = {
        "input_cost_per_token": float(entry.get("input_cost_per_token") or 0.0),
        "output_cost_per_token": float(entry.get("output_cost_per_token") or 0.0),
        "cache_read_input_token_cost": entry.get("cache_read_input_token_cost"),
    }
    tiers: dict[int, dict[str, float]] = {}
    for key, value in entry.items():
        match = _ABOVE.search(key)
        if match is None or value is None or key[: match.start()] not in rates:
            continue
        threshold = int(match.group(1)) * (1000 if match.group(2) else 1)
        tiers.setdefault(threshold, {})[key[: match.start()]] = float(value)
    passed = [threshold for threshold in tiers if prompt_tokens > threshold]
    if passed:
        rates.update(tiers[max(passed)])
    return rates
