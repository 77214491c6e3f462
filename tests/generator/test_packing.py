"""Tests for context packing: lowest-ranked abstracts give way first, and the result fits the window.

Most tests count tokens as words (a deterministic stand-in for a tokenizer, which is not what is tested here);
the last ones count with the real model's tokenizer through the llama.cpp server.
"""

from __future__ import annotations

import pytest

from generator.answer import ContextAbstract, PromptStyle
from generator.base import LLMSettings
from generator.llm import ServerTokenCounter
from generator.packing import SAFETY_MARGIN_TOKENS, pack_context, prompt_budget
from tests.support import TEST_LLM_MODEL

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model


class WordCounter:
    def count(self, text: str) -> int:
        return len(text.split())


def sentences(text: str) -> list[str]:
    return [part.strip() + "." for part in text.split(".") if part.strip()]


def abstract(pmid: str, n_sentences: int, words_per_sentence: int = 10) -> ContextAbstract:
    sentence = " ".join(["word"] * (words_per_sentence - 1)) + " end."
    return ContextAbstract(pmid=pmid, title=f"Title {pmid}", abstract=" ".join([sentence] * n_sentences))


ABSTRACTS = [abstract(str(pmid), 5) for pmid in range(1, 6)]  # 5 abstracts x 50 words


def pack(budget: int, style: PromptStyle = "chat", items: list[ContextAbstract] = ABSTRACTS):  # type: ignore[no-untyped-def]
    return pack_context(
        "Does it work?",
        items,
        style=style,
        abstract_chars=5000,
        counter=WordCounter(),
        budget_tokens=budget,
        split_sentences=sentences,
    )


def test_everything_is_kept_when_it_fits() -> None:
    packed = pack(10_000)

    assert [item.pmid for item in packed.abstracts] == ["1", "2", "3", "4", "5"]
    assert packed.trimmed == ()
    assert packed.dropped == ()
    assert packed.prompt_tokens <= packed.budget_tokens == 10_000


@pytest.mark.parametrize("style", ["chat", "verifai"])
def test_the_lowest_ranked_abstract_is_trimmed_first(style: PromptStyle) -> None:
    full = pack(10_000, style).prompt_tokens

    packed = pack(full - 15, style)  # needs two of the last abstract's five sentences to go

    assert [item.pmid for item in packed.abstracts] == ["1", "2", "3", "4", "5"]
    assert packed.trimmed == ("5",)
    assert packed.abstracts[-1].abstract.endswith("[...]")
    assert packed.abstracts[0] == ABSTRACTS[0]
    assert packed.prompt_tokens <= packed.budget_tokens


def test_abstracts_are_dropped_from_the_bottom_when_trimming_is_not_enough() -> None:
    full = pack(10_000).prompt_tokens

    packed = pack(full - 120)  # more than two whole abstracts

    kept = [item.pmid for item in packed.abstracts]
    assert kept[:2] == ["1", "2"]
    assert packed.dropped == tuple(pmid for pmid in ["3", "4", "5"] if pmid not in kept)
    assert "5" in packed.dropped
    assert "4" in packed.dropped
    assert packed.prompt_tokens <= packed.budget_tokens
    assert set(packed.trimmed) <= set(kept)  # a dropped abstract is not also reported as trimmed


def test_the_prompt_shows_exactly_the_kept_abstracts() -> None:
    full = pack(10_000).prompt_tokens

    packed = pack(full - 120)

    text = packed.prompt.countable_text()
    for item in packed.abstracts:
        assert f"PUBMED:{item.pmid}\n" in text
    for pmid in packed.dropped:
        assert f"PUBMED:{pmid}\n" not in text


def test_no_room_at_all_leaves_no_abstracts() -> None:
    packed = pack(5)

    assert packed.abstracts == ()
    assert packed.dropped == ("1", "2", "3", "4", "5")


def test_budget_keeps_room_for_the_answer() -> None:
    assert prompt_budget(context_window=8192, max_answer_tokens=1225) == 8192 - 1225 - SAFETY_MARGIN_TOKENS


def test_abstracts_are_clipped_to_the_character_cap_before_counting() -> None:
    long = [ContextAbstract("9", "T", "alpha " * 1000)]

    packed = pack_context(
        "Q?", long, style="chat", abstract_chars=300, counter=WordCounter(), budget_tokens=10_000,
        split_sentences=sentences,
    )  # fmt: skip

    assert len(packed.abstracts[0].abstract) <= 310


@pytest.mark.parametrize("style", ["chat", "verifai"])
def test_packing_with_the_real_tokenizer_fits_the_budget_it_was_given(llm_base_url: str, style: PromptStyle) -> None:
    counter = ServerTokenCounter(LLMSettings(base_url=llm_base_url, model=TEST_LLM_MODEL))
    items = [
        ContextAbstract(
            str(10_000 + rank),
            f"Trial {rank} of metformin",
            " ".join(f"In cohort {rank}.{n}, metformin lowered HbA1c by {n}.{rank} points." for n in range(12)),
        )
        for rank in range(10)
    ]
    whole = pack_context(
        "Does metformin lower HbA1c?", items, style=style, abstract_chars=5000, counter=counter,
        budget_tokens=100_000, split_sentences=sentences,
    )  # fmt: skip
    budget = whole.prompt_tokens // 2

    packed = pack_context(
        "Does metformin lower HbA1c?", items, style=style, abstract_chars=5000, counter=counter,
        budget_tokens=budget, split_sentences=sentences,
    )  # fmt: skip

    recount = counter.count(packed.prompt.countable_text()) + packed.prompt.template_overhead_tokens
    assert recount == packed.prompt_tokens <= budget
    assert 3 <= len(packed.abstracts) < 10
    assert [item.pmid for item in packed.abstracts] == [item.pmid for item in items[: len(packed.abstracts)]]
    assert packed.dropped == tuple(item.pmid for item in items[len(packed.abstracts) :])
