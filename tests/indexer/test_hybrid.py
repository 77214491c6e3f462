"""Tests for hybrid retrieval: min-max normalisation, weighted fusion, settings, and search over real indexes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from indexer.base import NO_FILTERS, FusedHit, Hit, SearchFilters
from indexer.chunking import Chunker
from indexer.embedder import SentenceTransformerEmbedder
from indexer.hybrid import HybridSettings, candidates_settings, dense_closest, fuse, hybrid_search, min_max
from indexer.qdrant_edge_index import QdrantEdgeIndex
from indexer.records import ArticleRecord
from indexer.tantivy_index import TantivyIndex

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

ABSTRACTS = (
    ArticleRecord(
        "1001",
        "Metformin in type 2 diabetes",
        "Metformin lowered HbA1c and fasting glucose in adults with type 2 diabetes over 24 weeks.",
        year=2001,
        publication_types=("Randomized Controlled Trial",),
    ),
    ArticleRecord(
        "1002",
        "Inhaled corticosteroids in asthma",
        "Inhaled corticosteroids reduced severe asthma exacerbations in children.",
        year=2005,
        publication_types=("Meta-Analysis",),
    ),
    ArticleRecord(
        "1003",
        "Warfarin for atrial fibrillation",
        "Warfarin reduced the risk of ischaemic stroke in patients with atrial fibrillation.",
        year=2010,
        publication_types=("Randomized Controlled Trial",),
    ),
    ArticleRecord(
        "1004",
        "Statins and LDL cholesterol",
        "Statin therapy lowered LDL cholesterol and major vascular events.",
        year=2015,
        publication_types=("Meta-Analysis",),
    ),
    ArticleRecord(
        "1005",
        "Influenza vaccination in older adults",
        "Annual influenza vaccination reduced hospital admissions for pneumonia in people over 65.",
        year=2018,
        publication_types=("Randomized Controlled Trial",),
    ),
    ArticleRecord(
        "1006",
        "Vitamin D and fractures",
        "Vitamin D supplementation did not reduce hip fractures in community-dwelling women.",
        year=2020,
        publication_types=("Meta-Analysis",),
    ),
    ArticleRecord(
        "1007",
        "Antidepressants in major depression",
        "Selective serotonin reuptake inhibitors improved symptoms of major depressive disorder.",
        year=2021,
        publication_types=("Randomized Controlled Trial",),
    ),
    ArticleRecord(
        "1008",
        "Helicobacter pylori eradication",
        "Eradication of Helicobacter pylori healed duodenal ulcers and prevented relapse.",
        year=2023,
        publication_types=("Meta-Analysis",),
    ),
)


def hits(*pairs: tuple[str, float]) -> list[Hit]:
    return [Hit(pmid=pmid, score=score) for pmid, score in pairs]


def by_pmid(fused: list[FusedHit]) -> dict[str, FusedHit]:
    return {hit.pmid: hit for hit in fused}


# min_max


def test_min_max_of_no_hits_is_empty() -> None:
    assert min_max([]) == {}


def test_min_max_maps_the_lowest_score_to_zero_and_the_highest_to_one() -> None:
    normalised = min_max(hits(("a", 4.0), ("b", 10.0), ("c", 7.0)))

    assert normalised == {"a": 0.0, "b": 1.0, "c": pytest.approx(0.5)}


def test_min_max_preserves_the_order_of_scores() -> None:
    raw = hits(("a", 0.31), ("b", 0.92), ("c", -0.2), ("d", 0.5))

    normalised = min_max(raw)

    assert sorted(normalised, key=normalised.__getitem__) == ["c", "a", "d", "b"]
    assert all(0.0 <= value <= 1.0 for value in normalised.values())


@pytest.mark.parametrize("score", [0.0, 3.5, -1.0])
def test_min_max_maps_equal_scores_to_one(score: float) -> None:
    assert min_max(hits(("a", score), ("b", score))) == {"a": 1.0, "b": 1.0}


def test_min_max_maps_a_single_hit_to_one() -> None:
    assert min_max(hits(("a", 12.0))) == {"a": 1.0}


# fuse


def test_fuse_applies_the_leg_weights_to_the_normalised_scores() -> None:
    settings = HybridSettings(lexical_weight=0.7, semantic_weight=0.3)
    lexical = hits(("a", 10.0), ("b", 5.0), ("c", 0.0))
    semantic = hits(("a", 0.2), ("b", 0.6), ("c", 1.0))

    fused = by_pmid(fuse(lexical, semantic, settings))

    assert fused["a"].score == pytest.approx(0.7 * 1.0 + 0.3 * 0.0)
    assert fused["b"].score == pytest.approx(0.7 * 0.5 + 0.3 * 0.5)
    assert fused["c"].score == pytest.approx(0.7 * 0.0 + 0.3 * 1.0)
    assert (fused["b"].lexical_score, fused["b"].semantic_score) == (pytest.approx(0.5), pytest.approx(0.5))
    assert (fused["b"].lexical_raw, fused["b"].semantic_raw) == (5.0, 0.6)


def test_fuse_orders_by_fused_score() -> None:
    settings = HybridSettings(lexical_weight=0.5, semantic_weight=0.5)
    lexical = hits(("a", 3.0), ("b", 2.0), ("c", 1.0))
    semantic = hits(("c", 0.9), ("b", 0.8), ("a", 0.1))

    fused = fuse(lexical, semantic, settings)

    # a: 0.5 * 1 + 0.5 * 0 = 0.5; b: 0.5 * 0.5 + 0.5 * 0.875 = 0.6875; c: 0.5 * 0 + 0.5 * 1 = 0.5 (ties "a")
    assert [hit.pmid for hit in fused] == ["b", "a", "c"]
    assert [hit.score for hit in fused] == pytest.approx([0.6875, 0.5, 0.5])


def test_a_pmid_only_in_the_lexical_leg_gets_zero_for_the_semantic_leg() -> None:
    settings = HybridSettings(lexical_weight=0.6, semantic_weight=0.4)
    lexical = hits(("lex-only", 8.0), ("both", 2.0))
    semantic = hits(("both", 0.9), ("sem-only", 0.4))

    fused = by_pmid(fuse(lexical, semantic, settings))

    assert fused["lex-only"].semantic_score == 0.0
    assert fused["lex-only"].semantic_raw is None
    assert fused["lex-only"].score == pytest.approx(0.6)
    assert fused["sem-only"].lexical_score == 0.0
    assert fused["sem-only"].lexical_raw is None
    assert fused["sem-only"].score == pytest.approx(0.0)
    assert fused["both"].score == pytest.approx(0.4)


def test_fuse_returns_every_pmid_from_either_leg_once() -> None:
    fused = fuse(hits(("a", 1.0), ("b", 2.0)), hits(("b", 0.5), ("c", 0.4)), HybridSettings(top_k=10))

    assert sorted(hit.pmid for hit in fused) == ["a", "b", "c"]


def test_fuse_cuts_to_top_k() -> None:
    lexical = hits(*((f"p{number}", float(number)) for number in range(20)))

    fused = fuse(lexical, [], HybridSettings(top_k=5))

    assert [hit.pmid for hit in fused] == ["p19", "p18", "p17", "p16", "p15"]


def test_fused_order_breaks_ties_by_pmid() -> None:
    settings = HybridSettings(lexical_weight=0.5, semantic_weight=0.5, top_k=10)
    # "z" and "a" are tied (1.0 lexical / 0.0 semantic versus the reverse); "m" and "b" tie at 0.5 semantic only.
    lexical = hits(("z", 9.0), ("a", 1.0))
    semantic = hits(("a", 0.9), ("z", 0.1), ("m", 0.5), ("b", 0.5))

    fused = fuse(lexical, semantic, settings)

    assert [hit.pmid for hit in fused] == ["a", "z", "b", "m"]
    assert fused[0].score == pytest.approx(fused[1].score)


def test_fuse_is_deterministic_for_tied_scores_whatever_the_input_order() -> None:
    settings = HybridSettings(top_k=10)
    pmids = ["30", "4", "200", "1", "S2:9"]

    forward = fuse(hits(*((pmid, 1.0) for pmid in pmids)), [], settings)
    backward = fuse(hits(*((pmid, 1.0) for pmid in reversed(pmids))), [], settings)

    assert [hit.pmid for hit in forward] == [hit.pmid for hit in backward] == sorted(pmids)


def test_fuse_of_two_empty_legs_is_empty() -> None:
    assert fuse([], [], HybridSettings()) == []


def test_a_zero_weight_leg_does_not_influence_the_order() -> None:
    settings = HybridSettings(lexical_weight=1.0, semantic_weight=0.0)

    fused = fuse(hits(("a", 2.0), ("b", 1.0)), hits(("b", 0.9), ("a", 0.1)), settings)

    assert [hit.pmid for hit in fused] == ["a", "b"]
    assert [hit.score for hit in fused] == [1.0, 0.0]


# HybridSettings


def test_settings_have_usable_defaults() -> None:
    settings = HybridSettings()

    assert (settings.top_k, settings.lexical_weight, settings.semantic_weight) == (10, 0.7, 0.3)
    assert settings.candidates_per_leg == 50


def test_settings_reject_both_weights_zero() -> None:
    with pytest.raises(ValidationError, match="at least one leg needs a positive weight"):
        HybridSettings(lexical_weight=0, semantic_weight=0)


@pytest.mark.parametrize(("lexical", "semantic"), [(0.0, 1.0), (1.0, 0.0), (0.0, 0.01)])
def test_settings_accept_a_single_positive_weight(lexical: float, semantic: float) -> None:
    settings = HybridSettings(lexical_weight=lexical, semantic_weight=semantic)

    assert (settings.lexical_weight, settings.semantic_weight) == (lexical, semantic)


@pytest.mark.parametrize(
    "fields",
    [
        {"lexical_weight": -0.1},
        {"semantic_weight": 1.5},
        {"top_k": 0},
        {"top_k": 101},
        {"candidates_per_leg": 49},
        {"fusion": "max"},
        {"mode": "both"},
        {"rrf_k": 0},
        {"candidates_per_leg": 1001},
    ],
)
def test_settings_reject_out_of_range_values(fields: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        HybridSettings(**fields)  # type: ignore[arg-type]


def test_settings_are_frozen() -> None:
    settings = HybridSettings()

    with pytest.raises(ValidationError):
        settings.top_k = 3  # type: ignore[misc]


# hybrid_search over real indexes


@pytest.fixture(scope="module")
def embedder(minilm: SentenceTransformerEmbedder) -> SentenceTransformerEmbedder:
    return minilm


@pytest.fixture(scope="module")
def indexes(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Iterator[tuple[TantivyIndex, QdrantEdgeIndex]]:
    root: Path = tmp_path_factory.mktemp("hybrid")
    lexical = TantivyIndex(root / "tantivy")
    lexical.add(ABSTRACTS)
    vectors = QdrantEdgeIndex(root / "qdrant", dimension=embedder.dimension)
    chunks = Chunker(embedder.token_lengths, max_tokens=embedder.max_tokens).chunks(ABSTRACTS)
    vectors.upsert(chunks, embedder.embed([chunk.text for chunk in chunks]))
    vectors.optimize()
    yield lexical, vectors
    vectors.close()
    lexical.close()


def search(
    query: str,
    indexes: tuple[TantivyIndex, QdrantEdgeIndex],
    embedder: SentenceTransformerEmbedder,
    filters: SearchFilters = NO_FILTERS,
    **settings: Any,
) -> list[FusedHit]:
    lexical, vectors = indexes
    return hybrid_search(
        query, lexical=lexical, vectors=vectors, embedder=embedder, settings=HybridSettings(**settings), filters=filters
    )


def test_a_query_about_one_topic_ranks_that_article_first_with_both_leg_scores(
    indexes: tuple[TantivyIndex, QdrantEdgeIndex], embedder: SentenceTransformerEmbedder
) -> None:
    results = search("Does warfarin prevent stroke in atrial fibrillation?", indexes, embedder, top_k=3)

    best = results[0]
    assert best.pmid == "1003"
    assert best.lexical_raw is not None
    assert best.lexical_raw > 0
    assert best.semantic_raw is not None
    assert 0 < best.semantic_raw <= 1.0001
    assert (best.lexical_score, best.semantic_score) == (1.0, 1.0)
    assert best.score == pytest.approx(1.0)
    assert len(results) == 3


@pytest.mark.parametrize(
    ("query", "pmid"),
    [
        ("What is the role of metformin in type 2 diabetes?", "1001"),
        ("Do inhaled corticosteroids prevent asthma exacerbations in children?", "1002"),
        ("Does vitamin D supplementation prevent hip fractures?", "1006"),
        ("Helicobacter pylori eradication and duodenal ulcer relapse", "1008"),
    ],
)
def test_each_topic_query_finds_its_article_first(
    indexes: tuple[TantivyIndex, QdrantEdgeIndex], embedder: SentenceTransformerEmbedder, query: str, pmid: str
) -> None:
    assert search(query, indexes, embedder)[0].pmid == pmid


def test_a_query_sharing_no_word_with_the_corpus_is_ranked_by_the_dense_leg_alone(
    indexes: tuple[TantivyIndex, QdrantEdgeIndex], embedder: SentenceTransformerEmbedder
) -> None:
    results = search("flu shots for the elderly", indexes, embedder)

    assert results[0].pmid == "1005"
    assert all(hit.lexical_raw is None for hit in results)
    assert all(hit.lexical_score == 0.0 for hit in results)
    assert results[0].score == pytest.approx(0.3)  # only the semantic weight can contribute


def test_hybrid_search_returns_at_most_top_k_and_is_repeatable(
    indexes: tuple[TantivyIndex, QdrantEdgeIndex], embedder: SentenceTransformerEmbedder
) -> None:
    first = search("statin cholesterol", indexes, embedder, top_k=4)
    second = search("statin cholesterol", indexes, embedder, top_k=4)

    assert len(first) == 4
    assert first == second
    assert first[0].pmid == "1004"


def test_rrf_scores_by_rank_alone() -> None:
    settings = HybridSettings(fusion="rrf", lexical_weight=1.0, semantic_weight=1.0, rrf_k=60)
    lexical = hits(("a", 1000.0), ("b", 999.0))
    semantic = hits(("b", 0.9), ("c", 0.1))

    fused = by_pmid(fuse(lexical, semantic, settings))

    assert fused["b"].score == pytest.approx(1 / 62 + 1 / 61)
    assert fused["a"].score == pytest.approx(1 / 61)
    assert fused["c"].score == pytest.approx(1 / 62)
    assert [hit.pmid for hit in fuse(lexical, semantic, settings)] == ["b", "a", "c"]


def test_a_single_leg_mode_returns_only_that_legs_documents(
    indexes: tuple[TantivyIndex, QdrantEdgeIndex], embedder: SentenceTransformerEmbedder
) -> None:
    lexical_only = search("flu shots for the elderly", indexes, embedder, mode="lexical")
    semantic_only = search("warfarin stroke", indexes, embedder, mode="semantic")

    assert lexical_only == []  # no word of the query is indexed
    assert semantic_only[0].pmid == "1003"
    assert all(hit.lexical_raw is None for hit in semantic_only)


def test_filters_apply_inside_both_legs(
    indexes: tuple[TantivyIndex, QdrantEdgeIndex], embedder: SentenceTransformerEmbedder
) -> None:
    filters = SearchFilters(year_from=2015, publication_types=("Meta-Analysis",))

    results = search("Does warfarin prevent stroke in atrial fibrillation?", indexes, embedder, filters)

    admitted = {"1004", "1006", "1008"}
    assert {hit.pmid for hit in results} == admitted  # the best match, 1003 (2010), is not admitted
    assert all(hit.semantic_raw is not None for hit in results)  # the dense leg still found every admitted one


def test_rrf_mode_runs_over_real_indexes(
    indexes: tuple[TantivyIndex, QdrantEdgeIndex], embedder: SentenceTransformerEmbedder
) -> None:
    results = search("statin cholesterol", indexes, embedder, fusion="rrf", top_k=3)

    assert results[0].pmid == "1004"
    assert results[0].score == pytest.approx(0.7 / 61 + 0.3 / 61)


def fused(pmid: str, semantic_score: float, *, dense: bool = True) -> FusedHit:
    return FusedHit(
        pmid=pmid,
        score=0.5,
        lexical_score=0.5,
        semantic_score=semantic_score,
        lexical_raw=3.0,
        semantic_raw=semantic_score if dense else None,
    )


def test_the_dense_closest_is_the_highest_semantic_score_and_the_earlier_ranked_on_a_tie() -> None:
    ranked = [fused("a", 0.4), fused("b", 0.9), fused("c", 0.9), fused("d", 0.0, dense=False)]

    assert dense_closest(ranked) == ranked[1]
    assert dense_closest([fused("d", 0.0, dense=False)]) is None, "the dense leg returned none of them"
    assert dense_closest([]) is None


def test_the_candidates_start_with_the_narrower_search_and_hold_the_dense_legs_closest(
    indexes: tuple[TantivyIndex, QdrantEdgeIndex], embedder: SentenceTransformerEmbedder
) -> None:
    lexical, vectors = indexes
    query = "Does warfarin prevent stroke in atrial fibrillation?"
    narrow = HybridSettings(top_k=2)
    candidates = hybrid_search(
        query, lexical=lexical, vectors=vectors, embedder=embedder, settings=candidates_settings(narrow)
    )

    assert candidates_settings(narrow).top_k == narrow.candidates_per_leg
    assert candidates[:2] == search(query, indexes, embedder, top_k=2)
    assert len(candidates) == len(ABSTRACTS), "every article is a candidate of the dense leg at least"
    closest = dense_closest(candidates)
    assert closest is not None
    assert closest.pmid == search(query, indexes, embedder, mode="semantic")[0].pmid == "1003"
    assert closest.semantic_score == 1.0
