"""Tests for finding, normalising, repairing, stripping and checking citations in model output."""

from __future__ import annotations

import dataclasses

import pytest

from generator.citations import (
    CITATION,
    CITATION_GROUP,
    CitationCheck,
    NormalizedAnswer,
    ResolvedCitation,
    check_citations,
    citation_label,
    cited_ids,
    normalize_citations,
    strip_citations,
)

# The ids the model was shown, in context order: `[1]` is A, `[4]` is S. Any two are more than 4 edits apart, so a
# slip of up to 2 edits points at exactly one of them.
A = "31452104"
B = "28765930"
C = "25019687"
S = "S2:4983"
GIVEN = (A, B, C, S)


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
        ("Plural keyword PMIDs 1, 2 and 3.", ["1", "2", "3"]),
        ("Plural keyword with colon (PMIDs: 1; 2).", ["1", "2"]),
        ("Joined by and (PMID: 1, 2 and 3).", ["1", "2", "3"]),
        ("Oxford comma [PUBMED:1, 2, and 3].", ["1", "2", "3"]),
        ("Adjacent groups [PUBMED: 1][PUBMED: 2].", ["1", "2"]),
        ("An unbracketed list PUBMED:1, PUBMED:2 agrees.", ["1", "2"]),
        ("Numbered references [1] are not ids without the context list.", []),
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


def test_a_number_after_an_unbracketed_citation_that_runs_on_into_prose_is_not_cited() -> None:
    assert cited_ids("In PMID 5, 20 patients improved.") == ["5"]


def test_the_citation_regex_captures_the_id_of_one_reference() -> None:
    assert [match.group(1) for match in CITATION.finditer("See PMID 12 and pubmed: S2:4 (PUBMED:7)")] == [
        "12",
        "S2:4",
        "7",
    ]


def test_the_citation_group_regex_matches_whole_groups() -> None:
    text = "Effect (PUBMED:1; 2) and PMIDs 3, 4. Also [PMID 5]."

    assert [match.group(0) for match in CITATION_GROUP.finditer(text)] == ["(PUBMED:1; 2)", "PMIDs 3, 4", "[PMID 5]"]


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
        ("Adjacent groups [PUBMED:1], [PUBMED:2] go together.", "Adjacent groups go together."),
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


