"""Retraction status resolved at save time: a notice marks its paper whichever of the two is stored first, and a
paper's own entries and publication types count too. Files go through the real reader into the article sink, the
way ingestion hands them over (records batch by batch, then the notices read without an abstract)."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.ingest import store_file
from indexer.pubmed_xml import read_pubmed_xml
from indexer.records import ArticleRecord, Correction, ReadStats
from tests.indexer.test_pubmed_corrections import CONCERN_NOTICE_FILE, FIXTURES, RETRACTED_PAPER_FILE
from webapp.corpus import engines
from webapp.corpus.models import Article, CorrectionLink
from webapp.corpus.retraction_status import retraction_state
from webapp.corpus.services.articles import DatabaseArticleSink

pytestmark = pytest.mark.django_db

PAPERS = FIXTURES / "corrections_papers.xml"
NOTICES = FIXTURES / "corrections_notices.xml"
RETRACTED, CONCERN, CORRECTED, NOTICE, NONE = (
    Article.Retraction.RETRACTED,
    Article.Retraction.CONCERN,
    Article.Retraction.CORRECTED,
    Article.Retraction.NOTICE,
    Article.Retraction.NONE,
)


def store(path: Path, *, only: set[str] | None = None) -> None:
    stats = ReadStats()
    records = [record for record in read_pubmed_xml(path, stats) if only is None or record.pmid in only]
    sink = DatabaseArticleSink()
    sink.save(records, source=path.name)
    sink.save_notices([notice for notice in stats.notices if only is None or notice.pmid in only])


def status(pmid: str) -> str:
    return Article.objects.get(pmid=pmid).retraction_status


def notices(pmid: str) -> list[dict[str, str]]:
    return list(Article.objects.get(pmid=pmid).retraction_notices)


EXPECTED = {
    "90000001": RETRACTED,  # by the stored retraction notice 90000101
    "90000002": CONCERN,  # by an expression of concern read without an abstract
    "90000003": CORRECTED,  # by an erratum read without an abstract
    "90000004": CORRECTED,  # its own ErratumIn
    "90000005": RETRACTED,  # its own RetractionIn and the type Retracted Publication
    "90000101": NOTICE,  # the retraction notice itself, stored because it has an abstract
}


@pytest.mark.parametrize("order", [(PAPERS, NOTICES), (NOTICES, PAPERS)], ids=["papers first", "notices first"])
def test_every_status_is_the_same_whichever_file_arrives_first(order: tuple[Path, Path]) -> None:
    for path in order:
        store(path)

    assert {pmid: status(pmid) for pmid in EXPECTED} == EXPECTED


@pytest.mark.parametrize("order", [(PAPERS, NOTICES), (NOTICES, PAPERS)], ids=["papers first", "notices first"])
def test_a_marked_paper_lists_the_notice_as_cited_from_its_side(order: tuple[Path, Path]) -> None:
    for path in order:
        store(path)

    assert notices("90000001") == [
        {
            "ref_type": "RetractionIn",
            "pmid": "90000101",
            "source": "Retracted: Zinc lozenges shorten the common cold: a randomised trial. J Test Med. 2023 Dec 6.",
        }
    ]
    assert notices("90000002") == [
        {
            "ref_type": "ExpressionOfConcernIn",
            "pmid": "90000102",
            "source": "Expression of Concern: Flagellar docking in a kinetoplastid. J Test Med. 2022 Dec.",
        }
    ]
    assert notices("90000101") == [
        {"ref_type": "RetractionOf", "pmid": "90000001", "source": "J Test Med. 2019 Mar;12(3):1"}
    ]


def test_a_paper_nobody_points_at_is_none() -> None:
    store(PAPERS)

    assert status("90000001") == NONE
    assert notices("90000001") == []


def test_the_real_retracted_excerpt_is_retracted_on_its_own() -> None:
    store(RETRACTED_PAPER_FILE, only={"15146069"})

    assert status("15146069") == RETRACTED
    assert notices("15146069")[0]["pmid"] == "15516371"


def _real_concern_target() -> ArticleRecord:
    # The paper the real expression of concern 36490231 is about; the shared excerpts do not hold it.
    return ArticleRecord(pmid="20126266", title="Characterization of a docking complex subunit.", abstract="Text.")


@pytest.mark.parametrize("notice_first", [True, False], ids=["notice first", "paper first"])
def test_the_real_expression_of_concern_marks_its_paper_in_either_order(notice_first: bool) -> None:
    sink = DatabaseArticleSink()
    if notice_first:
        store(CONCERN_NOTICE_FILE, only={"36490231"})
    sink.save([_real_concern_target()], source="paper.xml")
    if not notice_first:
        store(CONCERN_NOTICE_FILE, only={"36490231"})

    assert status("20126266") == CONCERN
    assert notices("20126266")[0]["ref_type"] == "ExpressionOfConcernIn"
    assert notices("20126266")[0]["pmid"] == "36490231"


def test_deleting_a_notice_clears_the_mark_it_made() -> None:
    store(PAPERS)
    store(NOTICES)

    DatabaseArticleSink().delete(["90000101"])

    assert status("90000001") == NONE
    assert not CorrectionLink.objects.filter(pmid="90000101").exists()


def test_a_notice_read_again_pointing_elsewhere_stops_marking_its_first_paper() -> None:
    store(PAPERS)
    store(NOTICES)
    notice = next(read_pubmed_xml(NOTICES, ReadStats()))
    moved = ArticleRecord(
        pmid=notice.pmid,
        version=2,
        title=notice.title,
        abstract=notice.abstract,
        corrections=(Correction("RetractionOf", "90000002", "J Test Med. 2010;4:e586"),),
    )

    DatabaseArticleSink().save([moved], source="update.xml")

    assert status("90000001") == NONE
    assert status("90000002") == RETRACTED


def test_an_older_version_of_a_notice_does_not_replace_the_links_of_the_newer() -> None:
    store(PAPERS)
    sink = DatabaseArticleSink()
    retracts = (Correction("RetractionOf", "90000001", "x"),)
    sink.save([ArticleRecord("700", "Retraction", "Retracts it.", version=2, corrections=retracts)], source="new.xml")

    sink.save([ArticleRecord("700", "Retraction", "Retracts it.", version=1)], source="old.xml")

    assert status("90000001") == RETRACTED


def test_re_reading_an_unchanged_file_resolves_rows_stored_before_without_queueing_them_for_embedding() -> None:
    store(PAPERS)
    Article.objects.update(retraction_status=NONE, retraction_notices=[], embedded=True)  # as the migration leaves them
    CorrectionLink.objects.all().delete()

    store(PAPERS)

    assert status("90000005") == RETRACTED
    assert not Article.objects.filter(embedded=False).exists()


def test_re_reading_unchanged_files_keeps_the_links_as_they_are() -> None:
    store(PAPERS)
    store(NOTICES)
    before = sorted(CorrectionLink.objects.values_list("pk", flat=True))

    store(NOTICES)
    store(PAPERS)

    assert sorted(CorrectionLink.objects.values_list("pk", flat=True)) == before
    assert {pmid: status(pmid) for pmid in EXPECTED} == EXPECTED


@pytest.mark.parametrize(
    ("own", "pointing_here", "types", "expected"),
    [
        ((), (), ("Journal Article",), NONE),
        ((), (), ("Retracted Publication",), RETRACTED),
        ((), (), ("Retraction Notice",), NOTICE),
        ((), (), ("Published Erratum",), NOTICE),
        ((Correction("ErratumIn", "1", ""), Correction("RetractionIn", "2", "")), (), (), RETRACTED),
        ((Correction("ErratumIn", "1", ""),), (Correction("ExpressionOfConcernFor", "3", ""),), (), CONCERN),
        ((Correction("RetractionOf", "1", ""),), (Correction("ErratumFor", "3", ""),), (), CORRECTED),
    ],
    ids=[
        "none",
        "type retracted",
        "type notice",
        "erratum notice",
        "retraction over erratum",
        "concern",
        "corrected notice",
    ],
)
def test_the_most_serious_status_wins(
    own: tuple[Correction, ...], pointing_here: tuple[Correction, ...], types: tuple[str, ...], expected: str
) -> None:
    assert retraction_state(own=own, pointing_here=pointing_here, publication_types=types).status == expected


def test_a_notice_named_on_both_sides_is_listed_once_in_pubmeds_wording() -> None:
    state = retraction_state(
        own=(Correction("RetractionIn", "9", "PubMed's citation"),),
        pointing_here=(Correction("RetractionOf", "9", "Retraction: title. J. 2020."),),
        publication_types=(),
    )

    assert state.notices == (Correction("RetractionIn", "9", "PubMed's citation"),)


def test_ingestion_hands_the_notices_without_an_abstract_to_the_store(own_index: Path) -> None:
    # Through the indexer's own step, as `ingest` and the index jobs run it: not by calling the sink by hand.
    for path in (PAPERS, NOTICES):
        store_file(path, sink=DatabaseArticleSink(), lexical=engines.lexical_index(), vectors=engines.vector_index())

    assert {pmid: status(pmid) for pmid in EXPECTED} == EXPECTED
