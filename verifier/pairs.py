"""What every claim classifier shares: the passage it reads and the classification it returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


def verifier_passage(title: str, sentences: Sequence[str], chosen: Sequence[int] | None = None) -> str:
    """The second segment the verifier reads: the title, then the chosen sentences in document order."""
    picked = sentences if chosen is None else [sentences[index] for index in sorted(set(chosen))]
    return " ".join(part for part in (title.strip(), *picked) if part).strip()


@dataclass(frozen=True)
class Classification:
    label: str  # the decision rule's label: what the model leans to, even when it is not confident enough to show
    confidence: float | None  # the calibrated probability of `label`; None for a classifier without probabilities
    probabilities: dict[str, float]  # calibrated
    raw: str | None = None  # a generative judge's own words
    shown: str | None = None  # UNCLEAR when the confidence is below the checkpoint's threshold; None: `label`
    raw_label: str | None = None  # the plain argmax before calibration and the decision rule
    raw_probabilities: dict[str, float] | None = None  # the plain softmax

    @property
    def shown_label(self) -> str:
        return self.shown or self.label


class PairClassifier(Protocol):
    """Labels (claim, passage) pairs SUPPORT, CONTRADICT or NO_EVIDENCE: the trained cross-encoder or the LLM judge."""

    @property
    def model_id(self) -> str: ...

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Classification]: ...