# --- normalize_citations: the forms ---


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        (f"Effect PUBMED:{A}.", f"Effect (PUBMED:{A})."),
        (f"Effect PUBMED: {A}.", f"Effect (PUBMED:{A})."),
        (f"Effect pubmed:{A}.", f"Effect (PUBMED:{A})."),
        (f"Effect PubMed:{A}.", f"Effect (PUBMED:{A})."),
        (f"Effect PMID: {A}.", f"Effect (PUBMED:{A})."),
        (f"Effect PMID {A}.", f"Effect (PUBMED:{A})."),
        (f"Effect PMID:{A}.", f"Effect (PUBMED:{A})."),
        (f"Effect pmid{A}.", f"Effect (PUBMED:{A})."),
        (f"Effect (PUBMED:{A}).", f"Effect (PUBMED:{A})."),
        (f"Effect [PUBMED:{A}].", f"Effect (PUBMED:{A})."),
        (f"Effect (PUBMED:{S}).", f"Effect (PUBMED:{S})."),
        (f"Effect (pubmed:{S.lower()}).", f"Effect (PUBMED:{S})."),
        ("Effect PMIDS2:4983.", f"Effect (PUBMED:{S})."),
    ],
)
def test_normalize_rewrites_every_single_reference_form_canonically(text: str, canonical: str) -> None:
    normalized = normalize_citations(text, GIVEN)

    assert normalized.text == canonical
    assert len(normalized.citations) == 1
    assert normalized.citations[0].how == "exact"


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        (f"Both agree (PUBMED:{A}; PUBMED:{B}).", f"Both agree (PUBMED:{A}; PUBMED:{B})."),
        (f"Both agree (PUBMED:{A}, PUBMED:{B}).", f"Both agree (PUBMED:{A}; PUBMED:{B})."),
        (f"Both agree [PUBMED:{A}, {B}].", f"Both agree (PUBMED:{A}; PUBMED:{B})."),
        (f"Both agree (PUBMED:{A}; {B}).", f"Both agree (PUBMED:{A}; PUBMED:{B})."),
        (f"All agree (PMID: {A}, {B} and {C}).", f"All agree (PUBMED:{A}; PUBMED:{B}; PUBMED:{C})."),
        (f"All agree [PMID {A}, {B}, and {C}].", f"All agree (PUBMED:{A}; PUBMED:{B}; PUBMED:{C})."),
        (f"Both agree (PMIDs {A}, {B}).", f"Both agree (PUBMED:{A}; PUBMED:{B})."),
        (f"Both agree (PMIDs: {A}; {B}).", f"Both agree (PUBMED:{A}; PUBMED:{B})."),
        (f"Both agree (PUBMED:{A} and PUBMED:{B}).", f"Both agree (PUBMED:{A}; PUBMED:{B})."),
        (f"Both agree (PUBMED:{A} & PUBMED:{B}).", f"Both agree (PUBMED:{A}; PUBMED:{B})."),
        (f"Both agree (PUBMED:{S}; PUBMED:{A}).", f"Both agree (PUBMED:{S}; PUBMED:{A})."),
    ],
)
def test_normalize_rewrites_bracketed_lists_with_or_without_repeated_keywords(text: str, canonical: str) -> None:
    assert normalize_citations(text, GIVEN).text == canonical


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        (f"All agree (PUBMED:{A}, PUBMED:{B}; {C}).", f"All agree (PUBMED:{A}; PUBMED:{B}; PUBMED:{C})."),
        (f"All agree [PMID {A}; {B}, and {C}].", f"All agree (PUBMED:{A}; PUBMED:{B}; PUBMED:{C})."),
        (f"All agree (PUBMED:{A};{B},{C})", f"All agree (PUBMED:{A}; PUBMED:{B}; PUBMED:{C})"),
        (f"All agree ( PUBMED : {A} ; PUBMED : {B} )", f"All agree (PUBMED:{A}; PUBMED:{B})"),
    ],
)
def test_normalize_accepts_mixed_separators_and_spacing(text: str, canonical: str) -> None:
    assert normalize_citations(text, GIVEN).text == canonical


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        (f"Both agree [PUBMED: {A}][PUBMED: {B}].", f"Both agree (PUBMED:{A}; PUBMED:{B})."),
        (f"Both agree (PUBMED:{A}) (PUBMED:{B}).", f"Both agree (PUBMED:{A}; PUBMED:{B})."),
        (f"Both agree [PUBMED:{A}], [PUBMED:{B}].", f"Both agree (PUBMED:{A}; PUBMED:{B})."),
        (f"Both agree [PUBMED:{A}] and [PUBMED:{B}].", f"Both agree (PUBMED:{A}; PUBMED:{B})."),
        (f"Both agree [PUBMED:{A}][2].", f"Both agree (PUBMED:{A}; PUBMED:{B})."),
        (f"Both agree PUBMED:{A} [PUBMED:{B}].", f"Both agree (PUBMED:{A}; PUBMED:{B})."),
        (f"Both agree [1]; PUBMED:{B} too.", f"Both agree (PUBMED:{A}; PUBMED:{B}) too."),
    ],
)
def test_normalize_merges_adjacent_groups_into_one(text: str, canonical: str) -> None:
    assert normalize_citations(text, GIVEN).text == canonical


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        (f"Both agree PUBMED:{A}, PUBMED:{B} in adults.", f"Both agree (PUBMED:{A}; PUBMED:{B}) in adults."),
        (f"Both agree PUBMED:{A} and PUBMED:{B}.", f"Both agree (PUBMED:{A}; PUBMED:{B})."),
        (f"All agree PMIDs {A}, {B} and {C}.", f"All agree (PUBMED:{A}; PUBMED:{B}; PUBMED:{C})."),
        (f"Both agree (PMID: {A}, {B})", f"Both agree (PUBMED:{A}; PUBMED:{B})"),
        (f"PUBMED:{A} showed it.", f"(PUBMED:{A}) showed it."),
    ],
)
def test_normalize_rewrites_unbracketed_references_and_lists(text: str, canonical: str) -> None:
    assert normalize_citations(text, GIVEN).text == canonical


