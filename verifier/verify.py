"""Verifying an answer: each claim against each abstract it cites, with the evidence sentences that decided it.

For every (claim, cited abstract) the evidence finder scores the abstract's sentences; the top few go to the
classifier with the title, and the sentences the finder marks as evidence are returned with character offsets
into the abstract so the page highlights exactly them. All pairs of an answer are classified in one batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from generator.claims import Claim
from indexer.sentences import Span, split_sentences
from verifier.base import Classification, EvidenceFinder, PairClassifier
from verifier.pairs import verifier_passage
from verifier.verdicts import CONTRADICT, NO_REFERENCE, SUPPORT, overall_verdict


@dataclass(frozen=True)
class CitedAbstract:
    pmid: str
    title: str
    abstract: str


@dataclass(frozen=True)
class CitationResult:
    pmid: str
    label: str  # what the page shows: SUPPORT, CONTRADICT, NO_EVIDENCE, UNCLEAR or NO_REFERENCE
    confidence: float | None  # calibrated; None where the classifier gives no probability (the LLM judge)
    evidence: tuple[int, ...] = ()  # sentence indices shown as evidence, best first
    evidence_spans: tuple[tuple[int, int], ...] = ()  # their character offsets into the abstract
    detail: str = ""  # what the classifier said, for audit
    leaning: str | None = None  # the decision rule's label, kept when `label` is UNCLEAR
    raw_label: str | None = None  # the plain argmax before calibration and the decision rule
    probabilities: dict[str, float] = field(default_factory=dict)  # calibrated
    raw_probabilities: dict[str, float] = field(default_factory=dict)  # the plain softmax


@dataclass(frozen=True)
class SentenceResult:
    claim: Claim
    verdict: str
    confidence: float | None
    citations: tuple[CitationResult, ...]


def overall_confidence(verdict: str, citations: Iterable[CitationResult]) -> float | None:
    """The strongest confidence among the citations that carry the overall verdict."""
    values = [c.confidence for c in citations if c.label == verdict and c.confidence is not None]
    return max(values) if values else None


@dataclass(frozen=True)
class _Pending:
    claim_index: int
    citation_index: int
    pmid: str
    spans: list[Span]
    ranked: list[int]
    marked: list[int]


class AnswerVerifier:
    def __init__(
        self, classifier: PairClassifier, evidence: EvidenceFinder, *, evidence_sentences: int | None = 3
    ) -> None:
        """`evidence_sentences` None: the classifier reads the whole abstract instead of the top sentences."""
        self.classifier = classifier
        self.evidence = evidence
        self.evidence_sentences = evidence_sentences

    def verify(
        self, claims: Sequence[Claim], abstracts: Mapping[str, CitedAbstract], given: set[str]
    ) -> list[SentenceResult]:
        """Only PMIDs in `given` (what the model was shown) are verified; any other citation is NO_REFERENCE."""
        results: list[list[CitationResult | None]] = []
        pending: list[_Pending] = []
        pairs: list[tuple[str, str]] = []
        for claim_index, claim in enumerate(claims):
            row: list[CitationResult | None] = []
            for citation_index, pmid in enumerate(claim.citations):
                abstract = abstracts.get(pmid)
                if pmid not in given or abstract is None:
                    row.append(CitationResult(pmid=pmid, label=NO_REFERENCE, confidence=None))
                    continue
                spans = split_sentences(abstract.abstract)
                texts = [span.text for span in spans]
                scores = self.evidence.scores(claim.display_text, texts)
                ranked = sorted(range(len(texts)), key=lambda index: (-scores[index], index))
                marked = [index for index in ranked if self.evidence.is_evidence(scores[index])]
                chosen = None if self.evidence_sentences is None else ranked[: self.evidence_sentences]
                pending.append(_Pending(claim_index, citation_index, pmid, spans, ranked, marked))
                pairs.append((claim.display_text, verifier_passage(abstract.title, texts, chosen)))
                row.append(None)
            results.append(row)
        for item, classification in zip(pending, self.classifier.classify(pairs), strict=True):
            evidence = item.marked
            if not evidence and classification.label in (SUPPORT, CONTRADICT) and item.ranked:
                # A verdict (or an Unclear leaning) that rests on evidence always shows some.
                evidence = item.ranked[:1]
            results[item.claim_index][item.citation_index] = CitationResult(
                pmid=item.pmid,
                label=classification.shown_label,
                confidence=classification.confidence,
                evidence=tuple(evidence),
                evidence_spans=tuple((item.spans[i].start, item.spans[i].end) for i in evidence),
                detail=_detail(classification),
                leaning=classification.label,
                raw_label=classification.raw_label or classification.label,
                probabilities=dict(classification.probabilities),
                raw_probabilities=dict(classification.raw_probabilities or {}),
            )
        sentences = []
        for claim, row in zip(claims, results, strict=True):
            citations = tuple(result for result in row if result is not None)
            verdict = overall_verdict(result.label for result in citations)
            sentences.append(
                SentenceResult(
                    claim=claim,
                    verdict=verdict,
                    confidence=overall_confidence(verdict, citations),
                    citations=citations,
                )
            )
        return sentences


def _detail(classification: Classification) -> str:
    if classification.raw is not None:
        return classification.raw
    return " ".join(f"{label}={value:.3f}" for label, value in classification.probabilities.items())
