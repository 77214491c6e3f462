"""Tests for finding, stripping and checking `PUBMED:<id>` citations in model output."""

from __future__ import annotations

import pytest

from generator.citations import CitationCheck, check_citations, cited_ids, strip_citations


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("Metformin lowers HbA1c PUBMED:123.", ["123"]),
        ("Metformin lowers HbA1c (PUBMED:123).", ["123"]),
        ("Both trials agree (PUBMED:1; PUBMED:2).", ["1", "2"]),
        ("Both trials agree (PUBMED:1, PUBMED:2).", ["1", "2"]),
        ("Both trials agree [PMID 3, 4].", ["3", "4"]),
        ("Both trials agree (PUBMED:1; 2).", ["1", "2"]),
        ("As reported in PMID: 5, the effect was small.", ["5"]),
        ("As reported in PMID:5.", ["5"]),
        ("As reported (PUBMED: 8).", ["8"]),
        ("lower case works too (pubmed:6).", ["6"]),
        ("Mixed Case (PubMed:7).", ["7"]),
        ("A Semantic Scholar document (PUBMED:S2:4983).", ["S2:4983"]),
        ("Mixed ids (PUBMED:S2:1; PUBMED:2).", ["S2:1", "2"]),
        ("A ten-digit id (PUBMED:1234567890).", ["1234567890"]),
    ],
)
def test_it_finds_every_citation_form(text: str, ids: list[str]) -> None:
    assert cited_ids(text) == ids


def test_it_reads_a_lower_case_semantic_scholar_id_as_one_id() -> None:
    assert cited_ids("a lower-case model reply (pubmed:s2:4983).") == ["S2:4983"]


def test_it_lists_ids_in_order_of_first_appearance_without_repeats() -> None:
    text = "First (PUBMED:30). Second (PUBMED:4; PUBMED:30). Third PMID 200 and again (PUBMED:4)."

    assert cited_ids(text) == ["30", "4", "200"]


@pytest.mark.parametrize(
    "text",
    [
        "The trial enrolled 120 adults (n=20 per arm) in 2019.",
        "HbA1c fell by 1.2 percentage points (95% CI 0.8-1.6; p < 0.001).",
        "See reference [12] and table (3).",
        "A PUBMEDLINE search found 42 papers.",
        "",
    ],
)
def test_numbers_that_are_not_citations_are_ignored(text: str) -> None:
    assert cited_ids(text) == []


def test_it_ignores_numbers_next_to_a_citation() -> None:
    assert cited_ids("In 2019, 20 patients (n=20) improved (PUBMED:77).") == ["77"]


def test_an_id_too_long_to_be_a_pmid_is_not_a_citation() -> None:
    assert cited_ids("PUBMED:123456789012") == []


@pytest.mark.parametrize(
    ("text", "stripped"),
    [
        ("Metformin lowers HbA1c (PUBMED:1).", "Metformin lowers HbA1c."),
        ("Both agree (PUBMED:1; PUBMED:2), mostly.", "Both agree, mostly."),
        ("Both agree [PMID 3, 4].", "Both agree."),
        ("As reported PUBMED:5 the effect was small.", "As reported the effect was small."),
        ("Effect(PUBMED:1).", "Effect."),
        ("  Padded text (PUBMED:1) .  ", "Padded text."),
        ("(PUBMED:9)", ""),
    ],
)
def test_strip_citations_removes_the_markup_and_the_space_before_punctuation(text: str, stripped: str) -> None:
    assert strip_citations(text) == stripped


def test_strip_citations_keeps_parentheses_that_are_not_citations() -> None:
    text = "Dose was 2 mg (n=20) in 2019 (PUBMED:7)."

    assert strip_citations(text) == "Dose was 2 mg (n=20) in 2019."


def test_strip_citations_leaves_uncited_text_unchanged() -> None:
    assert strip_citations("No citation here, really.") == "No citation here, really."


def test_check_citations_marks_ids_that_were_never_retrieved() -> None:
    checks = check_citations(["1", "S2:9", "3"], {"1", "3", "4"})

    assert checks == [
        CitationCheck(pmid="1", retrieved=True),
        CitationCheck(pmid="S2:9", retrieved=False),
        CitationCheck(pmid="3", retrieved=True),
    ]


def test_check_citations_of_no_ids_is_empty() -> None:
    assert check_citations([], {"1"}) == []


def test_check_citations_works_on_cited_ids_output() -> None:
    ids = cited_ids("Works (PUBMED:11111111; PUBMED:99).")

    assert [check.retrieved for check in check_citations(ids, {"11111111"})] == [True, False]
