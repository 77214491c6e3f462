"""The verifier the settings choose, as verifier.registry builds it, once per worker process and reused; and what it
reads for one question: its answer's claims, the cited abstracts as stored now, and the PMIDs the model was shown."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from generator.claims import Claim, claims_from_answer
from verifier.base import ClassifierOptions, EvidenceFinder, EvidenceFinderOptions, PairClassifier
from verifier.registry import build_claim_classifier, build_evidence_finder
from verifier.vectors import SentenceVectors
from verifier.verify import AnswerVerifier, CitedAbstract
from webapp.corpus import engines
from webapp.qa.llm import llm_settings_for
from webapp.qa.models import Question
from webapp.qa.pipeline import PipelineSettings, default_pipeline_settings
from webapp.qa.source_texts import source_texts

logger = logging.getLogger(__name__)

# About 75 MB of MiniLM vectors: a few thousand abstracts' sentences stay embedded between questions.
SENTENCE_VECTOR_CACHE = 50_000


@cache
def sentence_vectors() -> SentenceVectors:
    return SentenceVectors(engines.embedder(), max_texts=SENTENCE_VECTOR_CACHE)


# The worker's warm-up thread and its first task may ask for the same model at once: one of them loads it.
_building = threading.Lock()


def claim_classifier(options: ClassifierOptions) -> PairClassifier:
    with _building:
        return _claim_classifier(options)


def evidence_finder(options: EvidenceFinderOptions) -> EvidenceFinder:
    with _building:
        return _evidence_finder(options)


@cache
def _claim_classifier(options: ClassifierOptions) -> PairClassifier:
    return build_claim_classifier(options)


@cache
def _evidence_finder(options: EvidenceFinderOptions) -> EvidenceFinder:
    return build_evidence_finder(options)


def answer_verifier(pipeline: PipelineSettings) -> AnswerVerifier:
    options = pipeline.verification
    classifier = claim_classifier(
        ClassifierOptions(
            kind=options.verifier,
            model=options.verifier_model,
            labels=tuple(options.verifier_labels),
            max_length=options.max_length,
            precision=options.verifier_precision,
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


# One claim against one short abstract: enough to load both models and run each once (the first forward pass of a
# torch model also picks its kernels).
WARM_UP_CLAIM = Claim(
    text="Metformin lowers HbA1c (PUBMED:1).", display_text="Metformin lowers HbA1c.", citations=("1",)
)
WARM_UP_ABSTRACT = CitedAbstract(
    pmid="1", title="Metformin", abstract="Metformin lowered HbA1c. It was well tolerated."
)


def warm_up_verifier_in_background() -> threading.Thread:
    """Load the configured verifier and evidence tagger in a thread and verify one claim with them, so that a worker's
    first yes/no bottom line or verification does not wait for the checkpoint to load (about 4 s for the default on
    two cores, benchmarks/RESULTS.md) and the worker's start is not held up either."""
    pipeline = default_pipeline_settings()

    def warm() -> None:
        try:
            answer_verifier(pipeline).verify([WARM_UP_CLAIM], {"1": WARM_UP_ABSTRACT}, {"1"})
            logger.info("the verifier is loaded")
        except Exception as exc:  # the first task loads it instead, and reports what fails
            logger.warning("could not load the verifier ahead of the first question: %s", exc)

    thread = threading.Thread(target=warm, name="verifier-warm-up", daemon=True)
    thread.start()
    return thread


def cited_abstracts(*, pmids: Iterable[str], owner_id: int | None = None) -> dict[str, CitedAbstract]:
    """The stored abstracts of these PMIDs; one no longer stored (a deletion file removed it) is left out. With
    `owner_id`, the cited pages of that person's library too (`DOC:<id>:p<page>`), each read as its page's text."""
    texts = source_texts(ids=pmids, owner_id=owner_id)
    return {key: CitedAbstract(pmid=key, title=title, abstract=text) for key, (title, text) in texts.items()}


@dataclass(frozen=True)
class VerificationInputs:
    claims: list[Claim]
    abstracts: dict[str, CitedAbstract]
    given: set[str]  # only these can be cited; any other citation is NO_REFERENCE and never linked


def question_verification_inputs(question: Question) -> VerificationInputs:
    """What the verifier reads for `question`'s answer: the verify stage, and a re-check of a watched answer."""
    given = set(
        question.given_pmids if "given" in question.context else question.retrieved.values_list("pmid", flat=True)
    )
    claims = [] if question.cannot_answer else claims_from_answer(question.answer_text)
    abstracts = cited_abstracts(pmids=[pmid for claim in claims for pmid in claim.citations], owner_id=question.user_id)
    return VerificationInputs(claims=claims, abstracts=abstracts, given=given)
