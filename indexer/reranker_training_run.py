"""A whole reranker training run, as `manage.py train_reranker` makes it: the held-out-free golden questions, hard
negatives mined by our own hybrid search over the shared corpus, the training groups (kept as JSON lines beside the
model, so a resumed run trains on exactly the same groups), then fine-tuning."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from indexer.base import Embedder
from indexer.evaluation import read_corpus
from indexer.evaluation_index import build_evaluation_index
from indexer.hybrid import HybridSettings, hybrid_search
from indexer.reranker_data import (
    TrainingGroup,
    mine_hard_negatives,
    read_groups,
    training_groups,
    training_questions,
    write_groups,
)
from indexer.reranker_training import RerankerTrainingConfig, train_reranker

# Reciprocal-rank fusion: the best-measured fusion on BioASQ dev, so the negatives are the ones it gets wrong.
MINING = HybridSettings(top_k=20, fusion="rrf", lexical_weight=0.5, semantic_weight=0.5)


def prepare_groups(
    data_root: Path,
    *,
    corpus: Sequence[Path],
    index_dir: Path,
    embedder: Embedder,
    write: Callable[[str], None],
    limit: int | None = None,
) -> list[TrainingGroup]:
    questions = training_questions(data_root)
    if limit:
        questions = questions[:limit]
    write(f"{len(questions):,} training questions (benchmark dev questions and those about its corpus left out)")
    records, _ = read_corpus(corpus)
    write(f"indexing {len(records):,} abstracts into {index_dir} (reused when already built)…")
    index = build_evaluation_index(records, index_dir, embedder)
    try:

        def search(text: str) -> list[str]:
            hits = hybrid_search(text, lexical=index.lexical, vectors=index.vectors, embedder=embedder, settings=MINING)
            return [hit.pmid for hit in hits]

        write("mining hard negatives…")
        negatives = mine_hard_negatives(questions, search)
    finally:
        index.close()
    abstracts = {record.pmid: (record.title, record.abstract) for record in records}
    return training_groups(questions, negatives, abstracts)


def run_reranker_training(
    config: RerankerTrainingConfig,
    data_root: Path,
    *,
    corpus: Sequence[Path],
    index_dir: Path,
    groups_file: Path,
    embedder: Embedder,
    write: Callable[[str], None],
    limit: int | None = None,
) -> dict[str, object]:
    """`groups_file` keeps the training groups (made once, read back by a resumed run); outside the model folder,
    which is committed."""
    if groups_file.exists():
        groups = read_groups(groups_file)
        write(f"{len(groups):,} training groups from {groups_file}")
    else:
        groups = prepare_groups(
            data_root, corpus=corpus, index_dir=index_dir, embedder=embedder, write=write, limit=limit
        )
        # Written whole, then renamed: a half-written file would be read back as the full set.
        groups_file.parent.mkdir(parents=True, exist_ok=True)
        partial = groups_file.with_suffix(".partial")
        write_groups(groups, partial)
        partial.replace(groups_file)
        write(f"{len(groups):,} training groups written to {groups_file}")
    return train_reranker(config, groups, on_progress=write)
