"""Product-shaped verifier pairs: each construction gets its label and knows which sentences its claim rests on."""

from __future__ import annotations

import random

import pytest

from verifier.datasets import Document
from verifier.product_pairs import (
    CONSTRUCTIONS,
    SourceDocument,
    contradicting_edit,
    finding_sentences,
    restates,
    shaped_pairs,
)
from verifier.verdicts import CONTRADICT, NO_EVIDENCE, SUPPORT

STATIN = Document(
    doc_id="statin",
    title="Statins after myocardial infarction",
    sentences=(
        "Statins are widely prescribed after myocardial infarction in older adults.",
        "We enrolled 4,000 patients from twelve hospitals between 2010 and 2015.",
        "Atorvastatin reduced mortality by 30% compared with placebo over five years of follow-up.",
        "Our results suggest that statin therapy lowered the rate of recurrent infarction (HR 0.7).",
        "Atorvastatin therapy reduced mortality by thirty percent against placebo during five years.",
    ),
)
SLEEP = Document(
    doc_id="sleep",
    title="Sleep and memory",
    sentences=(
        "Sleep deprivation is common among medical students during examination periods.",
        "We recruited 120 students and tested recall after a night without sleep.",
        "Sleep deprivation impaired verbal recall in students compared with rested controls.",
        "Caffeine did not restore recall performance after one night of sleep deprivation.",
    ),
)
MARATHON = Document(
    doc_id="marathon",
    title="Statins and muscle pain in marathon runners",
    sentences=(
        "Marathon runners often report muscle pain after races in hot weather conditions.",
        "Runners taking statins reported more muscle pain than runners without statins.",
        "Hydration status was not related to the muscle pain reported by the runners.",
    ),
)
SOURCES = [SourceDocument(document, finding_sentences(document)) for document in (STATIN, SLEEP, MARATHON)]


@pytest.fixture(scope="module")
def pairs():  # type: ignore[no-untyped-def]
    return shaped_pairs(SOURCES, seed=3, findings_per_document=3)


def test_method_sentences_are_not_findings() -> None:
    assert 1 not in finding_sentences(STATIN, rationale=[1, 2])
    assert 2 in finding_sentences(STATIN, rationale=[1, 2])


def test_every_construction_carries_its_label(pairs) -> None:  # type: ignore[no-untyped-def]
    assert {shaped.construction for shaped in pairs} >= {"verbatim", "shortened", "fused", "left_out", "other_abstract"}
    for shaped in pairs:
        assert shaped.label == CONSTRUCTIONS[shaped.construction]


def test_a_supported_claim_rests_on_sentences_of_its_own_abstract(pairs) -> None:  # type: ignore[no-untyped-def]
    for shaped in pairs:
        if shaped.label in (SUPPORT, CONTRADICT):
            assert shaped.pair.rationale
            assert shaped.pair.document in (STATIN, SLEEP, MARATHON)
        if shaped.construction == "verbatim":
            assert shaped.pair.claim == shaped.pair.document.sentences[shaped.pair.rationale[0]]


def test_a_left_out_abstract_holds_neither_the_claim_nor_its_restatement(pairs) -> None:  # type: ignore[no-untyped-def]
    left_out = [shaped.pair for shaped in pairs if shaped.construction == "left_out"]
    assert left_out
    for pair in left_out:
        assert pair.label == NO_EVIDENCE
        assert pair.rationale == ()
        assert pair.claim not in pair.document.sentences
        assert not any(restates(sentence, pair.claim) for sentence in pair.document.sentences)
    mortality = [pair for pair in left_out if pair.claim == STATIN.sentences[4]]
    # The third sentence states the last one's mortality finding in other words: it goes with it.
    assert mortality
    assert STATIN.sentences[2] not in mortality[0].document.sentences
    assert STATIN.sentences[0] in mortality[0].document.sentences


def test_another_abstract_is_a_different_document_that_does_not_restate_the_claim(pairs) -> None:  # type: ignore[no-untyped-def]
    others = [shaped.pair for shaped in pairs if shaped.construction == "other_abstract"]
    assert others
    for pair in others:
        assert pair.claim not in pair.document.sentences
        assert not any(restates(sentence, pair.claim) for sentence in pair.document.sentences)


def test_the_statin_claim_finds_the_statin_runners_as_its_bm25_neighbour(pairs) -> None:  # type: ignore[no-untyped-def]
    others = {pair.pair.claim: pair.pair.document.doc_id for pair in pairs if pair.construction == "other_abstract"}
    assert others.get(STATIN.sentences[3]) == "marathon"


def test_a_fused_claim_cites_two_or_three_sentences_in_document_order(pairs) -> None:  # type: ignore[no-untyped-def]
    fused = [shaped.pair for shaped in pairs if shaped.construction == "fused"]
    assert fused
    for pair in fused:
        assert 2 <= len(pair.rationale) <= 3
        assert list(pair.rationale) == sorted(pair.rationale)