def test_a_group_with_mismatched_brackets_is_still_one_group() -> None:
    assert normalize_citations(f"Effect (PUBMED:{A}; PUBMED:{B}].", GIVEN).text == f"Effect (PUBMED:{A}; PUBMED:{B})."


def test_a_reference_inside_a_parenthetical_becomes_a_nested_group() -> None:
    normalized = normalize_citations(f"Both agree (PUBMED:{A}; see also PUBMED:{B}).", GIVEN)

    assert normalized.text == f"Both agree ((PUBMED:{A}); see also (PUBMED:{B}))."
    assert [citation.pmid for citation in normalized.citations] == [A, B]


def test_a_number_running_on_into_prose_after_an_unbracketed_reference_stays_prose() -> None:
    normalized = normalize_citations(f"In PMID {A}, 20 patients improved.", GIVEN)

    assert normalized.text == f"In (PUBMED:{A}), 20 patients improved."
    assert [citation.raw_id for citation in normalized.citations] == [A]


# --- index forms ---


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("Effect [1].", f"Effect (PUBMED:{A})."),
        ("Effect [4].", f"Effect (PUBMED:{S})."),
        ("Effect [1, 2].", f"Effect (PUBMED:{A}; PUBMED:{B})."),
        ("Effect [1,3].", f"Effect (PUBMED:{A}; PUBMED:{C})."),
        ("Effect [1; 3].", f"Effect (PUBMED:{A}; PUBMED:{C})."),
        ("Effect [1 and 2].", f"Effect (PUBMED:{A}; PUBMED:{B})."),
        ("Effect [1][2].", f"Effect (PUBMED:{A}; PUBMED:{B})."),
        ("Effect [1] [3].", f"Effect (PUBMED:{A}; PUBMED:{C})."),
        ("Effect [1], [2].", f"Effect (PUBMED:{A}; PUBMED:{B})."),
        ("Effect [ 2 ].", f"Effect (PUBMED:{B})."),
    ],
)
def test_normalize_maps_numbered_references_to_the_given_ids(text: str, canonical: str) -> None:
    normalized = normalize_citations(text, GIVEN)

    assert normalized.text == canonical
    assert {citation.how for citation in normalized.citations} == {"index"}


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("Effect [2-4].", f"Effect (PUBMED:{B}; PUBMED:{C}; PUBMED:{S})."),
        ("Effect [2\u20134].", f"Effect (PUBMED:{B}; PUBMED:{C}; PUBMED:{S})."),
        ("Effect [2 - 3].", f"Effect (PUBMED:{B}; PUBMED:{C})."),
        ("Effect [1, 3-4].", f"Effect (PUBMED:{A}; PUBMED:{C}; PUBMED:{S})."),
        ("Effect [3-3].", f"Effect (PUBMED:{C})."),
    ],
)
def test_normalize_expands_index_ranges(text: str, canonical: str) -> None:
    assert normalize_citations(text, GIVEN).text == canonical


def test_an_index_range_keeps_what_was_written_for_each_reference() -> None:
    normalized = normalize_citations("Effect [2-3].", GIVEN)

    assert normalized.citations == (
        ResolvedCitation(written="[2-3]", raw_id=B, pmid=B, how="index"),
        ResolvedCitation(written="[2-3]", raw_id=C, pmid=C, how="index"),
    )


@pytest.mark.parametrize(("text", "number"), [("Effect [5].", "5"), ("Effect [0].", "0"), ("Effect [123].", "123")])
def test_an_index_out_of_range_is_unmatched_with_the_number_as_raw_id(text: str, number: str) -> None:
    normalized = normalize_citations(text, GIVEN)

    assert normalized.citations == (ResolvedCitation(written=f"[{number}]", raw_id=number, pmid=None, how="unmatched"),)
    assert normalized.text == f"Effect (PUBMED:{number})."


