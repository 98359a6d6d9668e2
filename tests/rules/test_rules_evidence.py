"""Issue 22, failure mode 8: the rules judge's evidence is a verbatim span of the diagnosis that
starts and ends at word boundaries (it was cut from a lowercased copy, and the first sentence's
first character was dropped: "he root cause ...")."""

from __future__ import annotations

import warnings

import pytest
from helpers import CORPUS, EXAMPLE, FIXTURES
from helpers.rules import verbatim_at_word_bounds

from ground_truth import IncidentSpec, Submission, load_specs, load_submissions
from judge import evaluate, evaluate_submission
from judge.judges.rules.spans import lower_same_length, quote_span

FORGE = FIXTURES / "formats" / "forge"


def bad_evidence(specs: list[IncidentSpec], subs: list[Submission]) -> tuple[int, list[str]]:
    texts = {(s.incident_id, s.trial): s.diagnosis for s in subs}
    result = evaluate(specs, subs)
    quotes = [(texts[(j.incident_id, j.trial)], j.evidence) for j in result.judgments if j.evidence]
    return len(quotes), [q for text, q in quotes if not verbatim_at_word_bounds(text, q)]


def test_every_quote_on_the_bundled_example_is_verbatim() -> None:
    count, bad = bad_evidence(
        load_specs(EXAMPLE / "ground_truth"), load_submissions(EXAMPLE / "outputs")
    )
    assert count > 200 and bad == []


def test_every_quote_on_published_forge_answers_is_verbatim() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        specs = load_specs(FORGE / "label_Online-Boutique-cloudbed-1.csv", format="forge")
        subs = [
            sub
            for file in sorted(FORGE.glob("diagnoses_*.excerpt.json"))
            for sub in load_submissions(file, format="forge")
        ]
    count, bad = bad_evidence(specs, subs)
    assert count > 20 and bad == []


@pytest.mark.slow
@pytest.mark.corpus
def test_every_quote_on_the_three_forge_runs_is_verbatim() -> None:
    folder = CORPUS / "rca-llm-reasoning"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        specs = load_specs(folder / "label_Online-Boutique-cloudbed-1.csv", format="forge")
        subs = [
            sub
            for file in sorted(folder.glob("diagnoses_*.json"))
            for sub in load_submissions(file, format="forge")
        ]
    assert len(subs) == 210
    count, bad = bad_evidence(specs, subs)
    assert count > 1000 and bad == []


def test_the_first_sentence_keeps_its_first_letter() -> None:
    spec = load_specs(EXAMPLE / "ground_truth" / "incorrect_port_assignment.yaml")[0]
    text = "The root cause is checkout: its PRODUCT_CATALOG_ADDR points to port 8082, not 8080."
    case = evaluate_submission(spec, Submission(incident_id=spec.id, diagnosis=text))
    quotes = {j.evidence for j in case.judgments if j.evidence}
    assert quotes and all(q.startswith("The root cause") for q in quotes)


def test_a_long_sentence_is_cut_around_the_match_at_word_boundaries() -> None:
    text = "Word " * 100 + "the checkout-service deployment " + "tail " * 100
    at = text.index("checkout")
    start, stop = quote_span(text, at, at + len("checkout-service"), width=60)
    quote = text[start:stop]
    assert "checkout-service" in quote and len(quote) <= 70
    assert verbatim_at_word_bounds(text, quote)


def test_lowercase_keeps_every_offset() -> None:
    text = "İstanbul: the ﬁle of Checkout"
    low = lower_same_length(text)
    assert len(low) == len(text) and low.index("checkout") == text.index("Checkout")
