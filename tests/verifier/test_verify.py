"""AnswerVerifier: which pairs reach the classifier, how verdicts combine, and the evidence offsets it returns.

The classifier and the evidence finder are small deterministic stand-ins here; the real ones have their own tests.
"""

from __future__ import annotations

from collections.abc import Sequence

from generator.claims import claims_from_answer
from verifier.base import Classification
from verifier.verify import AnswerVerifier, CitationResult, CitedAbstract, overall_confidence

ABSTRACT = "Background sentence. Metformin lowered HbA1c by 1.2 points. No lactic acidosis occurred."


class KeywordClassifier:
    """SUPPORT when the passage contains the claim's last word, CONTRADICT on 'no', else NO_EVIDENCE."""

    model_id = "keyword"

    def __init__(self) -> None:
        self.calls: list[list[tuple[str, str]]] = []

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Classification]:
        self.calls.append(list(pairs))
        results = []
        for claim, passage in pairs:
            if claim.lower().startswith("no "):
                label, confidence = "CONTRADICT", 0.7
            elif claim.rstrip(".").split()[-1].lower() in passage.lower():
                label, confidence = "SUPPORT", 0.9
            else:
                label, confidence = "NO_EVIDENCE", 0.6
            results.append(Classification(label, confidence, {label: confidence}))
        return results


class WordOverlapFinder:
    model_id = "overlap"

    def scores(self, claim: str, sentences: Sequence[str]) -> list[float]:
        words = set(claim.lower().split())
        return [len(words & set(sentence.lower().split())) / 10 for sentence in sentences]

    def is_evidence(self, score: float) -> bool:
        return score >= 0.2


def verifier(sentences: int | None = 1) -> tuple[AnswerVerifier, KeywordClassifier]:
    classifier = KeywordClassifier()
    return AnswerVerifier(classifier, WordOverlapFinder(), evidence_sentences=sentences), classifier


def test_each_given_citation_is_classified_in_one_batch_and_others_are_no_reference() -> None:
    claims = claims_from_answer(
        "Metformin lowered HbA1c (PUBMED:1; PUBMED:2). Another claim about HbA1c (PUBMED:9). Uncited sentence."
    )
    subject, classifier = verifier()
    abstracts = {pmid: CitedAbstract(pmid, "Title", ABSTRACT) for pmid in ("1", "2", "9")}

    results = subject.verify(claims, abstracts, given={"1", "2"})

    assert len(classifier.calls) == 1
    assert len(classifier.calls[0]) == 2
    first, second, third = results
    assert [c.label for c in first.citations] == ["SUPPORT", "SUPPORT"]
    assert first.verdict == "SUPPORT"
    assert first.confidence == 0.9
    assert [(c.pmid, c.label, c.confidence) for c in second.citations] == [("9", "NO_REFERENCE", None)]
    assert second.verdict == "NO_REFERENCE"
    assert third.verdict == "UNCITED"
    assert third.citations == ()


def test_evidence_comes_with_exact_character_offsets_into_the_abstract() -> None:
    [claim] = claims_from_answer("Metformin lowered HbA1c (PUBMED:1).")
    subject, _ = verifier()
    [result] = subject.verify([claim], {"1": CitedAbstract("1", "T", ABSTRACT)}, given={"1"})
    [citation] = result.citations
    assert citation.evidence == (1,)
    [(start, end)] = citation.evidence_spans
    assert ABSTRACT[start:end] == "Metformin lowered HbA1c by 1.2 points."


def test_the_classifier_reads_the_title_and_the_top_sentences_or_the_whole_abstract() -> None:
    [claim] = claims_from_answer("Metformin lowered HbA1c (PUBMED:1).")
    abstracts = {"1": CitedAbstract("1", "A title", ABSTRACT)}
    top, classifier = verifier(sentences=1)
    top.verify([claim], abstracts, given={"1"})
    assert classifier.calls[0][0][1] == "A title Metformin lowered HbA1c by 1.2 points."
    whole, classifier = verifier(sentences=None)
    whole.verify([claim], abstracts, given={"1"})
    assert classifier.calls[0][0][1] == "A title " + ABSTRACT


def test_a_decided_verdict_shows_its_best_sentence_even_below_the_threshold() -> None:
    [claim] = claims_from_answer("No acidosis occurred (PUBMED:1).")
    subject, _ = verifier()
    [result] = subject.verify([claim], {"1": CitedAbstract("1", "T", "Unrelated text here. Other words.")}, {"1"})
    [citation] = result.citations
    assert citation.label == "CONTRADICT"
    assert len(citation.evidence) == 1
    assert len(citation.evidence_spans) == 1


def test_overall_confidence_is_the_strongest_behind_the_verdict() -> None:
    citations = [
        CitationResult("1", "SUPPORT", 0.55),
        CitationResult("2", "SUPPORT", 0.8),
        CitationResult("3", "NO_EVIDENCE", 0.99),
    ]
    assert overall_confidence("SUPPORT", citations) == 0.8
    assert overall_confidence("CONTRADICT", citations) is None
    assert overall_confidence("SUPPORT", [CitationResult("1", "SUPPORT", None)]) is None


class UnsureClassifier:
    """CONTRADICT at 0.45 behind an Unclear threshold, as a checkpoint's decision rule would return it."""

    model_id = "unsure"

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Classification]:
        probabilities = {"SUPPORT": 0.35, "CONTRADICT": 0.45, "NO_EVIDENCE": 0.2}
        return [
            Classification(
                label="CONTRADICT",
                confidence=0.45,
                probabilities=probabilities,
                shown="UNCLEAR",
                raw_label="CONTRADICT",
                raw_probabilities={"SUPPORT": 0.3, "CONTRADICT": 0.6, "NO_EVIDENCE": 0.1},
            )
            for _ in pairs
        ]


def test_an_unsure_verdict_is_shown_unclear_with_its_leaning_probabilities_and_evidence() -> None:
    [claim] = claims_from_answer("Metformin lowered HbA1c (PUBMED:1).")
    subject = AnswerVerifier(UnsureClassifier(), WordOverlapFinder(), evidence_sentences=1)

    [result] = subject.verify([claim], {"1": CitedAbstract("1", "T", ABSTRACT)}, given={"1"})

    [citation] = result.citations
    assert (citation.label, citation.leaning, citation.raw_label) == ("UNCLEAR", "CONTRADICT", "CONTRADICT")
    assert citation.probabilities["CONTRADICT"] == 0.45
    assert citation.raw_probabilities["CONTRADICT"] == 0.6
    assert citation.evidence == (1,)  # the panel still shows what the model read
    assert result.verdict == "UNCLEAR"
    assert result.confidence == 0.45


def test_a_confident_citation_decides_over_an_unclear_one() -> None:
    [claim] = claims_from_answer("Metformin lowered HbA1c (PUBMED:1; PUBMED:2).")

    class Mixed(UnsureClassifier):
        def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Classification]:
            unsure = super().classify(pairs[:1])
            return [*unsure, Classification("SUPPORT", 0.9, {"SUPPORT": 0.9}, shown="SUPPORT")]

    subject = AnswerVerifier(Mixed(), WordOverlapFinder(), evidence_sentences=1)
    abstracts = {pmid: CitedAbstract(pmid, "T", ABSTRACT) for pmid in ("1", "2")}

    [result] = subject.verify([claim], abstracts, given={"1", "2"})

    assert [c.label for c in result.citations] == ["UNCLEAR", "SUPPORT"]
    assert result.verdict == "SUPPORT"
