"""The query-expansion benchmark measures the product's expansion: its searches go through `indexer.query_expansion`
(by way of `indexer.hybrid`), and it reaches into no private name of the product."""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

import indexer.hybrid
from indexer.evaluation import Question
from indexer.evaluation_index import build_evaluation_index
from indexer.fake_embedder import FakeEmbedder
from indexer.query_expansion import expansion_terms
from indexer.records import ArticleRecord

PATH = Path(__file__).parents[1] / "benchmarks" / "query_expansion.py"
# Loaded by path: an installed dependency ships a top-level `benchmarks` package that shadows the folder.
_SPEC = importlib.util.spec_from_file_location("query_expansion_benchmark", PATH)
assert _SPEC is not None
assert _SPEC.loader is not None
benchmark = sys.modules["query_expansion_benchmark"] = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(benchmark)

RECORDS = [
    ArticleRecord("1", "Everolimus inhibits mTOR", "Everolimus blocks mTOR kinase signalling in tumour cells."),
    ArticleRecord("2", "mTOR kinase and rapamycin", "Rapamycin analogues block mTOR kinase in renal cancer."),
    ArticleRecord("3", "Everolimus in renal cancer", "Everolimus prolonged survival in renal cell carcinoma."),
    ArticleRecord("4", "Metformin in diabetes", "Metformin lowered HbA1c in adults with type 2 diabetes."),
    ArticleRecord("5", "Asthma and corticosteroids", "Inhaled corticosteroids reduced asthma exacerbations."),
]
QUESTIONS = [Question("q1", "What does everolimus inhibit?"), Question("q2", "Does metformin lower HbA1c?")]
QRELS = {"q1": {"1": 1, "2": 1}, "q2": {"4": 1}}


def test_every_grid_point_expands_through_the_products_query_expansion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The product's search calls the expansion that `indexer.query_expansion` defines; the spy stands in its place.
    assert vars(indexer.hybrid)["expansion_terms"] is expansion_terms
    calls: list[tuple[int, int, float]] = []

    def spy(query: str, texts: Sequence[str], *, feedback: int, terms: int, weight: float) -> dict[str, float]:
        calls.append((feedback, terms, weight))
        return expansion_terms(query, texts, feedback=feedback, terms=terms, weight=weight)

    monkeypatch.setattr(indexer.hybrid, "expansion_terms", spy)
    embedder = FakeEmbedder()
    index = build_evaluation_index(RECORDS, tmp_path / "index", embedder)
    try:
        results = benchmark.expansion_grid(
            QUESTIONS, QRELS, index, embedder, feedback_docs=[2, 3], terms=[4], weights=[0.5]
        )
    finally:
        index.close()

    assert list(results) == ["no expansion", "prf docs=2 terms=4 weight=0.5", "prf docs=3 terms=4 weight=0.5"]
    # Each expanded setting: both legs (lexical alone, RRF), each question once; never without expansion.
    assert sorted(calls) == sorted([(2, 4, 0.5)] * 4 + [(3, 4, 0.5)] * 4)
    assert set(results["no expansion"]) == {"lexical_map@10", "lexical_ndcg@10", "rrf_map@10", "rrf_ndcg@10"}


def test_the_benchmark_uses_no_private_name_of_the_product() -> None:
    tree = ast.parse(PATH.read_text())
    private_attributes = [
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
    ]
    private_imports = [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("_")
    ]

    assert private_attributes == []
    assert private_imports == []
