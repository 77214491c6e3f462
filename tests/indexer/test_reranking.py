"""Reranking the fused candidates: the reorder rules (with a scorer written here, since the rules are under test),
and the search path that asks for it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from pydantic import ValidationError

from indexer.base import FusedHit
from indexer.hybrid import HybridSettings, hybrid_search
from indexer.reranking import likeliest_windows, rerank_hits


class WordCountScorer:
    """Scores a passage by how often it says "relevant": enough to test what the reordering does with scores."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def warm_up(self) -> None:
        pass

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        self.calls.append(list(passages))
        return np.array([passage.lower().count("relevant") for passage in passages], dtype=np.float32)


def _hit(pmid: str, score: float) -> FusedHit:
    return FusedHit(pmid, score, 0.0, 0.0, None, None)


ABSTRACTS = {
    "a": ("Title a", "Nothing here. Still nothing."),
    "b": ("Title b", "First sentence. A relevant finding. Another relevant finding."),
    "c": ("A relevant title", "Plain text."),
    "d": ("Title d", "Relevant relevant relevant."),
}


def _lookup(pmids: Sequence[str]) -> dict[str, tuple[str, str]]:
    return {pmid: ABSTRACTS[pmid] for pmid in pmids if pmid in ABSTRACTS}


def test_candidates_are_reordered_by_their_best_passage_and_the_rest_keep_the_fused_order() -> None:
    hits = [_hit("a", 0.9), _hit("c", 0.8), _hit("b", 0.7), _hit("d", 0.6)]

    reranked = rerank_hits("q", hits, reranker=WordCountScorer(), abstracts=_lookup, candidates=3)

    # b's best window holds two mentions (its two sentences pack into one window), c's title one, a none; d was not
    # among the candidates, so it stays last whatever its text says.
    assert [hit.pmid for hit in reranked] == ["b", "c", "a", "d"]
    assert [hit.rerank_score for hit in reranked] == [2.0, 1.0, 0.0, None]
    assert reranked[0].score == 0.7  # the fused score is kept beside the reranker's


def test_a_candidate_whose_abstract_is_unknown_follows_the_reranked_ones_instead_of_vanishing() -> None:
    hits = [_hit("missing", 0.9), _hit("a", 0.8), _hit("b", 0.7)]

    reranked = rerank_hits("q", hits, reranker=WordCountScorer(), abstracts=_lookup, candidates=3)

    assert [hit.pmid for hit in reranked] == ["b", "a", "missing"]
    assert reranked[-1].rerank_score is None


def test_every_window_of_every_candidate_is_scored_in_one_call() -> None:
    scorer = WordCountScorer()

    rerank_hits("q", [_hit("a", 1.0), _hit("c", 0.5)], reranker=scorer, abstracts=_lookup, candidates=2)

    assert scorer.calls == [["Title a", "Nothing here. Still nothing.", "A relevant title", "Plain text."]]


def test_asking_to_rerank_without_a_reranker_is_refused() -> None:
    with pytest.raises(ValueError, match="reranking needs a reranker"):
        hybrid_search(
            "q",
            lexical=None,  # type: ignore[arg-type]
            vectors=None,  # type: ignore[arg-type]
            embedder=None,  # type: ignore[arg-type]
            settings=HybridSettings(rerank=True),
        )


@pytest.mark.parametrize("count", [0, 101])
def test_rerank_candidates_are_bounded(count: int) -> None:
    with pytest.raises(ValidationError, match="rerank_candidates"):
        HybridSettings(rerank_candidates=count)


def test_an_abstract_is_read_as_its_title_and_the_windows_sharing_most_words_with_the_question() -> None:
    windows = ["Title", "Nothing relevant.", "Everolimus blocks mTOR.", "Other text.", "mTOR and everolimus again."]

    chosen = likeliest_windows("Does everolimus block mTOR?", windows, 3)

    assert chosen == ["Title", "Everolimus blocks mTOR.", "mTOR and everolimus again."]
    assert likeliest_windows("anything", windows[:3], 3) == windows[:3]
