"""The trained LateFusion tagger as the evidence finder, over sentence vectors cached per text (an abstract's
sentences are embedded once per worker, and generation's context focusing already fills the same cache).

Imports torch (through the tagger): only a process that verifies claims with it loads this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from verifier.base import EvidenceFinderOptions
from verifier.evidence_model import EvidenceTagger, late_fusion_features
from verifier.vectors import SentenceVectors


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

    @classmethod
    def from_options(cls, options: EvidenceFinderOptions) -> TaggedEvidence:
        if options.folder is None:
            raise ValueError("the late-fusion evidence finder needs the trained tagger's folder")
        return cls.load(options.folder, options.required_vectors())

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
