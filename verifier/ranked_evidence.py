"""BM25 + cosine ranking as the evidence finder, what the skeleton shipped, where no tagger was trained.

It has no calibrated threshold, so it marks nothing as evidence by itself and the verifier shows its top sentence
for a SUPPORT or CONTRADICT verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

from indexer.sentence_selection import rank_sentences
from verifier.base import EvidenceFinderOptions
from verifier.vectors import SentenceVectors


class RankedEvidence:
    def __init__(self, vectors: SentenceVectors) -> None:
        self.vectors = vectors

    @classmethod
    def from_options(cls, options: EvidenceFinderOptions) -> RankedEvidence:
        return cls(options.required_vectors())

    @property
    def model_id(self) -> str:
        return "bm25+cosine"

    def scores(self, claim: str, sentences: Sequence[str]) -> list[float]:
        ranked = rank_sentences(claim, sentences, self.vectors.vector(claim), self.vectors.matrix(sentences))
        scores = [0.0] * len(sentences)
        for position, index in enumerate(ranked):
            scores[index] = 1.0 - position / max(len(sentences), 1)
        return scores

    def is_evidence(self, score: float) -> bool:
        return False
