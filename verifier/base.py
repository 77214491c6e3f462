"""The roles a verifier backend plays, as Protocols every adapter implements, and the values they exchange.

verifier.registry builds the adapter a setting names: a claim classifier (the trained cross-encoder, the LLM judge)
labels (claim, passage) pairs; an evidence finder (the trained tagger, BM25 + cosine ranking) scores the sentences of
an abstract as evidence for a claim. Each has a deterministic fake for fast tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from generator.base import LLMSettings

if TYPE_CHECKING:
    from verifier.vectors import SentenceVectors


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

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Classification]:
        """One classification per pair, in order."""


class EvidenceFinder(Protocol):
    @property
    def model_id(self) -> str: ...

    def scores(self, claim: str, sentences: Sequence[str]) -> list[float]:
        """A score per sentence; higher is better evidence."""

    def is_evidence(self, score: float) -> bool:
        """Whether a sentence with this score is shown as evidence (the threshold chosen on dev)."""


# What verifier.registry builds each adapter from, keyed by `kind`; each adapter reads the fields that apply to it.


@dataclass(frozen=True)
class ClassifierOptions:
    kind: str
    model: str = ""  # cross-encoder: the checkpoint, by path or hub id
    labels: tuple[str, ...] = ()  # cross-encoder: its output order, when its config names labels generically
    max_length: int = 256  # cross-encoder: tokens read per pair
    precision: str = "fp32"  # cross-encoder: fp32, bf16, or auto (bf16 where the CPU has AVX512-BF16)
    llm: LLMSettings | None = None  # llm-judge: the model that judges

    def required_llm(self) -> LLMSettings:
        if self.llm is None:
            raise ValueError(f"the {self.kind} claim classifier needs LLM settings")
        return self.llm


@dataclass(frozen=True)
class EvidenceFinderOptions:
    kind: str
    folder: Path | None = None  # late-fusion: the trained tagger's folder
    vectors: SentenceVectors | None = None  # late-fusion and ranked: sentence vectors, cached across claims

    def required_vectors(self) -> SentenceVectors:
        if self.vectors is None:
            raise ValueError(f"the {self.kind} evidence finder needs sentence vectors")
        return self.vectors
