"""Tests for the streaming PubMed XML reader."""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from indexer.errors import CorpusFormatError
from indexer.pubmed_xml import read_pubmed_xml
from indexer.records import ArticleRecord, Author, MeshHeading, ReadStats
from tests.support import shared_data_dir

SHARED_XML_FILES = sorted(path for path in (shared_data_dir() / "pubmed" / "xml").rglob("*") if path.is_file())

PLAIN_ABSTRACT = "<Abstract><AbstractText>Plain abstract.</AbstractText></Abstract>"


def citation(
    pmid: str,
    *,
    article_title: str = "<ArticleTitle>A title.</ArticleTitle>",
    abstract: str = PLAIN_ABSTRACT,
    journal: str = "<Title>Journal of Tests</Title><ISOAbbreviation>J Tests</ISOAbbreviation>",
    pub_date: str = "<Year>2001</Year>",
    article_extra: str = "",
    citation_extra: str = "",
    pmid_attributes: str = 'Version="1"',
) -> str:
    return f"""
<MedlineCitation Status="MEDLINE" Owner="NLM">
  <PMID {pmid_attributes}>{pmid}</PMID>
  <Article PubModel="Print">
    <Journal>
      <JournalIssue CitedMedium="Print"><Volume>1</Volume><PubDate>{pub_date}</PubDate></JournalIssue>
      {journal}
    </Journal>
    {article_title}
    {abstract}
    {article_extra}
  </Article>
  {citation_extra}
</MedlineCitation>"""


def pubmed_article(pmid: str, *, pubmed_data: str = "", **parts: str) -> str:
    return f"<PubmedArticle>{citation(pmid, **parts)}<PubmedData>{pubmed_data}</PubmedData></PubmedArticle>"


def article_set(*items: str) -> str:
    return '<?xml version="1.0" encoding="UTF-8"?>\n<PubmedArticleSet>\n' + "\n".join(items) + "\n</PubmedArticleSet>\n"


def write(tmp_path: Path, name: str, xml: str, *, compress: bool = False) -> Path:
    path = tmp_path / name
    data = xml.encode("utf-8")
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def read_all(path: Path) -> tuple[list[ArticleRecord], ReadStats]:
    stats = ReadStats()
    return list(read_pubmed_xml(path, stats)), stats


def read_one(tmp_path: Path, article: str) -> ArticleRecord:
    records, _ = read_all(write(tmp_path, "one.xml", article_set(article)))
    assert len(records) == 1
    return records[0]


def test_it_keeps_structured_abstract_labels(tmp_path: Path) -> None:
    abstract = """<Abstract>
      <AbstractText Label="BACKGROUND" NlmCategory="BACKGROUND">Why we did it.</AbstractText>
      <AbstractText Label="Results" NlmCategory="RESULTS">What
          we found.</AbstractText>
      <CopyrightInformation>Copyright 2001.</CopyrightInformation>
    </Abstract>"""

    record = read_one(tmp_path, pubmed_article("1", abstract=abstract))

    assert record.abstract == "BACKGROUND: Why we did it. Results: What we found."


def test_it_drops_the_meaningless_unlabelled_label_and_empty_parts(tmp_path: Path) -> None:
    abstract = """<Abstract>
      <AbstractText Label="UNLABELLED">We report a thing.</AbstractText>
      <AbstractText Label="CLINICALTRIALS" NlmCategory="RESULTS"/>
      <AbstractText>More.</AbstractText>
    </Abstract>"""

    record = read_one(tmp_path, pubmed_article("1", abstract=abstract))

    assert record.abstract == "We report a thing. More."


def test_it_flattens_inline_markup_in_titles_and_abstracts(tmp_path: Path) -> None:
    title = "<ArticleTitle>Growth of <i>E. coli</i> on H<sub>2</sub>O and Ca<sup>2+</sup>.</ArticleTitle>"
    abstract = "<Abstract><AbstractText><b>Bold</b> claim about <i>Mtb</i>  infection.</AbstractText></Abstract>"

    record = read_one(tmp_path, pubmed_article("1", article_title=title, abstract=abstract))

    assert record.title == "Growth of E. coli on H2O and Ca2+."
    assert record.abstract == "Bold claim about Mtb infection."


def test_it_falls_back_to_the_vernacular_title_when_the_article_title_is_empty(tmp_path: Path) -> None:
    article = pubmed_article(
        "1",
        article_title="<ArticleTitle/>",
        article_extra="<VernacularTitle>Kommentar zu <i>etwas</i>.</VernacularTitle>",
    )

    assert read_one(tmp_path, article).title == "Kommentar zu etwas."


