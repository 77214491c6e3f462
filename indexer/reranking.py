"""Re-scoring the fused candidates with the reranker: each abstract is read as passage windows and scores as its
best window (max pooling), the candidates are reordered by that score and the rest keep the fusion's order."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

from indexer.base import AbstractLookup, FusedHit, Reranker
from indexer.passages import passage_windows
from indexer.stopwords import query_terms

# Splitting sentences is the slow part of reading a candidate (pysbd, a few ms an abstract), and the same abstracts
# come back across questions on one topic: the windows of the most recent ones are kept.
_windows = functools.lru_cache(maxsize=4096)(passage_windows)


# The reranker reads about 30 passages a second on two CPU cores: each abstract gives it its title and the windows
# sharing the most words with the question, not all of its five or six.
WINDOWS_READ = 3


def likeliest_windows(query: str, windows: Sequence[str], count: int) -> list[str]:
    """The title (the first window) and the `count - 1` other windows sharing the most of the query's words (ties:
    the earlier window), in their order in the abstract."""
    if len(windows) <= count:
        return list(windows)
    words = set(query_terms(query))
    overlap = [len(words & set(query_terms(window))) for window in windows[1:]]
    chosen = sorted(sorted(range(len(overlap)), key=lambda index: -overlap[index])[: count - 1])
    return [windows[0], *(windows[1 + index] for index in chosen)]


def rerank_hits(
    query: str,
    hits: Sequence[FusedHit],
    *,
    reranker: Reranker,
    abstracts: AbstractLookup,
    candidates: int,
    windows_read: int = WINDOWS_READ,
) -> list[FusedHit]:
    """The first `candidates` hits reordered by the reranker (each with its `rerank_score`), then the others.

    A candidate whose abstract the lookup does not know cannot be read; it goes after the reranked ones, keeping its
    fused order, rather than being dropped."""
    head, tail = list(hits[:candidates]), list(hits[candidates:])
    texts = abstracts([hit.pmid for hit in head])
    owners: list[int] = []
    passages: list[str] = []
    for position, hit in enumerate(head):
        if hit.pmid in texts:
            windows = likeliest_windows(query, _windows(*texts[hit.pmid]), windows_read)
            owners += [position] * len(windows)
            passages += windows
    best: dict[int, float] = {}
    for position, score in zip(owners, reranker.score(query, passages).tolist(), strict=True):
        best[position] = max(best.get(position, score), score)
    # Ties (rare with float scores) keep the fused order: sorted() is stable.
    read = sorted(best, key=lambda position: -best[position])
    unread = [position for position in range(len(head)) if position not in best]
    reranked = [dataclasses.replace(head[position], rerank_score=round(best[position], 4)) for position in read]
    return reranked + [head[position] for position in unread] + tail