def test_a_range_running_past_the_given_ids_is_unmatched_beyond_them() -> None:
    normalized = normalize_citations("Effect [3-5].", GIVEN)

    assert [(citation.pmid, citation.how) for citation in normalized.citations] == [
        (C, "index"),
        (S, "index"),
        (None, "unmatched"),
    ]
    assert normalized.text == f"Effect (PUBMED:{C}; PUBMED:{S}; PUBMED:5)."


@pytest.mark.parametrize("text", ["Effect [1].", "Effect [1, 2].", "Effect [2-4].", "Effect [1][2]."])
def test_index_forms_are_ignored_when_no_ids_were_given(text: str) -> None:
    normalized = normalize_citations(text, [])

    assert normalized.text == text
    assert normalized.citations == ()


def test_id_forms_without_given_ids_are_unmatched() -> None:
    normalized = normalize_citations(f"Effect [PUBMED:{A}] [1].", [])

    assert normalized.text == f"Effect (PUBMED:{A}) [1]."
    assert normalized.citations == (ResolvedCitation(written=f"PUBMED:{A}", raw_id=A, pmid=None, how="unmatched"),)


# --- what is not a citation ---


@pytest.mark.parametrize(
    "text",
    [
        "HbA1c fell by 1.2 points [95% CI 1.2-3.4].",
        "HbA1c fell (95% CI 0.8-1.6; p < 0.001).",
        "The trial enrolled adults (n=20).",
        "The trial ran in 2019 (2019).",
        "The dose was doubled [sic].",
        "The effect was significant (p < 0.05).",
        "See table (3) and figure (1, 2).",
        "Published in [2019].",
        "Four digits are not an index [1234].",
        "A decimal is not an index [1.5].",
        "A backwards range is not an index [4-2].",
        "A range of ids is not an id (PMID: 1-3) or PUBMED:1-3.",
        "A PUBMEDLINE search found 42 papers.",
        "Too long for a PMID: PUBMED:123456789012.",
        "",
    ],
)
def test_normalize_leaves_text_without_citations_unchanged(text: str) -> None:
    normalized = normalize_citations(text, GIVEN)

    assert normalized.text == text
    assert normalized.citations == ()


def test_normalize_leaves_non_citations_next_to_a_citation_alone() -> None:
    text = f"In 2019 (n=20), HbA1c fell [95% CI 1.2-3.4] (p < 0.05) [PUBMED:{A}]."

    assert (
        normalize_citations(text, GIVEN).text == f"In 2019 (n=20), HbA1c fell [95% CI 1.2-3.4] (p < 0.05) (PUBMED:{A})."
    )


# --- repair ---


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("31452105", A),  # one digit changed
        ("3145210", A),  # one digit dropped
        ("314521044", A),  # one digit added
        ("31425104", A),  # two digits swapped: two edits
        ("28765390", B),  # two digits swapped: two edits
        ("2876593", B),  # one digit dropped
        ("S2:4984", S),
    ],
)
def test_an_id_within_two_edits_of_one_given_id_is_repaired(written: str, meant: str) -> None:
    normalized = normalize_citations(f"Effect (PUBMED:{written}).", GIVEN)

    assert normalized.citations == (
        ResolvedCitation(written=f"PUBMED:{written}", raw_id=written, pmid=meant, how="repaired"),
    )
    assert normalized.text == f"Effect (PUBMED:{meant})."
    assert normalized.repaired == normalized.citations


def test_an_id_within_two_edits_of_two_given_ids_is_unmatched() -> None:
    given = ["12345678", "12345699"]
    normalized = normalize_citations("Effect (PUBMED:12345679).", given)  # 1 edit from the first, 1 from the second

    assert normalized.citations == (
        ResolvedCitation(written="PUBMED:12345679", raw_id="12345679", pmid=None, how="unmatched"),
    )
    assert normalized.text == "Effect (PUBMED:12345679)."


def test_an_id_one_edit_from_one_given_id_and_two_from_another_is_still_ambiguous() -> None:
    normalized = normalize_citations("Effect (PUBMED:12345670).", ["12345678", "12345611"])

    assert normalized.citations[0].how == "unmatched"