@pytest.mark.parametrize(
    ("claim", "kind", "edited"),
    [
        ("Statins reduced mortality in older adults.", "direction", "Statins elevated mortality in older adults."),
        ("Mortality fell by 30% in older adults.", "number", None),
        ("Caffeine is needed for verbal recall.", "negation", "Caffeine is not needed for verbal recall."),
    ],
)
def test_each_edit_flips_the_meaning(claim: str, kind: str, edited: str | None) -> None:
    for seed in range(20):
        made = contradicting_edit(claim, random.Random(seed))
        assert made is not None
        if made[0] == kind:
            assert made[1] != claim
            if edited is not None:
                assert made[1] == edited
            return
    pytest.fail(f"no {kind} edit in 20 seeds")


@pytest.mark.parametrize(
    ("claim", "edited"),
    [
        # The direction flip would read "not ineffective"; only removing the negation flips it.
        ("The vaccine was not effective in children.", "The vaccine was effective in children."),
        # The flip would leave two negations ("did not decrease ... without"), which may cancel out.
        (
            "The drug did not increase mortality in patients without diabetes.",
            "The drug did increase mortality in patients without diabetes.",
        ),
        ("Caffeine did not restore recall.", "Caffeine did restore recall."),
    ],
)
def test_edits_that_read_as_the_same_claim_are_rejected(claim: str, edited: str) -> None:
    for seed in range(10):
        assert contradicting_edit(claim, random.Random(seed)) == ("negation", edited)


def test_a_balanced_sample_takes_a_third_of_each_label_spread_over_its_constructions(pairs) -> None:  # type: ignore[no-untyped-def]
    from verifier.product_pairs import balanced_by_label, construction_counts

    sample = balanced_by_label(pairs, 6, seed=1)
    labels = [shaped.label for shaped in sample]
    assert labels.count(SUPPORT) == 2
    assert labels.count(NO_EVIDENCE) == 2
    counts = construction_counts(sample)
    # Two SUPPORT pairs come from two constructions, not both verbatim.
    assert sum(1 for name in ("verbatim", "shortened", "fused") if counts[name]) == 2
    assert counts["left_out"] == 1
    assert counts["other_abstract"] == 1


@pytest.mark.parametrize(
    "claim",
    [
        "Relapse stayed below ~10% in the treated group of older adults.",  # a bound: 5% would still fit
        "Antibodies appeared after a single immunization in all the animals.",  # time, not direction
        "HIV-positive adults took part in the cohort of this large study.",  # a group, not a direction
        "The drug reduced mortality, with some trials showing harm in women.",  # the edit would contradict the rest
        "Titres rose in line with earlier reports (54) in the same cohort.",  # a citation number, not a result
        "The odds ratio was 1.4 (95% CI 1.1-1.8) for smokers in the cohort.",  # a confidence level, not a result
        "Weight losses of 5\u201310% were reported in most of the patients.",  # a range's top: 5-20% may fit
    ],
)
def test_edits_the_audit_found_not_contradicted_are_not_made(claim: str) -> None:
    for seed in range(10):
        made = contradicting_edit(claim, random.Random(seed))
        assert made is None or (made[0] == "negation" and "not" in made[1] and "," not in made[1])


def test_a_result_percentage_is_changed_clearly() -> None:
    made = [
        contradicting_edit("Mortality fell by 30% in older adults on statins.", random.Random(seed))
        for seed in range(10)
    ]
    numbers = [edit for edit in made if edit is not None and edit[0] == "number"]
    assert numbers
    assert all("30%" not in claim and "%" in claim for _, claim in numbers)


@pytest.mark.parametrize(
    "sentence",
    [
        "Figure 2 shows the distribution of the measured values across all sites.",
        "We performed in situ hybridization on sections from all of the animals.",
        "Broad antibodies have been isolated1,2 and target the CD4 binding site in most donors.",
        "Author contributions are listed at the end of this article for every named author.",
    ],
)
def test_methods_legends_and_citation_debris_are_not_findings(sentence: str) -> None:
    assert not finding_sentences(Document("d", "", (sentence, sentence)))


def test_another_passage_of_the_same_paper_is_not_another_abstract() -> None:
    from verifier.product_pairs import NeighbourSearch, _other_abstract

    words = "hyperglycaemia nephropathy albuminuria glomerular podocytes"
    first = Document("ci:1", "", (f"In {words}, treatment lowered the filtration rate substantially overall.",))
    # The closest other by BM25 (filtration, rate) is another passage of the first one's paper (its rarer words).
    second = Document("ci:2", "", (f"Elsewhere {words} were measured, and the filtration rate was recorded.",))
    other = Document("ci:3", "", ("Diuretics changed the heart rate in heart failure patients.",))
    search = NeighbourSearch([first, second, other])
    claim = "Treatment lowered the filtration rate substantially in diabetic adults over two years."
    assert [document.doc_id for document in search.closest(claim, limit=3)][:2] == ["ci:1", "ci:2"]
    found = _other_abstract(first, claim, search)
    assert found is not None
    assert found.doc_id == "ci:3"
