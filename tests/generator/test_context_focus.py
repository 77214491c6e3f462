"""Tests for what the model reads: the best-ranked abstracts, each cut to its sentences nearest the question."""

from __future__ import annotations

from generator.answer import ContextAbstract
from generator.context_focus import focused_context
from generator.generation_settings import GenerationSettings
from indexer.fake_embedder import FakeEmbedder

QUESTION = "Does warfarin prevent stroke?"
RANKED = [
    ContextAbstract(
        str(rank),
        f"Title {rank}.",
        f"Warfarin prevented stroke in trial {rank}. Patients were followed for two years. "
        f"Bleeding was rare in trial {rank}. Costs were not reported.",
    )
    for rank in range(1, 8)
]


def focus(**options: int) -> list[ContextAbstract]:
    return focused_context(QUESTION, RANKED, embedder=FakeEmbedder(), options=GenerationSettings(**options))


def test_the_model_reads_only_the_best_ranked_abstracts_in_rank_order() -> None:
    assert [item.pmid for item in focus(abstracts_in_prompt=3, sentences_per_abstract=0)] == ["1", "2", "3"]


def test_zero_abstracts_in_prompt_means_every_retrieved_abstract() -> None:
    assert len(focus(abstracts_in_prompt=0, sentences_per_abstract=0)) == len(RANKED)


def test_each_kept_abstract_is_cut_to_its_sentences_nearest_the_question() -> None:
    kept = focus(abstracts_in_prompt=2, sentences_per_abstract=2)

    assert [item.title for item in kept] == ["Title 1.", "Title 2."]
    for item in kept:
        assert item.abstract.startswith("Warfarin prevented stroke")
        assert item.abstract.count(".") == 2


def test_the_best_ranked_abstract_can_keep_more_sentences_than_the_others() -> None:
    kept = focus(abstracts_in_prompt=3, sentences_per_abstract=2, lead_abstract_sentences=3)

    assert [item.abstract.count(".") for item in kept] == [3, 2, 2]
    assert kept[0].abstract.startswith("Warfarin prevented stroke in trial 1.")


def test_a_lead_below_the_others_or_all_sentences_changes_nothing() -> None:
    assert [item.abstract.count(".") for item in focus(sentences_per_abstract=3, lead_abstract_sentences=1)] == [3] * 5
    assert all(
        item.abstract == RANKED[0].abstract.replace("1", item.pmid)
        for item in focus(sentences_per_abstract=0, lead_abstract_sentences=2)
    )