@pytest.mark.parametrize("written", ["31999104", "3145", "99999999"])
def test_an_id_more_than_two_edits_from_every_given_id_is_unmatched(written: str) -> None:
    normalized = normalize_citations(f"Effect (PUBMED:{written}).", GIVEN)

    assert normalized.citations == (
        ResolvedCitation(written=f"PUBMED:{written}", raw_id=written, pmid=None, how="unmatched"),
    )
    assert normalized.text == f"Effect (PUBMED:{written})."
    assert normalized.unmatched == normalized.citations


def test_a_repaired_id_that_repeats_a_cited_one_appears_once_in_the_text() -> None:
    normalized = normalize_citations(f"Effect (PUBMED:{A}; PUBMED:31452105; PUBMED:{A}).", GIVEN)

    assert normalized.text == f"Effect (PUBMED:{A})."
    assert [citation.how for citation in normalized.citations] == ["exact", "repaired", "exact"]


def test_an_index_and_an_id_naming_the_same_abstract_appear_once_in_the_text() -> None:
    normalized = normalize_citations(f"Effect [PUBMED:{A}][1].", GIVEN)

    assert normalized.text == f"Effect (PUBMED:{A})."
    assert [citation.how for citation in normalized.citations] == ["exact", "index"]


# --- the result ---


def test_normalize_resolves_each_written_reference_in_order_with_repeats() -> None:
    text = f"First [PUBMED:{A}, 2876593][9]. Then PMID {A} and pmid 99999999; see also [2]."
    normalized = normalize_citations(text, GIVEN)

    assert normalized == NormalizedAnswer(
        raw_text=text,
        text=f"First (PUBMED:{A}; PUBMED:{B}; PUBMED:9). Then (PUBMED:{A}; PUBMED:99999999); see also (PUBMED:{B}).",
        citations=(
            ResolvedCitation(written=f"PUBMED:{A}", raw_id=A, pmid=A, how="exact"),
            ResolvedCitation(written="2876593", raw_id="2876593", pmid=B, how="repaired"),
            ResolvedCitation(written="[9]", raw_id="9", pmid=None, how="unmatched"),
            ResolvedCitation(written=f"PMID {A}", raw_id=A, pmid=A, how="exact"),
            ResolvedCitation(written="pmid 99999999", raw_id="99999999", pmid=None, how="unmatched"),
            ResolvedCitation(written="[2]", raw_id=B, pmid=B, how="index"),
        ),
    )
    assert [citation.raw_id for citation in normalized.repaired] == ["2876593"]
    assert [citation.written for citation in normalized.unmatched] == ["[9]", "pmid 99999999"]


def test_written_keeps_the_keyword_only_where_it_was_written() -> None:
    normalized = normalize_citations(f"All agree (PMIDs {A}, {B} and PUBMED: {C}).", GIVEN)

    assert [citation.written for citation in normalized.citations] == [f"PMIDs {A}", B, f"PUBMED: {C}"]


def test_a_lower_case_semantic_scholar_id_resolves_to_the_given_spelling() -> None:
    normalized = normalize_citations("Effect (pubmed:s2:4983).", GIVEN)

    assert normalized.citations == (ResolvedCitation(written="pubmed:s2:4983", raw_id=S, pmid=S, how="exact"),)


def test_an_answer_without_citations_has_no_repaired_or_unmatched_ones() -> None:
    normalized = normalize_citations("No citations here.", GIVEN)

    assert normalized.citations == normalized.repaired == normalized.unmatched == ()


def test_the_results_are_frozen() -> None:
    normalized = normalize_citations(f"Effect (PUBMED:{A}).", GIVEN)

    with pytest.raises(dataclasses.FrozenInstanceError):
        normalized.text = "changed"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        normalized.citations[0].pmid = None  # type: ignore[misc]


