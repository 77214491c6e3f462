"""The evidence finders the verifier can use at question time.

- `TaggedEvidence`: the trained LateFusion tagger over sentence vectors cached per text (an abstract's sentences
  are embedded once per worker, and generation's context focusing already fills the same cache).
- `RankedEvidence`: BM25 + cosine ranking, what the skeleton shipped; it has no calibrated threshold, so it marks
  nothing as evidence by itself and the verifier shows its top sentence for a SUPPORT or CONTRADICT verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from verifier.evidence import rank_sentences
from verifier.evidence_model import EvidenceTagger, late_fusion_features
from verifier.vectors import SentenceVectors
from verifier.verify import EvidenceFinder


class TaggedEvidence:
    def __init__(self, tagger: EvidenceTagger, vectors: SentenceVectors, *, name: str) -> None:
        if tagger.kind != "late_fusion":
            raise ValueError(f"the {tagger.kind} tagger needs pair features; only late_fusion runs at question time")
        self.tagger = tagger
        self.vectors = vectors
        self.name = name

    @classmethod
    def load(cls, folder: Path, vectors: SentenceVectors) -> TaggedEvidence:
        return cls(EvidenceTagger.load(folder), vectors, name=folder.name)

    @property
    def model_id(self) -> str:
        return f"late-fusion:{self.name}"

    def scores(self, claim: str, sentences: Sequence[str]) -> list[float]:
        if not sentences:
            return []
        features = late_fusion_features(self.vectors.vector(claim), self.vectors.matrix(sentences))
        return self.tagger.probabilities(features)

    def is_evidence(self, score: float) -> bool:
        return score >= self.tagger.threshold


class RankedEvidence:
    def __init__(self, vectors: SentenceVectors) -> None:
        self.vectors = vectors

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


def evidence_finder_for(folder: Path, vectors: SentenceVectors) -> EvidenceFinder:
    """The trained tagger saved in `folder`, or BM25 + cosine ranking where none was trained."""
    if (folder / "config.json").exists():
        return TaggedEvidence.load(folder, vectors)
    return RankedEvidence(vectors)
