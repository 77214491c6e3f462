"""The verifier the settings choose, as verifier.registry builds it, once per worker process and reused."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from verifier.base import ClassifierOptions, EvidenceFinder, EvidenceFinderOptions, PairClassifier
from verifier.registry import build_claim_classifier, build_evidence_finder
from verifier.vectors import SentenceVectors
from verifier.verify import AnswerVerifier
from webapp.corpus import engines
from webapp.qa.llm import llm_settings_for
from webapp.qa.pipeline import PipelineSettings

# About 75 MB of MiniLM vectors: a few thousand abstracts' sentences stay embedded between questions.
SENTENCE_VECTOR_CACHE = 50_000


@cache
def sentence_vectors() -> SentenceVectors:
    return SentenceVectors(engines.embedder(), max_texts=SENTENCE_VECTOR_CACHE)


@cache
def claim_classifier(options: ClassifierOptions) -> PairClassifier:
    return build_claim_classifier(options)


@cache
def evidence_finder(options: EvidenceFinderOptions) -> EvidenceFinder:
    return build_evidence_finder(options)


def answer_verifier(pipeline: PipelineSettings) -> AnswerVerifier:
    options = pipeline.verification
    classifier = claim_classifier(
        ClassifierOptions(
            kind=options.verifier,
            model=options.verifier_model,
            labels=tuple(options.verifier_labels),
            max_length=options.max_length,
            llm=llm_settings_for(pipeline),
        )
    )
    finder = evidence_finder(
        EvidenceFinderOptions(
            kind=options.evidence_finder, folder=Path(options.evidence_model), vectors=sentence_vectors()
        )
    )
    return AnswerVerifier(
        classifier, finder, evidence_sentences=None if options.input == "abstract" else options.evidence_sentences
    )