# --- whitespace ---


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        (f"effect [PUBMED:{A}].", f"effect (PUBMED:{A})."),
        (f"effect[PUBMED:{A}].", f"effect (PUBMED:{A})."),
        (f"effect   [PUBMED:{A}]  .", f"effect (PUBMED:{A})."),
        (f"effect [PUBMED:{A}], mostly.", f"effect (PUBMED:{A}), mostly."),
        (f"effect [PUBMED:{A}]; mostly.", f"effect (PUBMED:{A}); mostly."),
        (f"effect (PUBMED:{A})and more.", f"effect (PUBMED:{A}) and more."),
        (f"[PUBMED:{A}] Metformin works.", f"(PUBMED:{A}) Metformin works."),
        ("  [1] Metformin works.", f"(PUBMED:{A}) Metformin works."),
        (f"It works.\n[PMID {A}, {B}]", f"It works.\n(PUBMED:{A}; PUBMED:{B})"),
        ("It works.\n\n[1] It is cheap [2].", f"It works.\n\n(PUBMED:{A}) It is cheap (PUBMED:{B})."),
        (f"Effect (see PUBMED:{A}).", f"Effect (see (PUBMED:{A}))."),
        (f"effect. [PUBMED:{A}]", f"effect. (PUBMED:{A})"),
        ("Groups on separate lines\n[1]\n[2]", f"Groups on separate lines\n(PUBMED:{A})\n(PUBMED:{B})"),
    ],
)
def test_a_canonical_group_has_one_space_before_it_and_none_before_punctuation(text: str, canonical: str) -> None:
    assert normalize_citations(text, GIVEN).text == canonical


@pytest.mark.parametrize(
    "text",
    [
        f"effect [PUBMED:{A}].",
        f"First [PUBMED:{A}, 2876593][9]. Then PMID {A} and pmid 99999999; see also [2].",
        f"[1] Metformin works PUBMED:{B}, PUBMED:{C} in adults.",
        f"It works.\n\n[PMID {A}, {B}]",
        f"Effect (see PUBMED:{A}).",
        f"Effect [2-4], [PUBMED:31425104] (PMIDs: {A}; {C}).",
        f"effect (PUBMED:{A})and more.",
        f"Refs: [1]; PUBMED:{B} said so.",
        f"Both (PUBMED:{A}; see also PUBMED:{B}).",
        "Lines\n[1];\n[2]",
        "No citations here.",
    ],
)
def test_normalizing_canonical_text_again_changes_nothing(text: str) -> None:
    once = normalize_citations(text, GIVEN)
    twice = normalize_citations(once.text, GIVEN)

    assert twice.text == once.text
    # The canonical text names every abstract by its given id, so nothing is left to map or repair.
    assert {citation.how for citation in twice.citations} <= {"exact", "unmatched"}
    assert cited_ids(twice.text) == cited_ids(once.text)


@pytest.mark.parametrize(
    "text",
    [
        f"Effect PUBMED:{A}.",
        f"First [PUBMED:{A}, 2876593][9]. Then PMID {A} and pmid 99999999; see also [2].",
        "Effect [2-4] and [7].",
        "No citations here.",
    ],
)
def test_raw_text_is_exactly_what_the_model_wrote(text: str) -> None:
    assert normalize_citations(text, GIVEN).raw_text == text


# --- agreement with cited_ids and strip_citations ---


@pytest.mark.parametrize(
    "text",
    [
        f"Effect PUBMED:{A}.",
        f"First [PUBMED:{A}, 2876593][9]. Then PMID {A} and pmid 99999999; see also [2].",
        "Effect [2-4] and [1], then [3-5].",
        f"Effect [PUBMED: {C}][PUBMED: {A}] (PMID: {B}, {C} and 31999104).",
        f"Effect (PUBMED:{S.lower()}; PUBMED:S2:4984).",
        "No citations here.",
    ],
)
def test_cited_ids_of_the_canonical_text_are_the_resolved_ids_in_order_without_repeats(text: str) -> None:
    normalized = normalize_citations(text, GIVEN)

    resolved = [citation.pmid or citation.raw_id for citation in normalized.citations]
    assert cited_ids(normalized.text) == list(dict.fromkeys(resolved))


