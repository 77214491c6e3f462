"""Reading uploaded PDFs: reading order, page furniture, sections, identifiers, and hostile files refused.

The papers are typeset here with reportlab (tests/indexer/pdf_samples.py) from real PubMedQA PQA-L records and
real PubMed citations of the shared data, so every expectation comes from the ground truth of what was drawn where.
The OCR test needs Debian's tesseract-ocr and tesseract-ocr-eng, and fails (does not skip) without them.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pypdfium2
import pytest

from indexer import pdf_text
from indexer.full_text import FullText, FullTextError
from indexer.pdf_text import read_pdf
from tests.indexer.pdf_samples import (
    Block,
    Layout,
    Typeset,
    encrypted,
    flate_bomb,
    paper_blocks,
    pqal_records,
    pubmed_citations,
    raw_pdf,
    scanned_text_page,
    typeset,
)

HEADER = "Journal of Verified Medicine 2026; 14: 101-112"
TWO_COLUMNS = Layout("two-column", columns=2, running_header=HEADER, body_size=9.0)
SCRAMBLED = Layout("scrambled", columns=2, running_header=HEADER, body_size=9.0, stream_order="scrambled")


@pytest.fixture(scope="module")
def records(data_dir: Path) -> list[tuple[str, dict[str, object]]]:
    return pqal_records(data_dir)[:6]


@pytest.fixture(scope="module")
def citations(data_dir: Path) -> list[dict[str, object]]:
    return pubmed_citations(data_dir)[:12]


@pytest.fixture(scope="module")
def blocks(records, citations) -> list[Block]:
    return paper_blocks(records, citations)


@pytest.fixture(scope="module")
def scrambled(blocks) -> tuple[Typeset, FullText]:
    paper = typeset(blocks, SCRAMBLED)
    return paper, read_pdf(paper.pdf)


def _words(text: str) -> str:
    # Helvetica has no Greek Delta; reportlab draws its increment sign, which reads back as U+2206.
    return " ".join(text.split()).replace("\u0394", "\u2206")


def _body(blocks: list[Block]) -> list[str]:
    """The paragraphs after the abstract and before the references, as written."""
    start = next(index for index, block in enumerate(blocks) if block.text == "Abstract") + 2
    return [_words(block.text) for block in blocks[start:] if block.kind == "paragraph"]


def test_two_columns_are_read_column_by_column_even_when_the_stream_runs_across_them(scrambled, blocks):
    paper, article = scrambled
    assert paper.pages >= 2
    texts = [paragraph.text for paragraph in article.paragraphs if paragraph.section]
    assert texts[: len(_body(blocks))] == _body(blocks)
    assert article.abstract == _words(blocks[4].text)


def test_running_headers_and_page_numbers_are_removed(scrambled):
    paper, article = scrambled
    assert sum(segment.kind == "header" for segment in paper.segments) == paper.pages
    everything = " ".join([article.title, article.abstract, *(paragraph.text for paragraph in article.paragraphs)])
    assert "Journal of Verified Medicine" not in everything
    assert not [paragraph for paragraph in article.paragraphs if re.fullmatch(r"\d+", paragraph.text)]
    assert not [paragraph for paragraph in article.paragraphs if re.search(r"[.?] \d{1,2}$", paragraph.text)]


def test_a_text_layer_is_not_taken_for_ocr(scrambled):
    assert not any(paragraph.ocr for paragraph in scrambled[1].paragraphs)


def test_each_paragraph_carries_the_page_it_starts_on(scrambled, blocks):
    paper, article = scrambled
    first_lines = [segment for segment in paper.segments if segment.kind == "paragraph"]
    expected = {}
    for body in _body(blocks):
        start = next(segment for segment in first_lines if body.startswith(segment.text.rstrip("-")))
        expected[body] = start.page
    pages = {paragraph.text: paragraph.page for paragraph in article.paragraphs}
    assert {text: pages[text] for text in expected} == expected
    assert len(set(expected.values())) >= 2
    assert article.pages == paper.pages


def test_sections_come_from_the_headings_and_subheadings(records, citations):
    blocks = paper_blocks(records, citations)
    methods = next(index for index, block in enumerate(blocks) if block.text == "Methods")
    blocks.insert(methods + 2, Block("subheading", "Participants and setting"))
    blocks.insert(methods + 3, Block("paragraph", str(records[3][1]["LONG_ANSWER"])))
    article = read_pdf(typeset(blocks, TWO_COLUMNS).pdf)

    expected, path = {}, []
    for block in blocks[5:]:
        if block.kind == "heading":
            path = [block.text]
        elif block.kind == "subheading":
            path = [path[0], block.text]
        elif block.kind == "paragraph":
            expected[_words(block.text)] = " > ".join(path)
    sections = {paragraph.text: paragraph.section for paragraph in article.paragraphs}
    assert {text: sections.get(text) for text in expected} == expected
    assert "Methods > Participants and setting" in expected.values()
    assert list(expected.values()).count("Methods > Participants and setting") >= 2  # it lasts to the next heading


def test_the_reference_list_is_left_out_and_its_dois_are_not_taken_for_the_papers(records, citations):
    blocks = [block for block in paper_blocks(records[:3], citations) if block.kind != "meta"]
    article = read_pdf(typeset(blocks, TWO_COLUMNS).pdf)

    text = " ".join(paragraph.text for paragraph in article.paragraphs)
    references = [block.text for block in blocks if block.kind == "reference"]
    assert references
    assert any("doi:10." in reference for reference in references)
    assert not [reference for reference in references if reference[3:40] in text]
    assert "References" not in {paragraph.section for paragraph in article.paragraphs}
    assert article.doi is None
    assert article.pmid is None


def test_words_hyphenated_at_line_ends_are_joined_and_real_hyphens_kept(scrambled, blocks):
    paper, article = scrambled
    text = " ".join(paragraph.text for paragraph in article.paragraphs)
    body = " ".join(_body(blocks))
    split = [word for word in paper.hyphenated if word in body]  # not those of the (dropped) references
    assert len(split) >= 5
    assert [word for word in split if word not in text] == []
    assert not re.search(r"[a-z]- [a-z]", text)
    assert "ninety-nine" in text  # a hyphen written in the source, not at a line end


def test_the_doi_and_a_labelled_pmid_are_recognised_but_an_unlabelled_number_is_not(records, citations):
    pmid = records[0][0]
    labelled = read_pdf(typeset(paper_blocks(records[:2], citations), TWO_COLUMNS).pdf)
    assert labelled.doi == f"10.5555/verimed.{pmid}"
    assert labelled.pmid == pmid

    blocks = [
        Block("meta", f"Registered trial {pmid}; https://doi.org/10.1371/journal.pone.0{pmid}.")
        if block.kind == "meta"
        else block
        for block in paper_blocks(records[:2], citations)
    ]
    unlabelled = read_pdf(typeset(blocks, TWO_COLUMNS).pdf)
    assert unlabelled.doi == f"10.1371/journal.pone.0{pmid}"
    assert unlabelled.pmid is None


def test_the_title_comes_from_the_metadata_or_else_the_largest_first_page_line(records, citations):
    blocks = paper_blocks(records[:2], citations)
    question = _words(str(records[0][1]["QUESTION"]))
    from_metadata = read_pdf(typeset(blocks, TWO_COLUMNS, title="A Title Only The Metadata Holds").pdf)
    assert from_metadata.title == "A Title Only The Metadata Holds"

    no_metadata = Layout("plain", columns=1, title_metadata=False)
    from_page = read_pdf(typeset(blocks, no_metadata).pdf)
    assert from_page.title == question
    assert question not in " ".join(paragraph.text for paragraph in from_page.paragraphs)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"PK\x03\x04\x14\x00\x06\x00" + b"word/document.xml" * 40, "ZIP archive"),
        (b"<!DOCTYPE html>\n<html><body>Sign in to read this PDF</body></html>", "HTML"),
        (b"%PDF-1.7\n" + b"\x00not an object\n" * 200 + b"%%EOF\n", "damaged"),
    ],
    ids=["zip", "html", "corrupt"],
)
def test_a_file_that_is_not_a_readable_pdf_is_refused_with_the_reason(data, reason):
    with pytest.raises(FullTextError, match=reason):
        read_pdf(data)


@pytest.mark.parametrize("where", [0.6, None], ids=["mid-file", "before-the-xref"])
def test_a_truncated_pdf_is_refused_even_where_pdfium_could_patch_it_up(blocks, where):
    pdf = typeset(blocks, TWO_COLUMNS).pdf
    cut = pdf[: int(len(pdf) * where)] if where else pdf[: pdf.rindex(b"xref")]
    if where is None:
        assert len(pypdfium2.PdfDocument(cut)) > 1  # PDFium alone would return the pages it rebuilt
    with pytest.raises(FullTextError, match="incomplete"):
        read_pdf(cut)


def test_an_encrypted_pdf_that_needs_a_password_is_refused(blocks):
    with pytest.raises(FullTextError, match="needs a password"):
        read_pdf(encrypted(blocks, user_password="secret"))


def test_files_over_the_size_or_page_limit_are_refused(blocks):
    pdf = typeset(blocks, TWO_COLUMNS).pdf
    with pytest.raises(FullTextError, match=f"at most {len(pdf) - 1:,} bytes"):
        read_pdf(pdf, max_bytes=len(pdf) - 1)
    with pytest.raises(FullTextError, match="at most 1 are accepted"):
        read_pdf(pdf, max_pages=1)


def test_a_decompression_bomb_is_stopped_by_the_memory_cap():
    megabytes = 640
    assert megabytes * 1024 * 1024 > pdf_text.MAX_PDF_MEMORY  # else the bomb would fit and prove nothing
    bomb = flate_bomb("Hello bomb", megabytes=megabytes)
    assert len(bomb) < 1024 * 1024

    began = time.perf_counter()
    with pytest.raises(FullTextError, match="decompression bomb"):
        read_pdf(bomb)
    assert time.perf_counter() - began < 10

    # The cap is not a refusal of every compressed stream: the same text with 8 MiB of padding reads.
    padded = read_pdf(flate_bomb("Hello bomb", megabytes=8))
    assert [paragraph.text for paragraph in padded.paragraphs] == ["Hello bomb"]


@pytest.fixture(scope="module")
def scan(records) -> tuple[bytes, str]:
    """A page of real text as a scanner writes it: the typeset page rendered to greyscale pixels, no text layer."""
    text = _words(str(records[1][1]["CONTEXTS"][0]))  # type: ignore[index]
    return scanned_text_page(text), text


def test_a_scanned_page_is_refused_when_ocr_is_off_or_tesseract_is_missing(scan, monkeypatch):
    pdf, _ = scan
    with pytest.raises(FullTextError, match=r"no text layer .* OCR is turned off"):
        read_pdf(pdf, ocr=False)
    monkeypatch.setattr(pdf_text, "TESSERACT", "tesseract-not-installed-here")
    with pytest.raises(FullTextError, match=r"no text layer .* not installed"):
        read_pdf(pdf)


def test_a_scanned_page_is_read_by_ocr(scan):
    assert shutil.which("tesseract"), "install Debian's tesseract-ocr and tesseract-ocr-eng (the Makefile does)"
    pdf, text = scan
    article = read_pdf(pdf)

    assert article.pages == 1
    assert [paragraph.page for paragraph in article.paragraphs] == [1] * len(article.paragraphs)
    assert all(paragraph.ocr for paragraph in article.paragraphs)  # marked: OCR may misread a word
    words = text.lower().split()
    read = " ".join(paragraph.text for paragraph in article.paragraphs).lower().split()
    assert sum(word in read for word in words) >= 0.9 * len(words)


def test_a_hand_written_minimal_pdf_reads():
    """No producer conventions to lean on: one content stream, no metadata, no headings."""
    article = read_pdf(raw_pdf(b"BT /F1 12 Tf 72 700 Td (Plain text on a plain page.) Tj ET", filters=None))
    assert article.title == ""
    assert [paragraph.text for paragraph in article.paragraphs] == ["Plain text on a plain page."]
    assert article.pages == 1


def test_a_pdf_still_being_read_when_the_callers_time_runs_out_is_refused_with_that_reason(blocks):
    paper = typeset(blocks, TWO_COLUMNS)

    with pytest.raises(FullTextError, match="took longer than 0 s"):
        read_pdf(paper.pdf, max_seconds=0.01)  # the child process cannot even start Python in that time
