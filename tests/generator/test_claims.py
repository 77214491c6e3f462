"""Tests for turning a cited answer into claims, each with the abstracts it cites."""

from __future__ import annotations

from generator.claims import Claim, claims_from_answer


def test_each_sentence_becomes_a_claim_with_its_citations() -> None:
    answer = "Metformin lowers HbA1c (PUBMED:1). Both trials agree on safety (PUBMED:1; PUBMED:2)."

    assert claims_from_answer(answer) == [
        Claim(text="Metformin lowers HbA1c (PUBMED:1).", display_text="Metformin lowers HbA1c.", citations=("1",)),
        Claim(
            text="Both trials agree on safety (PUBMED:1; PUBMED:2).",
            display_text="Both trials agree on safety.",
            citations=("1", "2"),
        ),
    ]


def test_a_citation_only_fragment_merges_into_the_previous_sentence() -> None:
    claims = claims_from_answer("Metformin lowers HbA1c. (PUBMED:1) It is safe (PUBMED:2).")

    assert claims == [
        Claim(text="Metformin lowers HbA1c. (PUBMED:1)", display_text="Metformin lowers HbA1c.", citations=("1",)),
        Claim(text="It is safe (PUBMED:2).", display_text="It is safe.", citations=("2",)),
    ]


def test_a_merged_citation_fragment_adds_only_new_ids() -> None:
    claims = claims_from_answer("It works (PUBMED:1). (PUBMED:1; PUBMED:2)")

    assert len(claims) == 1
    assert claims[0].citations == ("1", "2")
    assert claims[0].display_text == "It works."
    assert claims[0].text == "It works (PUBMED:1). (PUBMED:1; PUBMED:2)"


def test_a_citation_fragment_on_its_own_line_merges_too() -> None:
    claims = claims_from_answer("It works (PUBMED:1).\n\n[PMID 4, 5]")

    assert [(claim.display_text, claim.citations) for claim in claims] == [("It works.", ("1", "4", "5"))]


def test_an_uncited_sentence_is_a_claim_without_citations() -> None:
    claims = claims_from_answer(
        "Metformin lowers HbA1c (PUBMED:1). It also causes weight loss. It is cheap (PUBMED:3)."
    )

    assert [claim.citations for claim in claims] == [("1",), (), ("3",)]
    assert claims[1] == Claim(
        text="It also causes weight loss.", display_text="It also causes weight loss.", citations=()
    )


def test_an_uncited_sentence_does_not_take_the_next_sentences_citations() -> None:
    claims = claims_from_answer("The evidence is mixed. Aspirin helped (PUBMED:9).")

    assert [claim.citations for claim in claims] == [(), ("9",)]


def test_sentences_with_abbreviations_stay_whole() -> None:
    claims = claims_from_answer("Smith et al. found 1.5 mg vs. 3 mg equally effective (PUBMED:7).")

    assert len(claims) == 1
    assert claims[0].citations == ("7",)
    assert claims[0].display_text == "Smith et al. found 1.5 mg vs. 3 mg equally effective."


def test_an_answer_without_citations_gives_uncited_claims() -> None:
    claims = claims_from_answer("The indexed literature does not answer this question.")

    assert claims == [
        Claim(
            text="The indexed literature does not answer this question.",
            display_text="The indexed literature does not answer this question.",
            citations=(),
        )
    ]


def test_an_empty_answer_has_no_claims() -> None:
    assert claims_from_answer("") == []
    assert claims_from_answer("   \n") == []


def test_citation_ids_keep_their_form() -> None:
    claims = claims_from_answer("A distractor was cited (PUBMED:S2:4983; pmid 12).")

    assert claims[0].citations == ("S2:4983", "12")
