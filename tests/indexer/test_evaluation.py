"""Retrieval evaluation: metrics against hand-computed values, input formats, and a real run."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from indexer.embedder import SentenceTransformerEmbedder
from indexer.errors import CorpusFormatError
from indexer.evaluation import (
    evaluate_retrieval_files,
    mode_name,
    product_modes,
    read_qrels,
    read_questions,
    scores,
)
from indexer.hybrid import HybridSettings
from indexer.reranker import CrossEncoderReranker

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

RELEVANT_12 = {f"r{number}": 1 for number in range(1, 13)}


def test_scores_match_hand_computed_values_with_map_normalised_by_min_relevant_and_10() -> None:
    qrels = {"q1": {"a": 1, "b": 1}, "q2": RELEVANT_12, "q3": {"c": 1}}
    rankings = {"q1": ["a", "x", "b"], "q2": [f"r{number}" for number in range(1, 11)], "q3": []}

    result = scores(rankings, qrels)

    # q1: AP = (1/1 + 2/3) / 2; q2: 10 hits in 10 of 12 relevant, normalised by 10, not 12: 1.0; q3: nothing found.
    assert result["map@10"] == pytest.approx((5 / 6 + 1.0 + 0.0) / 3, abs=1e-4)
    assert result["p@10"] == pytest.approx((0.2 + 1.0 + 0.0) / 3, abs=1e-4)
    ndcg_q1 = (1 + 1 / 2) / (1 + 1 / 1.5849625)
    assert result["ndcg@10"] == pytest.approx((ndcg_q1 + 1.0 + 0.0) / 3, abs=1e-4)
    assert result["recall@100"] == pytest.approx((1.0 + 10 / 12 + 0.0) / 3, abs=1e-4)


def test_scores_keep_the_ranking_order_even_for_ids_that_would_sort_differently() -> None:
    qrels = {"q": {"b": 1}}

    first = scores({"q": ["b", "a"]}, qrels)
    second = scores({"q": ["a", "b"]}, qrels)

    assert first["map@10"] == 1.0
    assert second["map@10"] == 0.5


def test_qrels_are_read_from_tsv_with_a_header_and_from_trec_format(tmp_path: Path) -> None:
    tsv = tmp_path / "qrels.tsv"
    tsv.write_text("query_id\tpmid\trelevance\nq1\t11\t1\nq1\t12\t0\nq2\t13\t2\n")
    trec = tmp_path / "qrels.trec"
    trec.write_text("q1 0 11 1\nq2 0 13 2\n")

    assert read_qrels(tsv) == {"q1": {"11": 1, "12": 0}, "q2": {"13": 2}}
    assert read_qrels(trec) == {"q1": {"11": 1}, "q2": {"13": 2}}


def test_a_malformed_qrels_line_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "qrels.tsv"
    path.write_text("q1\t11\t1\nq2\t12\n")

    with pytest.raises(CorpusFormatError, match=r"qrels\.tsv: line 2"):
        read_qrels(path)


def test_questions_take_body_question_or_claim(tmp_path: Path) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_text('{"id": "a", "body": "B?"}\n\n{"id": 2, "claim": "C."}\n{"id": "q", "question": "Q?"}\n')

    assert [(question.id, question.text) for question in read_questions(path)] == [
        ("a", "B?"),
        ("2", "C."),
        ("q", "Q?"),
    ]


def test_a_question_without_text_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_text('{"id": "a"}\n')

    with pytest.raises(CorpusFormatError, match="line 1"):
        read_questions(path)


@pytest.fixture
def bioasq_sample(tmp_path: Path, data_dir: Path) -> tuple[Path, Path, Path]:
    """Three real BioASQ dev questions, their gold abstracts and 80 other abstracts of the benchmark corpus."""
    benchmark = data_dir / "bioasq" / "benchmark"
    questions = [json.loads(line) for line in (benchmark / "questions_dev.jsonl").read_text().splitlines()[:3]]
    gold = {pmid for question in questions for pmid in question["gold_pmids"]}
    kept: list[str] = []
    others = 0
    with gzip.open(benchmark / "corpus.jsonl.gz", "rt") as corpus:
        for line in corpus:
            pmid = json.loads(line)["pmid"]
            if pmid in gold or others < 80:
                others += pmid not in gold
                kept.append(line)
    corpus_path = tmp_path / "corpus.jsonl.gz"
    with gzip.open(corpus_path, "wt") as out:
        out.writelines(kept)
    questions_path = tmp_path / "questions.jsonl"
    questions_path.write_text("".join(json.dumps(question) + "\n" for question in questions))
    qrels_path = tmp_path / "qrels.tsv"
    qrels_path.write_text(
        "query_id\tpmid\trelevance\n"
        + "".join(f"{question['id']}\t{pmid}\t1\n" for question in questions for pmid in question["gold_pmids"])
    )
    return corpus_path, questions_path, qrels_path


def test_a_run_measures_every_mode_and_the_bm25s_peer_on_real_data(
    tmp_path: Path, bioasq_sample: tuple[Path, Path, Path], minilm: SentenceTransformerEmbedder
) -> None:
    corpus, questions, qrels = bioasq_sample

    result = evaluate_retrieval_files(
        corpus=[corpus],
        questions_path=questions,
        qrels_path=qrels,
        index_dir=tmp_path / "index",
        embedder=minilm,
        write=lambda line: None,
        reranker=CrossEncoderReranker(),
        rerank_candidates=[10, 5],
        product_default=HybridSettings(
            fusion="rrf", lexical_weight=0.5, semantic_weight=0.5, expand_query=True, rerank=True, rerank_candidates=10
        ),
    )

    assert result["n_questions"] == 3
    assert result["n_docs"] > 80
    assert set(result["modes"]) >= {
        "lexical", "semantic", "hybrid", "hybrid_rrf", "bm25s_baseline",
        "lexical_prf", "hybrid_prf", "hybrid_rrf_prf",
        "hybrid_prf_reranked", "hybrid_rrf_prf_reranked", "hybrid_prf_reranked_top5", "hybrid_rrf_prf_reranked_top5",
    }  # fmt: skip
    assert result["default_mode"] == "hybrid_rrf_prf_reranked"
    for values in result["modes"].values():
        assert set(values) >= {"p@10", "map@10", "ndcg@10", "recall@100", "latency_ms_p50", "latency_ms_p95"}
        assert all(0.0 <= values[name] <= 1.0 for name in ("p@10", "map@10", "ndcg@10", "recall@100"))
        assert values["latency_ms_p95"] >= values["latency_ms_p50"] > 0
    # The gold abstracts are a third of a tiny corpus: every search must find most of them.
    assert result["modes"]["hybrid"]["recall@100"] > 0.8
    assert result["modes"]["bm25s_baseline"]["ndcg@10"] > 0.3
    assert result["build"]["docs"] == result["n_docs"]
    assert result["build"]["docs_per_second"]["embed"] > 0


def test_the_default_mode_is_named_by_the_measured_mode_that_searches_the_same_way() -> None:
    modes = product_modes(rerank_candidates=[30, 50])

    assert mode_name(HybridSettings(lexical_weight=0.7, semantic_weight=0.3, expand_query=False), modes) == "hybrid"
    assert mode_name(HybridSettings(lexical_weight=0.7, semantic_weight=0.3, expand_query=True), modes) == "hybrid_prf"
    rrf = HybridSettings(fusion="rrf", lexical_weight=0.5, semantic_weight=0.5, top_k=5, expand_query=False)
    assert mode_name(rrf, modes) == "hybrid_rrf"  # depth aside
    reranked = rrf.model_copy(update={"expand_query": True, "rerank": True, "rerank_candidates": 50})
    assert mode_name(reranked, modes) == "hybrid_rrf_prf_reranked_top50"
    assert mode_name(reranked.model_copy(update={"rerank_candidates": 40}), modes) is None
    assert mode_name(rrf.model_copy(update={"rerank": True}), modes) is None  # fusions without expansion: not reranked
    assert mode_name(HybridSettings(mode="semantic", expand_query=False), modes) == "semantic"
