"""Reading JATS full texts: sections, identifiers, tables as text, and hostile files refused without harm.

The articles are made here from a real PQA-L record of the shared data (its labelled context paragraphs become the
body's sections), written the way PMC writes JATS: a DOCTYPE naming the JATS DTD by public id, unnamespaced
elements, xlink and mml namespaces declared on the root.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.full_text import FullTextError, Paragraph
from indexer.jats import read_jats
from tests.indexer.jats_samples import PMID, jats_article, pqal_record


@pytest.fixture(scope="module")
def record(data_dir: Path) -> dict[str, object]:
    return pqal_record(data_dir)


def _article(record: dict[str, object], *, body_extra: str = "", back: str = "") -> bytes:
    return jats_article(record, body_extra=body_extra, back=back)


def test_sections_keep_their_titles_and_order_and_the_identifiers_are_recognised(record):
    article = read_jats(_article(record))

    assert article.pmid == PMID
    assert article.pmcid == "PMC3123456"
    assert article.doi == f"10.1000/example.{PMID}"
    assert article.title == record["QUESTION"]
    assert article.abstract == record["LONG_ANSWER"]
    contexts = [" ".join(str(text).split()) for text in record["CONTEXTS"]]  # type: ignore[attr-defined]
    assert [paragraph.text for paragraph in article.paragraphs] == contexts
    assert [paragraph.section for paragraph in article.paragraphs] == [
        str(label).title()
        for label in record["LABELS"]  # type: ignore[attr-defined]
    ]


def test_nested_sections_tables_and_figures_become_text_and_the_references_are_left_out(record):
    extra = """
      <sec><title>Results</title>
        <sec><title>Subgroups</title><p>Older patients <xref ref-type="bibr" rid="r1">[1]</xref> fared worse.</p>
          <table-wrap><label>Table 2</label><caption><p>Outcomes by age</p></caption>
            <table><thead><tr><th>Age</th><th>Deaths</th></tr></thead>
                   <tbody><tr><td>&lt;65</td><td>4</td></tr><tr><td>&#8805;65</td><td>11</td></tr></tbody></table>
          </table-wrap>
          <fig><label>Figure 1</label><caption><p>Survival curves.</p></caption></fig>
        </sec>
      </sec>"""
    back = '<ref-list><ref id="r1"><mixed-citation>A cited paper on something else.</mixed-citation></ref></ref-list>'
    article = read_jats(_article(record, body_extra=extra, back=back))

    nested = [paragraph for paragraph in article.paragraphs if paragraph.section == "Results > Subgroups"]
    assert nested == [
        Paragraph("Results > Subgroups", "Older patients [1] fared worse."),
        Paragraph("Results > Subgroups", "Table 2 Outcomes by age; Age | Deaths; <65 | 4; \u226565 | 11"),
        Paragraph("Results > Subgroups", "Figure 1 Survival curves."),
    ]
    assert not any("cited paper" in paragraph.text for paragraph in article.paragraphs)


def test_a_billion_laughs_file_is_refused_before_anything_expands():
    laughs = b"""<?xml version="1.0"?>
<!DOCTYPE article [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
  <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<article><body><p>&lol4;</p></body></article>"""
    with pytest.raises(FullTextError, match="declares XML entities"):
        read_jats(laughs)


def test_an_external_entity_never_reads_the_local_file_it_names(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("the server's secret")
    hostile = f"""<?xml version="1.0"?>
<!DOCTYPE article [<!ENTITY leak SYSTEM "file://{secret}">]>
<article><body><p>&leak;</p></body></article>""".encode()
    with pytest.raises(FullTextError, match="declares XML entities") as refused:
        read_jats(hostile)
    assert "secret" not in str(refused.value)


def test_an_external_dtd_is_never_loaded(tmp_path):
    dtd = tmp_path / "hostile.dtd"
    dtd.write_text('<!ENTITY inserted "text from a DTD the file pointed at">')
    pointed = f"""<?xml version="1.0"?>
<!DOCTYPE article SYSTEM "file://{dtd}">
<article><body><p>Before &inserted; after.</p></body></article>""".encode()
    article = read_jats(pointed)
    # The reference stays as it was written, unresolved, and is escaped like any other text where it is shown.
    assert article.paragraphs == (Paragraph("", "Before &inserted; after."),)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n", "not well-formed XML"),
        (b"", "not well-formed XML"),
        (b"<?xml version='1.0'?><pubmed-article-set><x/></pubmed-article-set>", "not a JATS <article>"),
        (b"<article><front><article-meta/></front><body></body></article>", "neither body text nor an abstract"),
    ],
    ids=["a-pdf-named-xml", "empty", "another-xml-format", "no-text"],
)
def test_a_file_that_is_not_a_readable_article_is_refused_with_the_reason(data, reason):
    with pytest.raises(FullTextError, match=reason):
        read_jats(data)


def test_a_truncated_article_is_refused(record):
    whole = _article(record)
    with pytest.raises(FullTextError, match="truncated"):
        read_jats(whole[: len(whole) // 2])


def test_an_oversized_file_is_refused_before_it_is_parsed(record):
    with pytest.raises(FullTextError, match="at most 1,000 bytes"):
        read_jats(_article(record), max_bytes=1_000)
