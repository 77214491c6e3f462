"""The deep check's tree: claims judged against the cited abstracts in one batch, a search only for the claims those
do not settle, and the bottom-up rule (a sentence is SUPPORT only when every claim is supported by a cited abstract).

The model, classifier and evidence finder are the registry's deterministic fakes (shared words and negation decide a
verdict), the search a list the test sets.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from generator.base import LLMSettings
from generator.claims import claims_from_answer
from generator.fake_llm import FakeLLM
from verifier.base import Classification
from verifier.claim_extraction import ClaimExtractor
from verifier.claim_tree import (
    CONTRADICT_ELSEWHERE,
    PARTIAL,
    SUPPORT_ELSEWHERE,
    ClaimTree,
    DeepChecker,
    DeepCheckStoppedError,
    claim_verdict,
    sentence_verdict,
)
from verifier.fake_classifier import FakeClaimClassifier
from verifier.fake_evidence import FakeEvidenceFinder
from verifier.verify import AnswerVerifier, CitedAbstract

QUESTION = "Does zorvistatin lower blood pressure?"
CITED = CitedAbstract("1", "Zorvistatin in hypertension.", "Zorvistatin lowered blood pressure in adults. It was safe.")
OTHER = CitedAbstract("2", "Zorvistatin outcomes.", "Zorvistatin reduced mortality in adults with hypertension.")
SILENT = CitedAbstract("3", "Knee surgery.", "Pain fell after knee surgery.")


class CountingClassifier(FakeClaimClassifier):
    def __init__(self) -> None:
        self.batches: list[int] = []

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Classification]:
        self.batches.append(len(pairs))
        return super().classify(pairs)


class ListSearch:
    def __init__(self, *abstracts: CitedAbstract) -> None:
        self.abstracts = abstracts
        self.queries: list[str] = []

    def __call__(self, query: str, *, limit: int) -> list[CitedAbstract]:
        self.queries.append(query)
        return list(self.abstracts)[:limit]


def _check(answer: str, search: ListSearch | None = None, classifier: CountingClassifier | None = None) -> ClaimTree:
    fake = FakeLLM(LLMSettings(base_url="", model="fake", server_kind="fake"))
    checker = DeepChecker(
        ClaimExtractor(fake),
        AnswerVerifier(classifier or CountingClassifier(), FakeEvidenceFinder()),
        search,
        requery_abstracts=2,
    )
    return checker.check(QUESTION, claims_from_answer(answer), {"1": CITED}, {"1"})


def test_a_sentence_whose_every_claim_is_supported_is_supported() -> None:
    tree = _check("Zorvistatin lowered blood pressure in adults, and zorvistatin was safe (PUBMED:1).")

    sentence = tree.sentences[0]
    assert [claim.text for claim in sentence.claims] == [
        "Zorvistatin lowered blood pressure in adults.",
        "Zorvistatin was safe.",
    ]
    assert [claim.verdict for claim in sentence.claims] == ["SUPPORT", "SUPPORT"]
    assert sentence.verdict == "SUPPORT"
    assert sentence.claims[0].evidence[0].evidence_text == ("Zorvistatin lowered blood pressure in adults.",)


def test_one_unsupported_claim_no_longer_hides_behind_a_supported_one() -> None:
    search = ListSearch(SILENT)
    tree = _check("Zorvistatin lowered blood pressure in adults, and it cured migraine in children (PUBMED:1).", search)

    sentence = tree.sentences[0]
    assert [claim.verdict for claim in sentence.claims] == ["SUPPORT", "NO_EVIDENCE"]
    assert sentence.verdict == PARTIAL
    # Only the claim the cited abstract did not settle was searched for.
    assert search.queries == ["It cured migraine in children."]
    assert sentence.claims[1].requeried
    assert not sentence.claims[0].requeried


def test_a_claim_supported_only_by_another_paper_leaves_its_sentence_short_of_support() -> None:
    tree = _check(
        "Zorvistatin lowered blood pressure in adults, and zorvistatin reduced stroke mortality (PUBMED:1).",
        ListSearch(CITED, OTHER, SILENT),
    )

    sentence = tree.sentences[0]
    second = sentence.claims[1]
    assert second.verdict == SUPPORT_ELSEWHERE
    assert sentence.verdict == SUPPORT_ELSEWHERE
    # The cited abstract's verdict first, then what the search found, never the cited one again.
    assert [(e.pmid, e.cited, e.label) for e in second.evidence] == [
        ("1", True, "NO_EVIDENCE"),
        ("2", False, "SUPPORT"),
        ("3", False, "NO_EVIDENCE"),
    ]
    assert second.evidence[1].title == OTHER.title


def test_each_level_is_judged_in_one_batch() -> None:
    classifier = CountingClassifier()
    _check(
        "Zorvistatin lowered blood pressure in adults, and it cured migraine in children (PUBMED:1). "
        "Zorvistatin reduced stroke mortality, and it was safe (PUBMED:1).",
        ListSearch(OTHER, SILENT),
        classifier,
    )

    # Four claims against the cited abstract; then the two it left unsettled against two new abstracts each.
    assert classifier.batches == [4, 4]


def test_an_answer_without_cited_sentences_gives_an_empty_tree() -> None:
    tree = _check("Nothing in the abstracts answers this.", ListSearch(OTHER))

    assert [(s.verdict, s.claims) for s in tree.sentences] == [("UNCITED", ())]
    assert tree.extraction_raw == ""
    assert _check("").sentences == ()


def test_a_stop_between_levels_ends_the_check() -> None:
    fake = FakeLLM(LLMSettings(base_url="", model="fake", server_kind="fake"))
    classifier = CountingClassifier()
    checker = DeepChecker(ClaimExtractor(fake), AnswerVerifier(classifier, FakeEvidenceFinder()), ListSearch(OTHER))
    stages: list[str] = []

    with pytest.raises(DeepCheckStoppedError):
        checker.check(
            QUESTION,
            claims_from_answer("Zorvistatin lowered blood pressure (PUBMED:1)."),
            {"1": CITED},
            {"1"},
            should_stop=lambda: True,
            progress=lambda stage, percent: stages.append(stage),
        )

    assert stages == ["extracting"]
    assert classifier.batches == []  # stopped after the extraction, before any claim was judged


@pytest.mark.parametrize(
    ("claims", "verdict"),
    [
        (["SUPPORT", "SUPPORT"], "SUPPORT"),
        (["SUPPORT", "CONTRADICT"], "CONTRADICT"),
        (["SUPPORT", "NO_EVIDENCE"], PARTIAL),
        (["SUPPORT_ELSEWHERE", "NO_EVIDENCE"], PARTIAL),
        (["SUPPORT", SUPPORT_ELSEWHERE], SUPPORT_ELSEWHERE),
        (["UNCLEAR", "UNCLEAR"], "UNCLEAR"),
        (["NO_REFERENCE"], "NO_REFERENCE"),
        (["NO_EVIDENCE", CONTRADICT_ELSEWHERE], CONTRADICT_ELSEWHERE),
        (["NO_EVIDENCE", "UNCLEAR"], "NO_EVIDENCE"),
        ([], "UNCITED"),
    ],
)
def test_the_bottom_up_rule(claims: list[str], verdict: str) -> None:
    assert sentence_verdict(claims) == verdict


def test_a_claim_settled_by_its_cited_abstracts_keeps_their_verdict() -> None:
    assert claim_verdict("CONTRADICT", ["SUPPORT"]) == "CONTRADICT"
    assert claim_verdict("UNCLEAR", ["SUPPORT", "CONTRADICT"]) == SUPPORT_ELSEWHERE
    assert claim_verdict("NO_EVIDENCE", ["CONTRADICT"]) == CONTRADICT_ELSEWHERE
    assert claim_verdict("NO_EVIDENCE", ["NO_EVIDENCE"]) == "NO_EVIDENCE"