def test_it_takes_the_first_year_of_a_medline_date(tmp_path: Path) -> None:
    article = pubmed_article("1", pub_date="<MedlineDate>1998 Dec-1999 Jan</MedlineDate>")

    assert read_one(tmp_path, article).year == 1998


def test_it_falls_back_to_the_electronic_article_date_for_the_year(tmp_path: Path) -> None:
    article_date = '<ArticleDate DateType="Electronic"><Year>2019</Year><Month>05</Month></ArticleDate>'
    article = pubmed_article("1", pub_date="<Season>Spring</Season>", article_extra=article_date)

    assert read_one(tmp_path, article).year == 2019


def test_it_leaves_the_year_empty_when_no_date_has_one(tmp_path: Path) -> None:
    assert read_one(tmp_path, pubmed_article("1", pub_date="<Season>Spring</Season>")).year is None


def test_it_uses_the_iso_abbreviation_when_the_journal_title_is_missing(tmp_path: Path) -> None:
    full = read_one(tmp_path, pubmed_article("1"))
    abbreviated = read_one(tmp_path, pubmed_article("2", journal="<ISOAbbreviation>J Tests</ISOAbbreviation>"))

    assert (full.journal, abbreviated.journal) == ("Journal of Tests", "J Tests")


def test_it_names_authors_by_initials_fore_name_or_collective_name(tmp_path: Path) -> None:
    authors = """<AuthorList CompleteYN="Y">
      <Author ValidYN="Y"><LastName>Smith</LastName><ForeName>John A</ForeName><Initials>JA</Initials></Author>
      <Author ValidYN="Y"><LastName>Doe</LastName><ForeName>Jane</ForeName></Author>
      <Author ValidYN="Y"><LastName>Abhimanyu</LastName></Author>
      <Author ValidYN="Y"><CollectiveName>CKiD Study Investigators</CollectiveName></Author>
    </AuthorList>"""

    record = read_one(tmp_path, pubmed_article("1", article_extra=authors))

    assert record.author_names == ("Smith JA", "Jane Doe", "Abhimanyu", "CKiD Study Investigators")
    assert [author.collective for author in record.authors] == [False, False, False, True]


def test_it_reads_mesh_major_topics_and_qualifiers(tmp_path: Path) -> None:
    mesh = """<MeshHeadingList>
      <MeshHeading><DescriptorName UI="D000818" MajorTopicYN="N">Animals</DescriptorName></MeshHeading>
      <MeshHeading>
        <DescriptorName UI="D008407" MajorTopicYN="Y">Mast Cells</DescriptorName>
        <QualifierName UI="Q000276" MajorTopicYN="N">immunology</QualifierName>
        <QualifierName UI="Q000473" MajorTopicYN="N">pathology</QualifierName>
      </MeshHeading>
    </MeshHeadingList>"""

    record = read_one(tmp_path, pubmed_article("1", citation_extra=mesh))

    assert record.mesh == (
        MeshHeading("Animals", major_topic=False, qualifiers=()),
        MeshHeading("Mast Cells", major_topic=True, qualifiers=("immunology", "pathology")),
    )


def test_it_skips_and_counts_citations_without_abstract(tmp_path: Path) -> None:
    xml = article_set(
        pubmed_article("1", abstract=""),
        pubmed_article("2"),
        pubmed_article("3", abstract="<Abstract><AbstractText>  </AbstractText></Abstract>"),
        "<PubmedArticle><MedlineCitation><PMID>4</PMID></MedlineCitation></PubmedArticle>",
    )

    records, stats = read_all(write(tmp_path, "mixed.xml", xml))

    assert [record.pmid for record in records] == ["2"]
    assert (stats.articles, stats.skipped_without_abstract) == (1, 3)


def test_it_collects_pmids_of_deleted_citations(tmp_path: Path) -> None:
    deletions = '<DeleteCitation><PMID Version="1">111</PMID><PMID Version="1">222</PMID></DeleteCitation>'

    records, stats = read_all(write(tmp_path, "update.xml", article_set(pubmed_article("1"), deletions)))

    assert [record.pmid for record in records] == ["1"]
    assert stats.deleted_pmids == ["111", "222"]


