"""Sentence selection: the sentences of an abstract most likely to bear on a text, by BM25 and embedding similarity.

Generation keeps the sentences that bear on the question; the verifier reads those that bear on a claim. BM25 is in
the mix because embeddings alone rank negated evidence ("No cases of X occurred") low for a claim about X, and that
sentence is exactly what a CONTRADICT verdict needs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rank_bm25 import BM25Okapi

from indexer.base import Embedder
from indexer.stopwords import query_terms


def _normalised(scores: np.ndarray) -> np.ndarray:
    span = float(scores.max() - scores.min()) if len(scores) else 0.0
    return (scores - scores.min()) / span if span > 0 else np.ones_like(scores)


def rank_sentences(
    text: str,
    sentences: Sequence[str],
    text_vector: np.ndarray,
    sentence_vectors: np.ndarray,
    *,
    lexical_weight: float = 0.4,
) -> list[int]:
    """All sentence indices, best evidence first, from vectors computed ahead (cached per document)."""
    if not sentences:
        return []
    cosine = (sentence_vectors @ text_vector).astype(np.float64)
    tokenized = [query_terms(sentence) or ["_"] for sentence in sentences]
    lexical = np.asarray(BM25Okapi(tokenized).get_scores(query_terms(text)), dtype=np.float64)
    combined = lexical_weight * _normalised(lexical) + (1 - lexical_weight) * _normalised(cosine)
    return sorted(range(len(sentences)), key=lambda index: (-combined[index], index))


def select_evidence(
    text: str, sentences: Sequence[str], *, embedder: Embedder, top_n: int = 2, lexical_weight: float = 0.4
) -> list[int]:
    """Indices of the `top_n` best evidence sentences, best first."""
    if not sentences:
        return []
    vectors = embedder.embed([text, *sentences])
    return rank_sentences(text, sentences, vectors[0], vectors[1:], lexical_weight=lexical_weight)[:top_n]
