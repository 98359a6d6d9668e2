"""Published agent text for the rules judge's tests: the FORGE study's answers on Online
Boutique (tests/fixtures/real_agents/, MIT, see SOURCE.md), and what counts as a verbatim quote."""

from __future__ import annotations

import warnings
from functools import cache

from ground_truth import IncidentSpec, Submission, load_specs, load_submissions

from . import FIXTURES

AGENTS = FIXTURES / "real_agents"
MODELS = {
    "deepseek": "diagnoses_deepseek-r1-70b_straight-shot_Online-Boutique-cloudbed-1.excerpt.json",
    "llama": "diagnoses_llama3.3_straight-shot_Online-Boutique-cloudbed-1.excerpt.json",
    "qwen": "diagnoses_qwen3-32b_react_Online-Boutique-cloudbed-1.excerpt.json",
}
SYSTEM = "Online-Boutique-cloudbed-1"


@cache
def study(model: str) -> tuple[dict[str, IncidentSpec], dict[str, Submission]]:
    """The study's labels and `model`'s answers, by incident id."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        specs = load_specs(AGENTS / MODELS[model], format="forge")
        subs = load_submissions(AGENTS / MODELS[model], format="forge")
    return {s.id: s for s in specs}, {s.incident_id: s for s in subs}


def published(model: str, fault: str) -> tuple[IncidentSpec, Submission]:
    """The study's label for fault `fault` and `model`'s answer to it."""
    specs, subs = study(model)
    return specs[f"{SYSTEM}-{fault}"], subs[f"{SYSTEM}-{fault}"]


def verbatim_at_word_bounds(text: str, quote: str) -> bool:
    """Whether `quote` occurs in `text` with no word cut in two at either end."""
    at = text.find(quote)
    while at >= 0:
        end = at + len(quote)
        starts_clean = at == 0 or not (text[at - 1].isalnum() and quote[0].isalnum())
        ends_clean = end == len(text) or not (text[end].isalnum() and quote[-1].isalnum())
        if starts_clean and ends_clean:
            return True
        at = text.find(quote, at + 1)
    return False