@pytest.mark.parametrize(
    ("name", "compress"),
    [("plain.xml", False), ("packed.xml.gz", True), ("packed_without_suffix.xml", True)],
)
def test_it_reads_plain_and_gzip_files_alike(tmp_path: Path, name: str, compress: bool) -> None:
    xml = article_set(*(pubmed_article(str(pmid)) for pmid in range(1, 4)))

    records, stats = read_all(write(tmp_path, name, xml, compress=compress))

    assert [record.pmid for record in records] == ["1", "2", "3"]
    assert stats.articles == 3


def test_it_reads_the_legacy_medline_citation_set_layout(tmp_path: Path) -> None:
    deletions = "<DeleteCitation><PMID>9</PMID></DeleteCitation>"
    xml = f'<?xml version="1.0"?>\n<MedlineCitationSet>{citation("7")}{citation("8")}{deletions}</MedlineCitationSet>'

    records, stats = read_all(write(tmp_path, "medline.xml", xml))

    assert [record.pmid for record in records] == ["7", "8"]
    assert stats.deleted_pmids == ["9"]


def test_it_yields_nothing_for_a_set_without_citations(tmp_path: Path) -> None:
    records, stats = read_all(write(tmp_path, "empty.xml", article_set()))

    assert records == []
    assert stats == ReadStats()