@pytest.mark.parametrize(
    ("text", "prose"),
    [
        (f"Metformin lowers HbA1c [PUBMED:{A}][2].", "Metformin lowers HbA1c."),
        (f"Both agree PMIDs {A}, {B} and {C}, mostly.", "Both agree, mostly."),
        ("It works [1-3]. It is cheap [4], [9].", "It works. It is cheap."),
        (f"[1] It works (see PUBMED:{A}).", "It works (see)."),
        (
            f"Dose was 2 mg (n=20) in 2019 [95% CI 1.2-3.4] (PMID:{A}).",
            "Dose was 2 mg (n=20) in 2019 [95% CI 1.2-3.4].",
        ),
    ],
)
def test_strip_citations_of_the_canonical_text_gives_clean_prose(text: str, prose: str) -> None:
    assert strip_citations(normalize_citations(text, GIVEN).text) == prose


# A page of a document in the asker's library: `DOC:<document id>:p<page>`, cited beside PMIDs.

LIBRARY_GIVEN = ["12345678", "DOC:12:p3", "DOC:12:p4"]


@pytest.mark.parametrize(
    ("raw", "canonical", "resolved"),
    [
        ("Metformin worked (DOC:12:p3).", "Metformin worked (DOC:12:p3).", ["DOC:12:p3"]),
        ("It did [PUBMED:12345678; DOC:12:p4].", "It did (PUBMED:12345678; DOC:12:p4).", ["12345678", "DOC:12:p4"]),
        ("As doc:12:P3 says.", "As (DOC:12:p3) says.", ["DOC:12:p3"]),  # any case, written the site's way
        ("By habit (PUBMED:DOC:12:p4).", "By habit (DOC:12:p4).", ["DOC:12:p4"]),
        # The page's keyword left out after PubMed's, as the 0.5B model wrote it (it read as PMID 12 before).
        ("By habit (PUBMED:12:p4).", "By habit (DOC:12:p4).", ["DOC:12:p4"]),
        ("It did [PMID 12345678, 12:P3].", "It did (PUBMED:12345678; DOC:12:p3).", ["12345678", "DOC:12:p3"]),
        ("Both DOC:12:p3, DOC:12:p4.", "Both (DOC:12:p3; DOC:12:p4).", ["DOC:12:p3", "DOC:12:p4"]),
    ],
)
def test_a_library_page_is_cited_by_its_own_id_beside_pmids(raw: str, canonical: str, resolved: list[str]) -> None:
    normalized = normalize_citations(raw, LIBRARY_GIVEN)

    assert normalized.text == canonical
    assert [citation.pmid for citation in normalized.citations] == resolved
    assert cited_ids(normalized.text) == resolved
    assert normalize_citations(normalized.text, LIBRARY_GIVEN).text == canonical


def test_a_page_number_without_any_keyword_stays_prose() -> None:
    normalized = normalize_citations("At 12:p3 of the protocol (PUBMED:12345678).", LIBRARY_GIVEN)

    assert [citation.pmid for citation in normalized.citations] == ["12345678"]
    assert normalized.text == "At 12:p3 of the protocol (PUBMED:12345678)."


def test_a_library_page_not_given_is_unmatched_and_kept_for_no_reference() -> None:
    normalized = normalize_citations("Another document (DOC:99:p1) and a page between two (DOC:12:p9).", LIBRARY_GIVEN)

    assert [(citation.raw_id, citation.pmid, citation.how) for citation in normalized.citations] == [
        ("DOC:99:p1", None, "unmatched"),
        ("DOC:12:p9", None, "unmatched"),  # one edit from two given pages: which one would be a guess
    ]
    assert normalized.text == "Another document (DOC:99:p1) and a page between two (DOC:12:p9)."


def test_a_library_label_is_its_id_and_a_pmid_label_has_the_pubmed_keyword() -> None:
    assert citation_label("DOC:7:p12") == "DOC:7:p12"
    assert citation_label("12345678") == "PUBMED:12345678"
    assert strip_citations("Doses differ (DOC:7:p12; PUBMED:12345678).") == "Doses differ."
