"""The reader's retraction, expression-of-concern and erratum entries: on the records, and on notices skipped for
want of an abstract. With real PubMed excerpts (shared data) and with files written here in the same format."""

from __future__ import annotations

from pathlib import Path

from indexer.pubmed_xml import read_pubmed_xml
from indexer.records import ArticleRecord, Correction, Notice, ReadStats
from tests.support import REPO, shared_data_dir

FIXTURES = REPO / "tests" / "fixtures" / "pubmed"
PMPARSER = shared_data_dir() / "pubmed" / "xml" / "pmparser"
# Real excerpts: a retracted paper carrying its RetractionIn, and an expression of concern without an abstract.
RETRACTED_PAPER_FILE = PMPARSER / "tests_testthat_pubmed_sample_updatefiles_pubmed24n1220.xml.gz"
CONCERN_NOTICE_FILE = PMPARSER / "tests_testthat_pubmed_sample_updatefiles_pubmed23n1167.xml.gz"
# Real retraction notices: one with a one-line abstract (stored as an article), one without (a notice only).
NOTICE_WITH_ABSTRACT_FILE = PMPARSER / "tests_testthat_pubmed_sample_baseline_pubmed24n1219.xml.gz"
NOTICE_WITHOUT_ABSTRACT_FILE = PMPARSER / "tests_testthat_pubmed_sample_baseline_pubmed26n1334.xml.gz"


def read(path: Path) -> tuple[dict[str, ArticleRecord], ReadStats]:
    stats = ReadStats()
    return {record.pmid: record for record in read_pubmed_xml(path, stats)}, stats


def test_a_real_retracted_paper_carries_its_retraction_in_entry_and_type() -> None:
    records, _ = read(RETRACTED_PAPER_FILE)

    paper = records["15146069"]

    assert paper.corrections == (
        Correction(
            ref_type="RetractionIn",
            pmid="15516371",
            source="Klessig DF, Martin GB, Ekengren SK. Proc Natl Acad Sci U S A. 2004 Nov 9;101(45):16081",
        ),
    )
    assert "Retracted Publication" in paper.publication_types


def test_a_real_expression_of_concern_without_an_abstract_is_kept_as_a_notice_not_a_record() -> None:
    records, stats = read(CONCERN_NOTICE_FILE)

    assert "36490231" not in records
    [notice] = [notice for notice in stats.notices if notice.pmid == "36490231"]
    assert notice.corrections == (
        Correction("ExpressionOfConcernFor", "20126266", "PLoS Negl Trop Dis. 2010 Jan 26;4(1):e586"),
    )
    assert notice.citation.startswith("Expression of Concern: Characterization of a Subunit of the Outer Dynein Arm")
    assert stats.skipped_without_abstract >= 1


def test_real_retraction_notices_point_at_their_papers_with_or_without_an_abstract() -> None:
    with_abstract, _ = read(NOTICE_WITH_ABSTRACT_FILE)
    _, stats = read(NOTICE_WITHOUT_ABSTRACT_FILE)

    assert [(c.ref_type, c.pmid) for c in with_abstract["38075128"].corrections] == [("RetractionOf", "35607429")]
    assert "Retraction of Publication" in with_abstract["38075128"].publication_types
    [notice] = [notice for notice in stats.notices if notice.pmid == "41578200"]
    assert [(c.ref_type, c.pmid) for c in notice.corrections] == [("RetractionOf", "21595987")]


def test_only_the_six_trust_entries_are_read_and_repeats_collapse() -> None:
    records, _ = read(FIXTURES / "corrections_papers.xml")

    # CommentIn and Cites are left out; the ErratumIn listed twice counts once.
    assert records["90000004"].corrections == (
        Correction(ref_type="ErratumIn", pmid="90000104", source="J Test Med. 2018 Jun;9(2):77"),
    )
    assert records["90000001"].corrections == ()


def test_an_entry_without_a_pmid_keeps_its_source_text() -> None:
    records, _ = read(FIXTURES / "corrections_papers.xml")

    assert records["90000005"].corrections == (
        Correction(ref_type="RetractionIn", pmid="", source="J Test Med. 2005 Jan;1(1):3"),
    )


def test_notices_without_an_abstract_are_skipped_as_records_and_listed_as_notices() -> None:
    records, stats = read(FIXTURES / "corrections_notices.xml")

    assert set(records) == {"90000101"}  # the one notice with an abstract
    assert records["90000101"].corrections == (
        Correction(ref_type="RetractionOf", pmid="90000001", source="J Test Med. 2019 Mar;12(3):1"),
    )
    assert stats.skipped_without_abstract == 4
    assert stats.notices == [
        Notice(
            pmid="90000102",
            citation="Expression of Concern: Flagellar docking in a kinetoplastid. J Test Med. 2022 Dec.",
            corrections=(Correction("ExpressionOfConcernFor", "90000002", "J Test Med. 2010;4:e586"),),
        ),
        # Its CommentOn entry is not a correction: only the ErratumFor is kept.
        Notice(
            pmid="90000103",
            citation="Correction to: Statins after stroke: a cohort. J Test Med. 2022.",
            corrections=(Correction("ErratumFor", "90000003", "J Test Med. 2021;3:10"),),
        ),
        Notice(
            pmid="90000105",
            citation="Retraction Note: A paper this corpus never holds. Journal of Test Medicine. 2025.",
            corrections=(Correction("RetractionOf", "90000099", "J Test Med. 2011;11:185"),),
        ),
    ]  # 90000106 is a corrected letter, not a notice: it points at no paper


def test_a_record_is_cited_as_title_journal_and_date() -> None:
    records, _ = read(FIXTURES / "corrections_notices.xml")

    assert records["90000101"].cited_as == (
        "Retracted: Zinc lozenges shorten the common cold: a randomised trial. J Test Med. 2023 Dec 6."
    )
