"""The verifier the settings choose, built once per worker process and reused across questions."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from verifier.evidence_finders import evidence_finder_for
from verifier.llm_judge import LlmJudge
from verifier.pairs import PairClassifier
from verifier.vectors import SentenceVectors
from verifier.verify import AnswerVerifier, EvidenceFinder
from webapp.corpus import engines
from webapp.qa.llm import llm_for
from webapp.qa.pipeline import PipelineSettings

# About 75 MB of MiniLM vectors: a few thousand abstracts' sentences stay embedded between questions.
SENTENCE_VECTOR_CACHE = 50_000


@cache
def sentence_vectors() -> SentenceVectors:
    return SentenceVectors(engines.embedder(), max_texts=SENTENCE_VECTOR_CACHE)


@cache
def cross_encoder(model: str, labels: tuple[str, ...], max_length: int) -> PairClassifier:
    from verifier.cross_encoder import CrossEncoderVerifier  # torch and transformers load only where verifying

    return CrossEncoderVerifier.load(model, labels=labels or None, max_length=max_length)


@cache
def evidence_finder(tagger_folder: str) -> EvidenceFinder:
    return evidence_finder_for(Path(tagger_folder), sentence_vectors())


def answer_verifier(pipeline: PipelineSettings) -> AnswerVerifier:
    options = pipeline.verification
    classifier: PairClassifier
    if options.verifier == "llm-judge":
        classifier = LlmJudge(llm_for(pipeline))
    else:
        classifier = cross_encoder(options.verifier_model, tuple(options.verifier_labels), options.max_length)
    return AnswerVerifier(
        classifier,
        evidence_finder(options.evidence_model),
        evidence_sentences=None if options.input == "abstract" else options.evidence_sentences,
    )
