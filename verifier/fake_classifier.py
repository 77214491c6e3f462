"""A deterministic fake claim classifier, for fast tests only: registered as "fake", never the default of any profile.

It labels each pair as the fake LLM judges one (`generator.fake_llm.overlap_label`): SUPPORT when most of the claim's
words are in the passage, CONTRADICT when moreover exactly one of the two is negated, NO_EVIDENCE otherwise. Its
confidence grows with the overlap's distance from that threshold; the other two labels share the rest.
"""

from __future__ import annotations

from collections.abc import Sequence

from generator.fake_llm import OVERLAP_FOR_A_VERDICT, overlap_label
from verifier.base import Classification, ClassifierOptions
from verifier.verdicts import CONTRADICT, NO_EVIDENCE, SUPPORT

LABELS = (SUPPORT, CONTRADICT, NO_EVIDENCE)


def fake_classification(claim: str, passage: str) -> Classification:
    label, shared = overlap_label(claim, passage)
    confidence = round(min(1.0, 0.5 + abs(shared - OVERLAP_FOR_A_VERDICT)), 4)
    probabilities = {name: confidence if name == label else round((1 - confidence) / 2, 4) for name in LABELS}
    return Classification(
        label=label,
        confidence=confidence,
        probabilities=probabilities,
        raw_label=label,
        raw_probabilities=dict(probabilities),
    )


class FakeClaimClassifier:
    model_id = "fake-classifier"

    @classmethod
    def from_options(cls, options: ClassifierOptions) -> FakeClaimClassifier:
        return cls()

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Classification]:
        return [fake_classification(claim, passage) for claim, passage in pairs]
