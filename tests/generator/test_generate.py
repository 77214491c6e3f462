"""Tests for one streamed answer: refusals, partial text, timings, against the real llama.cpp server (stopping, for
every adapter, is in test_llm_contract.py)."""

from __future__ import annotations

import pytest

from generator.answer import answer_prompt
from generator.base import LLMSettings, SamplingOptions
from generator.citations import normalize_citations
from generator.generate import GeneratedAnswer, generate_answer, is_refusal, without_copies
from generator.llm import OpenAICompatibleLLM
from generator.prompts import CANNOT_ANSWER, COMPLETE_EXAMPLE_ANSWER, EXAMPLE_ANSWER
from tests.generator.everolimus import ABSTRACTS, GIVEN, QUESTION
from tests.support import TEST_LLM_MODEL

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model


@pytest.mark.parametrize(
    "text",
    [
        "The abstracts do not answer this question.",
        "The provided abstracts do not contain information about the dosage.",
        "I cannot answer this question from the given abstracts.",
        "There is no relevant information in the abstracts.",
        "",
    ],
)
def test_uncited_refusals_are_recognised(text: str) -> None:
    assert is_refusal(normalize_citations(text, GIVEN))


@pytest.mark.parametrize(
    "text",
    [
        "Everolimus inhibits mTOR (PUBMED:31000001).",
        # A cited sentence that mentions missing data is an answer, not a refusal.
        "The trial did not find a survival benefit (PUBMED:31000002).",
        "Everolimus blocks T-cell proliferation.",
    ],
)
def test_answers_are_not_refusals(text: str) -> None:
    assert not is_refusal(normalize_citations(text, GIVEN))


def test_a_repeated_worked_example_is_removed_even_with_a_slipped_id() -> None:
    raw = (
        "Everolimus inhibits mTOR (PUBMED:31000001). Added to insulin, it also reduced the daily insulin dose by 20% "
        "without more hypoglycaemia (PUBMED:22222228)."
    )

    assert without_copies(raw) == "Everolimus inhibits mTOR (PUBMED:31000001)."


@pytest.mark.parametrize("example", [EXAMPLE_ANSWER, COMPLETE_EXAMPLE_ANSWER], ids=["chat", "chat-complete"])
def test_every_sentence_of_either_worked_example_is_removed(example: str) -> None:
    assert without_copies(f"Everolimus inhibits mTOR (PUBMED:31000001). {example}") == (
        "Everolimus inhibits mTOR (PUBMED:31000001)."
    )


def test_a_sentence_written_twice_is_kept_once() -> None:
    raw = (
        "Neck dissection was not needed (PUBMED:31000001). Twenty patients underwent neck dissection "
        "(PUBMED:31000001). Biopsy alone was as safe (PUBMED:31000002). Twenty patients underwent neck dissection "
        "(PUBMED:31000001)."
    )

    assert without_copies(raw) == (
        "Neck dissection was not needed (PUBMED:31000001). Twenty patients underwent neck dissection "
        "(PUBMED:31000001). Biopsy alone was as safe (PUBMED:31000002)."
    )


def test_a_sentence_that_only_follows_an_example_pattern_is_kept() -> None:
    """The worked example shows how to describe a trial; the model's own trial, told the same way, is content."""
    raw = "A randomised trial gave 120 adults with asthma budesonide or placebo for 12 weeks (PUBMED:31000001)."

    assert without_copies(raw) == raw


def test_sentences_unlike_the_example_are_kept() -> None:
    raw = (
        "Everolimus reduced the daily steroid dose by 20% (PUBMED:31000001). It is an mTOR inhibitor (PUBMED:31000002)."
    )

    assert without_copies(raw) == raw


@pytest.fixture(scope="module")
def llm(llm_base_url: str) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(LLMSettings(base_url=llm_base_url, model=TEST_LLM_MODEL, timeout_seconds=300))


def test_an_answer_streams_with_timings_and_only_given_citations(llm: OpenAICompatibleLLM) -> None:
    partial: list[str] = []
    prompt = answer_prompt("chat", QUESTION, ABSTRACTS, abstract_chars=1500)

    answer = generate_answer(
        llm, prompt, SamplingOptions(max_tokens=120), given_pmids=GIVEN, on_text=partial.append,
        check_every_seconds=0.0,
    )  # fmt: skip

    assert not answer.cancelled
    assert not answer.cannot_answer
    assert "mtor" in answer.raw_text.lower()
    assert answer.normalized.citations, answer.raw_text
    assert {citation.pmid for citation in answer.normalized.citations} <= {*GIVEN, None}
    assert answer.text == answer.normalized.text
    assert answer.ttft_ms is not None
    assert answer.ttft_ms > 0
    assert answer.chunks >= 5
    assert answer.tokens_per_s > 0
    assert partial
    assert all(answer.raw_text.startswith(text.strip()) for text in partial)


def test_the_verifai_style_streams_through_the_completions_endpoint(llm: OpenAICompatibleLLM) -> None:
    prompt = answer_prompt("verifai", QUESTION, ABSTRACTS, abstract_chars=1500)

    answer = generate_answer(llm, prompt, SamplingOptions(max_tokens=60, repetition_penalty=1.1), given_pmids=GIVEN)

    assert answer.raw_text
    assert answer.ttft_ms is not None


def test_a_refusal_is_shown_as_the_cannot_answer_result_and_keeps_the_raw_text() -> None:
    refusal = normalize_citations("The abstracts do not answer this question.", GIVEN)
    answer = GeneratedAnswer(
        normalized=refusal, cannot_answer=is_refusal(refusal), cancelled=False,
        ttft_ms=1.0, chunks=8, tokens_per_s=20.0, seconds=1.0,
    )  # fmt: skip

    assert answer.text == CANNOT_ANSWER
    assert answer.raw_text == "The abstracts do not answer this question."
