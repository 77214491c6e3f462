"""Tests for the streaming PubMed XML reader."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from indexer.errors import CorpusFormatError
from indexer.pubmed_xml import read_pubmed_xml
from indexer.records import ArticleRecord, MeshHeading, ReadStats

DATA_DIR = Path(os.environ.get("VERIMED_DATA_DIR", Path(__file__).resolve().parents[2].parent / "shared" / "data"))

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
) -> str:
    return f"""
<MedlineCitation Status="MEDLINE" Owner="NLM">
  <PMID Version="1">{pmid}</PMID>
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


def pubmed_article(pmid: str, **parts: str) -> str:
    return f"<PubmedArticle>{citation(pmid, **parts)}<PubmedData/></PubmedArticle>"


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

    assert record.authors == ("Smith JA", "Jane Doe", "Abhimanyu", "CKiD Study Investigators")


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


def test_it_reads_every_shared_pubmed_sample() -> None:
    xml_dir = DATA_DIR / "pubmed" / "xml"
    paths = sorted(path for path in xml_dir.rglob("*") if path.is_file())
    assert paths, f"no PubMed samples under {xml_dir}"
    by_name: dict[str, tuple[list[ArticleRecord], ReadStats]] = {path.name: read_all(path) for path in paths}

    for name, (records, stats) in by_name.items():
        assert stats.articles == len(records), name
        for record in records:
            assert record.pmid.strip(), name
            assert record.abstract.strip(), f"{name}: {record.pmid}"

    assert by_name["data-raw_pubmed20n0000.xml"] == ([], ReadStats())
    medline_records, medline_stats = by_name["medline16n0902_sample.xml.gz"]
    assert 200 <= len(medline_records) < 1000
    assert medline_stats.articles + medline_stats.skipped_without_abstract == 604  # every citation accounted for
    assert medline_stats.deleted_pmids