def test_it_raises_corpus_format_error_on_truncated_gzip(tmp_path: Path) -> None:
    xml = article_set(*(pubmed_article(str(pmid), abstract=PLAIN_ABSTRACT * 20) for pmid in range(1, 2000)))
    packed = gzip.compress(xml.encode())
    path = tmp_path / "cut.xml.gz"
    path.write_bytes(packed[: len(packed) // 2])
    stats = ReadStats()
    seen: list[str] = []

    with pytest.raises(CorpusFormatError, match=r"cut\.xml\.gz.*(truncated|corrupt)"):
        seen.extend(record.pmid for record in read_pubmed_xml(path, stats))

    assert seen, "records before the damage are still streamed"
    assert stats.articles == len(seen)


def test_it_raises_corpus_format_error_naming_the_file_and_line_on_malformed_xml(tmp_path: Path) -> None:
    xml = article_set(pubmed_article("1")).replace("</Article>", "</Artikel>")

    with pytest.raises(CorpusFormatError, match=r"broken\.xml.* line \d+") as raised:
        read_all(write(tmp_path, "broken.xml", xml))

    assert raised.value.transient is False


def test_it_raises_corpus_format_error_on_a_file_cut_mid_citation(tmp_path: Path) -> None:
    xml = article_set(pubmed_article("1"), pubmed_article("2"))

    with pytest.raises(CorpusFormatError, match=r"cut\.xml"):
        read_all(write(tmp_path, "cut.xml", xml[: len(xml) - 80]))


def test_it_rejects_well_formed_xml_that_is_not_pubmed(tmp_path: Path) -> None:
    with pytest.raises(CorpusFormatError, match=r"not PubMed XML.*<html>"):
        read_all(write(tmp_path, "page.xml", "<html><body>hello</body></html>"))


def test_it_does_not_expand_external_entities(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    doctype = f'<!DOCTYPE PubmedArticleSet [<!ENTITY xxe SYSTEM "{secret.as_uri()}">]>'
    article = pubmed_article("1", abstract="<Abstract><AbstractText>Leak: &xxe;</AbstractText></Abstract>")
    xml = f'<?xml version="1.0"?>\n{doctype}\n<PubmedArticleSet>{article}</PubmedArticleSet>'

    records, _ = read_all(write(tmp_path, "xxe.xml", xml))

    assert "TOPSECRET" not in records[0].text


FULL_ARTICLE = """
<PubmedArticle>
  <MedlineCitation Status="MEDLINE" Owner="NLM">
    <PMID Version="2">31814964</PMID>
    <Article PubModel="Print-Electronic">
      <Journal>
        <ISSN IssnType="Electronic">1533-4406</ISSN>
        <JournalIssue CitedMedium="Internet">
          <Volume>378</Volume>
          <Issue>20</Issue>
          <PubDate><MedlineDate>1998 Dec-1999 Jan</MedlineDate></PubDate>
        </JournalIssue>
        <Title>The New England journal of medicine</Title>
        <ISOAbbreviation>N Engl J Med</ISOAbbreviation>
      </Journal>
      <ArticleTitle></ArticleTitle>
      <VernacularTitle>Inhalative Therapie bei <i>Asthma</i>.</VernacularTitle>
      <Pagination><MedlinePgn>1865-76</MedlinePgn></Pagination>
      <ELocationID EIdType="doi" ValidYN="Y">10.9999/from-elocation</ELocationID>
      <Abstract>
        <AbstractText Label="BACKGROUND" NlmCategory="BACKGROUND">Asthma is common.</AbstractText>
        <AbstractText Label="METHODS" NlmCategory="METHODS">We randomised <b>3849</b> patients.</AbstractText>
      </Abstract>
      <AuthorList CompleteYN="Y">
        <Author ValidYN="Y">
          <LastName>O'Byrne</LastName><ForeName>Paul M</ForeName><Initials>PM</Initials>
          <Identifier Source="ORCID">https://orcid.org/0000-0002-1825-009X</Identifier>
          <AffiliationInfo><Affiliation>McMaster University, Hamilton, Canada.</Affiliation></AffiliationInfo>
          <AffiliationInfo><Affiliation>St. Joseph's Healthcare, Hamilton, Canada.</Affiliation></AffiliationInfo>
        </Author>
        <Author ValidYN="N"><LastName>Mistaken</LastName><Initials>X</Initials></Author>
        <Author ValidYN="Y">
          <CollectiveName>SYGMA 1 Investigators</CollectiveName>
          <AffiliationInfo><Affiliation>AstraZeneca, Gothenburg, Sweden.</Affiliation></AffiliationInfo>
        </Author>
      </AuthorList>
      <Language>ger</Language>
      <Language>eng</Language>
      <PublicationTypeList>
        <PublicationType UI="D017427">Clinical Trial, Phase III</PublicationType>
        <PublicationType UI="D016428">Journal Article</PublicationType>
        <PublicationType UI="D016449">Randomized Controlled Trial</PublicationType>
      </PublicationTypeList>
    </Article>
    <MeshHeadingList>
      <MeshHeading>
        <DescriptorName UI="D001249" MajorTopicYN="N">Asthma</DescriptorName>
        <QualifierName UI="Q000188" MajorTopicYN="Y">drug therapy</QualifierName>
      </MeshHeading>
      <MeshHeading><DescriptorName UI="D006801" MajorTopicYN="N">Humans</DescriptorName></MeshHeading>
    </MeshHeadingList>
  </MedlineCitation>
  <PubmedData>
    <History><PubMedPubDate PubStatus="pubmed"><Year>2018</Year><Month>5</Month><Day>17</Day></PubMedPubDate></History>
    <ArticleIdList>
      <ArticleId IdType="pubmed">31814964</ArticleId>
      <ArticleId IdType="doi">10.1056/NEJMoa1715274</ArticleId>
      <ArticleId IdType="pmc">PMC6883395</ArticleId>
    </ArticleIdList>
  </PubmedData>
</PubmedArticle>"""


def test_it_reads_every_field_a_researcher_filters_or_cites_by(tmp_path: Path) -> None:
    record = read_one(tmp_path, FULL_ARTICLE)

    assert record == ArticleRecord(
        pmid="31814964",
        version=2,
        title="Inhalative Therapie bei Asthma.",
        abstract="BACKGROUND: Asthma is common. METHODS: We randomised 3849 patients.",
        journal="The New England journal of medicine",
        journal_iso="N Engl J Med",
        volume="378",
        issue="20",
        pages="1865-76",
        pub_date="1998 Dec-1999 Jan",
        year=1998,
        authors=(
            Author(
                name="O'Byrne PM",
                affiliations=("McMaster University, Hamilton, Canada.", "St. Joseph's Healthcare, Hamilton, Canada."),
                orcid="0000-0002-1825-009X",
            ),
            Author(name="SYGMA 1 Investigators", collective=True, affiliations=("AstraZeneca, Gothenburg, Sweden.",)),
        ),
        mesh=(
            MeshHeading("Asthma", major_topic=True, qualifiers=("drug therapy",)),
            MeshHeading("Humans", major_topic=False),
        ),
        publication_types=("Clinical Trial, Phase III", "Journal Article", "Randomized Controlled Trial"),
        language="ger",
        doi="10.1056/NEJMoa1715274",
        pmc="PMC6883395",
    )


@pytest.mark.parametrize(
    ("pub_date", "printed", "year"),
    [
        ("<Year>2019</Year><Month>Mar</Month><Day>05</Day>", "2019 Mar 5", 2019),
        ("<Year>2019</Year><Month>03</Month><Day>5</Day>", "2019 Mar 5", 2019),
        ("<Year>2023</Year><Month>Feb</Month>", "2023 Feb", 2023),
        ("<Year>2017</Year>", "2017", 2017),
        ("<Year>2000</Year><Season>Spring</Season>", "2000 Spring", 2000),
        ("<MedlineDate>1998 Dec-1999 Jan</MedlineDate>", "1998 Dec-1999 Jan", 1998),
        ("<MedlineDate>2000 Spring</MedlineDate>", "2000 Spring", 2000),
        ("<MedlineDate>2019 May - Jun</MedlineDate>", "2019 May - Jun", 2019),
    ],
)
def test_it_prints_the_publication_date_as_citations_do(tmp_path: Path, pub_date: str, printed: str, year: int) -> None:
    record = read_one(tmp_path, pubmed_article("1", pub_date=pub_date))

    assert (record.pub_date, record.year) == (printed, year)


def test_it_falls_back_to_the_day_pubmed_listed_the_citation_for_the_year(tmp_path: Path) -> None:
    history = """<History>
      <PubMedPubDate PubStatus="received"><Year>2015</Year></PubMedPubDate>
      <PubMedPubDate PubStatus="pubmed"><Year>2016</Year><Month>1</Month><Day>2</Day></PubMedPubDate>
    </History>"""

    record = read_one(tmp_path, pubmed_article("1", pub_date="<Season>Spring</Season>", pubmed_data=history))

    assert (record.year, record.pub_date) == (2016, "Spring")


def test_the_journal_date_wins_over_the_electronic_and_pubmed_dates(tmp_path: Path) -> None:
    article_date = '<ArticleDate DateType="Electronic"><Year>2019</Year></ArticleDate>'
    history = '<History><PubMedPubDate PubStatus="pubmed"><Year>2018</Year></PubMedPubDate></History>'

    record = read_one(tmp_path, pubmed_article("1", article_extra=article_date, pubmed_data=history))

    assert record.year == 2001


@pytest.mark.parametrize(
    ("identifier", "orcid"),
    [
        ("https://orcid.org/0000-0001-9921-6968", "0000-0001-9921-6968"),
        ("http://orcid.org/0000-0001-9921-6968", "0000-0001-9921-6968"),
        ("0000-0001-9921-6968", "0000-0001-9921-6968"),
        ("000000019921696x", "0000-0001-9921-696X"),
        (" https://www.orcid.org/0000-0002-1825-0097 ", "0000-0002-1825-0097"),
        ("0000-0001-9921-69", ""),
        ("https://example.org/0000-0001-9921-6968", ""),
    ],
)
def test_it_normalises_orcid_ids_to_the_bare_form(tmp_path: Path, identifier: str, orcid: str) -> None:
    authors = f"""<AuthorList><Author ValidYN="Y"><LastName>Sugrue</LastName><Initials>A</Initials>
      <Identifier Source="ORCID">{identifier}</Identifier></Author></AuthorList>"""

    record = read_one(tmp_path, pubmed_article("1", article_extra=authors))

    assert record.authors == (Author(name="Sugrue A", orcid=orcid),)


def test_it_ignores_identifiers_that_are_not_orcid(tmp_path: Path) -> None:
    authors = """<AuthorList><Author><LastName>Lee</LastName><Initials>K</Initials>
      <Identifier Source="ISNI">0000-0001-9921-6968</Identifier></Author></AuthorList>"""

    assert read_one(tmp_path, pubmed_article("1", article_extra=authors)).authors == (Author(name="Lee K"),)


def test_it_skips_authors_the_publisher_listed_in_error(tmp_path: Path) -> None:
    authors = """<AuthorList>
      <Author ValidYN="N"><LastName>Wrong</LastName><Initials>W</Initials></Author>
      <Author ValidYN="Y"><LastName>Right</LastName><Initials>R</Initials></Author>
      <Author><LastName>Unmarked</LastName><Initials>U</Initials></Author>
    </AuthorList>"""

    record = read_one(tmp_path, pubmed_article("1", article_extra=authors))

    assert record.author_names == ("Right R", "Unmarked U")


def test_it_reads_the_pmid_version_defaulting_to_the_first(tmp_path: Path) -> None:
    xml = article_set(
        pubmed_article("1", pmid_attributes='Version="3"'),
        pubmed_article("2", pmid_attributes=""),
        pubmed_article("3", pmid_attributes='Version="x"'),
    )

    records, _ = read_all(write(tmp_path, "versions.xml", xml))

    assert [(record.pmid, record.version) for record in records] == [("1", 3), ("2", 1), ("3", 1)]


def test_it_takes_the_doi_from_the_elocation_when_pubmed_lists_none(tmp_path: Path) -> None:
    locations = """<ELocationID EIdType="pii" ValidYN="Y">S0140-6736(15)00001-1</ELocationID>
      <ELocationID EIdType="doi" ValidYN="N">10.9999/withdrawn</ELocationID>
      <ELocationID EIdType="doi" ValidYN="Y">10.1016/S0140-6736(15)00001-1</ELocationID>"""
    # The references' ids identify the cited works, never this one.
    references = """<ArticleIdList><ArticleId IdType="pubmed">1</ArticleId></ArticleIdList>
      <ReferenceList><Reference><Citation>Cited.</Citation><ArticleIdList>
        <ArticleId IdType="doi">10.9999/cited</ArticleId><ArticleId IdType="pmc">PMC1</ArticleId>
      </ArticleIdList></Reference></ReferenceList>"""

    record = read_one(tmp_path, pubmed_article("1", article_extra=locations, pubmed_data=references))

    assert (record.doi, record.pmc) == ("10.1016/S0140-6736(15)00001-1", "")


def test_it_leaves_doi_and_pmc_empty_when_the_citation_has_neither(tmp_path: Path) -> None:
    record = read_one(tmp_path, pubmed_article("1"))

    assert (record.doi, record.pmc) == ("", "")


@pytest.mark.parametrize(
    ("pagination", "pages"),
    [
        ("<MedlinePgn>259-65</MedlinePgn><StartPage>259</StartPage><EndPage>265</EndPage>", "259-65"),
        ("<StartPage>259</StartPage><EndPage>265</EndPage>", "259-265"),
        ("<StartPage>e0180707</StartPage>", "e0180707"),
        ("<MedlinePgn/>", ""),
    ],
)
def test_it_reads_pages_from_the_medline_pagination_or_start_and_end(
    tmp_path: Path, pagination: str, pages: str
) -> None:
    record = read_one(tmp_path, pubmed_article("1", article_extra=f"<Pagination>{pagination}</Pagination>"))

    assert record.pages == pages


def test_it_reads_journal_volume_issue_language_and_publication_types(tmp_path: Path) -> None:
    extra = """<Language>eng</Language>
      <PublicationTypeList>
        <PublicationType UI="D016428">Journal Article</PublicationType>
        <PublicationType UI="D016454">Review</PublicationType>
      </PublicationTypeList>"""

    record = read_one(tmp_path, pubmed_article("1", article_extra=extra))

    assert (record.journal_iso, record.volume, record.issue, record.language) == ("J Tests", "1", "", "eng")
    assert record.publication_types == ("Journal Article", "Review")


def test_a_major_qualifier_makes_the_heading_a_major_topic(tmp_path: Path) -> None:
    mesh = """<MeshHeadingList><MeshHeading>
      <DescriptorName UI="D001416" MajorTopicYN="N">Back Pain</DescriptorName>
      <QualifierName UI="Q000175" MajorTopicYN="N">diagnosis</QualifierName>
      <QualifierName UI="Q000503" MajorTopicYN="Y">physiopathology</QualifierName>
    </MeshHeading></MeshHeadingList>"""

    record = read_one(tmp_path, pubmed_article("1", citation_extra=mesh))

    assert record.mesh == (MeshHeading("Back Pain", major_topic=True, qualifiers=("diagnosis", "physiopathology")),)


def test_it_reads_an_author_affiliation_of_the_pre_2015_layout(tmp_path: Path) -> None:
    authors = """<AuthorList><Author><LastName>Old</LastName><Initials>O</Initials>
      <Affiliation>Institut Pasteur, Paris.</Affiliation></Author></AuthorList>"""

    record = read_one(tmp_path, pubmed_article("1", article_extra=authors))

    assert record.authors == (Author(name="Old O", affiliations=("Institut Pasteur, Paris.",)),)


# --- Memory: a baseline file holds ~30,000 citations; reading it must not build the whole tree.


def write_large_gzip(path: Path, citations: int) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as stream:
        stream.write('<?xml version="1.0" encoding="UTF-8"?>\n<PubmedArticleSet>\n')
        for pmid in range(1, citations + 1):
            # Every other citation lacks an abstract, so skipped citations must be released too.
            stream.write(pubmed_article(str(pmid), abstract=PLAIN_ABSTRACT if pmid % 2 else ""))
            if pmid % 5000 == 0:
                stream.write(f"<DeleteCitation><PMID>{pmid}</PMID></DeleteCitation>")
        stream.write("</PubmedArticleSet>\n")
    return path


class RecordingParse:
    """Wraps the reader's iterparse to expose the document root while parsing (lxml sets `root` only at the end)."""

    def __init__(self, context: Any) -> None:
        self._context = context
        self.document_root: Any = None

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        for event, element in self._context:
            self.document_root = element.getroottree().getroot()
            yield event, element

    @property
    def root(self) -> Any:
        return self._context.root


@pytest.fixture
def parse_trees(monkeypatch: pytest.MonkeyPatch) -> list[RecordingParse]:
    """The parses the reader opens, so a test can look at the tree each keeps."""
    parses: list[RecordingParse] = []
    original = etree.iterparse

    def recording_iterparse(*args: Any, **kwargs: Any) -> RecordingParse:
        parses.append(RecordingParse(original(*args, **kwargs)))
        return parses[-1]

    monkeypatch.setattr(etree, "iterparse", recording_iterparse)
    return parses


def test_memory_stays_flat_however_many_citations_the_file_holds(
    tmp_path: Path, parse_trees: list[RecordingParse]
) -> None:
    path = write_large_gzip(tmp_path / "large.xml.gz", 20_000)
    stats = ReadStats()
    tree_sizes: list[int] = []

    # Counting the tree's elements, not tracemalloc: libxml2 allocates outside Python's view.
    for count, _record in enumerate(read_pubmed_xml(path, stats), start=1):
        if count % 1000 == 0:
            tree_sizes.append(sum(1 for _ in parse_trees[0].document_root.iter()))

    assert (stats.articles, stats.skipped_without_abstract) == (10_000, 10_000)
    assert stats.deleted_pmids == ["5000", "10000", "15000", "20000"]
    # Only the citation being read and the parser's read-ahead (a few hundred elements) stay in the tree; keeping
    # even an empty husk per citation would leave over 20,000.
    assert max(tree_sizes) < 10_000, tree_sizes
    assert len(parse_trees[0].document_root) <= 1


# --- The shared real files: MEDLINE 2016 (legacy layout), current baseline and update excerpts, one efetch record.


def read_shared(name: str) -> tuple[list[ArticleRecord], ReadStats]:
    return read_all(next(path for path in SHARED_XML_FILES if path.name == name))


def decompressed_text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8")


def citations_with_abstract(xml: str) -> tuple[int, int]:
    """Citations in the file and those with abstract text, counted on the raw text independently of lxml."""
    citations = re.findall(r"<MedlineCitation[ >].*?</MedlineCitation>", xml, flags=re.DOTALL)
    abstracts = (re.search(r"<Abstract>(.*?)</Abstract>", citation, flags=re.DOTALL) for citation in citations)
    with_text = sum(1 for match in abstracts if match and re.sub(r"<[^>]*>|\s", "", match.group(1)))
    return len(citations), with_text


def deleted_pmids(xml: str) -> list[str]:
    deletions = re.findall(r"<DeleteCitation>(.*?)</DeleteCitation>", xml, flags=re.DOTALL)
    return [pmid for block in deletions for pmid in re.findall(r"<PMID[^>]*>\s*(\d+)\s*</PMID>", block)]


@pytest.mark.parametrize("path", SHARED_XML_FILES, ids=lambda path: path.name)
def test_every_citation_in_a_shared_file_is_read_or_counted_as_skipped(path: Path) -> None:
    xml = decompressed_text(path)

    records, stats = read_all(path)

    assert (stats.articles + stats.skipped_without_abstract, stats.articles) == citations_with_abstract(xml)
    assert stats.articles == len(records)
    assert stats.deleted_pmids == deleted_pmids(xml)
    for record in records:
        assert record.pmid.isdigit()
        assert record.abstract
        assert record.version >= 1


def test_the_shared_files_cover_every_layout() -> None:
    medline_records, medline_stats = read_shared("medline16n0902_sample.xml.gz")
    empty = read_shared("data-raw_pubmed20n0000.xml")

    assert (medline_stats.articles, medline_stats.skipped_without_abstract) == (526, 78)
    assert medline_stats.deleted_pmids == ["26432306"]
    assert empty == ([], ReadStats())
    assert all(record.journal_iso and record.pub_date and record.publication_types for record in medline_records)


def test_it_reads_the_efetch_record_of_a_trial_in_full() -> None:
    (record,), _ = read_shared("pubmed-29768149.xml")

    assert (record.journal, record.journal_iso) == ("The New England journal of medicine", "N Engl J Med")
    assert (record.volume, record.issue, record.pages) == ("378", "20", "1865-1876")
    assert (record.pub_date, record.year, record.language) == ("2018 May 17", 2018, "eng")
    assert (record.doi, record.pmc, record.version) == ("10.1056/NEJMoa1715274", "", 1)
    assert record.publication_types[:3] == ("Clinical Trial, Phase III", "Comparative Study", "Journal Article")
    assert "Randomized Controlled Trial" in record.publication_types
    assert record.author_names[:2] == ("O'Byrne PM", "FitzGerald JM")
    assert record.authors[0].affiliations[0].startswith("From the Firestone Institute for Respiratory Health")
    assert record.abstract.startswith("BACKGROUND: In patients with mild asthma")
    assert MeshHeading("Asthma", major_topic=True, qualifiers=("drug therapy",)) in record.mesh


def test_it_reads_legacy_medline_citations_with_their_elocation_doi() -> None:
    records, _ = read_shared("medline16n0902_sample.xml.gz")
    by_pmid = {record.pmid: record for record in records}

    review = by_pmid["26702167"]
    assert (review.pub_date, review.year) == ("2015 Oct-Dec", 2015)
    assert (review.journal_iso, review.volume, review.issue, review.pages) == (
        "Indian J Psychol Med",
        "37",
        "4",
        "381-7",
    )
    assert (review.doi, review.pmc) == ("10.4103/0253-7176.168559", "")
    assert review.publication_types == ("Journal Article", "Review")
    assert by_pmid["26411977"].authors[0] == Author(
        name="Sugrue A",
        affiliations=("Department of Internal Medicine, Mayo Clinic, Rochester, MN, USA.",),
        orcid="0000-0001-9921-6968",  # written there as http://orcid.org/0000-0001-9921-6968
    )
    assert Author(name="Movement Disorder Group", collective=True) in by_pmid["25345997"].authors
    assert sum(1 for record in records if record.doi) == 512


def test_it_reads_versions_and_pmc_ids_of_a_current_baseline() -> None:
    records, _ = read_shared("tests_testthat_pubmed_sample_baseline_pubmed20n1015.xml.gz")

    versions = [(record.version, record.pmc, record.doi) for record in records if record.pmid == "31814964"]

    assert versions == [
        (1, "PMC6883395", "10.12688/f1000research.19766.1"),
        (2, "PMC6883395.2", "10.12688/f1000research.19766.2"),
        (3, "PMC6883395.3", "10.12688/f1000research.19766.3"),
    ]


def test_it_reads_ids_affiliations_and_major_qualifiers_of_current_citations() -> None:
    records, _ = read_shared("test_current_medline.xml.gz")
    by_pmid = {record.pmid: record for record in records}

    review = by_pmid["28786991"]
    assert (review.doi, review.pmc, review.pages, review.pub_date) == (
        "10.1371/journal.pone.0180707",
        "PMC5546677",
        "e0180707",
        "2017",
    )
    assert review.publication_types == ("Journal Article", "Meta-Analysis", "Review", "Systematic Review")
    first_author = review.authors[0]
    assert (first_author.name, first_author.orcid, len(first_author.affiliations)) == (
        "Malekinejad M",
        "0000-0002-5721-6764",
        3,
    )
    old = by_pmid["2930949"]
    assert (old.pmc, old.doi, old.journal_iso, old.pub_date, old.pages) == (
        "PMC1306303",
        "",
        "West J Med",
        "1985 Aug",
        "259-65",
    )
    assert (
        MeshHeading(
            "Back Pain",
            major_topic=True,
            qualifiers=(
                "diagnosis",
                "epidemiology",
                "etiology",
                "physiopathology",
                "prevention & control",
                "therapy",
            ),
        )
        in old.mesh
    )


def test_update_files_collect_their_deleted_pmids() -> None:
    _records, stats = read_shared("tests_testthat_pubmed_sample_updatefiles_pubmed26n1335.xml.gz")

    assert stats.deleted_pmids[:3] == ["41456105", "41557076", "41616784"]
    assert len(stats.deleted_pmids) == 6
