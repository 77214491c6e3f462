"""A deterministic fake evidence finder, for fast tests only: registered as "fake", never the default of any profile.

A sentence's score is the share of the claim's words it contains (`generator.fake_llm.word_overlap`); a sentence
holding at least half of them is evidence. No vectors and no model are needed.
"""

from __future__ import annotations

from collections.abc import Sequence

from generator.fake_llm import OVERLAP_FOR_A_VERDICT, word_overlap
from verifier.base import EvidenceFinderOptions


class FakeEvidenceFinder:
    model_id = "fake-evidence"

    @classmethod
    def from_options(cls, options: EvidenceFinderOptions) -> FakeEvidenceFinder:
        return cls()

    def scores(self, claim: str, sentences: Sequence[str]) -> list[float]:
        return [word_overlap(claim, sentence) for sentence in sentences]

    def is_evidence(self, score: float) -> bool:
        return score >= OVERLAP_FOR_A_VERDICT
