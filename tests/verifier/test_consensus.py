"""Counting a consensus: the verifier's verdict on a yes/no question's claim against each retrieved abstract, through
the registry's fake verifier (the counting is under test here, not the model; the real cross-encoder reads real
abstracts in tests/webapp/qa/test_consensus.py)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from indexer.base import FusedHit
from verifier.base import Classification, ClassifierOptions, EvidenceFinderOptions
from verifier.consensus import CONSENSUS_ABSTRACTS, SPEAKING_MINIMUM, claim_consensus, hits_to_read, pmids_to_read
from verifier.fake_classifier import fake_classification
from verifier.registry import build_claim_classifier, build_evidence_finder
from verifier.verdicts import CONTRADICT, NO_EVIDENCE, SUPPORT, UNCLEAR
from verifier.verify import AnswerVerifier, CitedAbstract

CLAIM = "Zorvistatin lowers blood pressure."
SUPPORTING = CitedAbstract("1", "Zorvistatin in hypertension.", "Zorvistatin lowers blood pressure in adults.")
CONTRADICTING = CitedAbstract("2", "Zorvistatin trial.", "Zorvistatin did not lower blood pressure at all.")
SILENT = CitedAbstract("3", "Metformin safety.", "No lactic acidosis occurred in 5,000 patients.")


@pytest.fixture
def fake_verifier() -> AnswerVerifier:
    return AnswerVerifier(
        build_claim_classifier(ClassifierOptions(kind="fake")), build_evidence_finder(EvidenceFinderOptions("fake"))
    )


def test_each_abstract_is_counted_under_its_verdict_in_retrieval_order(fake_verifier: AnswerVerifier) -> None:
    consensus = claim_consensus(fake_verifier, CLAIM, [SILENT, SUPPORTING, CONTRADICTING, SILENT])

    assert consensus.claim == CLAIM
    assert [verdict.pmid for verdict in consensus.verdicts] == ["3", "1", "2"], "a PMID listed twice is read once"
    assert {label: consensus.pmids(label) for label in (SUPPORT, CONTRADICT, NO_EVIDENCE, UNCLEAR)} == {
        SUPPORT: ("1",),
        CONTRADICT: ("2",),
        NO_EVIDENCE: ("3",),
        UNCLEAR: (),
    }
    assert (consensus.count(SUPPORT), consensus.count(CONTRADICT), consensus.count(NO_EVIDENCE)) == (1, 1, 1)
    assert consensus.speaking == 2
    assert not consensus.enough
    supported = consensus.verdicts[1]
    assert supported.confidence is not None
    assert 0.5 <= supported.confidence <= 1
    start, end = supported.evidence_spans[0]
    assert SUPPORTING.abstract[start:end] == SUPPORTING.abstract, "the evidence the verifier read is kept"


class _UnsureAboutTrials:
    """The fake classifier, except that it is not confident about a passage that mentions a trial: shown Unclear."""

    model_id = "unsure-about-trials"

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Classification]:
        made = [fake_classification(claim, passage) for claim, passage in pairs]
        return [
            Classification(label=made.label, confidence=0.4, probabilities=made.probabilities, shown=UNCLEAR)
            if "trial" in passage
            else made
            for made, (_, passage) in zip(made, pairs, strict=True)
        ]


def test_an_abstract_the_verifier_is_unsure_about_counts_as_unclear_not_as_a_side() -> None:
    verifier = AnswerVerifier(_UnsureAboutTrials(), build_evidence_finder(EvidenceFinderOptions("fake")))
    consensus = claim_consensus(verifier, CLAIM, [SUPPORTING, CONTRADICTING, SILENT])

    assert consensus.pmids(UNCLEAR) == ("2",)
    assert consensus.pmids(CONTRADICT) == ()
    assert consensus.speaking == 1


def test_five_abstracts_that_take_a_side_are_enough(fake_verifier: AnswerVerifier) -> None:
    sides = [
        CitedAbstract(f"10{index}", "", (CONTRADICTING if index % 2 else SUPPORTING).abstract)
        for index in range(SPEAKING_MINIMUM)
    ]
    consensus = claim_consensus(fake_verifier, CLAIM, [*sides, SILENT])

    assert (consensus.count(SUPPORT), consensus.count(CONTRADICT), consensus.count(NO_EVIDENCE)) == (3, 2, 1)
    assert consensus.speaking == SPEAKING_MINIMUM == 5
    assert consensus.enough
    assert not claim_consensus(fake_verifier, CLAIM, sides[:-1]).enough


def test_no_abstracts_make_an_empty_consensus(fake_verifier: AnswerVerifier) -> None:
    consensus = claim_consensus(fake_verifier, CLAIM, [])
    assert consensus.verdicts == ()
    assert consensus.speaking == 0


def test_the_abstracts_read_are_the_first_ten_and_the_dense_closest_when_ranked_below_them() -> None:
    ranked = [str(rank) for rank in range(1, 15)]

    assert pmids_to_read(ranked, "13") == [*ranked[:CONSENSUS_ABSTRACTS], "13"]
    assert pmids_to_read(ranked, "4") == ranked[:CONSENSUS_ABSTRACTS], "among the first ten: read once"
    assert pmids_to_read(ranked, None) == ranked[:CONSENSUS_ABSTRACTS]
    assert pmids_to_read(ranked[:3], "99") == ["1", "2", "3", "99"]


def test_the_hits_read_are_the_first_sources_and_the_candidate_with_the_highest_dense_score() -> None:
    def candidate(rank: int, semantic: float) -> FusedHit:
        return FusedHit(str(rank), 1 / rank, 1.0, semantic, 2.0, semantic)

    candidates = [candidate(rank, 0.1 * (rank == 13) + 0.05) for rank in range(1, 20)]

    read = hits_to_read(candidates, top_k=3)

    assert [hit.pmid for hit in read] == ["1", "2", "3", "13"]
    assert read[-1] is candidates[12], "the candidate itself, with its scores"
    assert hits_to_read(candidates[:12], top_k=3) == candidates[:3], "a tie: the earlier ranked, already a source"
